package kernel

import (
	"fmt"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
)

// The ReLU neural tangent kernel and neural-network Gaussian-process kernel
// of a fully connected network (SPEC §6). Both are positively homogeneous:
// with g = aᵀb, p = ‖a‖², q = ‖b‖², N = √(pq) and the cosine c = g/N,
//
//	K(a, b) = N·F(c),
//
// where F is the depth-L recursion of the normalized ReLU dual activations
// on unit vectors. They are not translation invariant, so the metric must
// not shift the inputs (Metric.Shift nil), and they do not use a bandwidth:
// Spec.Bandwidth is ignored (a bandwidth would only rescale K by 1/L², i.e.
// the ridge by L²).
//
// Gradients. ∂K/∂g = F′(c) and ∂K/∂p = N/(2p)·(F(c) − c·F′(c)), so
//
//	∇_a K = A·b + B·a,   A = F′(c),   B = 2∂K/∂p = √(q/p)·(F(c) − c·F′(c)).
//
// F′ follows the recursion forward (κ0′ = κ1, κ1′(ρ) = 1/(π√(1 − ρ²))):
//
//	ρ_0 = k_0 = c,  ρ_0′ = k_0′ = 1,
//	ρ_l = κ0(ρ_{l−1}),                 ρ_l′ = κ1(ρ_{l−1})·ρ_{l−1}′,
//	k_l = ρ_l + k_{l−1}·κ1(ρ_{l−1}),   k_l′ = ρ_l′ + k_{l−1}′·κ1(ρ_{l−1}) + k_{l−1}·κ1′(ρ_{l−1})·ρ_{l−1}′,
//
// with F = k_L (NTK) or ρ_L (NNGP). At c = ±1 (a parallel or antiparallel
// to b: a point's own term, duplicates, multiples) κ1 has a kink, F′ is
// infinite and K has a cone (|θ|-shaped) ridge in the directions orthogonal
// to b, exactly like the Laplace kernel at its centre. There the gradient
// is taken as the symmetric subgradient: A = 0 (no tangential part) and
// B = √(q/p)·F(±1), the radial derivative, which is well defined since K is
// linear along a. This is also what central finite differences give there.
// When a or b is the zero vector K = 0 (the limit of N·F) and A = B = 0.

// The homogeneous kernel families.
const (
	NTK  Kind = "ntk"  // ReLU neural tangent kernel of depth 1..MaxDepth
	NNGP Kind = "nngp" // ReLU NNGP (arc-cosine) kernel Σ_L of depth 1..MaxDepth
)

// MaxDepth is the largest supported NTK / NNGP depth.
const MaxDepth = 5

// kinkTol: pairs with 1 − |c| below it count as parallel (antiparallel), the
// cone of K at c = ±1 (see above). 1 − c = 1e-12 is an angle of 1.4e-6 rad;
// a point's own term computes to 1 − |c| of a few ulps. Just above the
// threshold F′ ≈ (L(L+1)/2)/(π√(2·1e-12)), at most 3.4e6 (depth 5), small
// enough that the cancellation between A·b and B·a in the GEMMs of the AGOP
// stays near 3e6·1e-16 ≈ 3e-10 relative. Blocks in float32 carry cosines
// off by ~1e-7, so there the threshold is kinkTol32 (an angle of 1.4e-3
// rad, inside which a float32 cosine no longer resolves the angle anyway):
// otherwise a point's own term would land just off the cone, where F′ is
// large and the A·b + B·a cancellation loses √(1e-7) ≈ 3e-4 relative.
const (
	kinkTol   = 1e-12
	kinkTol32 = 1e-6
)

// homogeneous reports whether s is one of the dot-product (NTK/NNGP) kinds.
func (s Spec) homogeneous() bool { return s.Kind == NTK || s.Kind == NNGP }

