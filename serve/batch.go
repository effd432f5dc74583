package serve

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/predictor"
)

// job is one request's encoded rows waiting for the kernel.
type job struct {
	ctx  context.Context // the request's: a job whose client left is skipped
	m    *predictor.Model
	x    []float64
	n    int
	done chan result // buffered: the batcher never blocks on it
	// A large job is predicted a slice at a time: off rows are done and
	// their scores are in scores.
	off    int
	scores []float64
	slice  int // the rows of one slice (b.sliceOf(m)); a job of more is large
}

type result struct {
	scores []float64
	err    error
}

// piece is rows [lo, hi) of a job, in one evaluation.
type piece struct {
	j      *job
	lo, hi int
}

// batcher coalesces the jobs of concurrent requests into kernel
// evaluations, fairly: a small request never waits behind a large one.
//
// A job of at most slice rows is small: it is never split, and the small
// jobs are served first come, first served, coalesced up to maxRows rows
// (waiting up to wait for more while other requests are being read). A
// larger job is cut into slices of slice rows, and each evaluation takes
// at most one slice of one large job, beside the small jobs waiting (so
// that large jobs always progress): the shortest first (a 600-row request
// is not stuck behind a 10 000-row one), the oldest every few slices. A small request that arrives while an evaluation runs therefore
// waits for at most one evaluation of at most maxRows rows, of which at
// most slice rows belong to large requests, instead of for every large
// request queued before it.
//
// A row's prediction does not depend on its batch or slice, so each
// request gets the numbers it would get alone. Jobs of different models
// (around a reload) are never mixed.
type batcher struct {
	wait    time.Duration
	maxRows int
	slice   int // rows of a slice; 0: sized by each model's work per row (sliceOf)
	// coming counts requests admitted but not yet queued (reading and
	// encoding their rows): while there are some, waiting may pay.
	coming  atomic.Int64
	observe func(rows, jobs int) // metrics (may be nil)
	// predict is the kernel (the model's PredictFeatures; tests wrap it).
	predict func(m *predictor.Model, x []float64, n int) ([]float64, error)

	mu           sync.Mutex
	small, large []*job // in arrival order; small first come, first served, large by nextLarge
	turn         int    // slices of large jobs taken
	stopping     bool
	wake         chan struct{} // a job was queued or stop was called (capacity 1)
	// stopped is closed when run has returned (submit then fails at once
	// instead of waiting).
	stopped  chan struct{}
	stopOnce sync.Once
}

// errStopped is what submit answers once the batcher has stopped.
var errStopped = errors.New("the server is shutting down")

// newBatcher starts a batcher; stop it with close. slice 0 sizes slices
// by the model (sliceOf); a negative slice splits no job and serves all
// first come, first served.
func newBatcher(wait time.Duration, maxRows, slice int, observe func(rows, jobs int)) *batcher {
	b := newIdleBatcher(wait, maxRows, slice, observe)
	go b.loop()
	return b
}

