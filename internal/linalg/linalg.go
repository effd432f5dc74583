package linalg

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Float is the set of element types the backends support.
type Float interface{ float32 | float64 }

var threads atomic.Int32

// SetThreads sets how many threads the backend and the element-wise passes may
// use; n ≤ 0 means one per available CPU. It is safe to call at any time but
// affects only calls that start afterwards.
func SetThreads(n int) {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	serialMu.Lock()
	defer serialMu.Unlock()
	threads.Store(int32(n))
	if serialDepth == 0 {
		setBackendThreads(n)
	}
}

// serialMu guards serialDepth, the number of Tasks regions running: while
// one runs, the backend is single-threaded (the parallelism is across
// tasks), and the last region to end restores Threads().
var (
	serialMu    sync.Mutex
	serialDepth int
)

func enterSerial() {
	serialMu.Lock()
	if serialDepth == 0 {
		setBackendThreads(1)
	}
	serialDepth++
	serialMu.Unlock()
}

func leaveSerial() {
	serialMu.Lock()
	serialDepth--
	if serialDepth == 0 {
		setBackendThreads(Threads())
	}
	serialMu.Unlock()
}

// HoldSerial keeps the backend single-threaded until release is called,
// as if a Tasks region were always running. A server that evaluates many
// small batches, each spread over cores by Tasks, calls it once: otherwise
// every batch's end hands the backend its threads back, which then spin
// (OpenBLAS) or are woken for the next small call and steal the cores from
// the request handling around it.
func HoldSerial() (release func()) {
	enterSerial()
	var once sync.Once
	return func() { once.Do(leaveSerial) }
}

// Tasks runs fn(worker, i) for every task i in [0, count) on up to
// Threads() goroutines (worker in [0, Threads()) names the goroutine, for
// per-worker scratch). Tasks are handed out in order as workers free up.
// While they run, backend calls are single-threaded: small GEMMs side by
// side, each followed by element-wise work on its own output while that
// is still in the core's cache, beat one multi-threaded GEMM over a block
// too large for cache followed by a second pass over memory. The result of
// a task must not depend on which worker runs it, so that results are
// reproducible. Once ctx is cancelled no new task starts and Tasks
// returns ctx.Err().
func Tasks(ctx context.Context, count int, fn func(worker, i int)) error {
	t := min(Threads(), count)
	if t <= 1 {
		return serialTasks(ctx, count, fn)
	}
	enterSerial()
	defer leaveSerial()
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < t; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= count {
					return
				}
				fn(w, i)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// serialTasks is Tasks and Striped on one worker: in order, on the
// caller's goroutine, with a look at ctx before each task.
func serialTasks(ctx context.Context, count int, fn func(worker, i int)) error {
	for i := 0; i < count; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		fn(0, i)
	}
	return ctx.Err()
}

// EigSym returns the eigenvalues (ascending) and the eigenvectors (the
// columns of a row-major d×d matrix) of the symmetric d×d matrix whose lower
// triangle is in a (row-major; a is not modified). ok is false if the
// backend's LAPACK did not converge.
//
// The backend runs it single-threaded: a threaded dsyevd rounds otherwise
// than a serial one, and M^½ (hence every prediction of a full-M model)
// would depend on the thread count of the process that first used the
// model (seen: rfm serve, which holds the backend serial, against rfm
// predict). d×d is small beside the kernel work.
func EigSym(d int, a []float64) (vals, vecs []float64, ok bool) {
	enterSerial()
	defer leaveSerial()
	vals = make([]float64, d)
	vecs = make([]float64, d*d)
	if d == 0 {
		return vals, vecs, true
	}
	copy(vecs, a[:d*d])
	if !eigSym(d, vals, vecs) {
		return nil, nil, false
	}
	return vals, vecs, true
}

// Threads reports the thread count in force.
func Threads() int {
	if t := threads.Load(); t > 0 {
		return int(t)
	}
	return runtime.GOMAXPROCS(0)
}

