package kernel

import (
	"context"
	"fmt"
	"sync"
	"unsafe"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Entries selects what Product multiplies.
type Entries int

const (
	// Values: the kernel K(q_i, c_j).
	Values Entries = iota
	// GradA: the gradient coefficient A_ij of CrossGradCoef (for radial kernels
	// the a_ij of Coef, with ∇K(q_i, c_j) = a_ij·(c_j − q_i) in mapped
	// coordinates).
	GradA
	// GradAB: A for the columns of R before the split, B (CrossGradCoef's second
	// coefficient) for the columns from the split on.
	GradAB
)

// RHS is the right-hand side R (nc×w) of Product: stored whole, or
// generated a block at a time so that a wide R need never be stored.
type RHS[T Float] struct {
	// M is R stored whole (row-major, stride w), or nil.
	M []T
	// Gen, when M is nil, writes rows [c0, c1) and columns [j0, j1) of R
	// into dst ((c1−c0)×(j1−j0), stride j1−j0).
	Gen func(c0, c1, j0, j1 int, dst []T)
}

// Stored is the RHS of a stored nc×w row-major matrix r.
func Stored[T Float](r []T) RHS[T] { return RHS[T]{M: r} }

// rhsBytes bounds the scratch of one generated RHS block (columns of R are
// then generated and multiplied a chunk at a time).
var rhsBytes = 4 << 20 // a variable only so that tests can force many chunks

// Product computes dst = E(Q, C)·R for the mapped query points q and
// centres c, where E is the kernel or one of its gradient coefficients (see
// Entries) and R is c.N×w; dst is q.N×w (row-major, stride w). With GradAB,
// the columns of R from split on are multiplied by B instead of A. The
// q.N×c.N matrix E is never held: each task takes a band of query rows and
// walks the centres a tile at a time, multiplying each tile by its rows of
// R (a chunk of columns at a time) while it is in cache (memory: a few MB
// per thread). The sums run in a fixed order, so the result does not depend
// on the thread count. ctx is checked between bands.
func Product[T Float](ctx context.Context, s Spec, e Entries, q, c Points[T], r RHS[T], w, split int, dst []T) error {
	return product(ctx, s, e, q, c, r, w, split, dst, blockRows, false)
}

// product is Product with bands of the given number of query rows; rowWise
// computes each tile's Gram products a query row at a time (tileOut.RowWise).
func product[T Float](ctx context.Context, s Spec, e Entries, q, c Points[T], r RHS[T], w, split int, dst []T, band int, rowWise bool) error {
	nq, nc := q.N, c.N
	if nq == 0 || w == 0 {
		return ctx.Err()
	}
	if nc == 0 {
		clear(dst[:nq*w])
		return ctx.Err()
	}
	if e != GradAB {
		split = w
	}
	var zero T
	size := int(unsafe.Sizeof(zero))
	rows, cols := min(band, nq), min(blockCols, nc)
	chunk := w
	if r.M == nil {
		chunk = max(1, min(w, rhsBytes/(size*cols)))
	}
	ntile := 1
	if e == GradAB {
		ntile = 2
	}
	tileLen := rows * cols
	scratchLen := 0
	if r.M == nil {
		scratchLen = cols * chunk
	}
	p := passEval
	switch e {
	case GradA:
		p = passCoef
	case GradAB:
		p = passGradCoef
	}
	pool := sync.Pool{New: func() any { return make([]T, ntile*tileLen+scratchLen) }}
	bands := (nq + rows - 1) / rows
	return linalg.Tasks(ctx, bands, func(_, i int) {
		buf := pool.Get().([]T)
		defer pool.Put(buf)
		tileA, tileB, scratch := buf[:tileLen], buf[tileLen:], buf[ntile*tileLen:ntile*tileLen+scratchLen]
		r0 := i * rows
		r1 := min(r0+rows, nq)
		m := r1 - r0
		band := q.Slice(r0, r1)
		o := dst[r0*w:]
		for c0 := 0; c0 < nc; c0 += cols {
			c1 := min(c0+cols, nc)
			tw := c1 - c0
			var beta T = 1
			if c0 == 0 {
				beta = 0
			}
			tileOf(s, band, c.Slice(c0, c1), span{0, m, 0, tw}, tileOut[T]{G: tileA, B: tileB, LD: tw, RowWise: rowWise}, false, p)
			for j0 := 0; j0 < w; {
				j1 := min(j0+chunk, w)
				tile := tileA
				if j0 < split {
					j1 = min(j1, split)
				} else {
					tile = tileB
				}
				rb, ld := scratch, j1-j0
				if r.M != nil {
					rb, ld = r.M[c0*w+j0:], w
				} else {
					r.Gen(c0, c1, j0, j1, scratch)
				}
				linalg.Gemm(false, false, m, j1-j0, tw, 1, tile, tw, rb, ld, beta, o[j0:], w)
				j0 = j1
			}
		}
	})
}

// BatchRows is the multiple of rows a batch of query points is padded to
// (with zero rows) for ApplyBatch, so that a point's prediction does not
// depend on the other points of its batch: with a backend whose GEMM
// rounds by call shape (linalg.SizeDependentSums: OpenBLAS), every GEMM of
// ApplyBatch then has the same shape, bands of exactly BatchRows rows,
// whatever the batch (and the band's Gram products are taken a query row at
// a time, so that a row's place in the band does not change its rounding:
// tileOut.RowWise). 1 when the backend's sums do not depend on the
// shapes. Padding costs at most BatchRows − 1 extra rows per call; the
// bands are narrower than Product's (predictBand against blockRows), which
// keeps a single row cheap at some cost in GEMM efficiency on large batches.
func BatchRows() int {
	if linalg.SizeDependentSums {
		return predictBand
	}
	return 1
}

// predictBand is the band height of ApplyBatch with a shape-dependent
// backend (a variable so that tests can vary it).
var predictBand = 16

// ApplyBatch is Apply for query points padded to a multiple of
// BatchRows(): with bands of exactly BatchRows rows, so that each row's
// result does not depend on the others.
func ApplyBatch(ctx context.Context, s Spec, q, c Points[float64], alpha []float64, k int) ([]float64, error) {
	band, rowWise := blockRows, false
	if b := BatchRows(); b > 1 {
		if q.N%b != 0 {
			return nil, fmt.Errorf("kernel: ApplyBatch needs a multiple of %d rows, got %d", b, q.N)
		}
		band, rowWise = b, true
	}
	return apply(ctx, s, q, c, alpha, k, band, rowWise)
}

// Apply computes K(Q, C)·alpha (q.N×k) for mapped query points q and
// centres c, alpha c.N×k: Product with the kernel's values.
func Apply(ctx context.Context, s Spec, q, c Points[float64], alpha []float64, k int) ([]float64, error) {
	return apply(ctx, s, q, c, alpha, k, blockRows, false)
}

// apply is Apply in bands of the given number of query rows (rowWise: see
// product).
func apply(ctx context.Context, s Spec, q, c Points[float64], alpha []float64, k, band int, rowWise bool) ([]float64, error) {
	dst := make([]float64, q.N*k)
	if err := product(ctx, s, Values, q, c, Stored(alpha), k, 0, dst, band, rowWise); err != nil {
		return nil, err
	}
	return dst, nil
}

// symTiles keeps SymApply's tile buffers (1 MiB each) between calls: a
// fresh one costs more zeroing than a small fit's kernel pass. Every tile
// is written before it is read, so they need no clearing.
var symTiles = sync.Pool{New: func() any {
	b := make([]float64, blockRows*max(blockCols, blockRows))
	return &b
}}

// SymApply computes K(Z, Z)·alpha for n mapped rows z, with alpha n×k,
// visiting only the tiles on and below the diagonal and applying each
// off-diagonal tile both ways: half the kernel evaluations of Apply. The
// diagonal is the exact K(x, x). Each band of rows is a task that computes
// its tiles in cache and multiplies them at once; the transposed products
// land in other bands' rows, so every worker sums into its own n×k
// accumulator (tasks striped over workers, accumulators added in worker
// order: the same result every run with the same thread count). ctx is
// checked between bands.
func SymApply(ctx context.Context, s Spec, z Points[float64], alpha []float64, k int) ([]float64, error) {
	n := z.N
	rows, cols := blockRows, blockCols
	bands := (n + rows - 1) / rows
	workers := linalg.Workers(bands)
	acc := make([][]float64, workers)
	bufs := make([][]float64, workers)
	err := linalg.Striped(ctx, workers, bands, func(w, b int) {
		if acc[w] == nil {
			acc[w] = make([]float64, n*k)
			bufs[w] = *symTiles.Get().(*[]float64)
			if need := rows * max(cols, rows); len(bufs[w]) < need {
				// A buffer pooled under other tile sizes (tests change them).
				bufs[w] = make([]float64, need)
			}
		}
		out, buf := acc[w], bufs[w]
		r0 := b * rows
		r1 := min(r0+rows, n)
		m := r1 - r0
		band := z.Slice(r0, r1)
		for c0 := 0; c0 < r0; c0 += cols {
			c1 := min(c0+cols, r0)
			tw := c1 - c0
			tileOf(s, band, z.Slice(c0, c1), span{0, m, 0, tw}, tileOut[float64]{G: buf, LD: tw}, false, passEval)
			linalg.Gemm(false, false, m, k, tw, 1, buf, tw, alpha[c0*k:], k, 1, out[r0*k:], k)
			linalg.Gemm(true, false, tw, k, m, 1, buf, tw, alpha[r0*k:], k, 1, out[c0*k:], k)
		}
		tileOf(s, band, band, span{0, m, 0, m}, tileOut[float64]{G: buf, LD: m}, false, passEval)
		for i := 0; i < m; i++ {
			buf[i*m+i] = s.selfAt(band.Norms[i])
		}
		linalg.Gemm(false, false, m, k, m, 1, buf, m, alpha[r0*k:], k, 1, out[r0*k:], k)
	})
	for _, b := range bufs {
		if b != nil {
			symTiles.Put(&b)
		}
	}
	if err != nil {
		return nil, err
	}
	out := acc[0]
	for _, a := range acc[1:] {
		if a == nil {
			continue
		}
		for i, v := range a {
			out[i] += v
		}
	}
	if out == nil { // n = 0
		out = []float64{}
	}
	return out, nil
}