// dual evaluates the normalized recursion F(c) for c in [−1, 1] and, when
// deriv is set, F′(c) (c must then satisfy 1 − |c| ≥ kinkTol).
func (s Spec) dual(c float64, deriv bool) (f, df float64) {
	rho, k := c, c
	drho, dk := 1.0, 1.0
	for l := 0; l < s.Depth; l++ {
		th := math.Acos(rho)
		sn := math.Sqrt(max((1-rho)*(1+rho), 0)) // √(1 − ρ²), accurate near ±1
		k0 := (rho*(math.Pi-th) + sn) / math.Pi
		k1 := (math.Pi - th) / math.Pi
		if deriv {
			var dk1 float64
			if sn > 0 {
				dk1 = 1 / (math.Pi * sn)
			}
			// Uses the previous layer's k, ρ′ and k′.
			dk = k1*drho + dk*k1 + k*dk1*drho
			drho = k1 * drho
		}
		k = k0 + k*k1
		rho = k0
	}
	if s.Kind == NNGP {
		return rho, drho
	}
	return k, dk
}

// cosine returns √p, √q and c = g/(√p√q) clamped to [−1, 1]; ok is false
// when p or q is 0 (K = 0 there). √p·√q rather than √(pq) so that tiny
// norms do not underflow.
func cosine(g, p, q float64) (sp, sq, c float64, ok bool) {
	if !(p > 0 && q > 0) {
		return 0, 0, 0, false
	}
	sp, sq = math.Sqrt(p), math.Sqrt(q)
	c = min(max(g/(sp*sq), -1), 1)
	return sp, sq, c, true
}

func (s Spec) dotValue(g, p, q float64) float64 {
	sp, sq, c, ok := cosine(g, p, q)
	if !ok {
		return 0
	}
	f, _ := s.dual(c, false)
	return sp * sq * f
}

func (s Spec) dotGrad(g, p, q, tol float64) (a, b float64) {
	sp, sq, c, ok := cosine(g, p, q)
	if !ok {
		return 0, 0
	}
	if 1-math.Abs(c) < tol {
		// Symmetric subgradient at the cone: radial part only.
		f, _ := s.dual(math.Copysign(1, c), false)
		return 0, sq / sp * f
	}
	f, df := s.dual(c, true)
	return df, sq / sp * (f - c*df)
}

// DotValue is K(a, b) from g = aᵀb and the squared norms p = ‖a‖², q = ‖b‖²
// (a reference implementation for tests and small callers; every kernel of
// the package depends on a and b only through these three numbers).
func (s Spec) DotValue(g, p, q float64) float64 {
	if s.homogeneous() {
		return s.dotValue(g, p, q)
	}
	return s.Value(p + q - 2*g)
}

// DotGrad returns A = ∂K/∂g and B = 2·∂K/∂p at (g, p, q) as in DotValue,
// so that ∇_a K(a, b) = A·b + B·a. For radial kernels B = −A = −(the Coef
// coefficient), with the same cut-offs (linalg.RadialOp's Tiny and Rel).
func (s Spec) DotGrad(g, p, q float64) (a, b float64) {
	if s.homogeneous() {
		return s.dotGrad(g, p, q, kinkTol)
	}
	op := s.op()
	d2 := max(p+q-2*g, 0)
	if d2 < op.Tiny+linalg.RelFloor[float64]()*(p+q) {
		return 0, 0
	}
	sp := math.Pow(d2, op.P)
	a = math.Exp(-op.C*sp) * 2 * op.C * op.P * sp / d2
	return a, -a
}

// selfFactor is K(x, x)/‖x‖² of the homogeneous kinds: F(1) = Depth+1 for
// the NTK (every layer adds Σ_l(x,x)·κ1(1) = ‖x‖²), 1 for the NNGP.
func (s Spec) selfFactor() float64 {
	if s.Kind == NNGP {
		return 1
	}
	return float64(s.Depth + 1)
}

// scaleHeadroom: K(x, x) must stay this far below the largest float of
// the working precision, so that sums of kernel values (K·α, the
// factorization's updates) do not overflow either.
const scaleHeadroom = 1e4

// MaxNorm is the largest Euclidean norm of an input row for which the
// homogeneous kernels' values stay finite (with headroom for their sums)
// in float64, or in float32 when single is set. Their values grow with the
// inputs (K(x, x) = F(1)·‖x‖²), unlike the radial kernels', which stay in
// [0, 1]: ‖x‖ ≈ 1e155 already overflows float64, 1e18 float32. Radial
// kernels have no limit (+Inf).
func (s Spec) MaxNorm(single bool) float64 {
	if !s.homogeneous() {
		return math.Inf(1)
	}
	top := math.MaxFloat64
	if single {
		top = math.MaxFloat32
	}
	return math.Sqrt(top / scaleHeadroom / s.selfFactor())
}

