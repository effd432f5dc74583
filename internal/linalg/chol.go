package linalg

import (
	"context"
	"math"
)

// Cholesky factors the symmetric matrix held in the lower triangle of a
// (row-major, n×n, stride lda) in place as L·Lᵀ. The strict upper triangle
// is scratch: its contents on return are unspecified. It returns -1 on
// success, or the index of the first pivot that was not positive.
func Cholesky[T Float](n int, a []T, lda int) int {
	bad, _ := CholeskyCtx(context.Background(), n, a, lda)
	return bad
}

// CholeskyCtx is Cholesky with cancellation: it is a right-looking blocked
// factorization whose trailing update is cut into row bands, and ctx is
// checked between bands, so a cancel is noticed within one band's GEMM (well
// under a second at n = 20 000) instead of after the whole O(n³) call. The
// bands are GEMMs of the backend, so the factorization is as parallel as the
// GEMM underneath. On cancellation it returns ctx.Err() and a is garbage.
func CholeskyCtx[T Float](ctx context.Context, n int, a []T, lda int) (int, error) {
	return CholeskyProgress(ctx, n, a, lda, nil)
}

// CholeskyProgress is CholeskyCtx that also reports, after each panel, the
// fraction of the factorization's flops done so far (1 − ((n−k)/n)³ after
// k columns), so that callers can show a moving ETA during long solves.
func CholeskyProgress[T Float](ctx context.Context, n int, a []T, lda int, progress func(done float64)) (int, error) {
	nb := cholBlock(n)
	for k := 0; k < n; k += nb {
		if err := ctx.Err(); err != nil {
			return -1, err
		}
		if progress != nil && k > 0 {
			r := float64(n-k) / float64(n)
			progress(1 - r*r*r)
		}
		kb := min(nb, n-k)
		if bad := potrfSmall(kb, a[k*lda+k:], lda); bad >= 0 {
			return k + bad, nil
		}
		m := n - k - kb
		if m == 0 {
			break
		}
		a21 := a[(k+kb)*lda+k:]
		trsmRightLowerTrans(m, kb, a[k*lda+k:], lda, a21, lda)
		// A22 -= A21·A21ᵀ on the lower triangle, band by band.
		a22 := a[(k+kb)*lda+k+kb:]
		band := cholBand(m, kb)
		for r0 := 0; r0 < m; r0 += band {
			if r0 > 0 {
				if err := ctx.Err(); err != nil {
					return -1, err
				}
			}
			r1 := min(r0+band, m)
			if r0 > 0 {
				Gemm(false, true, r1-r0, r0, kb, T(-1), a21[r0*lda:], lda, a21, lda, T(1), a22[r0*lda:], lda)
			}
			SyrkLower(r1-r0, kb, T(-1), a21[r0*lda:], lda, T(1), a22[r0*lda+r0:], lda)
		}
	}
	return -1, nil
}

// cholBlock picks the panel width: wide enough that the trailing GEMMs run
// near peak, narrow enough that the unblocked diagonal factorization and
// the triangular solve stay a small share.
func cholBlock(n int) int {
	switch {
	case n <= 256:
		return max(n, 1)
	case n <= 4096:
		return 192
	default:
		// Measured at n = 10 000 with OpenBLAS: 256 → 98 GF/s, 384 → 96,
		// 768 → 95; LAPACK's own potrf 103 (it cannot be interrupted).
		// float32 at n = 12 000: 256 → 180 GF/s, as LAPACK's spotrf.
		return 256
	}
}

// cholBand bounds one trailing-update call to about 1e10 flops (≈0.1 s with
// OpenBLAS, well under a second with the pure-Go GEMM): the cancellation
// latency. Calls that size still run the GEMM near peak.
func cholBand(m, kb int) int {
	b := int(5e9 / float64(max(m, 1)*max(kb, 1)))
	return max(min(b, m), 256)
}

// chol2 is the unblocked factorization of a small diagonal block, with
// float64 accumulation so that float32 factors lose as little as possible.
func chol2[T Float](n int, a []T, lda int) int {
	for j := 0; j < n; j++ {
		s := float64(a[j*lda+j])
		rj := a[j*lda : j*lda+j]
		for _, v := range rj {
			s -= float64(v) * float64(v)
		}
		if !(s > 0) || math.IsInf(s, 0) {
			return j
		}
		d := math.Sqrt(s)
		a[j*lda+j] = T(d)
		for i := j + 1; i < n; i++ {
			ri := a[i*lda : i*lda+j]
			t := float64(a[i*lda+j])
			for p, v := range ri {
				t -= float64(v) * float64(rj[p])
			}
			a[i*lda+j] = T(t / d)
		}
	}
	return -1
}
