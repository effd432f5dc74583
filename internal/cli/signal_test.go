//go:build unix

package cli

import (
	"syscall"
	"testing"
	"time"
)

// A relayed signal arrives on the channel; after stop nothing is relayed.
func TestRelay(t *testing.T) {
	events, stop := Relay(syscall.SIGUSR1)
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-events:
	case <-time.After(10 * time.Second):
		t.Fatal("the signal was not relayed")
	}
	stop()
}
