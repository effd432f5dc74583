//go:build !openblas

package linalg

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
	"gonum.org/v1/gonum/lapack"
	lapackgonum "gonum.org/v1/gonum/lapack/gonum"
)

var impl gonum.Implementation

// Backend names the linear-algebra backend compiled in.
func Backend() string { return "gonum" }

// SizeDependentSums reports whether a GEMM's entry can round differently
// depending on the shapes of the call: gonum's blocked GEMM sums every
// entry in the same order whatever the sizes.
const SizeDependentSums = false

func setBackendThreads(int) {} // gonum uses GOMAXPROCS workers

// backendThreads is 1: gonum's calls run on the calling goroutine (its
// GEMM may split work over goroutines, which Go schedules on GOMAXPROCS).
func backendThreads() int { return 1 }

func tr(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices;
// op(A) is m×k, op(B) is k×n.
func Gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	switch a := any(a).(type) {
	case []float64:
		impl.Dgemm(tr(tA), tr(tB), m, n, k, float64(alpha), a, lda, any(b).([]float64), ldb, float64(beta), any(c).([]float64), ldc)
	case []float32:
		impl.Sgemm(tr(tA), tr(tB), m, n, k, float32(alpha), a, lda, any(b).([]float32), ldb, float32(beta), any(c).([]float32), ldc)
	}
}

// SyrkLower computes the lower triangle of C = alpha·A·Aᵀ + beta·C, A n×k.
// The pure-Go build splits it into row bands of GEMMs, because gonum's SYRK
// is single-threaded while its GEMM is not; the few upper-triangle entries a
// band touches inside its own diagonal square are scratch by contract.
func SyrkLower[T Float](n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int) {
	const band = 256
	for r0 := 0; r0 < n; r0 += band {
		r1 := min(r0+band, n)
		Gemm(false, true, r1-r0, r1, k, alpha, a[r0*lda:], lda, a, lda, beta, c[r0*ldc:], ldc)
	}
}

// SyrkLowerTrans computes the lower triangle of C = alpha·Aᵀ·A + beta·C,
// A k×n, in row bands of GEMMs as SyrkLower.
func SyrkLowerTrans[T Float](n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int) {
	const band = 256
	for r0 := 0; r0 < n; r0 += band {
		r1 := min(r0+band, n)
		Gemm(true, false, r1-r0, r1, k, alpha, a[r0:], lda, a, lda, beta, c[r0*ldc:], ldc)
	}
}

// trsmRightLowerTrans solves X·Lᵀ = B in place (B m×n, L n×n lower).
func trsmRightLowerTrans[T Float](m, n int, l []T, ldl int, b []T, ldb int) {
	switch l := any(l).(type) {
	case []float64:
		impl.Dtrsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, l, ldl, any(b).([]float64), ldb)
	case []float32:
		impl.Strsm(blas.Right, blas.Lower, blas.Trans, blas.NonUnit, m, n, 1, l, ldl, any(b).([]float32), ldb)
	}
}

// potrfSmall factors one diagonal block (lower, row-major).
func potrfSmall[T Float](n int, a []T, lda int) int { return chol2(n, a, lda) }

// trsm is TriSolve by the backend.
func trsm[T Float](trans bool, n, nrhs int, l []T, ldl int, b []T, ldb int) {
	switch l := any(l).(type) {
	case []float64:
		impl.Dtrsm(blas.Left, blas.Lower, tr(trans), blas.NonUnit, n, nrhs, 1, l, ldl, any(b).([]float64), ldb)
	case []float32:
		impl.Strsm(blas.Left, blas.Lower, tr(trans), blas.NonUnit, n, nrhs, 1, l, ldl, any(b).([]float32), ldb)
	}
}

func radialRows[T Float](b Block[T], op RadialOp, lo, hi int, coef bool) {
	for i := lo; i < hi; i++ {
		radialGo(b.G[i*b.LD:], b.colsOf(i), b.NA[i], b.NB, op, coef)
	}
}

func expNegPow(x []float64, c, p float64) {
	for j, s := range x {
		x[j] = ExpNegPowOf(s, c, p)
	}
}

// lpSums and lpSumsPhi: the powers of the search's grid in loops of
// their own (a switch per element doubled their cost).
func lpSums[T Float](a, bt []T, ld, n int, p float64, out []float64) {
	clear(out[:n])
	for t, x := range a {
		row, xt := bt[t*ld:t*ld+n], float64(x)
		switch p {
		case 1:
			for j, y := range row {
				out[j] += math.Abs(xt - float64(y))
			}
		case 2:
			for j, y := range row {
				v := xt - float64(y)
				out[j] += v * v
			}
		case 0.5:
			for j, y := range row {
				out[j] += math.Sqrt(math.Abs(xt - float64(y)))
			}
		case 1.5:
			// Four independent square roots per step: one at a time, the
			// loop waited on each (2× slower than summing pair by pair).
			o, j := out[:len(row)], 0
			for ; j+4 <= len(row); j += 4 {
				u0, u1 := math.Abs(xt-float64(row[j])), math.Abs(xt-float64(row[j+1]))
				u2, u3 := math.Abs(xt-float64(row[j+2])), math.Abs(xt-float64(row[j+3]))
				o[j] += u0 * math.Sqrt(u0)
				o[j+1] += u1 * math.Sqrt(u1)
				o[j+2] += u2 * math.Sqrt(u2)
				o[j+3] += u3 * math.Sqrt(u3)
			}
			for ; j < len(row); j++ {
				u := math.Abs(xt - float64(row[j]))
				o[j] += u * math.Sqrt(u)
			}
		default:
			for j, y := range row {
				out[j] += LpTerm(xt-float64(y), p)
			}
		}
	}
}

func lpSumsPhi[T Float](a, bt []T, ld, n int, p, tiny float64, sums, phi []float64) {
	clear(sums[:n])
	for t, x := range a {
		row, out, xt := bt[t*ld:t*ld+n], phi[t*n:t*n+n], float64(x)
		switch p {
		case 1:
			for j, y := range row {
				v := xt - float64(y)
				u := math.Abs(v)
				sums[j] += u
				out[j] = 0
				if u >= tiny {
					out[j] = math.Copysign(1, v)
				}
			}
		case 2:
			for j, y := range row {
				v := xt - float64(y)
				sums[j] += v * v
				out[j] = 0
				if math.Abs(v) >= tiny {
					out[j] = v
				}
			}
		case 1.5:
			for j, y := range row {
				v := xt - float64(y)
				u := math.Abs(v)
				r := math.Sqrt(u)
				sums[j] += u * r
				out[j] = 0
				if u >= tiny {
					out[j] = math.Copysign(r, v)
				}
			}
		default:
			for j, y := range row {
				v := xt - float64(y)
				sums[j] += LpTerm(v, p)
				out[j] = LpPhiOf(v, p, tiny)
			}
		}
	}
}

func powPos(x []float64, p float64) {
	for j, s := range x {
		if s > 0 {
			x[j] = math.Pow(s, p)
		}
	}
}

// eigSym is EigSym's LAPACK call: vecs holds a copy of the input on entry.
func eigSym(d int, vals, vecs []float64) bool {
	// gonum's LAPACK is row-major: it reads the lower triangle as it is and
	// returns the eigenvectors as columns.
	var lp lapackgonum.Implementation
	work := make([]float64, 1)
	lp.Dsyev(lapack.EVCompute, blas.Lower, d, vecs, d, vals, work, -1)
	work = make([]float64, int(work[0]))
	return lp.Dsyev(lapack.EVCompute, blas.Lower, d, vecs, d, vals, work, len(work))
}