// ParallelRows splits [0, rows) into contiguous chunks, one per thread, and
// runs fn on each concurrently. weight, if non-nil, gives the relative cost of
// a row so that triangular work is split into equal areas instead of equal
// row counts. Chunks are a pure function of (rows, weight, Threads()), so the
// results of element-wise work are reproducible.
func ParallelRows(rows int, weight func(i int) float64, fn func(lo, hi int)) {
	t := Threads()
	if t <= 1 || rows < 2 {
		fn(0, rows)
		return
	}
	if t > rows {
		t = rows
	}
	bounds := make([]int, 0, t+1)
	bounds = append(bounds, 0)
	if weight == nil {
		for k := 1; k < t; k++ {
			bounds = append(bounds, rows*k/t)
		}
	} else {
		total := 0.0
		for i := 0; i < rows; i++ {
			total += weight(i)
		}
		acc, k := 0.0, 1
		for i := 0; i < rows && k < t; i++ {
			acc += weight(i)
			if acc >= total*float64(k)/float64(t) {
				bounds = append(bounds, i+1)
				k++
			}
		}
	}
	bounds = append(bounds, rows)
	var wg sync.WaitGroup
	for k := 0; k+1 < len(bounds); k++ {
		lo, hi := bounds[k], bounds[k+1]
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// Striped runs fn(worker, i) for every task i in [0, count) on workers
// goroutines (at most count; call with Workers), task i on worker
// i mod workers, in increasing i: unlike Tasks the assignment is fixed, so a
// caller may keep per-worker sums and still get the same result every run
// with the same thread count. Backend calls are single-threaded as in
// Tasks. Once ctx is cancelled no new task starts and Striped returns
// ctx.Err().
func Striped(ctx context.Context, workers, count int, fn func(worker, i int)) error {
	workers = max(1, min(workers, count))
	if workers == 1 {
		return serialTasks(ctx, count, fn)
	}
	enterSerial()
	defer leaveSerial()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < count && ctx.Err() == nil; i += workers {
				fn(w, i)
			}
		}()
	}
	wg.Wait()
	return ctx.Err()
}

// Workers is the number of goroutines Tasks and Striped use for count tasks.
func Workers(count int) int { return max(1, min(Threads(), count)) }

// Runner runs row-wise work fn over [0, rows): ParallelRows spreads it over
// the threads, Serial runs it on the caller's goroutine (inside a task).
type Runner func(rows int, weight func(i int) float64, fn func(lo, hi int))

// Serial is the Runner that runs fn(0, rows) on the calling goroutine.
func Serial(rows int, _ func(i int) float64, fn func(lo, hi int)) {
	if rows > 0 {
		fn(0, rows)
	}
}

// RadialOp describes the radial profile φ(s) = exp(−C·s^P) of the squared
// distance s used by the Laplace (P = 1/2), generalized Laplace (P = q/2) and
// Gaussian (P = 1) kernels.
type RadialOp struct {
	C, P float64
	// Tiny: squared distances below it count as the same point. In a
	// gradient pass the coefficient there is 0 (the kernel is not
	// differentiable at the centre when P < 1, and the term is dropped).
	Tiny float64
	// Rel: so do squared distances below Rel·(‖a‖² + ‖b‖²), the resolution
	// of the expansion ‖a‖² + ‖b‖² − 2a·b. A point's distance to itself
	// comes out of it as ~1e-15·‖a‖², not 0: with only the absolute cut its
	// gradient coefficient (~1/distance) would be ~1e7, harmless times
	// (a − a) in one gradient but ruinous in sums of squares. Radial sets it
	// from the element type (RelFloor) when it is 0.
	Rel float64
}

// RelFloor is the default RadialOp.Rel for element type T: 32 ulps.
func RelFloor[T Float]() float64 {
	var zero T
	if _, ok := any(zero).(float32); ok {
		return 32 * 0x1p-24
	}
	return 32 * 0x1p-53
}

// Block describes a rectangular or lower-triangular block of inner products
// G[i][j] = a_i·b_j stored row-major with stride LD, together with the squared
// norms of the rows that produced it.
type Block[T Float] struct {
	G          []T
	Rows, Cols int
	LD         int
	NA, NB     []T
	// Lower, when set, restricts work to columns j ≤ Row0+i of row i
	// (the lower triangle of a symmetric block whose first row is Row0).
	Lower bool
	Row0  int
}

func (b *Block[T]) colsOf(i int) int {
	if b.Lower {
		c := b.Row0 + i + 1
		if c > b.Cols {
			c = b.Cols
		}
		return c
	}
	return b.Cols
}

// RadialEval overwrites each inner product in b.G by φ(s), with
// s = max(NA_i + NB_j − 2G_ij, 0), in parallel over rows.
func RadialEval[T Float](b Block[T], op RadialOp) { Radial(b, op, false, ParallelRows) }

// RadialCoef overwrites each inner product by the gradient coefficient
// −2φ'(s) = 2·C·P·s^(P−1)·φ(s), and by 0 where s < op.Tiny, in parallel over rows.
func RadialCoef[T Float](b Block[T], op RadialOp) { Radial(b, op, true, ParallelRows) }

// Radial is RadialEval (coef false) or RadialCoef (coef true) with the rows
// run by run.
func Radial[T Float](b Block[T], op RadialOp, coef bool, run Runner) {
	if op.Rel == 0 {
		op.Rel = RelFloor[T]()
	}
	run(b.Rows, b.weight(), func(lo, hi int) { radialRows(b, op, lo, hi, coef) })
}

