package serve

import (
	"context"
	"io"
	"slices"
	"sync"
)

// freeBytes is the largest declared body (Content-Length) that decodes
// without a CPU slot: ordinary requests never wait for one. A body
// declared larger, or of unknown length, holds a slot from its first byte
// (a free first part of each would let hundreds of them decode at once).
const freeBytes = 64 << 10

// cpuGate bounds the large requests decoding and encoding at once, oldest
// first. Without it, hundreds of large bodies decoded together share the
// cores with the small requests in Go's scheduler, and a one-row request
// waits its turn behind every one of them at each step (reading,
// decoding, encoding, answering): seconds under 256 requests of 10 000
// rows, while none of the large ones finishes either, since they all
// progress together.
//
// Each large request draws a ticket when it first asks; a slot that is
// given back goes to the waiting request with the lowest ticket. A request
// gives its slot back before each read of its body, so a body that
// arrives slowly holds none while it waits, and takes it back first (its
// ticket being older) once its bytes are in.
type cpuGate struct {
	mu      sync.Mutex
	free    int
	tickets uint64
	waiting []*gateWaiter // by ticket
}

type gateWaiter struct {
	ticket uint64
	ready  chan struct{}
}

func newCPUGate(slots int) *cpuGate { return &cpuGate{free: max(slots, 1)} }

func (g *cpuGate) ticket() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tickets++
	return g.tickets
}

// acquire takes a slot for the request of this ticket, waiting for one
// (or for ctx).
func (g *cpuGate) acquire(ctx context.Context, ticket uint64) error {
	g.mu.Lock()
	if g.free > 0 {
		g.free--
		g.mu.Unlock()
		return nil
	}
	w := &gateWaiter{ticket: ticket, ready: make(chan struct{})}
	i, _ := slices.BinarySearchFunc(g.waiting, ticket, func(w *gateWaiter, t uint64) int { return cmpUint(w.ticket, t) })
	g.waiting = slices.Insert(g.waiting, i, w)
	g.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		if i := slices.Index(g.waiting, w); i >= 0 {
			g.waiting = slices.Delete(g.waiting, i, i+1)
			g.mu.Unlock()
		} else {
			g.mu.Unlock()
			g.release() // granted meanwhile: pass it on
		}
		return ctx.Err()
	}
}

// release gives a slot back: to the oldest waiting request, if any.
func (g *cpuGate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.waiting) > 0 {
		w := g.waiting[0]
		g.waiting = slices.Delete(g.waiting, 0, 1)
		close(w.ready)
		return
	}
	g.free++
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// gatedReader reads a request body and, for a large one, holds a slot of
// its gate while the decoder works on the bytes read (see cpuGate).
type gatedReader struct {
	ctx     context.Context
	r       io.Reader
	gate    *cpuGate
	big     bool // declared over freeBytes, or of unknown length
	ticket  uint64
	holding bool
}

// newGatedReader gates a body of the declared length (-1: unknown); a nil
// gate gates nothing.
func newGatedReader(ctx context.Context, r io.Reader, gate *cpuGate, length int64) *gatedReader {
	g := &gatedReader{ctx: ctx, r: r, gate: gate, big: gate != nil && (length < 0 || length > freeBytes)}
	if g.big {
		g.ticket = gate.ticket()
	}
	return g
}

func (g *gatedReader) Read(p []byte) (int, error) {
	g.release()
	n, err := g.r.Read(p)
	if n > 0 && g.big {
		if werr := g.acquire(); werr != nil {
			return 0, werr
		}
	}
	return n, err
}

// large reports whether the body is gated.
func (g *gatedReader) large() bool { return g.big }

// acquire takes a slot (waiting for one, or for the request's end).
func (g *gatedReader) acquire() error {
	if g.holding {
		return nil
	}
	if err := g.gate.acquire(g.ctx, g.ticket); err != nil {
		return err
	}
	g.holding = true
	return nil
}

// release gives the slot back, if held.
func (g *gatedReader) release() {
	if g.holding {
		g.gate.release()
		g.holding = false
	}
}
