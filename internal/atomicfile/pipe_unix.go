//go:build unix

package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// openDirect opens a device or pipe for writing. A named pipe is opened
// without blocking: open(2) would wait, uninterruptibly, for a reader;
// instead it is retried until one comes or ctx is cancelled. The file is
// left non-blocking, so Go's poller makes its writes interruptible too.
func openDirect(ctx context.Context, path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		return os.OpenFile(path, os.O_WRONLY, 0)
	}
	for {
		fd, err := syscall.Open(path, syscall.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err == nil {
			return os.NewFile(uintptr(fd), path), nil
		}
		if !errors.Is(err, syscall.ENXIO) { // ENXIO: no reader yet
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("named pipe with no reader; interrupted while waiting for one: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// processAlive reports whether a process with this pid runs on this
// machine (known is false when that cannot be told).
func processAlive(pid int) (alive, known bool) {
	err := syscall.Kill(pid, 0)
	switch {
	case err == nil, errors.Is(err, syscall.EPERM):
		return true, true
	case errors.Is(err, syscall.ESRCH):
		return false, true
	}
	return false, false
}
