package complete

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Synthetic is a seeded test problem: a low-rank matrix with row offsets,
//
//	Y[i,j] = b_i + u_iᵀv_j/√r + ε,   b, u, v, ε Gaussian (ε of std Noise),
//
// and column metadata that see the columns' latent factors v_j through a
// random linear map plus noise: meta_j = Aᵀv_j/√r + η (η of std MetaNoise).
type Synthetic struct {
	M, N, Rank, MetaDim int
	Noise, MetaNoise    float64
	Observed            float64 // share of observed cells (scattered)
	Seed                uint64
}

// Generate returns the full matrix Y (its Observed marks the scattered
// observed share) and the metadata (n×MetaDim, row-major).
func (s Synthetic) Generate() (*Matrix, []float64, error) {
	if s.M < 2 || s.N < 2 || s.Rank < 1 || s.MetaDim < 1 || !(s.Observed > 0 && s.Observed <= 1) {
		return nil, nil, fmt.Errorf("synthetic problem %+v: sizes must be positive and the observed share in (0, 1]", s)
	}
	r := rand.New(rand.NewPCG(s.Seed, 0x5717))
	gauss := func(k int, std float64) []float64 {
		x := make([]float64, k)
		for i := range x {
			x[i] = std * r.NormFloat64()
		}
		return x
	}
	sr := 1 / math.Sqrt(float64(s.Rank))
	b, u, v := gauss(s.M, 1), gauss(s.M*s.Rank, 1), gauss(s.N*s.Rank, 1)
	a := gauss(s.Rank*s.MetaDim, 1)
	y := NewMatrix(s.M, s.N)
	y.RowIDs, y.ColIDs = make([]string, s.M), make([]string, s.N)
	for i := range y.RowIDs {
		y.RowIDs[i] = fmt.Sprintf("r%d", i)
	}
	for j := range y.ColIDs {
		y.ColIDs[j] = fmt.Sprintf("c%d", j)
	}
	for i := 0; i < s.M; i++ {
		for j := 0; j < s.N; j++ {
			var d float64
			for k := 0; k < s.Rank; k++ {
				d += u[i*s.Rank+k] * v[j*s.Rank+k]
			}
			y.Values[i*s.N+j] = b[i] + d*sr + s.Noise*r.NormFloat64()
			y.Observed[i*s.N+j] = r.Float64() < s.Observed
		}
	}
	meta := make([]float64, s.N*s.MetaDim)
	for j := 0; j < s.N; j++ {
		for q := 0; q < s.MetaDim; q++ {
			var d float64
			for k := 0; k < s.Rank; k++ {
				d += v[j*s.Rank+k] * a[k*s.MetaDim+q]
			}
			meta[j*s.MetaDim+q] = d*sr + s.MetaNoise*r.NormFloat64()
		}
	}
	return y, meta, nil
}
