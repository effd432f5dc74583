package kernel

import (
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Pairwise reports whether the kernel needs the coordinate-wise differences
// of its points (lp-laplace) instead of their inner products and norms: its
// blocks are computed pair by pair, not by a GEMM, and its gradients
// coordinate by coordinate (LpGradients), not as coefficient matrices.
func (s Spec) Pairwise() bool { return s.Kind == LpLaplace }

// lpForm holds the constants of K(v) = exp(−C·S^r), S = Σ_i |v_i|^p,
// r = q/p, C = L^−q.
type lpForm struct{ p, r, c float64 }

func (s Spec) lp() lpForm {
	return lpForm{p: s.Power, r: s.Exponent / s.Power, c: math.Pow(s.Bandwidth, -s.Exponent)}
}

// lpSum is S = Σ_i |a_i − b_i|^p (terms by linalg.LpTerm).
func lpSum[T Float](a, b []T, p float64) float64 {
	var sum float64
	for i, x := range a {
		sum += linalg.LpTerm(float64(x)-float64(b[i]), p)
	}
	return sum
}

// value is exp(−C·S^r).
func (f lpForm) value(sum float64) float64 { return linalg.ExpNegPowOf(sum, f.c, f.r) }

// LpValue is K(a, b) for the lp-laplace kernel (a reference for tests and
// small callers).
func (s Spec) LpValue(a, b []float64) float64 {
	f := s.lp()
	return f.value(lpSum(a, b, f.p))
}

// lpTile writes the tile t of K(a, b) into o (see tileOf); lower keeps
// row i to columns ≤ i. The tile's points b are copied coordinate-major
// once, so that each query's sums (linalg.LpSums) and values
// (linalg.ExpNegPow) are passes over contiguous memory, which the cgo
// backend vectorizes: with Go's scalar math.Exp per pair the exp alone was
// a fifth of an exact lp-laplace fit's time at d = 6.
func lpTile[T Float](s Spec, a, b Points[T], t span, o tileOut[T], lower bool) {
	f := s.lp()
	ld, d, n := o.LD, b.D, t.c1-t.c0
	g := o.G[t.r0*ld+t.c0:]
	bt := coordinateMajor(b, t.c0, n, make([]T, d*n))
	sums := make([]float64, n)
	for i := t.r0; i < t.r1; i++ {
		cend := t.c1
		if lower {
			cend = min(cend, i+1)
		}
		if cend <= t.c0 {
			continue
		}
		x := sums[:cend-t.c0]
		linalg.LpSums(a.Row(i), bt, n, len(x), f.p, x)
		linalg.ExpNegPow(x, f.c, f.r)
		row := g[(i-t.r0)*ld:]
		for j, v := range x {
			row[j] = T(v)
		}
	}
}

// coordinateMajor copies points [c0, c0+n) of b into bt coordinate by
// coordinate (coordinate t of point j at bt[t·n+j]), the layout of
// linalg.LpSums, and returns bt.
func coordinateMajor[T Float](b Points[T], c0, n int, bt []T) []T {
	for j := range n {
		for t, v := range b.Row(c0 + j) {
			bt[t*n+j] = v
		}
	}
	return bt
}

// lpTiny: coordinates and sums below it count as zero in gradients (the
// kernel is not differentiable where a coordinate difference vanishes when
// p ≤ 1, nor at the centre when q ≤ 1; the term is dropped there, as the
// radial kernels drop the centre).
const lpTiny = 1e-10

// lpGradCols is the number of centres per tile of LpGradients.
const lpGradCols = 512

// LpGradients adds to g (q.N × c × d: point-major, then output, then
// coordinate) the gradient with respect to each query point a of
// Σ_j α_jk K(a, b_j) for every output k, with alpha b.N×c:
//
//	∂K/∂a_t = −K·q·L^−q·S^(q/p−1)·|v_t|^(p−1)·sign(v_t),  v = a − b_j.
//
// The centres go in tiles of lpGradCols, each copied coordinate-major once
// for all the queries; per query and tile the sums, the values, the
// factors S^(q/p−1) and the coordinate factors are passes over contiguous
// memory (vectorized by the cgo backend), and the sum over the tile's
// centres is one GEMM of the coordinate factors with the coefficients.
// Tiles sit at fixed places, so a query's gradient depends on its own row
// only, not on the rows it is computed with.
func LpGradients[T Float](s Spec, q, b Points[T], alpha []T, c int, g []float64) {
	f := s.lp()
	d := b.D
	nt := min(lpGradCols, b.N)
	bt := make([]T, d*nt)
	phi := make([]float64, d*nt)
	sums, k, sr := make([]float64, nt), make([]float64, nt), make([]float64, nt)
	beta := make([]float64, nt*c)
	for c0 := 0; c0 < b.N; c0 += nt {
		n := min(nt, b.N-c0)
		coordinateMajor(b, c0, n, bt)
		for i := range q.N {
			a := q.Row(i)
			linalg.LpSumsPhi(a, bt, n, n, f.p, lpTiny, sums[:n], phi[:d*n])
			copy(k, sums[:n])
			linalg.ExpNegPow(k[:n], f.c, f.r)
			if f.r != 1 {
				copy(sr, sums[:n])
				linalg.PowPos(sr[:n], f.r-1)
			}
			for j := range n {
				coef := 0.0
				if sums[j] >= lpTiny {
					coef = -k[j] * s.Exponent * f.c
					if f.r != 1 {
						coef *= sr[j]
					}
				}
				aj := alpha[(c0+j)*c : (c0+j)*c+c]
				for o, v := range aj {
					beta[o*n+j] = coef * float64(v)
				}
			}
			// g_i (c×d) += β (c×n, output-major) · Φᵀ: both operands
			// read along rows, which gonum's GEMM needs to be fast.
			linalg.Gemm(false, true, c, d, n, 1, beta, n, phi, n, 1, g[i*c*d:(i+1)*c*d], d)
		}
	}
}
