package serve

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rfmkit/rfm/predictor"
)

// job is one request's encoded rows waiting for the kernel.
type job struct {
	ctx  context.Context // the request's: a job whose client left is skipped
	m    *predictor.Model
	x    []float64
	n    int
	done chan result // buffered: the batcher never blocks on it
}

type result struct {
	scores []float64
	err    error
}

// batcher coalesces the jobs of concurrent requests into one kernel
// evaluation: it takes a job, then keeps taking jobs for up to wait while
// more requests are on their way, until maxRows rows are gathered, and
// predicts them in one PredictFeatures call. A row's prediction does not
// depend on its batch, so each request gets the numbers it would get
// alone. Jobs of different models (around a reload) are never mixed.
type batcher struct {
	jobs    chan *job
	wait    time.Duration
	maxRows int
	// coming counts requests admitted but not yet queued (reading and
	// encoding their rows): while there are some, waiting may pay.
	coming  atomic.Int64
	observe func(rows, jobs int) // metrics (may be nil)
	// stop ends run once the queue is empty; stopped is closed when run
	// has returned (submit then fails at once instead of waiting).
	stop, stopped chan struct{}
	stopOnce      sync.Once
}

// errStopped is what submit answers once the batcher has stopped.
var errStopped = errors.New("the server is shutting down")

// newBatcher starts a batcher; stop it with close.
func newBatcher(wait time.Duration, maxRows int, observe func(rows, jobs int)) *batcher {
	b := &batcher{jobs: make(chan *job, 1024), wait: wait, maxRows: maxRows, observe: observe,
		stop: make(chan struct{}), stopped: make(chan struct{})}
	go func() {
		b.run(b.stop)
		close(b.stopped)
	}()
	return b
}

// close stops the batcher after the jobs already queued and waits for it.
func (b *batcher) close() {
	b.stopOnce.Do(func() { close(b.stop) })
	<-b.stopped
}

// submit queues a job and waits for its scores (or for ctx).
func (b *batcher) submit(ctx context.Context, m *predictor.Model, x []float64, n int) ([]float64, error) {
	j := &job{ctx: ctx, m: m, x: x, n: n, done: make(chan result, 1)}
	select {
	case <-b.stop:
		return nil, errStopped
	default:
	}
	select {
	case b.jobs <- j:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.stopped:
		return nil, errStopped
	}
	select {
	case r := <-j.done:
		return r.scores, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-b.stopped:
		// run drains the queue before it returns, so the answer is there.
		select {
		case r := <-j.done:
			return r.scores, r.err
		default:
			return nil, errStopped
		}
	}
}

// run serves jobs until stop is closed and the queue is empty.
func (b *batcher) run(stop <-chan struct{}) {
	var next *job // a job of another model, held for the next batch
	for {
		first := next
		next = nil
		if first == nil {
			select {
			case first = <-b.jobs:
			case <-stop:
				select {
				case first = <-b.jobs:
				default:
					return
				}
			}
		}
		batch, rows := []*job{first}, first.n
		var timer *time.Timer
	gather:
		for rows < b.maxRows {
			var j *job
			select {
			case j = <-b.jobs:
			default:
				if b.wait <= 0 || b.coming.Load() == 0 {
					break gather // nobody else is coming: go now
				}
				if timer == nil {
					timer = time.NewTimer(b.wait)
				}
				select {
				case j = <-b.jobs:
				case <-timer.C:
					break gather
				}
			}
			if j.m != first.m {
				next = j
				break
			}
			batch, rows = append(batch, j), rows+j.n
		}
		if timer != nil {
			timer.Stop()
		}
		b.evaluate(batch)
	}
}

// evaluate predicts the rows of a batch's live jobs in one call.
func (b *batcher) evaluate(batch []*job) {
	live := batch[:0]
	rows := 0
	for _, j := range batch {
		if j.ctx.Err() != nil {
			j.done <- result{err: j.ctx.Err()}
			continue
		}
		live = append(live, j)
		rows += j.n
	}
	if len(live) == 0 {
		return
	}
	m := live[0].m
	x := live[0].x
	if len(live) > 1 {
		x = make([]float64, 0, rows*m.D())
		for _, j := range live {
			x = append(x, j.x...)
		}
	}
	scores, err := m.PredictFeatures(context.Background(), x, rows, nil)
	if b.observe != nil {
		b.observe(rows, len(live))
	}
	if err != nil && len(live) > 1 {
		// One request's rows can fail the batch (a row the model cannot
		// compute): predict each alone, so that only it fails, with its
		// own row numbers.
		for _, j := range live {
			s, err := m.PredictFeatures(context.Background(), j.x, j.n, nil)
			j.done <- result{scores: s, err: err}
		}
		return
	}
	c := m.Outputs()
	off := 0
	for _, j := range live {
		if err != nil {
			j.done <- result{err: err}
			continue
		}
		j.done <- result{scores: scores[off*c : (off+j.n)*c : (off+j.n)*c]}
		off += j.n
	}
}
