package atomicfile

import (
	"errors"
	"fmt"
	"io"
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

// ReadRegular opens path with OpenRegular, returns what read makes of it
// and closes it. Its errors say what the file is: "read <what>: <the open
// error>" (followed by "; a <what> must be a regular file" for a named
// pipe, device, socket or directory) and "read <what> <path>: <read's
// error>".
func ReadRegular[T any](path, what string, read func(io.Reader) (T, error)) (T, error) {
	var none T
	f, err := OpenRegular(path)
	if errors.Is(err, ErrNotRegular) {
		return none, fmt.Errorf("read %s: %w; a %s must be a regular file", what, err, what)
	}
	if err != nil {
		return none, fmt.Errorf("read %s: %w", what, err)
	}
	defer f.Close()
	v, err := read(f)
	if err != nil {
		return none, fmt.Errorf("read %s %s: %w", what, path, err)
	}
	return v, nil
}
