package solve

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/kernel"
)

// Options configure one exact fit.
type Options struct {
	Ridge float64 // λ ≥ 0, added to the kernel diagonal
	// RidgeScale, when set (n values > 0), multiplies λ row by row: the
	// diagonal gets λ·RidgeScale[i]. With RidgeScale[i] = 1/w_i this is
	// the weighted ridge regression min Σ w_i (f(x_i) − y_i)² + λ‖f‖²,
	// whose coefficients solve (K + λW⁻¹)α = y.
	RidgeScale []float64
	Float32    bool // store and factor the kernel matrix in float32
	// Refine is the least number of iterative-refinement steps applied to
	// a float32 solution (residuals in float64, tile by tile); more are
	// taken until the residual meets RefineTol (see krr32). 0 means none,
	// and no check of the float32 solution.
	Refine int
	// MemoryLimit in bytes for the n×n matrix; 0 = 90% of MemAvailable.
	MemoryLimit uint64
	// Progress, if set, is called during the factorization with the
	// fraction of it done (for ETAs on long solves).
	Progress func(done float64)
}

// Result of a fit.
type Result struct {
	Alpha  []float64 // n×c, row-major
	Jitter float64   // δ added to the diagonal beyond λ (0 if none was needed), absolute
	// Float64 reports that a float32 solve failed (K + λI not positive
	// definite in float32 even with the largest jitter, which rounding of
	// the squared distances can cause when M stretches the inputs; or it
	// needed a jitter, or its refinement did not reach RefineTol) and was
	// redone in float64.
	Float64 bool
	// Residual is ‖Y − (K + (λ+δ)I)α‖ / ‖Y‖ of a refined float32 solution
	// that stayed above RefineTol because float64 did not fit in memory;
	// 0 otherwise.
	Residual float64
}

// ErrNotPD is returned (wrapped) when K + λI is not numerically positive
// definite even with the largest jitter.
var ErrNotPD = errors.New("kernel matrix is not positive definite")

// Workspace holds the n×n buffer between fits so that RFM rounds reuse it,
// and the Nyström solver's large buffers when it is given one
// (NystromOptions.Workspace). The zero value is ready to use. It is not
// safe for concurrent fits.
type Workspace struct {
	f64 []float64
	f32 []float32
	nys [3][]float64 // Nyström's two m×m factors and stored K_nm (n·m), by slot
}

// Release hands the buffer back for the next fit in the process (see
// pool64) and empties the workspace.
func (w *Workspace) Release() {
	// The pools get pointers to copies of the slice headers: a pointer to
	// the field itself would see the next buffer this workspace takes, and
	// the pool would hand that live buffer to another fit.
	if b := w.f64; b != nil {
		pool64.Put(&b)
	}
	if b := w.f32; b != nil {
		pool32.Put(&b)
	}
	for i, b := range w.nys {
		if b != nil {
			nysPools[i].Put(&b)
		}
	}
	w.f64, w.f32, w.nys = nil, nil, [3][]float64{}
}

// Scratch64 returns the workspace's float64 buffer (nil if it holds none):
// between fits its contents are scratch, so a caller may lend it to other
// n×n work (the AGOP's Gram matrix) instead of allocating a second one.
func (w *Workspace) Scratch64() []float64 { return w.f64 }

// pool64 and pool32 keep released n×n buffers for the next workspace that
// needs one at most as large: a fresh buffer costs zeroing and page faults,
// 4–5% of a UCI benchmark run, which makes hundreds of medium-sized fits.
// The buffers need no clearing (the kernel fills the lower triangle, the
// upper one is scratch), and the garbage collector empties the pools, so
// an idle process does not keep them.
var pool64, pool32 sync.Pool

func take[T any](pool *sync.Pool, n int) []T {
	if p, ok := pool.Get().(*[]T); ok {
		if cap(*p) >= n {
			return (*p)[:n]
		}
	}
	return make([]T, n)
}

// MatrixBytes is the size of the n×n kernel matrix.
func MatrixBytes(n int, float32 bool) uint64 {
	b := uint64(8)
	if float32 {
		b = 4
	}
	return uint64(n) * uint64(n) * b
}

