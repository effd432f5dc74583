package deeplimit

import (
	"context"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Points are n rows of dimension D, row-major.
type Points struct {
	X    []float64
	N, D int
}

// Row returns row i.
func (p Points) Row(i int) []float64 { return p.X[i*p.D : i*p.D+p.D] }

// MinMax holds per-column minima and ranges for the projection.
type MinMax struct{ Min, Range []float64 }

// FitMinMax takes the column minima and ranges of p. Every value must be
// finite.
func FitMinMax(p Points) (MinMax, error) {
	if p.N < 1 || p.D < 1 || len(p.X) != p.N*p.D {
		return MinMax{}, errorf("min-max scaling: %d rows of %d columns in %d values", p.N, p.D, len(p.X))
	}
	mm := MinMax{Min: make([]float64, p.D), Range: make([]float64, p.D)}
	hi := make([]float64, p.D)
	for j := range mm.Min {
		mm.Min[j], hi[j] = math.Inf(1), math.Inf(-1)
	}
	for i := 0; i < p.N; i++ {
		for j, v := range p.Row(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return MinMax{}, errorf("row %d column %d is %g: the data must be finite", i, j, v)
			}
			mm.Min[j] = min(mm.Min[j], v)
			hi[j] = max(hi[j], v)
		}
	}
	for j := range hi {
		mm.Range[j] = hi[j] - mm.Min[j]
	}
	return mm, nil
}

// ProjectOrthant scales each column to [0, 1] with mm (the thesis's
// min-max scaling; constant columns become 0, values outside the fitted
// range are clipped to it) and projects each row onto the unit sphere, so
// that every row lies in the sphere's positive orthant S^{D−1}_+ (SI
// appendix C, footnote 5 of chapter 4). A row that is 0 after scaling (its
// every value at the column minimum) has no direction: an error, as is any
// non-finite value.
func ProjectOrthant(p Points, mm MinMax) (Points, error) {
	if len(mm.Min) != p.D {
		return Points{}, errorf("projection: %d columns, the scaling has %d", p.D, len(mm.Min))
	}
	out := Points{X: make([]float64, len(p.X)), N: p.N, D: p.D}
	for i := 0; i < p.N; i++ {
		row := out.Row(i)
		for j, v := range p.Row(i) {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Points{}, errorf("row %d column %d is %g: the data must be finite", i, j, v)
			}
			if mm.Range[j] > 0 {
				row[j] = min(max((v-mm.Min[j])/mm.Range[j], 0), 1)
			}
		}
		nr := 0.0
		for _, v := range row {
			nr += v * v
		}
		if !(nr > 0) {
			return Points{}, errorf("row %d is at every column's minimum: after min-max scaling it is 0 and has no projection onto the sphere", i)
		}
		nr = math.Sqrt(nr)
		for j := range row {
			row[j] /= nr
		}
	}
	return out, nil
}

// CheckOrthant reports the first row of p that is not a unit vector with
// non-negative entries (to 1e-9).
func CheckOrthant(p Points) error {
	for i := 0; i < p.N; i++ {
		nr := 0.0
		for j, v := range p.Row(i) {
			if !(v >= 0) {
				return errorf("row %d column %d is %g: the data must lie in the positive orthant of the sphere (use ProjectOrthant)", i, j, v)
			}
			nr += v * v
		}
		if !(math.Abs(nr-1) <= 1e-9) {
			return errorf("row %d has squared norm %g: the data must lie on the unit sphere (use ProjectOrthant)", i, nr)
		}
	}
	return nil
}

func dist2(a, b []float64) float64 {
	s := 0.0
	for k, v := range a {
		t := v - b[k]
		s += t * t
	}
	return s
}

func checkLabels(y []float64, n int) error {
	if len(y) != n {
		return errorf("%d labels for %d rows", len(y), n)
	}
	for i, v := range y {
		if v != 1 && v != -1 {
			return errorf("label %d is %g: labels must be −1 or +1", i, v)
		}
	}
	return nil
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}

// MajorityVote predicts sign(Σ y) (+1 on a tie) for every test row.
func MajorityVote(y []float64, nTest int) []float64 {
	s := 0.0
	for _, v := range y {
		s += v
	}
	out := make([]float64, nTest)
	for i := range out {
		out[i] = sign(s)
	}
	return out
}