// newIdleBatcher is a batcher whose loop is not started (tests step it).
func newIdleBatcher(wait time.Duration, maxRows, slice int, observe func(rows, jobs int)) *batcher {
	maxRows = max(maxRows, 1)
	switch {
	case slice < 0:
		slice = math.MaxInt // no job is large: first come, first served
	case slice > maxRows:
		slice = maxRows
	}
	return &batcher{wait: wait, maxRows: maxRows, slice: slice, observe: observe,
		predict: func(m *predictor.Model, x []float64, n int) ([]float64, error) {
			return m.PredictFeatures(context.Background(), x, n, nil)
		},
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
}

func (b *batcher) loop() {
	for {
		batch := b.next()
		if batch == nil {
			close(b.stopped)
			return
		}
		b.evaluate(batch)
	}
}

func (b *batcher) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// close stops the batcher after the jobs already queued and waits for it.
func (b *batcher) close() {
	b.stopOnce.Do(func() {
		b.mu.Lock()
		b.stopping = true
		b.mu.Unlock()
		b.signal()
	})
	<-b.stopped
}

// submit queues a job and waits for its scores (or for ctx).
func (b *batcher) submit(ctx context.Context, m *predictor.Model, x []float64, n int) ([]float64, error) {
	j := &job{ctx: ctx, m: m, x: x, n: n, done: make(chan result, 1)}
	if err := b.enqueue(j); err != nil {
		return nil, err
	}
	select {
	case r := <-j.done:
		return r.scores, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.stopped:
		// The loop answers every queued job before it returns.
		select {
		case r := <-j.done:
			return r.scores, r.err
		default:
			return nil, errStopped
		}
	}
}

// enqueue puts a job in its lane.
func (b *batcher) enqueue(j *job) error {
	b.mu.Lock()
	if b.stopping {
		b.mu.Unlock()
		return errStopped
	}
	j.slice = b.sliceOf(j.m)
	if j.n > j.slice {
		b.large = append(b.large, j)
	} else {
		b.small = append(b.small, j)
	}
	b.mu.Unlock()
	b.signal()
	return nil
}

// sliceWork is the work of one slice when the slice is sized by the
// model: rows × (kernel centres a row meets) × (features + outputs), about
// 16 M multiply-adds, a few milliseconds of one core.
const sliceWork = 1 << 24

// sliceOf is the rows of a slice for model m: the fixed size, or as many
// rows as make sliceWork, between 1 and maxRows/16.
func (b *batcher) sliceOf(m *predictor.Model) int {
	if b.slice > 0 {
		return b.slice
	}
	per := max(rowCenters(m), 1) * (m.D() + m.Outputs())
	return min(max(sliceWork/per, 1), max(b.maxRows/16, 1))
}

// rowCenters is how many kernel centres one row is compared with: a
// tree's row meets one leaf (the largest is counted), other models all
// their centres.
func rowCenters(m *predictor.Model) int {
	if m.Kind() != "tree" {
		return m.Centers()
	}
	n := 0
	if c, ok := m.Fitted.(rfm.Composite); ok {
		for _, sm := range c.SubModels() {
			n = max(n, sm.N)
		}
	}
	return n
}

// next waits for work and takes the next evaluation's pieces; nil once
// stopping with nothing queued.
func (b *batcher) next() []piece {
	var deadline time.Time
	for {
		b.mu.Lock()
		b.dropLeft()
		if len(b.small)+len(b.large) == 0 {
			stopping := b.stopping
			b.mu.Unlock()
			if stopping {
				return nil
			}
			<-b.wake
			continue
		}
		// Wait briefly for more small requests when some are on their
		// way and the batch is not full (never while large work waits:
		// that work can go now).
		if len(b.large) == 0 && !b.stopping && b.wait > 0 && b.coming.Load() > 0 && b.smallRows() < b.maxRows {
			if deadline.IsZero() {
				deadline = time.Now().Add(b.wait)
			}
			if d := time.Until(deadline); d > 0 {
				b.mu.Unlock()
				t := time.NewTimer(d)
				select {
				case <-b.wake:
				case <-t.C:
				}
				t.Stop()
				continue
			}
		}
		batch := b.take()
		b.mu.Unlock()
		return batch
	}
}

// smallRows is the rows of the small jobs queued (b.mu held).
func (b *batcher) smallRows() int {
	n := 0
	for _, j := range b.small {
		n += j.n
	}
	return n
}

// dropLeft answers and removes the queued jobs whose clients left (b.mu
// held).
func (b *batcher) dropLeft() {
	keep := func(q []*job) []*job {
		out := q[:0]
		for _, j := range q {
			if err := j.ctx.Err(); err != nil {
				j.done <- result{err: err}
				continue
			}
			out = append(out, j)
		}
		clear(q[len(out):])
		return out
	}
	b.small, b.large = keep(b.small), keep(b.large)
}

// oldestEvery says how often the oldest large job gets the slice instead
// of the one with the fewest rows left (so that none starves).
const oldestEvery = 4

// nextLarge picks the large job whose slice comes next (b.mu held, some
// queued): the one with the fewest rows left (the oldest among equals),
// but every oldestEvery-th slice the oldest one. Finishing the shortest
// first answers most requests soonest and keeps the fewest waiting with
// their rows in memory; taking turns among all would finish none until
// nearly all were done.
func (b *batcher) nextLarge() int {
	b.turn++
	if b.turn%oldestEvery == 0 {
		return 0
	}
	best := 0
	for i, j := range b.large {
		if j.n-j.off < b.large[best].n-b.large[best].off {
			best = i
		}
	}
	return best
}

// take removes the next evaluation's pieces from the queues (b.mu held,
// at least one job queued): one slice of the large job whose turn it is,
// then small jobs first come, first served, up to maxRows rows, all of
// one model.
func (b *batcher) take() []piece {
	var batch []piece
	var m *predictor.Model
	rows := 0
	if len(b.large) > 0 {
		i := b.nextLarge()
		j := b.large[i]
		hi := min(j.off+j.slice, j.n)
		batch = append(batch, piece{j, j.off, hi})
		m, rows = j.m, hi-j.off
		j.off = hi
		if hi == j.n {
			b.large = slices.Delete(b.large, i, i+1)
		}
	}
	rest := b.small[:0]
	for i, j := range b.small {
		if m == nil {
			m = j.m
		}
		if j.m != m || rows+j.n > b.maxRows && len(batch) > 0 {
			rest = append(rest, b.small[i:]...)
			break
		}
		batch = append(batch, piece{j, 0, j.n})
		rows += j.n
	}
	clear(b.small[len(rest):])
	b.small = rest
	return batch
}

// evaluate predicts the rows of a batch's pieces in one call and answers
// the jobs it completes.
func (b *batcher) evaluate(batch []piece) {
	m := batch[0].j.m
	d, c := m.D(), m.Outputs()
	rows := 0
	for _, p := range batch {
		rows += p.hi - p.lo
	}
	x := batch[0].j.x[batch[0].lo*d : batch[0].hi*d]
	if len(batch) > 1 {
		x = make([]float64, 0, rows*d)
		for _, p := range batch {
			x = append(x, p.j.x[p.lo*d:p.hi*d]...)
		}
	}
	scores, err := b.predict(m, x, rows)
	if b.observe != nil {
		b.observe(rows, len(batch))
	}
	if err != nil {
		// One request's rows can fail the batch (a row the model cannot
		// compute): predict each request alone, whole, so that only it
		// fails, with its own row numbers.
		for _, p := range batch {
			if p.j.n > p.j.slice && p.hi < p.j.n {
				b.mu.Lock()
				b.removeLarge(p.j)
				b.mu.Unlock()
			}
			s, err := b.predict(m, p.j.x, p.j.n)
			p.j.done <- result{scores: s, err: err}
		}
		return
	}
	off := 0
	for _, p := range batch {
		k := p.hi - p.lo
		part := scores[off*c : (off+k)*c : (off+k)*c]
		off += k
		j := p.j
		if p.lo == 0 && p.hi == j.n {
			j.done <- result{scores: part}
			continue
		}
		if j.scores == nil {
			j.scores = make([]float64, j.n*c)
		}
		copy(j.scores[p.lo*c:], part)
		if p.hi == j.n {
			j.done <- result{scores: j.scores}
		}
	}
}

// removeLarge takes an unfinished large job out of the queue (b.mu held).
func (b *batcher) removeLarge(j *job) {
	for i, q := range b.large {
		if q == j {
			b.large = append(b.large[:i], b.large[i+1:]...)
			return
		}
	}
}
