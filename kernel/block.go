package kernel

import (
	"context"

	"github.com/rfmkit/rfm/internal/linalg"
)

func gemm64(tA, tB bool, m, n, k int, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
	linalg.Gemm(tA, tB, m, n, k, 1, a, lda, b, ldb, 0, c, ldc)
}

// Norms returns the squared Euclidean norm of each of the n rows of z (n×d).
func Norms[T linalg.Float](z []T, n, d int) []T {
	out := make([]T, n)
	for i := 0; i < n; i++ {
		var s float64
		for _, v := range z[i*d : i*d+d] {
			s += float64(v) * float64(v)
		}
		out[i] = T(s)
	}
	return out
}

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

// tileOf computes one tile: rows [r0, r1) of a against rows [c0, c1) of b
// into out (stride ld; rows and columns relative to the block), then the
// pass, serially on the calling goroutine. lower keeps row i to columns
// ≤ i of the whole block.
func tileOf[T linalg.Float](s Spec, a, na []T, b, nb []T, d int, r0, r1, c0, c1 int, out []T, ld int, lower bool, p pass, outB []T) {
	o := out[r0*ld+c0:]
	linalg.Gemm(false, true, r1-r0, c1-c0, d, 1, a[r0*d:], d, b[c0*d:], d, 0, o, ld)
	blk := linalg.Block[T]{G: o, Rows: r1 - r0, Cols: c1 - c0, LD: ld, NA: na[r0:], NB: nb[c0:]}
	if lower && c1 > r0 {
		// The tile straddles the diagonal: row r0+i needs columns ≤ r0+i.
		blk.Lower, blk.Row0 = true, r0-c0
	}
	switch p {
	case passEval:
		eval(s, blk, linalg.Serial)
	case passCoef:
		coef(s, blk, nil, linalg.Serial)
	case passGradCoef:
		coef(s, blk, outB[r0*ld+c0:], linalg.Serial)
	}
}

// tiled runs the tiles of a rows×cols block of out (stride ld) as parallel
// tasks; lower restricts it to the lower triangle. ctx is checked between
// tiles.
func tiled[T linalg.Float](ctx context.Context, s Spec, a []T, na []T, rows int, b []T, nb []T, cols, d int, out []T, ld int, lower bool, p pass, outB []T) error {
	type span struct{ r0, r1, c0, c1 int }
	var tiles []span
	for r0 := 0; r0 < rows; r0 += blockRows {
		r1 := min(r0+blockRows, rows)
		cend := cols
		if lower {
			cend = min(r1, cols)
		}
		for c0 := 0; c0 < cend; c0 += blockCols {
			tiles = append(tiles, span{r0, r1, c0, min(c0+blockCols, cend)})
		}
	}
	return linalg.Tasks(ctx, len(tiles), func(_, i int) {
		t := tiles[i]
		tileOf(s, a, na, b, nb, d, t.r0, t.r1, t.c0, t.c1, out, ld, lower, p, outB)
	})
}

// Symmetric writes the lower triangle (diagonal included) of K(Z, Z) into
// out (n×n, stride ld); norms are Norms(z). The diagonal is set to the exact
// K(x, x) rather than what round-off in the expansion would give: 1 for the
// radial kernels, SelfValue()·‖x‖² for ntk and nngp. Entries above the
// diagonal inside diagonal tiles are scratch. ctx is checked between tiles.
func Symmetric[T linalg.Float](ctx context.Context, s Spec, z []T, n, d int, norms []T, out []T, ld int) error {
	if err := tiled(ctx, s, z, norms, n, z, norms, n, d, out, ld, true, passEval, nil); err != nil {
		return err
	}
	self := s.SelfValue()
	for i := 0; i < n; i++ {
		if s.Radial() {
			out[i*ld+i] = T(self)
		} else {
			out[i*ld+i] = T(self * float64(norms[i]))
		}
	}
	return nil
}

// Cross writes K(A, B) for na rows of a and nb rows of b (both with d
// columns) into out (na×nb, stride ld).
func Cross[T linalg.Float](s Spec, a []T, na int, normsA []T, b []T, nb int, normsB []T, d int, out []T, ld int) {
	_ = tiled(context.Background(), s, a, normsA, na, b, normsB, nb, d, out, ld, false, passEval, nil)
}

// CrossCoef writes the gradient coefficients a_ij of K(A_i, B_j) (see Coef).
func CrossCoef[T linalg.Float](s Spec, a []T, na int, normsA []T, b []T, nb int, normsB []T, d int, out []T, ld int) {
	_ = tiled(context.Background(), s, a, normsA, na, b, normsB, nb, d, out, ld, false, passCoef, nil)
}

// CrossGradCoef writes both gradient coefficients of K(A_i, B_j) (see
// GradCoef): A_ij into outA and B_ij into outB (both na×nb, stride ld), so
// that ∇ K(A_i, B_j) with respect to A_i is A_ij·B_j + B_ij·A_i.
func CrossGradCoef[T linalg.Float](s Spec, a []T, na int, normsA []T, b []T, nb int, normsB []T, d int, outA, outB []T, ld int) {
	_ = tiled(context.Background(), s, a, normsA, na, b, normsB, nb, d, outA, ld, false, passGradCoef, outB)
}

// SquaredDistances writes ‖a_i − b_j‖² (clamped at 0) into out (na×nb).
func SquaredDistances(a []float64, na int, normsA []float64, b []float64, nb int, normsB []float64, d int, out []float64) {
	linalg.Gemm(false, true, na, nb, d, -2, a, d, b, d, 0, out, nb)
	for i := 0; i < na; i++ {
		row := out[i*nb : i*nb+nb]
		for j := range row {
			row[j] = max(row[j]+normsA[i]+normsB[j], 0)
		}
	}
}