// NearestNeighbor predicts the label of the nearest training row
// (Euclidean; the first of equally near rows).
func NearestNeighbor(train Points, y []float64, test Points) []float64 {
	out := make([]float64, test.N)
	for t := 0; t < test.N; t++ {
		x := test.Row(t)
		best, bi := math.Inf(1), 0
		for i := 0; i < train.N; i++ {
			if d := dist2(x, train.Row(i)); d < best {
				best, bi = d, i
			}
		}
		out[t] = y[bi]
	}
	return out
}

// SingularSmoother is the singular kernel classifier of order alpha,
// sign(Σ y_i ‖x − x_i‖^{−α}) (the Hilbert estimate when α is the data's
// dimension); a test row equal to training rows takes the sign of their
// labels' sum.
func SingularSmoother(train Points, y []float64, test Points, alpha float64) []float64 {
	out := make([]float64, test.N)
	ld := make([]float64, train.N)
	for t := 0; t < test.N; t++ {
		x := test.Row(t)
		lmin := math.Inf(1)
		for i := 0; i < train.N; i++ {
			ld[i] = math.Log(dist2(x, train.Row(i)))
			lmin = min(lmin, ld[i])
		}
		s := 0.0
		for i, l := range ld {
			if math.IsInf(lmin, -1) {
				if math.IsInf(l, -1) {
					s += y[i]
				}
				continue
			}
			s += y[i] * math.Exp(-alpha/2*(l-lmin))
		}
		out[t] = sign(s)
	}
	return out
}

// MachineInfo says how a kernel machine was solved.
type MachineInfo struct {
	// MaxOffDiag is the largest row sum of K_ij/K_ii off the diagonal (or,
	// when Identity, the bound (n−1)·K(closest pair)/K(1) on it).
	MaxOffDiag float64
	// Identity: the normalized train matrix K_n/K(1) is the identity to
	// working precision (MaxOffDiag < 1e-17), so K_n⁻¹y = y/K(1) and no
	// factorization was run.
	Identity bool
	// Ridge is the ridge (relative to the unit diagonal) that had to be
	// added for the factorization: 0 when K_n was numerically positive
	// definite. Polynomial activations give finite-rank kernels at small
	// depth (h_2 at depth 1 is 3(xᵀx̃)², of rank ≤ D(D+1)/2), where
	// K_n⁻¹ does not exist and the machine is read as its ridgeless limit.
	Ridge float64
}

// MaxSolveRows is the most training rows Machine factors (a float64 n×n
// matrix: 3.2 GB at 20 000).
const MaxSolveRows = 20_000

// ridges are tried in turn when K_n is not numerically positive definite.
var ridges = []float64{1e-12, 1e-10, 1e-8, 1e-6, 1e-4}

// Machine is the depth-L NTK classifier sign(y K_n⁻¹ K(X, x)) of the thesis
// (eq. 4.2) with the kernel interpolated from tab: K_n is divided by K_L(1)
// (its diagonal: unit vectors) and factored by Cholesky (internal/linalg),
// each test row's kernel vector divided by its largest entry (signs do not
// change). Rows must be in the positive orthant of the sphere (CheckOrthant).
func Machine(ctx context.Context, tab Kernel, train Points, y []float64, test Points) ([]float64, MachineInfo, error) {
	return MachineWith(ctx, tab, tab, train, y, test)
}

// Kernel gives K_L at a squared distance between unit vectors.
type Kernel interface {
	At(d2 float64) Val
	Depth() int
}

// Direct computes K_L by the recursion at every call (exact, L steps a
// value): for the training matrix at small depth, where a finite-rank
// kernel (a polynomial activation) leaves no room for interpolation error.
type Direct struct {
	D *Dual
	L int
}

// At is K_L(1 − d2/2).
func (k Direct) At(d2 float64) Val {
	z := min(max(1-d2/2, 0), 1)
	s := k.D.newState(z)
	for l := 0; l < k.L; l++ {
		k.D.step(&s)
	}
	return s.val()
}

// Depth is L.
func (k Direct) Depth() int { return k.L }