// ErrTooLarge is returned (wrapped) when the kernel matrix will not fit.
var ErrTooLarge = errors.New("kernel matrix does not fit in memory")

// Plan checks that an n×n kernel matrix fits before it is allocated.
func Plan(n int, float32 bool, limit uint64) error {
	need := MatrixBytes(n, float32)
	limit, ok := defaultLimit(limit)
	if !ok {
		return nil
	}
	if need > limit {
		hint := "use float32 (halves it), fewer training rows"
		if float32 {
			hint = "use fewer training rows"
		}
		return fmt.Errorf("%w: n = %d needs %s for the %d×%d matrix, %s available; %s",
			ErrTooLarge, n, sysmem.Human(need), n, n, sysmem.Human(limit), hint)
	}
	return nil
}

// defaultLimit is limit, or when it is 0, 90% of MemAvailable; ok is false
// when it is 0 and the system does not say (nothing to check against).
func defaultLimit(limit uint64) (uint64, bool) {
	if limit != 0 {
		return limit, true
	}
	avail, ok := sysmem.Available()
	return avail / 10 * 9, ok
}

// KRR solves (K(Z,Z) + λI)α = Y for the mapped points z and targets y
// (z.N×c). ws may be nil.
func KRR(ctx context.Context, ws *Workspace, s kernel.Spec, z kernel.Points[float64], y []float64, c int, opt Options) (*Result, error) {
	n := z.N
	if n < 1 || c < 1 || len(z.Z) < n*z.D || len(z.Norms) < n || len(y) < n*c {
		return nil, fmt.Errorf("solve: shapes do not match (n=%d, d=%d, c=%d, len(z)=%d, len(y)=%d)", n, z.D, c, len(z.Z), len(y))
	}
	if !(opt.Ridge >= 0) || math.IsInf(opt.Ridge, 0) {
		return nil, fmt.Errorf("solve: ridge λ = %v must be a finite number ≥ 0", opt.Ridge)
	}
	if opt.RidgeScale != nil {
		if len(opt.RidgeScale) != n {
			return nil, fmt.Errorf("solve: %d ridge scales for %d rows", len(opt.RidgeScale), n)
		}
		for i, v := range opt.RidgeScale {
			if !(v > 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("solve: ridge scale %v of row %d must be a finite number > 0", v, i)
			}
		}
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := Plan(n, opt.Float32, opt.MemoryLimit); err != nil {
		return nil, err
	}
	if ws == nil {
		ws = &Workspace{}
		defer ws.Release()
	}
	if opt.Float32 {
		res, err := krr32(ctx, ws, s, z, y, c, opt)
		if errors.Is(err, errInaccurate) {
			if Plan(n, false, opt.MemoryLimit) != nil {
				return res, nil // the best float32 gives; res.Residual says how good
			}
		} else if !(errors.Is(err, ErrNotPD) || errors.Is(err, ErrNonFinite)) || Plan(n, false, opt.MemoryLimit) != nil {
			return res, err
		}
		// Redo it in float64 when that fits: the float32 kernel matrix can
		// lose definiteness to rounding that float64 does not have, and
		// a smooth kernel with a small ridge is beyond its precision.
		ws.Release()
		res, err = krr64(ctx, ws, s, z, y, c, opt)
		if res != nil {
			res.Float64 = true
		}
		return res, err
	}
	return krr64(ctx, ws, s, z, y, c, opt)
}

// ridge is the diagonal term of row i: λ, times RidgeScale[i] when set.
func (o *Options) ridge(i int) float64 {
	if o.RidgeScale == nil {
		return o.Ridge
	}
	return o.Ridge * o.RidgeScale[i]
}

// maxRidge is the largest diagonal term.
func (o *Options) maxRidge() float64 {
	m := o.Ridge
	for _, v := range o.RidgeScale {
		m = max(m, o.Ridge*v)
	}
	return m
}

func jitters(float32 bool) []float64 {
	if float32 {
		return []float64{0, 1e-6, 1e-4, 1e-2}
	}
	return []float64{0, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2}
}

func notPD(n int, ridge, jitter float64) error {
	return fmt.Errorf("solve: the %d×%d %w: K + λI (λ = %g) fails even with jitter %g added; increase the ridge λ or remove duplicate rows", n, n, ErrNotPD, ridge, jitter)
}

// square returns the n×n matrix in ws's buffer buf (ws.f64 or ws.f32),
// first exchanging what ws holds for a large enough buffer from pool when
// buf is too small.
func square[T linalg.Float](ws *Workspace, buf *[]T, pool *sync.Pool, n int) []T {
	if cap(*buf) < n*n {
		ws.Release()
		*buf = take[T](pool, n*n)
	}
	return (*buf)[:n*n]
}

// factorJittered fills a (n×n) with K(z, z) + (λ + jitter)I and factors
// it in place, trying the jitters of the precision (relative to the
// diagonal's scale) in turn until the factor is well posed to tol; it
// returns the jitter that worked.
func factorJittered[T linalg.Float](ctx context.Context, s kernel.Spec, z kernel.Points[T], a []T, opt Options, float32 bool, tol float64) (float64, error) {
	n := z.N
	var jit float64
	for _, j := range jitters(float32) {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := kernel.Symmetric(ctx, s, z, a, n); err != nil {
			return 0, err
		}
		scale := diagScale(a, n)
		jit = j * scale
		for i := 0; i < n; i++ {
			a[i*n+i] += T(opt.ridge(i) + jit)
		}
		bad, err := linalg.CholeskyProgress(ctx, n, a, n, opt.Progress)
		if err != nil {
			return 0, err
		}
		if bad < 0 && wellPosed(a, n, scale+opt.maxRidge()+jit, tol) {
			return jit, nil
		}
	}
	return 0, notPD(n, opt.Ridge, jit)
}

func krr64(ctx context.Context, ws *Workspace, s kernel.Spec, z kernel.Points[float64], y []float64, c int, opt Options) (*Result, error) {
	n := z.N
	a := square(ws, &ws.f64, &pool64, n)
	jit, err := factorJittered(ctx, s, z, a, opt, false, 1e-13)
	if err != nil {
		return nil, err
	}
	alpha := append([]float64(nil), y[:n*c]...)
	linalg.CholSolve(n, c, a, n, alpha, c)
	if err := checkFinite(alpha); err != nil {
		return nil, err
	}
	return &Result{Alpha: alpha, Jitter: jit}, nil
}

func krr32(ctx context.Context, ws *Workspace, s kernel.Spec, z kernel.Points[float64], y []float64, c int, opt Options) (*Result, error) {
	n := z.N
	a := square(ws, &ws.f32, &pool32, n)
	z32 := kernel.To32(z)
	jit, err := factorJittered(ctx, s, z32, a, opt, true, 1e-6)
	if err != nil {
		return nil, err
	}
	solve32 := func(rhs []float64) []float64 {
		b := make([]float32, n*c)
		for i, v := range rhs {
			b[i] = float32(v)
		}
		linalg.CholSolve(n, c, a, n, b, c)
		out := make([]float64, n*c)
		for i, v := range b {
			out[i] = float64(v)
		}
		return out
	}
	alpha := solve32(y[:n*c])
	if err := checkFinite(alpha); err != nil {
		return nil, err
	}
	if opt.Refine <= 0 {
		return &Result{Alpha: alpha, Jitter: jit}, nil
	}
	// Iterative refinement: r = y − (K + (λ+δ)I)α with K recomputed in
	// float64 tiles; α += solve(r). Each residual costs one kernel pass.
	// At least opt.Refine steps, then until ‖r‖ ≤ RefineTol·‖y‖. A step
	// that does not halve the residual, or MaxRefine steps, mean float32
	// cannot reach it (the kernel matrix's small eigenvalues are below
	// its rounding: a smooth Gaussian with a small ridge): errInaccurate.
	ynorm := math.Sqrt(dot(y[:n*c], y[:n*c]))
	prev := math.Inf(1)
	for it := 0; ; it++ {
		ka, err := kernel.SymApply(ctx, s, z, alpha, c)
		if err != nil {
			return nil, err
		}
		r := make([]float64, n*c)
		for i := range r {
			r[i] = y[i] - ka[i] - (opt.ridge(i/c)+jit)*alpha[i]
		}
		rn := math.Sqrt(dot(r, r))
		if it >= opt.Refine && rn <= RefineTol*ynorm {
			if jit > 0 {
				// Solved, but for λ+δ: float32 needed a jitter δ that
				// float64 may not (float64 jitters are 10⁴ times smaller), and a
				// larger ridge is another model (at λ = 1e-7 a Gaussian's
				// validation loss was 0.70 against float64's 0.37).
				return &Result{Alpha: alpha, Jitter: jit}, fmt.Errorf("solve: float32 needed a jitter of %.2g on the diagonal: %w", jit, errInaccurate)
			}
			return &Result{Alpha: alpha, Jitter: jit}, nil
		}
		if it >= max(opt.Refine, MaxRefine) || !(rn <= prev/2) {
			res := &Result{Alpha: alpha, Jitter: jit, Residual: rn / ynorm}
			return res, fmt.Errorf("solve: float32 refinement stalled at a relative residual of %.2g after %d steps: %w", res.Residual, it, errInaccurate)
		}
		prev = rn
		corr := solve32(r)
		for i := range alpha {
			alpha[i] += corr[i]
		}
		if err := checkFinite(alpha); err != nil {
			return nil, err
		}
	}
}

// A refined float32 solution is accepted when its float64 residual
// ‖y − (K + (λ+δ)I)α‖ is at most RefineTol·‖y‖ (the float64 solve's is
// about 1e-13). Measured on 1 500 rows of 8 unit-variance features: a
// Laplace kernel (L = 10) reaches 1e-8 in one step at every ridge down to
// 1e-7; a Gaussian of L = 20 reaches 1e-6 at λ = 1e-2 in one step and
// 1.5e-3 at λ = 1e-4 in two, but at λ ≤ 1e-5 its float32 factorization
// needs a jitter of 1e-4 (ten times the ridge, and coefficients 90% off
// the float64 ones); a Gaussian of L = 3 at λ = 1e-5 stalls at 4e-2.
const (
	RefineTol = 1e-5
	MaxRefine = 8
)

// errInaccurate: a float32 solve's refinement stalled above RefineTol, or
// it needed a jitter; KRR redoes it in float64 when that fits in memory.
var errInaccurate = errors.New("float32 solve inaccurate")

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// diagScale is the largest diagonal entry of the kernel matrix (1 for the
// radial kernels; (depth+1)·‖x‖² for the NTK), the unit in which jitter and
// pivot sizes are measured.
func diagScale[T float32 | float64](a []T, n int) float64 {
	m := 0.0
	for i := 0; i < n; i++ {
		m = max(m, float64(a[i*n+i]))
	}
	if !(m > 0) {
		return 1
	}
	return m
}

// wellPosed reports whether every squared pivot of the Cholesky factor is
// at least tol × the largest diagonal entry of the matrix (diagMax): a
// factorization that "succeeds" with a pivot at round-off level (exactly
// duplicated rows with λ = 0) would give coefficients of size 1/eps.
func wellPosed[T float32 | float64](l []T, n int, diagMax, tol float64) bool {
	for i := 0; i < n; i++ {
		p := float64(l[i*n+i])
		if p*p < tol*diagMax {
			return false
		}
	}
	return true
}

// ErrNonFinite is returned (wrapped) when the coefficients came out NaN
// or infinite: the system is too ill-conditioned for the precision used.
// A float32 solve that gives them is redone in float64 when that fits.
var ErrNonFinite = errors.New("the system is too ill-conditioned")

func checkFinite(x []float64) error {
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("solve: coefficient %d is %v: %w; increase the ridge λ", i, v, ErrNonFinite)
		}
	}
	return nil
}
