package kernel

import (
	"context"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Kernel blocks are computed in tiles of blockRows × blockCols, each a task
// of its own: a single-threaded GEMM, then the element-wise pass while the
// tile (1 MB in float64; 128×1024 measured best at n = 20 000, d = 100) is still in that core's L2 cache. Streaming a
// 3 GB block through memory twice, once for a multi-threaded GEMM and once
// for the pass, costs more than either pass's arithmetic. (Variables only
// so that tests can force many small tiles.)
var (
	blockRows = 128
	blockCols = 1024
)

// pass selects the element-wise step that follows a tile's GEMM.
type pass int

const (
	passEval     pass = iota // kernel values
	passCoef                 // gradient coefficients A (radial form)
	passGradCoef             // A into the tile, B into a second output
)

// span is a tile: rows [r0, r1) of one block of points against rows
// [c0, c1) of another.
type span struct{ r0, r1, c0, c1 int }

// tileOut is where a block goes: G (stride LD) and, for passGradCoef, B at
// the same positions.
type tileOut[T Float] struct {
	G, B []T
	LD   int
	// RowWise computes the tile's Gram products one row of a at a time,
	// so that a row's products are the same call on the same numbers
	// whatever the other rows of the band. ApplyBatch's bands need it:
	// OpenBLAS's GEMM kernels (0.3.21) round a row differently by its
	// place in the block on some CPUs and shapes, so that a query's score
	// depended on the rows predicted with it. Computing the products the
	// other way round (centres times queries) was enough on an AVX-512
	// EPYC but not on an AVX2 one (TestApplyBatchRowsIndependent).
	RowWise bool
}

// tileOf computes one tile of E(a, b) into o (rows and columns relative to
// the block), then the pass, serially on the calling goroutine. lower
// keeps row i to columns ≤ i of the whole block.
func tileOf[T Float](s Spec, a, b Points[T], t span, o tileOut[T], lower bool, p pass) {
	if s.Pairwise() {
		if p != passEval {
			// The AGOP takes lp-laplace gradients from LpGradients.
			panic("kernel: lp-laplace has no gradient coefficient matrices")
		}
		lpTile(s, a, b, t, o, lower)
		return
	}
	d, ld := a.D, o.LD
	g := o.G[t.r0*ld+t.c0:]
	if m, n := t.r1-t.r0, t.c1-t.c0; o.RowWise {
		// One product per row of a: its row of the tile is then the same
		// call on the same numbers whatever the other rows of the band.
		for i := range m {
			linalg.Gemm(false, true, 1, n, d, 1, a.Z[(t.r0+i)*d:], d, b.Z[t.c0*d:], d, 0, g[i*ld:], ld)
		}
	} else {
		linalg.Gemm(false, true, m, n, d, 1, a.Z[t.r0*d:], d, b.Z[t.c0*d:], d, 0, g, ld)
	}
	blk := linalg.Block[T]{G: g, Rows: t.r1 - t.r0, Cols: t.c1 - t.c0, LD: ld, NA: a.Norms[t.r0:], NB: b.Norms[t.c0:]}
	if lower && t.c1 > t.r0 {
		// The tile straddles the diagonal: row r0+i needs columns ≤ r0+i.
		blk.Lower, blk.Row0 = true, t.r0-t.c0
	}
	switch p {
	case passEval:
		eval(s, blk, linalg.Serial)
	case passCoef:
		coef(s, blk, nil, linalg.Serial)
	case passGradCoef:
		coef(s, blk, o.B[t.r0*ld+t.c0:], linalg.Serial)
	}
}

// tiled runs the tiles of E(a, b) (a.N × b.N) as parallel tasks; lower
// restricts it to the lower triangle. ctx is checked between tiles.
func tiled[T Float](ctx context.Context, s Spec, a, b Points[T], o tileOut[T], lower bool, p pass) error {
	var tiles []span
	for r0 := 0; r0 < a.N; r0 += blockRows {
		r1 := min(r0+blockRows, a.N)
		cend := b.N
		if lower {
			cend = min(r1, b.N)
		}
		for c0 := 0; c0 < cend; c0 += blockCols {
			tiles = append(tiles, span{r0, r1, c0, min(c0+blockCols, cend)})
		}
	}
	return linalg.Tasks(ctx, len(tiles), func(_, i int) {
		tileOf(s, a, b, tiles[i], o, lower, p)
	})
}

// Symmetric writes the lower triangle (diagonal included) of K(Z, Z) into
// dst (n×n, stride ld). The diagonal is set to the exact K(x, x) rather
// than what round-off in the expansion would give: 1 for the radial
// kernels, SelfValue()·‖x‖² for ntk and nngp. Entries above the diagonal
// inside diagonal tiles are scratch. ctx is checked between tiles.
func Symmetric[T Float](ctx context.Context, s Spec, z Points[T], dst []T, ld int) error {
	if err := tiled(ctx, s, z, z, tileOut[T]{G: dst, LD: ld}, true, passEval); err != nil {
		return err
	}
	for i := 0; i < z.N; i++ {
		dst[i*ld+i] = T(s.selfAt(float64(z.Norms[i])))
	}
	return nil
}

// selfAt is K(x, x) for a point of squared norm sq.
func (s Spec) selfAt(sq float64) float64 {
	if s.Radial() {
		return s.SelfValue()
	}
	return s.SelfValue() * sq // ntk, nngp: K(x, x) = SelfValue()·‖x‖²
}

// Cross writes K(A, B) into dst (a.N × b.N, stride ld).
func Cross[T Float](s Spec, a, b Points[T], dst []T, ld int) {
	_ = tiled(context.Background(), s, a, b, tileOut[T]{G: dst, LD: ld}, false, passEval)
}

// CrossCoef writes the gradient coefficients a_ij of K(A_i, B_j), with
// ∇K(A_i, B_j) = a_ij·M(B_j − A_i) for the radial kernels (terms closer
// than 1e-10 are 0); for ntk and nngp it writes A_ij of CrossGradCoef.
func CrossCoef[T Float](s Spec, a, b Points[T], dst []T, ld int) {
	_ = tiled(context.Background(), s, a, b, tileOut[T]{G: dst, LD: ld}, false, passCoef)
}

// CrossGradCoef writes both gradient coefficients of K(A_i, B_j): A_ij =
// ∂K/∂g into dstA and B_ij = 2∂K/∂‖A_i‖² into dstB (both a.N × b.N, stride
// ld), so that ∇K(A_i, B_j) with respect to A_i is A_ij·B_j + B_ij·A_i
// (radial kernels: B = −A).
func CrossGradCoef[T Float](s Spec, a, b Points[T], dstA, dstB []T, ld int) {
	_ = tiled(context.Background(), s, a, b, tileOut[T]{G: dstA, B: dstB, LD: ld}, false, passGradCoef)
}

// SquaredDistances writes ‖a_i − b_j‖² (clamped at 0) into dst (a.N × b.N).
func SquaredDistances(a, b Points[float64], dst []float64) {
	na, nb, d := a.N, b.N, a.D
	linalg.Gemm(false, true, na, nb, d, -2, a.Z, d, b.Z, d, 0, dst, nb)
	for i := 0; i < na; i++ {
		row := dst[i*nb : i*nb+nb]
		for j := range row {
			row[j] = max(row[j]+a.Norms[i]+b.Norms[j], 0)
		}
	}
}
