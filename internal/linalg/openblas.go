//go:build openblas

package linalg

/*
#cgo CFLAGS: -O3
#cgo LDFLAGS: -llapacke -lopenblas -lm
#include <cblas.h>
#include <lapacke.h>
#include "radial.h"
*/
import "C"

import "unsafe"

// Backend names the linear-algebra backend compiled in.
func Backend() string { return "openblas" }

// SizeDependentSums reports that a GEMM's entry can round differently
// depending on the shapes of the call (OpenBLAS picks kernels, small-matrix
// paths and blockings by size), not only on its own row and column.
const SizeDependentSums = true

func setBackendThreads(n int) { C.openblas_set_num_threads(C.int(n)) }

// backendThreads is the number of threads the backend uses now.
func backendThreads() int { return int(C.openblas_get_num_threads()) }

func ctr(t bool) uint32 {
	if t {
		return C.CblasTrans
	}
	return C.CblasNoTrans
}

func p64(s []float64) *C.double {
	if len(s) == 0 {
		return nil
	}
	return (*C.double)(unsafe.Pointer(&s[0]))
}

func p32(s []float32) *C.float {
	if len(s) == 0 {
		return nil
	}
	return (*C.float)(unsafe.Pointer(&s[0]))
}

// Gemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices;
// op(A) is m×k, op(B) is k×n.
func Gemm[T Float](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int, beta T, c []T, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	switch a := any(a).(type) {
	case []float64:
		C.cblas_dgemm(C.CblasRowMajor, ctr(tA), ctr(tB), C.blasint(m), C.blasint(n), C.blasint(k), C.double(alpha),
			p64(a), C.blasint(lda), p64(any(b).([]float64)), C.blasint(ldb), C.double(beta), p64(any(c).([]float64)), C.blasint(ldc))
	case []float32:
		C.cblas_sgemm(C.CblasRowMajor, ctr(tA), ctr(tB), C.blasint(m), C.blasint(n), C.blasint(k), C.float(alpha),
			p32(a), C.blasint(lda), p32(any(b).([]float32)), C.blasint(ldb), C.float(beta), p32(any(c).([]float32)), C.blasint(ldc))
	}
}

// SyrkLower computes the lower triangle of C = alpha·A·Aᵀ + beta·C, A n×k.
func SyrkLower[T Float](n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int) {
	syrkLower(false, n, k, alpha, a, lda, beta, c, ldc)
}

// SyrkLowerTrans computes the lower triangle of C = alpha·Aᵀ·A + beta·C, A k×n.
func SyrkLowerTrans[T Float](n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int) {
	syrkLower(true, n, k, alpha, a, lda, beta, c, ldc)
}

func syrkLower[T Float](trans bool, n, k int, alpha T, a []T, lda int, beta T, c []T, ldc int) {
	if n == 0 {
		return
	}
	switch a := any(a).(type) {
	case []float64:
		C.cblas_dsyrk(C.CblasRowMajor, C.CblasLower, ctr(trans), C.blasint(n), C.blasint(k), C.double(alpha),
			p64(a), C.blasint(lda), C.double(beta), p64(any(c).([]float64)), C.blasint(ldc))
	case []float32:
		C.cblas_ssyrk(C.CblasRowMajor, C.CblasLower, ctr(trans), C.blasint(n), C.blasint(k), C.float(alpha),
			p32(a), C.blasint(lda), C.float(beta), p32(any(c).([]float32)), C.blasint(ldc))
	}
}

// potrfSmall factors one diagonal block in place (lower triangle,
// row-major). A row-major lower triangle is a column-major upper triangle, so
// LAPACK's column-major 'U' factorization works on the buffer as it is,
// without the transposed copy LAPACKE's row-major entry points would make.
func potrfSmall[T Float](n int, a []T, lda int) int {
	if n == 0 {
		return -1
	}
	var info C.lapack_int
	switch a := any(a).(type) {
	case []float64:
		info = C.LAPACKE_dpotrf_work(C.LAPACK_COL_MAJOR, 'U', C.lapack_int(n), p64(a), C.lapack_int(lda))
	case []float32:
		info = C.LAPACKE_spotrf_work(C.LAPACK_COL_MAJOR, 'U', C.lapack_int(n), p32(a), C.lapack_int(lda))
	}
	if info > 0 {
		return int(info) - 1
	}
	if info < 0 {
		panic("linalg: potrf argument error") // a bug in this package, not bad user input
	}
	return -1
}

