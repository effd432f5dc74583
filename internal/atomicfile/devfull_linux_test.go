//go:build linux

package atomicfile

import (
	"context"
	"strings"
	"testing"
)

// A full device: one mention of the path, then the cause.
func TestDeviceFullMessage(t *testing.T) {
	err := Write(context.Background(), "/dev/full", text("x"))
	if err == nil {
		t.Fatal("writing /dev/full succeeded")
	}
	if msg := err.Error(); strings.Count(msg, "/dev/full") != 1 || !strings.Contains(msg, "no space left") {
		t.Fatalf("message %q: want the path once and the cause", msg)
	}
}
