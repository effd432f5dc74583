package serve

import (
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/rfmkit/rfm/internal/sysmem"
)

// The memory a request costs is charged, as it is read and decoded,
// against one budget shared by every request: the bytes of its body as
// they arrive, each value and key as it is decoded (an estimate of its
// decoded size), then its table, encoded rows and scores. A request that
// cannot get what it needs is refused at once (503 and Retry-After when
// others hold the budget, 413 when it alone needs more than a request may
// take); it never waits holding memory. A slow body holds only the bytes
// that have arrived, so slow clients cannot lock the others out.

// Estimated costs of decoded values (Go's interface, string and map
// overheads), in bytes, beyond the bytes of their text.
const (
	requestBaseCost = 8 << 10 // goroutine, buffers and headers of a request
	cellCost        = 48      // a value in a row: interface, boxed header, allocation rounding
	recordCost      = 96      // a row object: its map, and per key a map slot
	keyCost         = 40      // a key of a row object (its string and slot)
	tableCellCost   = 24      // a cell of the decoded table
	// smallRequestCost is what a request may hold out of the reserve: the
	// last quarter of the budget is kept for requests up to this size (or
	// a sixteenth of the budget, if less), so that a flood of large
	// requests leaves room for ordinary clients.
	smallRequestCost = 1 << 20
)

// DefaultMemoryBudget is the budget used when Options.MemoryBudget is
// zero: a sixteenth of the memory available when the server starts, at
// least 64 MiB and at most 256 MiB.
func DefaultMemoryBudget() int64 {
	const lo, hi = 64 << 20, 256 << 20
	avail, ok := sysmem.Available()
	if !ok {
		return hi
	}
	return min(max(int64(avail/16), lo), hi)
}

// budget is the memory shared by the requests being read, decoded and
// predicted.
type budget struct {
	limit int64
	used  atomic.Int64
	peak  atomic.Int64 // the most used at once
}

// perRequest is the most one request may hold: all but the reserve.
func (b *budget) perRequest() int64 { return b.limit - b.limit/4 }

// charge is one request's share of the budget.
type charge struct {
	b    *budget
	held int64
}

// errBudget is the answer when the budget is held by other requests.
type errBudget struct{ limit int64 }

// add takes n more bytes for the request, or refuses: with 413 when the
// request alone would need more than a request may hold, with 503 when
// other requests hold the budget.
func (c *charge) add(n int64) error {
	if n <= 0 {
		return nil
	}
	if c.held+n > c.b.perRequest() {
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf(
			"the request needs more than %s of memory to decode and predict (the server's budget for one request); send fewer rows or columns per request",
			sysmem.Human(uint64(c.b.perRequest())))}
	}
	lim := c.b.limit
	if c.held+n > min(smallRequestCost, c.b.limit/16) {
		lim = c.b.perRequest()
	}
	for {
		u := c.b.used.Load()
		if u+n > lim {
			return &httpError{http.StatusServiceUnavailable, fmt.Sprintf(
				"the server's memory budget for requests (%s) is in use by other requests; retry shortly", sysmem.Human(uint64(c.b.limit)))}
		}
		if c.b.used.CompareAndSwap(u, u+n) {
			c.held += n
			for p := c.b.peak.Load(); u+n > p && !c.b.peak.CompareAndSwap(p, u+n); p = c.b.peak.Load() {
			}
			return nil
		}
	}
}

// release gives back all the request holds.
func (c *charge) release() {
	c.b.used.Add(-c.held)
	c.held = 0
}

// chargedReader charges factor bytes for each byte read through it: the
// buffers that hold the body while it is decoded.
type chargedReader struct {
	r      io.Reader
	c      *charge
	factor int64
	err    error
}

func (cr *chargedReader) Read(p []byte) (int, error) {
	if cr.err != nil {
		return 0, cr.err
	}
	n, err := cr.r.Read(p)
	if n > 0 {
		if cerr := cr.c.add(int64(n) * cr.factor); cerr != nil {
			cr.err = cerr
			return 0, cerr
		}
	}
	return n, err
}
