package memory

import (
	"context"
	"math"

	"github.com/rfmkit/rfm/nn"
)

// Example is the verification of one stored example x_i of a cycle of
// length L (1 when autoencoding).
type Example struct {
	Index int `json:"index"` // 0-based row of the set
	Cycle int `json:"cycle"` // 0-based
	// FixedError is ‖f^L(x_i) − x_i‖ (Euclidean).
	FixedError float64 `json:"fixed_point_error"`
	// Radius is the power-iteration estimate of the spectral radius of
	// the Jacobian of f^L at x_i (see SpectralRadii).
	Radius float64 `json:"top_eigenvalue"`
	// Dense is the exact spectral radius from the formed Jacobian, for
	// D ≤ MaxDense when asked (nil otherwise).
	Dense *float64 `json:"top_eigenvalue_dense,omitempty"`
	// Ritz is the Arnoldi estimate of the same radius (RitzRadii), when
	// asked.
	Ritz *float64 `json:"top_eigenvalue_arnoldi,omitempty"`
	// Stored: FixedError ≤ the tolerance and Radius < 1 (and Ritz < 1
	// when computed) (Propositions 1
	// and 2 of the thesis: an attractor, or a point of a stable cycle).
	Stored bool `json:"stored"`
}

// VerifyOptions tunes Verify.
type VerifyOptions struct {
	Power PowerOptions
	// Tol is the largest fixed-point error of a stored example.
	Tol float64
	// Dense also forms the Jacobian when D ≤ MaxDense.
	Dense bool
	// Arnoldi > 0 also runs that many Arnoldi steps (RitzRadii).
	Arnoldi int
}

// Verify measures, for every example, its fixed-point error under f^L
// and the top eigenvalue modulus of J_{f^L} there, L its cycle's length.
func Verify(ctx context.Context, net *nn.Network, s *Set, o VerifyOptions) ([]Example, error) {
	out := make([]Example, s.N)
	byLen := map[int][]int{}
	var lens []int
	for i := 0; i < s.N; i++ {
		l := s.CycleLen(i)
		if _, ok := byLen[l]; !ok {
			lens = append(lens, l)
		}
		byLen[l] = append(byLen[l], i)
	}
	for _, l := range lens {
		idx := byLen[l]
		x := make([]float64, len(idx)*s.D)
		for r, i := range idx {
			copy(x[r*s.D:(r+1)*s.D], s.Example(i))
		}
		fx := Apply(net, x, len(idx), l)
		radii, err := SpectralRadii(ctx, IterateJVP(net, x, l), len(idx), s.D, o.Power)
		if err != nil {
			return nil, err
		}
		var ritz []float64
		if o.Arnoldi > 0 {
			if ritz, err = RitzRadii(ctx, IterateJVP(net, x, l), len(idx), s.D, o.Arnoldi, o.Power.Seed); err != nil {
				return nil, err
			}
		}
		for r, i := range idx {
			e := Example{Index: i, Cycle: s.CycleOf(i), Radius: radii[r]}
			e.FixedError = dist(fx[r*s.D:(r+1)*s.D], s.Example(i))
			if o.Dense && s.D <= MaxDense {
				rho, err := DenseRadius(DenseJacobian(net, s.Example(i), l), s.D)
				if err != nil {
					return nil, err
				}
				e.Dense = &rho
			}
			e.Stored = e.FixedError <= o.Tol && e.Radius < 1
			if ritz != nil {
				e.Ritz = &ritz[r]
				e.Stored = e.Stored && ritz[r] < 1
			}
			out[i] = e
		}
	}
	return out, nil
}

func dist(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		d := v - b[i]
		s += d * d
	}
	return math.Sqrt(s)
}
