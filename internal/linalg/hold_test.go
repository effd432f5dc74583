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

// EigSym gives the same bits whatever the backend's thread count (a full
// M's square root, and so every prediction, depends on it).
func TestEigSymDoesNotDependOnThreads(t *testing.T) {
	const d = 150
	a := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			v := float64((i*31+j*17)%23)/23 - 0.5
			if i == j {
				v += float64(d)
			}
			a[i*d+j], a[j*d+i] = v, v
		}
	}
	SetThreads(2)
	defer SetThreads(0)
	vals, vecs, ok := EigSym(d, a)
	release := HoldSerial()
	vals1, vecs1, ok1 := EigSym(d, a)
	release()
	if !ok || !ok1 {
		t.Fatal("no convergence")
	}
	for i := range vecs {
		if vecs[i] != vecs1[i] || (i < d && vals[i] != vals1[i]) {
			t.Fatalf("entry %d differs: %v with 2 threads, %v serial", i, vecs[i], vecs1[i])
		}
	}
}