func (b *Block[T]) weight() func(int) float64 {
	if !b.Lower {
		return nil
	}
	return func(i int) float64 { return float64(b.colsOf(i)) }
}

// ExpNegPow overwrites each x_j ≥ 0 by exp(−c·x_j^p): a radial profile
// applied to sums the caller formed itself (the lp-laplace kernel's
// Σ|v_i|^p). The cgo backend vectorizes it (about 1 ulp from math.Exp);
// the portable one is ExpNegPowOf.
func ExpNegPow(x []float64, c, p float64) { expNegPow(x, c, p) }

// ExpNegPowOf is exp(−c·s^p) for one s with math.Exp (p = ½ and 1
// without Pow).
func ExpNegPowOf(s, c, p float64) float64 {
	switch p {
	case 1:
		return math.Exp(-c * s)
	case 0.5:
		return math.Exp(-c * math.Sqrt(s))
	}
	return math.Exp(-c * math.Pow(s, p))
}

// LpSums sets out[j] = Σ_t |a_t − b_jt|^p for the n points b stored
// transposed in bt (coordinate t of point j at bt[t·ld+j]; len(a)
// coordinates), summed in coordinate order: the lp-laplace kernel's sums
// for one query against a tile of points. The cgo backend vectorizes it
// over the points (its square root and power within a few ulps of the
// Go ones); the portable one sums LpTerm.
func LpSums[T Float](a, bt []T, ld, n int, p float64, out []float64) { lpSums(a, bt, ld, n, p, out) }

// LpTerm is |v|^p, with the powers 1, 2, ½ and 3/2 (the search's grid)
// done without Pow: a square root costs a few cycles, Pow tens of
// nanoseconds.
func LpTerm(v, p float64) float64 {
	v = math.Abs(v)
	switch p {
	case 1:
		return v
	case 2:
		return v * v
	case 0.5:
		return math.Sqrt(v)
	case 1.5:
		return v * math.Sqrt(v)
	}
	if v == 0 {
		return 0
	}
	return math.Pow(v, p)
}

// LpSumsPhi is LpSums into sums, and sets phi[t·n+j] = sign(v)·|v|^(p−1),
// v = a_t − b_jt, 0 where |v| < tiny: the coordinate factors of the
// lp-laplace kernel's gradient. The cgo backend vectorizes both in one
// pass (the factor as the term over |v|); the portable one sums LpTerm and
// takes the factors from LpPhiOf.
func LpSumsPhi[T Float](a, bt []T, ld, n int, p, tiny float64, sums, phi []float64) {
	lpSumsPhi(a, bt, ld, n, p, tiny, sums, phi)
}

// LpPhiOf is sign(v)·|v|^(p−1), 0 where |v| < tiny.
func LpPhiOf(v, p, tiny float64) float64 {
	u := math.Abs(v)
	if u < tiny {
		return 0
	}
	switch p {
	case 1:
		return math.Copysign(1, v)
	case 2:
		return v
	case 0.5:
		return math.Copysign(1/math.Sqrt(u), v)
	case 1.5:
		return math.Copysign(math.Sqrt(u), v)
	}
	return math.Copysign(math.Pow(u, p-1), v)
}

// PowPos overwrites each x_j ≥ 0 by x_j^p (0 stays 0); the cgo backend
// vectorizes it.
func PowPos(x []float64, p float64) { powPos(x, p) }

// radialGo is the portable element-wise pass; the cgo backend replaces it
// with vectorized C for the hot shapes but keeps the same arithmetic order.
func radialGo[T Float](g []T, n int, na T, nb []T, op RadialOp, coef bool) {
	for j := 0; j < n; j++ {
		s := float64(na) + float64(nb[j]) - 2*float64(g[j])
		if s < 0 {
			s = 0
		}
		var sp float64
		switch op.P {
		case 0.5:
			sp = math.Sqrt(s)
		case 1:
			sp = s
		default:
			sp = math.Pow(s, op.P)
		}
		k := math.Exp(-op.C * sp)
		if coef {
			if s < op.Tiny+op.Rel*(float64(na)+float64(nb[j])) {
				k = 0
			} else {
				k *= 2 * op.C * op.P * sp / s
			}
		}
		g[j] = T(k)
	}
}

// transposeSquare transposes a row-major d×d matrix in place.
func transposeSquare(d int, a []float64) {
	for i := 0; i < d; i++ {
		for j := i + 1; j < d; j++ {
			a[i*d+j], a[j*d+i] = a[j*d+i], a[i*d+j]
		}
	}
}
