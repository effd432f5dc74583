package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegular is the error OpenRegular wraps when path is not a regular
// file.
var ErrNotRegular = errors.New("not a regular file")

func notRegular(path string, mode fs.FileMode) error {
	what := "a special file"
	switch {
	case mode&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case mode&fs.ModeDevice != 0 || mode&fs.ModeCharDevice != 0:
		what = "a device"
	case mode&fs.ModeSocket != 0:
		what = "a socket"
	case mode.IsDir():
		what = "a directory"
	}
	return fmt.Errorf("%s: is %s: %w", path, what, ErrNotRegular)
}

// checkRegular refuses f (closing it) unless it is a regular file.
func checkRegular(f *os.File, path string) error {
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return notRegular(path, st.Mode())
	}
	return nil
}
