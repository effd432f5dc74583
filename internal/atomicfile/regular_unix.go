//go:build unix

package atomicfile

import (
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
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
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
