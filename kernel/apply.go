package kernel

import (
	"context"
	"sync"
	"unsafe"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Entries selects what Product multiplies.
type Entries int

const (
	// Values: the kernel K(q_i, c_j).
	Values Entries = iota
	// GradA: the gradient coefficient A_ij of GradCoef (for radial kernels
	// the a_ij of Coef, with ∇K(q_i, c_j) = a_ij·(c_j − q_i) in mapped
	// coordinates).
	GradA
	// GradAB: A for the columns of R before the split, B (GradCoef's second
	// coefficient) for the columns from the split on.
	GradAB
)

// RHS gives rows [c0, c1) and columns [j0, j1) of the right-hand side R of
// Product: a view into a stored matrix (with its stride), or values
// generated into scratch ((c1−c0)×(j1−j0), stride j1−j0), so that a wide R
// need never be stored whole.
type RHS[T linalg.Float] func(c0, c1, j0, j1 int, scratch []T) (block []T, stride int)

// Stored is the RHS of a stored nc×w row-major matrix r.
func Stored[T linalg.Float](r []T, w int) RHS[T] {
	return func(c0, _, j0, _ int, _ []T) ([]T, int) { return r[c0*w+j0:], w }
}

// rhsBytes bounds the scratch of one generated RHS block.
var rhsBytes = 4 << 20 // a variable only so that tests can force many chunks

// Product computes out = E(Q, C)·R for nq mapped query rows q and nc
// mapped centres c (both with d columns), where E is the kernel or one of
// its gradient coefficients (see Entries) and R is nc×w; out is nq×w
// (row-major, stride w). With GradAB, the columns of R from split on are
// multiplied by B instead of A. The nq×nc matrix E is never held: each task
// takes a band of query rows and walks the centres a tile at a time,
// multiplying each tile by its rows of R (a chunk of columns at a time)
// while it is in cache (memory: a few MB per thread). The sums run in a
// fixed order, so the result does not depend on the thread count. ctx is
// checked between bands.
func Product[T linalg.Float](ctx context.Context, s Spec, e Entries, q []T, nq int, normsQ []T, c []T, nc int, normsC []T, d int, r RHS[T], w, split int, out []T) error {
	if nq == 0 || w == 0 {
		return ctx.Err()
	}
	if nc == 0 {
		clear(out[:nq*w])
		return ctx.Err()
	}
	if e != GradAB {
		split = w
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	rows, cols := blockRows, min(blockCols, nc)
	chunk := max(1, min(w, rhsBytes/(size*cols)))
	ntile := 1
	if e == GradAB {
		ntile = 2
	}
	tileLen := rows * cols
	pool := sync.Pool{New: func() any { return make([]T, ntile*tileLen+cols*chunk) }}
	bands := (nq + rows - 1) / rows
	return linalg.Tasks(ctx, bands, func(_, i int) {
		buf := pool.Get().([]T)
		defer pool.Put(buf)
		tileA, tileB, scratch := buf[:tileLen], buf[tileLen:], buf[ntile*tileLen:]
		r0 := i * rows
		r1 := min(r0+rows, nq)
		m := r1 - r0
		o := out[r0*w:]
		for c0 := 0; c0 < nc; c0 += cols {
			c1 := min(c0+cols, nc)
			tw := c1 - c0
			var beta T = 1
			if c0 == 0 {
				beta = 0
			}
			qa, qn, ca, cn := q[r0*d:], normsQ[r0:], c[c0*d:], normsC[c0:]
			switch e {
			case Values:
				tileOf(s, qa, qn, ca, cn, d, 0, m, 0, tw, tileA, tw, false, passEval, nil)
			case GradA:
				tileOf(s, qa, qn, ca, cn, d, 0, m, 0, tw, tileA, tw, false, passCoef, nil)
			case GradAB:
				tileOf(s, qa, qn, ca, cn, d, 0, m, 0, tw, tileA, tw, false, passGradCoef, tileB)
			}
			for j0 := 0; j0 < w; {
				j1 := min(j0+chunk, w)
				tile := tileA
				if j0 < split {
					j1 = min(j1, split)
				} else {
					tile = tileB
				}
				rb, ld := r(c0, c1, j0, j1, scratch)
				linalg.Gemm(false, false, m, j1-j0, tw, 1, tile, tw, rb, ld, beta, o[j0:], w)
				j0 = j1
			}
		}
	})
}

// Apply computes K(Q, C)·alpha (nq×k) for nq mapped query rows q and nc
// mapped centres c (both with d columns), alpha nc×k: Product with the
// kernel's values.
func Apply(ctx context.Context, s Spec, q []float64, nq int, normsQ []float64, c []float64, nc int, normsC []float64, d int, alpha []float64, k int) ([]float64, error) {
	out := make([]float64, nq*k)
	if err := Product(ctx, s, Values, q, nq, normsQ, c, nc, normsC, d, Stored(alpha, k), k, 0, out); err != nil {
		return nil, err
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
