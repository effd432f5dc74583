//go:build unix

package atomicfile

import (
	"errors"
	"io"
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

// ReadRegular hands a regular file to the reader and names the file in its
// errors: one that is missing, a named pipe (refused at once, not waited
// on) and one the reader refuses.
func TestReadRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	readAll := func(r io.Reader) (string, error) {
		b, err := io.ReadAll(r)
		return string(b), err
	}
	if got, err := ReadRegular(file, "notes", readAll); err != nil || got != "hello" {
		t.Fatalf("read %q, %v", got, err)
	}
	fifo := testutil.FIFO(t, dir, "pipe")
	for _, c := range []struct {
		path string
		read func(io.Reader) (string, error)
		want string
	}{
		{filepath.Join(dir, "missing"), readAll, "read notes: open " + filepath.Join(dir, "missing")},
		{fifo, readAll, "is a named pipe (FIFO): not a regular file; a notes must be a regular file"},
		{file, func(io.Reader) (string, error) { return "x", errors.New("bad line 1") }, "read notes " + file + ": bad line 1"},
	} {
		got, err := ReadRegular(c.path, "notes", c.read)
		if err == nil || got != "" || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q, %v; want an error containing %q", c.path, got, err, c.want)
		}
	}
}
