//go:build unix

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/testutil"
)

// A FIFO with no writer, a device and a directory are refused at once;
// a regular file opens and reads (blocking, as usual).
func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := testutil.FIFO(t, dir, "pipe")
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{fifo, "is a named pipe (FIFO)"}, {"/dev/null", "is a device"}, {dir, "is a directory"},
	} {
		done := make(chan error, 1)
		go func() {
			f, err := OpenRegular(c.path)
			if f != nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %v, want %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("OpenRegular(%s) blocked", c.path)
		}
	}
	f, err := OpenRegular(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 8)
	if n, err := f.Read(b); err != nil || string(b[:n]) != "data" {
		t.Errorf("read %q %v", b[:n], err)
	}
	if _, err := OpenRegular(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	// For writing: a FIFO with no reader is refused at once (ENXIO), a new
	// file is created and written.
	if _, err := OpenRegularFile(fifo, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a FIFO for writing: %v", err)
	}
	w, err := OpenRegularFile(filepath.Join(dir, "new"), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("x"); err != nil {
		t.Error(err)
	}
	w.Close()
}
