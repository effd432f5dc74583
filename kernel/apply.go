package kernel

import (
	"context"

	"github.com/rfmkit/rfm/internal/linalg"
)

// tileRows picks how many query rows to process at once so that one tile of
// kernel values (rows × n) stays near 32 MB whatever n is.
func tileRows(n int) int {
	r := (32 << 20) / (8 * max(n, 1))
	return max(16, min(r, 4096))
}

// Apply computes out = K(Q, C)·alpha for nq mapped query rows q and nc
// mapped centres c (both with d columns), alpha nc×k. The kernel matrix is
// never held whole: it is built tile by tile (memory ~32 MB). ctx is checked
// between tiles.
func Apply(ctx context.Context, s Spec, q []float64, nq int, normsQ []float64, c []float64, nc int, normsC []float64, d int, alpha []float64, k int) ([]float64, error) {
	out := make([]float64, nq*k)
	tr := tileRows(nc)
	buf := make([]float64, min(tr, nq)*nc)
	for r0 := 0; r0 < nq; r0 += tr {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r1 := min(r0+tr, nq)
		Cross(s, q[r0*d:], r1-r0, normsQ[r0:], c, nc, normsC, d, buf, nc)
		linalg.Gemm(false, false, r1-r0, k, nc, 1, buf, nc, alpha, k, 0, out[r0*k:], k)
	}
	return out, nil
}

// SymApply computes K(Z, Z)·alpha for n mapped rows z, visiting only the
// tiles on and below the diagonal and applying each off-diagonal tile both
// ways: half the kernel evaluations of Apply. The diagonal is the exact
// K(x, x). Memory: one 1024×1024 tile. ctx is checked between tile rows.
func SymApply(ctx context.Context, s Spec, z []float64, n int, norms []float64, d int, alpha []float64, k int) ([]float64, error) {
	const tile = 1024
	out := make([]float64, n*k)
	buf := make([]float64, min(tile, n)*min(tile, n))
	self := s.SelfValue()
	for r0 := 0; r0 < n; r0 += tile {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r1 := min(r0+tile, n)
		for c0 := 0; c0 <= r0; c0 += tile {
			c1 := min(c0+tile, n)
			w := c1 - c0
			Cross(s, z[r0*d:], r1-r0, norms[r0:], z[c0*d:], w, norms[c0:], d, buf, w)
			if c0 == r0 {
				for i := 0; i < w; i++ {
					if s.Radial() {
						buf[i*w+i] = self
					} else { // ntk, nngp: K(x, x) = SelfValue()·‖x‖²
						buf[i*w+i] = self * norms[c0+i]
					}
				}
			}
			linalg.Gemm(false, false, r1-r0, k, w, 1, buf, w, alpha[c0*k:], k, 1, out[r0*k:], k)
			if c0 != r0 {
				linalg.Gemm(true, false, w, k, r1-r0, 1, buf, w, alpha[r0*k:], k, 1, out[c0*k:], k)
			}
		}
	}
	return out, nil
}
