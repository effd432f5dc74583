//go:build unix

package atomicfile

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/testutil"
)

// A named pipe nobody reads: the write waits for a reader, and a cancelled
// context ends the wait with context.Canceled (it used to block in open(2)
// for ever, deaf to Ctrl-C).
func TestPipeWithoutReaderIsInterruptible(t *testing.T) {
	fifo := testutil.FIFO(t, t.TempDir(), "p")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Write(ctx, fifo, text("never read")) }()
	select {
	case err := <-done:
		t.Fatalf("the write returned with no reader and no cancellation: %v", err)
	case <-time.After(200 * time.Millisecond): // still waiting, as it should
	}
	cancel()
	// No deadline on the outcome: a loaded machine may take its time,
	// but the write must end (a hang fails the test run's own timeout).
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the pipe was replaced: %v %v", fi, err)
	}
}

// A reader that arrives late gets the whole output.
func TestPipeLateReader(t *testing.T) {
	fifo := testutil.FIFO(t, t.TempDir(), "p")
	done := make(chan error, 1)
	go func() { done <- Write(context.Background(), fifo, text("late but whole")) }()
	time.Sleep(100 * time.Millisecond) // let the writer wait first (either order must work)
	b, err := os.ReadFile(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if string(b) != "late but whole" {
		t.Fatalf("reader got %q", b)
	}
}
