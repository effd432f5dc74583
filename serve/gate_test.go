package serve

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
)

// The gate's slot goes to the oldest waiting request, whatever the order
// in which they started waiting, and a request whose client left stops
// waiting without taking it.
func TestGateOldestFirst(t *testing.T) {
	g := newCPUGate(1)
	ctx := context.Background()
	a, b, c := g.ticket(), g.ticket(), g.ticket()
	if err := g.acquire(ctx, a); err != nil {
		t.Fatal(err)
	}
	got := make(chan uint64, 2)
	wait := func(tk uint64) {
		if err := g.acquire(ctx, tk); err == nil {
			got <- tk
		}
	}
	go wait(c) // the younger one asks first
	waitGate(t, g, 1)
	gone, cancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() { left <- g.acquire(gone, 0) }() // the oldest ticket of all, but leaving
	waitGate(t, g, 2)
	cancel()
	if err := <-left; err != context.Canceled {
		t.Fatalf("a waiter whose context ended got %v", err)
	}
	go wait(b)
	waitGate(t, g, 2)
	g.release()
	if first := <-got; first != b {
		t.Errorf("the slot went to ticket %d, want the older waiting ticket %d", first, b)
	}
	g.release()
	if second := <-got; second != c {
		t.Errorf("then to ticket %d, want %d", second, c)
	}
	g.release()
	if g.free != 1 || len(g.waiting) != 0 {
		t.Errorf("after all: %d free, %d waiting; want 1 and 0", g.free, len(g.waiting))
	}
}

// waitGate waits until n requests wait at the gate (goroutines started by
// the test; no timing is asserted).
func waitGate(t *testing.T, g *cpuGate, n int) {
	t.Helper()
	for {
		g.mu.Lock()
		k := len(g.waiting)
		g.mu.Unlock()
		if k == n {
			return
		}
		if k > n {
			t.Fatalf("%d waiting, want %d", k, n)
		}
		runtime.Gosched()
	}
}

// A small declared body never asks for a slot, even with the gate held;
// a large one holds the slot while its bytes are decoded, but not while
// it waits for more bytes from the client (a slow body).
func TestGatedReaderHoldsOnlyWhileDecoding(t *testing.T) {
	g := newCPUGate(1)
	ctx := context.Background()
	holder := g.ticket()
	if err := g.acquire(ctx, holder); err != nil {
		t.Fatal(err)
	}
	small := newGatedReader(ctx, strings.NewReader(`{"rows": []}`), g, 12)
	if b, err := io.ReadAll(small); err != nil || len(b) != 12 {
		t.Fatalf("a small body with the gate held: %q, %v", b, err)
	}
	g.release()

	pr, pw := io.Pipe()
	big := newGatedReader(ctx, pr, g, 1<<20)
	buf := make([]byte, 4)
	go pw.Write([]byte("abcd"))
	if n, err := big.Read(buf); n != 4 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	if !big.holding || g.free != 0 {
		t.Fatalf("after reading bytes the large body holds the slot: %v, %d free", big.holding, g.free)
	}
	// Now it waits for the client: the slot must be free for others.
	done := make(chan struct{})
	go func() {
		big.Read(buf)
		close(done)
	}()
	other := g.ticket()
	if err := g.acquire(ctx, other); err != nil { // would block forever if the slot were held
		t.Fatal(err)
	}
	pw.Write([]byte("efgh"))
	waitGate(t, g, 1) // the body got its bytes and waits for the slot
	g.release()
	<-done
	if !big.holding {
		t.Error("the large body did not take the slot back for its new bytes")
	}
	big.release()
	pw.Close()
}
