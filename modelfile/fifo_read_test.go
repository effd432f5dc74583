package modelfile

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A named pipe at the model path is refused at once, with no writer (an
// open(2) would wait for one, beyond any interrupt) and with a writer.
func TestReadFileRefusesFIFO(t *testing.T) {
	if !haveFIFOs {
		t.Skip("no named pipes on this system")
	}
	fifo := filepath.Join(t.TempDir(), "m.rfm")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadFile(fifo)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO)") || !strings.Contains(err.Error(), "must be a regular file") {
			t.Errorf("ReadFile(FIFO): %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("ReadFile blocked on a FIFO")
	}
	if _, err := ReadFile(filepath.Dir(fifo)); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("ReadFile(directory): %v", err)
	}
}