// CheckScale reports the first of n rows of x (n×d, after any metric)
// whose norm exceeds MaxNorm: its kernel values would overflow to ±Inf or
// NaN, and a fit would fail with a misleading "not positive definite" (or
// a prediction come out NaN). The norm is computed scaled, so that even a
// row whose squared norm overflows is measured. The homogeneous kernels
// are scale-equivariant (K(ta, tb) = t²K(a, b)), so scaling the inputs
// down loses nothing but the ridge's relative size.
func (s Spec) CheckScale(x []float64, n, d int, single bool) error {
	limit := s.MaxNorm(single)
	if math.IsInf(limit, 1) {
		return nil
	}
	for i := 0; i < n; i++ {
		if nr := scaledNorm(x[i*d : i*d+d]); !(nr <= limit) {
			prec := "float64"
			if single {
				prec = "float32"
			}
			return fmt.Errorf("kernel %s: input row %d has norm %.3g; its kernel value K(x, x) = %g·‖x‖² would overflow %s (norms up to %.3g are supported): scale the inputs down, e.g. standardize the columns",
				s.Kind, i, nr, s.selfFactor(), prec, limit)
		}
	}
	return nil
}

// scaledNorm is ‖v‖ computed as m·‖v/m‖ with m = max|v_i|, finite
// whenever the result is (NaN if v holds one).
func scaledNorm(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		if math.IsNaN(x) {
			return math.NaN()
		}
		m = max(m, math.Abs(x))
	}
	if m == 0 || math.IsInf(m, 1) {
		return m
	}
	ss := 0.0
	for _, x := range v {
		r := x / m
		ss += r * r
	}
	return m * math.Sqrt(ss)
}

func validateDepth(s Spec) error {
	if s.Depth < 1 || s.Depth > MaxDepth {
		return fmt.Errorf("kernel %s: depth %d is outside 1..%d", s.Kind, s.Depth, MaxDepth)
	}
	return nil
}

// blockColsOf is the number of columns of row i that a (possibly
// lower-triangular) block covers: linalg's rule, clamped at 0 for the rows
// of a tile that lie wholly above the diagonal (Row0 + i + 1 ≤ 0).
func blockColsOf[T Float](b *linalg.Block[T], i int) int {
	if b.Lower {
		return max(min(b.Row0+i+1, b.Cols), 0)
	}
	return b.Cols
}

func blockWeight[T Float](b *linalg.Block[T]) func(int) float64 {
	if !b.Lower {
		return nil
	}
	return func(i int) float64 { return float64(blockColsOf(b, i)) }
}

// dotEval overwrites each inner product of b by K (pure Go, rows run by
// run; the homogeneous kernels are not the performance-critical path).
func dotEval[T Float](s Spec, b linalg.Block[T], run linalg.Runner) {
	run(b.Rows, blockWeight(&b), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			row := b.G[i*b.LD : i*b.LD+blockColsOf(&b, i)]
			p := float64(b.NA[i])
			for j, g := range row {
				row[j] = T(s.dotValue(float64(g), p, float64(b.NB[j])))
			}
		}
	})
}

// dotCoef overwrites each inner product of b by A = ∂K/∂g and, when bOut is
// not nil, writes B = 2∂K/∂‖a‖² at the same position of bOut (stride b.LD).
func dotCoef[T Float](s Spec, b linalg.Block[T], bOut []T, run linalg.Runner) {
	tol := kinkTol
	if _, single := any(b.G).([]float32); single {
		tol = kinkTol32
	}
	run(b.Rows, blockWeight(&b), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			n := blockColsOf(&b, i)
			row := b.G[i*b.LD : i*b.LD+n]
			var rowB []T
			if bOut != nil {
				rowB = bOut[i*b.LD : i*b.LD+n]
			}
			p := float64(b.NA[i])
			for j, g := range row {
				a, bb := s.dotGrad(float64(g), p, float64(b.NB[j]), tol)
				row[j] = T(a)
				if rowB != nil {
					rowB[j] = T(bb)
				}
			}
		}
	})
}
