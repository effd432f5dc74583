//go:build unix

package testutil

import (
	"path/filepath"
	"syscall"
	"testing"
)

// FIFO makes a named pipe called name in dir and returns its path; a
// failure fails the test (every unix system the tests run on has them).
func FIFO(t testing.TB, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
	return path
}
