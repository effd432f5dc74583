package kernel

import (
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
// K(x, x) rather than what round-off in the expansion would give. The strict
// upper triangle is not touched.
func Symmetric[T linalg.Float](s Spec, z []T, n, d int, norms []T, out []T, ld int) {
	linalg.SyrkLower(n, d, 1, z, d, 0, out, ld)
	Eval(s, linalg.Block[T]{G: out, Rows: n, Cols: n, LD: ld, NA: norms, NB: norms, Lower: true})
	self := T(s.SelfValue())
	for i := 0; i < n; i++ {
		out[i*ld+i] = self
	}
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
