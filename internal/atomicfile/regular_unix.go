//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// OpenRegular opens path for reading only if it is a regular file. The
// open is non-blocking, so a named pipe without a writer cannot hang it
// (open(2) of a FIFO waits, uninterruptibly, for one), and the type is
// checked on the opened file, so nothing swapped in between a check and
// the open gets through. A FIFO, device, socket or directory is refused
// with an error that says what it is (ErrNotRegular).
func OpenRegular(path string) (*os.File, error) {
	return OpenRegularFile(path, os.O_RDONLY, 0)
}

// OpenRegularFile is OpenRegular with os.OpenFile's flag and permissions:
// for writing, a named pipe (which would wait for a reader) is refused
// the same way.
func OpenRegularFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := syscall.Open(path, flag|syscall.O_NONBLOCK|syscall.O_CLOEXEC, uint32(perm.Perm()))
	if errors.Is(err, syscall.ENXIO) { // a FIFO opened for writing with no reader
		if st, serr := os.Stat(path); serr == nil && !st.Mode().IsRegular() {
			return nil, notRegular(path, st.Mode())
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	if err := checkRegular(f, path); err != nil {
		return nil, err
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		f.Close()
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return f, nil
}