// MachineWith is Machine with separate kernels for the training matrix and
// the test vectors (e.g. Direct for one, a Table for the other).
func MachineWith(ctx context.Context, tab, testK Kernel, train Points, y []float64, test Points) ([]float64, MachineInfo, error) {
	var info MachineInfo
	if err := checkLabels(y, train.N); err != nil {
		return nil, info, err
	}
	if err := CheckOrthant(train); err != nil {
		return nil, info, err
	}
	if err := CheckOrthant(test); err != nil {
		return nil, info, err
	}
	if train.D != test.D {
		return nil, info, errorf("train rows have %d columns, test rows %d", train.D, test.D)
	}
	n := train.N
	diag := tab.At(0)
	rel := func(d2 float64) float64 { return math.Exp(tab.At(d2).LogRatio(diag)) }
	// K is increasing in the cosine, so each row's off-diagonal sum is at
	// most (n−1)·K(closest pair)/K(1): when that bound is already below the
	// rounding of 1, the scan of every pair's kernel value is skipped.
	minD2 := math.Inf(1)
	for i := 0; i < n; i++ {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, info, err
			}
		}
		for j := 0; j < i; j++ {
			minD2 = min(minD2, dist2(train.Row(i), train.Row(j)))
		}
	}
	if n > 1 {
		info.MaxOffDiag = float64(n-1) * rel(minD2)
	}
	if info.MaxOffDiag >= 1e-17 {
		info.MaxOffDiag = 0
		for i := 0; i < n; i++ {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, info, err
				}
			}
			s := 0.0
			for j := 0; j < n; j++ {
				if j != i {
					s += rel(dist2(train.Row(i), train.Row(j)))
				}
			}
			info.MaxOffDiag = max(info.MaxOffDiag, s)
		}
	}
	alpha := append([]float64(nil), y...)
	if info.MaxOffDiag < 1e-17 {
		info.Identity = true
	} else {
		if n > MaxSolveRows {
			return nil, info, errorf("the depth-%d NTK matrix of %d training rows is not the identity to working precision (off-diagonal row sums up to %.3g): its exact solve is limited to %d rows (%.1f GB); use a deeper network or fewer rows", tab.Depth(), n, info.MaxOffDiag, MaxSolveRows, float64(MaxSolveRows)*MaxSolveRows*8/1e9)
		}
		a := make([]float64, n*n)
		fill := func(ridge float64) {
			for i := 0; i < n; i++ {
				a[i*n+i] = 1 + ridge
				for j := 0; j < i; j++ {
					a[i*n+j] = rel(dist2(train.Row(i), train.Row(j)))
				}
			}
		}
		fill(0)
		bad, err := linalg.CholeskyCtx(ctx, n, a, n)
		for k := 0; err == nil && bad >= 0 && k < len(ridges); k++ {
			info.Ridge = ridges[k]
			fill(info.Ridge)
			bad, err = linalg.CholeskyCtx(ctx, n, a, n)
		}
		if err != nil {
			return nil, info, err
		}
		if bad >= 0 {
			return nil, info, errorf("the depth-%d NTK matrix of the %d training rows is not positive definite even with a ridge of %g (pivot %d): duplicate rows?", tab.Depth(), n, info.Ridge, bad)
		}
		linalg.CholSolve(n, 1, a, n, alpha, 1)
	}
	out := make([]float64, test.N)
	vals := make([]Val, n)
	for t := 0; t < test.N; t++ {
		if t%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, info, err
			}
		}
		x := test.Row(t)
		top := Val{V: math.Inf(-1)}
		for i := 0; i < n; i++ {
			vals[i] = testK.At(dist2(x, train.Row(i)))
			if top.Less(vals[i]) {
				top = vals[i]
			}
		}
		s := 0.0
		for i, v := range vals {
			s += alpha[i] * math.Exp(v.LogRatio(top))
		}
		out[t] = sign(s)
	}
	return out, info, nil
}

// Agreement is the fraction of equal entries of a and b.
func Agreement(a, b []float64) float64 {
	if len(a) == 0 {
		return math.NaN()
	}
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / float64(len(a))
}

// ErrorRate is the fraction of predictions that differ from the labels.
func ErrorRate(pred, y []float64) float64 { return 1 - Agreement(pred, y) }
