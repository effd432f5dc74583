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

// Symmetric writes the lower triangle (diagonal included) of K(Z, Z) into
// out (n×n, stride ld); norms are Norms(z). The diagonal is set to the exact
// K(x, x) rather than what round-off in the expansion would give. Entries
// above the diagonal inside each row band are scratch.
//
// The work goes in row bands (GEMM, then the element-wise pass while the
// band is still in cache) and ctx is checked between bands.
func Symmetric[T linalg.Float](ctx context.Context, s Spec, z []T, n, d int, norms []T, out []T, ld int) error {
	band := max(64, min(n, (8<<20)/(max(n, 1))))
	self := T(s.SelfValue())
	for r0 := 0; r0 < n; r0 += band {
		if err := ctx.Err(); err != nil {
			return err
		}
		r1 := min(r0+band, n)
		linalg.Gemm(false, true, r1-r0, r1, d, 1, z[r0*d:], d, z, d, 0, out[r0*ld:], ld)
		Eval(s, linalg.Block[T]{G: out[r0*ld:], Rows: r1 - r0, Cols: r1, LD: ld, NA: norms[r0:], NB: norms, Lower: true, Row0: r0})
		for i := r0; i < r1; i++ {
			out[i*ld+i] = self
		}
	}
	return nil
}

// Cross writes K(A, B) for na rows of a and nb rows of b (both with d
// columns) into out (na×nb, stride ld).
func Cross[T linalg.Float](s Spec, a []T, na int, normsA []T, b []T, nb int, normsB []T, d int, out []T, ld int) {
	linalg.Gemm(false, true, na, nb, d, 1, a, d, b, d, 0, out, ld)
	Eval(s, linalg.Block[T]{G: out, Rows: na, Cols: nb, LD: ld, NA: normsA, NB: normsB})
}

// CrossCoef writes the gradient coefficients a_ij of K(A_i, B_j) (see Coef).
func CrossCoef[T linalg.Float](s Spec, a []T, na int, normsA []T, b []T, nb int, normsB []T, d int, out []T, ld int) {
	linalg.Gemm(false, true, na, nb, d, 1, a, d, b, d, 0, out, ld)
	Coef(s, linalg.Block[T]{G: out, Rows: na, Cols: nb, LD: ld, NA: normsA, NB: normsB})
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
