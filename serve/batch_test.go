package serve

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rfmkit/rfm/predictor"
)

// batchModel loads a small fitted model for the batcher's tests.
func batchModel(t *testing.T) *predictor.Model {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 200, 1, false)
	m, err := predictor.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func randomRows(m *predictor.Model, n int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, n*m.D())
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// queued is a job put in the batcher's queue directly (as submit does).
func queued(t *testing.T, b *batcher, m *predictor.Model, n int, seed uint64) *job {
	t.Helper()
	j := &job{ctx: context.Background(), m: m, x: randomRows(m, n, seed), n: n, done: make(chan result, 1)}
	if err := b.enqueue(j); err != nil {
		t.Fatal(err)
	}
	return j
}

// A small request queued behind large ones is answered by the first
// evaluation, and the shorter of two large requests finishes first
// although it came second. First come, first served,
// the small request would wait for 130 rows of large requests and the
// 30-row request for the 100-row one. Every request gets exactly the
// scores it gets alone.
func TestBatcherServesSmallFirstAndLargeInTurn(t *testing.T) {
	m := batchModel(t)
	b := newIdleBatcher(0, 100, 10, nil)
	var evalRows []int
	b.predict = func(m *predictor.Model, x []float64, n int) ([]float64, error) {
		evalRows = append(evalRows, n)
		return m.PredictFeatures(context.Background(), x, n, nil)
	}
	big := queued(t, b, m, 100, 1)
	mid := queued(t, b, m, 30, 2)
	small := queued(t, b, m, 1, 3)
	small2 := queued(t, b, m, 10, 4) // at the slice size: small, never split

	finished := map[*job]int{}
	got := map[*job][]float64{}
	for eval := 1; len(finished) < 4; eval++ {
		if eval > 50 {
			t.Fatal("the batcher did not finish four jobs in 50 evaluations")
		}
		batch := b.next()
		if batch == nil {
			t.Fatalf("evaluation %d: nothing to take with %d jobs unfinished", eval, 4-len(finished))
		}
		large := 0
		for _, p := range batch {
			if p.j.n > 10 {
				large += p.hi - p.lo
			}
		}
		if large > 10 {
			t.Fatalf("evaluation %d took %d rows of large requests: more than one slice of 10", eval, large)
		}
		b.evaluate(batch)
		for _, j := range []*job{big, mid, small, small2} {
			if _, done := finished[j]; done {
				continue
			}
			select {
			case r := <-j.done:
				if r.err != nil {
					t.Fatal(r.err)
				}
				finished[j], got[j] = eval, r.scores
			default:
			}
		}
	}
	if finished[small] != 1 || finished[small2] != 1 {
		t.Errorf("the small requests were answered by evaluations %d and %d, want 1: they waited behind large ones", finished[small], finished[small2])
	}
	if finished[mid] >= finished[big] {
		t.Errorf("the 30-row request finished at evaluation %d, the 100-row one (queued first) at %d: the shorter large request waited behind the longer one", finished[mid], finished[big])
	}
	for _, j := range []*job{big, mid, small, small2} {
		want, err := m.PredictFeatures(context.Background(), j.x, j.n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[j], want) {
			t.Errorf("a %d-row request's scores differ from predicting it alone", j.n)
		}
	}
	sum := 0
	for _, n := range evalRows {
		sum += n
	}
	if sum != 141 {
		t.Errorf("%d rows evaluated in all, want 141 (each row once)", sum)
	}
	if len(b.small)+len(b.large) != 0 {
		t.Errorf("jobs left in the queue: %d small, %d large", len(b.small), len(b.large))
	}
}

// Small requests cannot starve a large one: every evaluation takes one
// slice of it, however many small requests wait.
func TestBatcherLargeProgressesUnderSmallLoad(t *testing.T) {
	m := batchModel(t)
	b := newIdleBatcher(0, 8, 4, nil)
	big := queued(t, b, m, 12, 1)
	for i := range 20 {
		queued(t, b, m, 1, uint64(10+i))
	}
	for eval := 1; eval <= 3; eval++ {
		batch := b.next()
		if batch[0].j != big || batch[0].hi-batch[0].lo != 4 {
			t.Fatalf("evaluation %d does not start with a slice of the large request: %+v", eval, batch[0])
		}
		if rows := len(batch) - 1 + 4; rows > 8 {
			t.Fatalf("evaluation %d has %d rows, more than 8", eval, rows)
		}
		b.evaluate(batch)
	}
	select {
	case r := <-big.done:
		if r.err != nil || len(r.scores) != 12*m.Outputs() {
			t.Fatalf("large request: %d scores, error %v", len(r.scores), r.err)
		}
	default:
		t.Fatal("the large request was not finished after its three slices")
	}
}

// A queued job whose client has left is answered with its context's error
// and never evaluated; the slice size follows the model's work per row.
func TestBatcherDropsLeftJobsAndSizesSlices(t *testing.T) {
	m := batchModel(t)
	b := newIdleBatcher(0, 4096, 0, nil)
	want := min(max(sliceWork/(m.Centers()*(m.D()+m.Outputs())), 1), 4096/16)
	if got := b.sliceOf(m); got != want {
		t.Errorf("slice of a %d-centre, %d-feature model: %d rows, want %d", m.Centers(), m.D(), got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gone := &job{ctx: ctx, m: m, x: randomRows(m, 2, 1), n: 2, done: make(chan result, 1)}
	if err := b.enqueue(gone); err != nil {
		t.Fatal(err)
	}
	stay := queued(t, b, m, 3, 2)
	cancel()
	batch := b.next()
	if len(batch) != 1 || batch[0].j != stay {
		t.Fatalf("the batch has %d pieces; want only the live job", len(batch))
	}
	if r := <-gone.done; r.err != context.Canceled {
		t.Errorf("the left job's answer: %v, want context.Canceled", r.err)
	}
}

// Shorter large requests go first, but not forever: every oldestEvery-th
// slice goes to the oldest large request, so a stream of shorter ones
// cannot starve it.
func TestBatcherOldestLargeNotStarved(t *testing.T) {
	m := batchModel(t)
	b := newIdleBatcher(0, 100, 5, nil)
	old := queued(t, b, m, 50, 1)
	oldSlices := 0
	for eval := 1; eval <= 4*oldestEvery; eval++ {
		queued(t, b, m, 6, uint64(10+eval)) // a new, shorter large request each time
		batch := b.next()
		if batch[0].j == old {
			oldSlices++
			if eval%oldestEvery != 0 {
				t.Errorf("evaluation %d served the oldest, longest request, while shorter ones waited", eval)
			}
		}
		b.evaluate(batch)
	}
	if oldSlices != 4 {
		t.Errorf("the oldest large request got %d slices in %d evaluations, want 4", oldSlices, 4*oldestEvery)
	}
}
