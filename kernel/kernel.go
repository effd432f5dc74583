package kernel

import (
	"fmt"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Kind names a kernel family.
type Kind string

// The kernel families.
const (
	Laplace    Kind = "laplace"     // exp(−‖x−z‖/L)
	GenLaplace Kind = "gen-laplace" // exp(−‖x−z‖^q / L^q), 0 < q ≤ 2
	Gaussian   Kind = "gaussian"    // exp(−‖x−z‖² / (2L²))
	// LpLaplace: exp(−(Σ_i |x_i−z_i|^p)^(q/p) / L^q), 0 < q ≤ p ≤ 2; p = q = 1
	// is the product Laplace kernel Π_i exp(−|x_i−z_i|/L), p = 2 gen-laplace.
	LpLaplace Kind = "lp-laplace"
)

// Kinds lists the kernel families this build knows, for help texts.
func Kinds() []Kind { return []Kind{Laplace, GenLaplace, Gaussian, LpLaplace, NTK, NNGP} }

// Spec is a kernel family with its parameters. The zero value is not
// valid; DefaultSpec gives the papers' Laplace kernel with L = 10.
type Spec struct {
	Kind      Kind    `json:"kind"`
	Bandwidth float64 `json:"bandwidth"`          // L > 0 (radial kinds; ignored by ntk and nngp)
	Exponent  float64 `json:"exponent,omitempty"` // q of the gen-laplace and lp-laplace kernels
	Power     float64 `json:"power,omitempty"`    // p of the lp-laplace kernel
	Depth     int     `json:"depth,omitempty"`    // 1..MaxDepth, ntk and nngp only
}

// DefaultSpec is the method's default base kernel.
func DefaultSpec() Spec { return Spec{Kind: Laplace, Bandwidth: 10} }

// Validate reports a parameter that is out of range.
func (s Spec) Validate() error {
	switch s.Kind {
	case Laplace, Gaussian:
	case GenLaplace:
		if !(s.Exponent > 0 && s.Exponent <= 2) {
			return fmt.Errorf("kernel %s: exponent q = %v is outside (0, 2]", s.Kind, s.Exponent)
		}
	case LpLaplace:
		if !(s.Exponent > 0 && s.Exponent <= 2) {
			return fmt.Errorf("kernel %s: exponent q = %v is outside (0, 2]", s.Kind, s.Exponent)
		}
		if !(s.Power > 0 && s.Power <= 2) {
			return fmt.Errorf("kernel %s: power p = %v is outside (0, 2]", s.Kind, s.Power)
		}
		if s.Exponent > s.Power {
			// Σ|v_i|^p is conditionally negative definite for p ≤ 2, and so
			// is its power q/p when q/p ≤ 1: then exp(−·) is positive
			// definite (Schoenberg). Above, kernel matrices can be indefinite.
			return fmt.Errorf("kernel %s: exponent q = %v is above the power p = %v; the kernel is positive definite only for q ≤ p", s.Kind, s.Exponent, s.Power)
		}
	case NTK, NNGP:
		// No bandwidth: the homogeneous kernels ignore it (see ntk.go).
		return validateDepth(s)
	default:
		return fmt.Errorf("unknown kernel %q (known: laplace, gen-laplace, gaussian, lp-laplace, ntk, nngp)", s.Kind)
	}
	if !(s.Bandwidth > 0) || math.IsInf(s.Bandwidth, 0) {
		return fmt.Errorf("kernel %s: bandwidth L = %v must be a positive finite number", s.Kind, s.Bandwidth)
	}
	return nil
}

// String gives a short human description, e.g. "laplace(L=10)" or
// "ntk(depth=2)".
func (s Spec) String() string {
	if s.homogeneous() {
		return fmt.Sprintf("%s(depth=%d)", s.Kind, s.Depth)
	}
	if s.Kind == GenLaplace {
		return fmt.Sprintf("%s(L=%g, q=%g)", s.Kind, s.Bandwidth, s.Exponent)
	}
	if s.Kind == LpLaplace {
		return fmt.Sprintf("%s(L=%g, p=%g, q=%g)", s.Kind, s.Bandwidth, s.Power, s.Exponent)
	}
	return fmt.Sprintf("%s(L=%g)", s.Kind, s.Bandwidth)
}

// Radial reports whether the kernel is a translation-invariant kernel with
// a bandwidth and K(x, x) = 1 (all kinds but ntk and nngp). All of them
// but lp-laplace (see Pairwise) depend on x and z only through ‖x − z‖,
// and their gradient coefficients satisfy B = −A (see DotGrad).
func (s Spec) Radial() bool { return !s.homogeneous() }

// SelfValue is K(x, x) for a radial kernel: φ(0) = 1. For ntk and nngp,
// K(x, x) = SelfValue()·‖x‖² (Depth+1 and 1).
func (s Spec) SelfValue() float64 {
	if s.homogeneous() {
		return s.selfFactor()
	}
	return 1
}

// op maps the spec onto the radial profile φ(s) = exp(−C s^P) of squared
// distances s that the element-wise passes evaluate.
func (s Spec) op() linalg.RadialOp {
	L := s.Bandwidth
	// Gradient terms closer than 1e-10 (squared: 1e-20) are dropped: the
	// Laplace kernel is not differentiable at its centre.
	const tiny = 1e-20
	switch s.Kind {
	case Gaussian:
		return linalg.RadialOp{C: 1 / (2 * L * L), P: 1, Tiny: tiny}
	case GenLaplace:
		if s.Exponent == 1 {
			return linalg.RadialOp{C: 1 / L, P: 0.5, Tiny: tiny}
		}
		return linalg.RadialOp{C: math.Pow(L, -s.Exponent), P: s.Exponent / 2, Tiny: tiny}
	default:
		return linalg.RadialOp{C: 1 / L, P: 0.5, Tiny: tiny}
	}
}

// Value is K for one squared distance s (reference implementation for tests
// and small callers; radial kinds only, see DotValue for all kinds).
func (s Spec) Value(sqdist float64) float64 {
	op := s.op()
	return math.Exp(-op.C * math.Pow(math.Max(sqdist, 0), op.P))
}

// eval overwrites a block of inner products by kernel values, with the rows
// run by run.
func eval[T Float](s Spec, b linalg.Block[T], run linalg.Runner) {
	if s.homogeneous() {
		dotEval(s, b, run)
		return
	}
	linalg.Radial(b, s.op(), false, run)
}

// coef overwrites a block of inner products g_ij = x_iᵀz_j by the gradient
// coefficients, with the rows run by run. With bOut nil it writes the
// radial form a_ij with ∇ₓK(x_i, z_j) = a_ij·M(z_j − x_i) (terms with
// ‖x_i − z_j‖ < 1e-10 are 0); for ntk and nngp that is A = ∂K/∂g alone.
// With bOut it writes A_ij = ∂K/∂g and B_ij = 2∂K/∂‖x_i‖² at the same
// positions of bOut (stride b.LD), so that ∇ₓK(x_i, z_j) = A_ij·z_j +
// B_ij·x_i in mapped coordinates, for every kind (radial: B = −A).
func coef[T Float](s Spec, b linalg.Block[T], bOut []T, run linalg.Runner) {
	if s.homogeneous() {
		dotCoef(s, b, bOut, run)
		return
	}
	linalg.Radial(b, s.op(), true, run)
	if bOut == nil {
		return
	}
	for i := 0; i < b.Rows; i++ {
		n := blockColsOf(&b, i)
		src, dst := b.G[i*b.LD:i*b.LD+n], bOut[i*b.LD:i*b.LD+n]
		for j, v := range src {
			dst[j] = -v
		}
	}
}
