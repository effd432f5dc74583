//go:build unix

package tune

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/testutil"
)

// A named pipe as the trials table is refused at once, for reading
// (--resume) and for writing (--trials-out); a missing table is empty.
func TestTrialsFileFIFORefused(t *testing.T) {
	dir := t.TempDir()
	fifo := testutil.FIFO(t, dir, "trials.csv")
	done := make(chan error, 2)
	go func() {
		_, err := ReadTrials(fifo)
		done <- err
		_, err = OpenJournal(fifo, true, true)
		done <- err
	}()
	for i := range 2 {
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO)") {
				t.Errorf("open %d of a FIFO: %v", i+1, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("opening a FIFO trials table blocked")
		}
	}
	c, err := ReadTrials(filepath.Join(dir, "none.csv"))
	if err != nil || len(c) != 0 {
		t.Errorf("a missing table: %v %v", c, err)
	}
	f, err := OpenJournal(filepath.Join(dir, "new.csv"), false, true)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}
