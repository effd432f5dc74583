package linalg

import (
	"context"
	"testing"
)

// HoldSerial keeps the backend single-threaded across Tasks regions until
// released; release is idempotent and restores Threads().
func TestHoldSerial(t *testing.T) {
	SetThreads(2)
	defer SetThreads(0)
	want := 2
	if Backend() == "gonum" {
		want = 1
	}
	if got := backendThreads(); got != want {
		t.Fatalf("backend threads %d before the hold, want %d", got, want)
	}
	release := HoldSerial()
	for k := 0; k < 3; k++ {
		if err := Tasks(context.Background(), 4, func(_, _ int) {}); err != nil {
			t.Fatal(err)
		}
		if got := backendThreads(); got != 1 {
			t.Fatalf("backend threads %d after a Tasks region under the hold, want 1", got)
		}
	}
	release()
	release()
	serialMu.Lock()
	depth := serialDepth
	serialMu.Unlock()
	if depth != 0 || backendThreads() != want {
		t.Errorf("after release: depth %d, backend threads %d, want 0 and %d", depth, backendThreads(), want)
	}
}