// trsmRightLowerTrans solves X·Lᵀ = B in place (B m×n, L n×n lower).
func trsmRightLowerTrans[T Float](m, n int, l []T, ldl int, b []T, ldb int) {
	switch l := any(l).(type) {
	case []float64:
		C.cblas_dtrsm(C.CblasRowMajor, C.CblasRight, C.CblasLower, C.CblasTrans, C.CblasNonUnit, C.blasint(m), C.blasint(n), 1,
			p64(l), C.blasint(ldl), p64(any(b).([]float64)), C.blasint(ldb))
	case []float32:
		C.cblas_strsm(C.CblasRowMajor, C.CblasRight, C.CblasLower, C.CblasTrans, C.CblasNonUnit, C.blasint(m), C.blasint(n), 1,
			p32(l), C.blasint(ldl), p32(any(b).([]float32)), C.blasint(ldb))
	}
}

// lapackCholesky is LAPACK's own potrf on the whole matrix, kept for the
// benchmark that compares it with CholeskyCtx.
func lapackCholesky[T Float](n int, a []T, lda int) int { return potrfSmall(n, a, lda) }

// trsm is TriSolve by the backend.
func trsm[T Float](trans bool, n, nrhs int, l []T, ldl int, b []T, ldb int) {
	switch l := any(l).(type) {
	case []float64:
		C.cblas_dtrsm(C.CblasRowMajor, C.CblasLeft, C.CblasLower, ctr(trans), C.CblasNonUnit, C.blasint(n), C.blasint(nrhs), 1,
			p64(l), C.blasint(ldl), p64(any(b).([]float64)), C.blasint(ldb))
	case []float32:
		C.cblas_strsm(C.CblasRowMajor, C.CblasLeft, C.CblasLower, ctr(trans), C.CblasNonUnit, C.blasint(n), C.blasint(nrhs), 1,
			p32(l), C.blasint(ldl), p32(any(b).([]float32)), C.blasint(ldb))
	}
}

func radialRows[T Float](b Block[T], op RadialOp, lo, hi int, coef bool) {
	var cf, lw C.int
	if coef {
		cf = 1
	}
	if b.Lower {
		lw = 1
	}
	switch g := any(b.G).(type) {
	case []float64:
		C.rfm_radial_f64(p64(g), C.long(lo), C.long(hi), C.long(b.Cols), C.long(b.LD), p64(any(b.NA).([]float64)), p64(any(b.NB).([]float64)),
			C.double(op.C), C.double(op.P), C.double(op.Tiny), C.double(op.Rel), cf, lw, C.long(b.Row0))
	case []float32:
		C.rfm_radial_f32(p32(g), C.long(lo), C.long(hi), C.long(b.Cols), C.long(b.LD), p32(any(b.NA).([]float32)), p32(any(b.NB).([]float32)),
			C.double(op.C), C.double(op.P), C.double(op.Tiny), C.double(op.Rel), cf, lw, C.long(b.Row0))
	}
}

func expNegPow(x []float64, c, p float64) {
	C.rfm_exppow_f64(p64(x), C.long(len(x)), C.double(c), C.double(p))
}

func lpSums[T Float](a, bt []T, ld, n int, p float64, out []float64) {
	switch a := any(a).(type) {
	case []float64:
		C.rfm_lpsums_f64(p64(a), C.long(len(a)), p64(any(bt).([]float64)), C.long(ld), C.long(n), C.double(p), p64(out))
	case []float32:
		C.rfm_lpsums_f32(p32(a), C.long(len(a)), p32(any(bt).([]float32)), C.long(ld), C.long(n), C.double(p), p64(out))
	}
}

func lpSumsPhi[T Float](a, bt []T, ld, n int, p, tiny float64, sums, phi []float64) {
	switch a := any(a).(type) {
	case []float64:
		C.rfm_lpsumsphi_f64(p64(a), C.long(len(a)), p64(any(bt).([]float64)), C.long(ld), C.long(n), C.double(p), C.double(tiny), p64(sums), p64(phi))
	case []float32:
		C.rfm_lpsumsphi_f32(p32(a), C.long(len(a)), p32(any(bt).([]float32)), C.long(ld), C.long(n), C.double(p), C.double(tiny), p64(sums), p64(phi))
	}
}

func powPos(x []float64, p float64) { C.rfm_pow_f64(p64(x), C.long(len(x)), C.double(p)) }

// eigSym is EigSym's LAPACK call, by the divide-and-conquer dsyevd: vecs
// holds a copy of the input on entry.
func eigSym(d int, vals, vecs []float64) bool {
	// A row-major lower triangle is a column-major upper one; the
	// eigenvector matrix comes back column-major, i.e. transposed.
	info := C.LAPACKE_dsyevd(C.LAPACK_COL_MAJOR, 'V', 'U', C.lapack_int(d), p64(vecs), C.lapack_int(d), p64(vals))
	if info != 0 {
		return false
	}
	transposeSquare(d, vecs)
	return true
}
