package complete

import (
	"fmt"
	"math"
	"strings"

	"github.com/rfmkit/rfm/kernel"
)

// Activation is a positively homogeneous (degree 1) nonlinearity φ of the
// network f_Z(W) of Theorem 5: φ(x) = max(x, 0) + Slope·min(x, 0). Slope 0
// is the ReLU, Slope 1 the identity (the linear network of the graph
// Laplacian corollary in SI appendix A), Slope −1 the absolute value; any
// other value a leaky ReLU. The constant c of Eq. 3.3 is ‖φ‖⁻¹ in L²(N(0,1)),
// so the dual activation is normalized: φ̌(1) = 1.
type Activation struct {
	Name  string  // "relu", "leaky-relu", "linear" or "abs"
	Slope float64 // the slope on the negative half-line
}

// ActivationNames lists the names ParseActivation accepts.
func ActivationNames() []string { return []string{"relu", "leaky-relu", "linear", "abs"} }

// ParseActivation returns the activation of a name; slope is used by
// "leaky-relu" only (any finite value: 0 is the ReLU, 1 linear, −1 abs).
func ParseActivation(name string, slope float64) (Activation, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "relu":
		return Activation{Name: "relu"}, nil
	case "leaky-relu", "leaky":
		if math.IsNaN(slope) || math.IsInf(slope, 0) {
			return Activation{}, fmt.Errorf("activation leaky-relu: slope %v is not a finite number", slope)
		}
		return Activation{Name: "leaky-relu", Slope: slope}, nil
	case "linear", "identity":
		return Activation{Name: "linear", Slope: 1}, nil
	case "abs":
		return Activation{Name: "abs", Slope: -1}, nil
	}
	return Activation{}, fmt.Errorf("unknown activation %q: want one of %s", name, strings.Join(ActivationNames(), ", "))
}

func (a Activation) String() string {
	if a.Name == "leaky-relu" {
		return fmt.Sprintf("leaky-relu(%g)", a.Slope)
	}
	if a.Name == "" {
		return "relu"
	}
	return a.Name
}

// relu reports whether the ReLU duals of package kernel apply.
func (a Activation) relu() bool { return a.Slope == 0 }

// arcR is E[max(u,0)·max(v,0)] for unit normals with correlation ρ:
// (√(1−ρ²) + (π − arccos ρ)·ρ)/(2π).
func arcR(rho float64) float64 {
	return (math.Sqrt(max((1-rho)*(1+rho), 0)) + (math.Pi-math.Acos(rho))*rho) / (2 * math.Pi)
}

// duals returns the normalized dual φ̌(ρ) = c²·E[φ(u)φ(v)] and its
// derivative φ̌′(ρ) = c²·E[φ′(u)φ′(v)] (Price's theorem) for the leaky
// family φ = relu(x) − a·relu(−x), with c² = 2/(1 + a²):
//
//	E[φ(u)φ(v)]   = (1 + a²)·R(ρ) − 2a·R(−ρ),
//	E[φ′(u)φ′(v)] = ((1 + a²)(π − arccos ρ) + 2a·arccos ρ)/(2π).
func (a Activation) duals(rho float64) (f, df float64) {
	s := a.Slope
	c2 := 2 / (1 + s*s)
	th := math.Acos(rho)
	f = c2 * ((1+s*s)*arcR(rho) - 2*s*arcR(-rho))
	df = c2 * ((1+s*s)*(math.Pi-th) + 2*s*th) / (2 * math.Pi)
	return f, df
}

// Kappa returns κ_d of Theorem 5 for this activation: the NTK for matrix
// completion between two unit-norm prior columns with inner product ξ,
//
//	κ_0(ξ) = ξ,   κ_d(ξ) = φ̌^(d)(ξ) + κ_{d−1}(ξ)·φ̌′(φ̌^(d−1)(ξ)).
//
// For the ReLU this is exactly the NTK of package kernel (SPEC §6) on unit
// vectors, which is what is used. depth is 1..kernel.MaxDepth.
func (a Activation) Kappa(depth int) (func(xi float64) float64, error) {
	if depth < 1 || depth > kernel.MaxDepth {
		return nil, fmt.Errorf("depth %d: must be 1..%d", depth, kernel.MaxDepth)
	}
	if a.relu() {
		spec := kernel.Spec{Kind: kernel.NTK, Depth: depth}
		return func(xi float64) float64 { return spec.DotValue(clamp1(xi), 1, 1) }, nil
	}
	return func(xi float64) float64 { return a.kappaDuals(depth, xi) }, nil
}

// kappaDuals is the recursion of Kappa on the leaky family's own duals.
func (a Activation) kappaDuals(depth int, xi float64) float64 {
	rho, k := clamp1(xi), clamp1(xi)
	for l := 0; l < depth; l++ {
		f, df := a.duals(rho)
		k = f + k*df
		rho = min(max(f, -1), 1)
	}
	return k
}

func clamp1(x float64) float64 { return min(max(x, -1), 1) }
