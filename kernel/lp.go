package kernel

import "math"

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

// sum is S = Σ_i |a_i − b_i|^p, with the powers p = ½, 1, 3/2 and 2 (the
// search's grid) done without Pow: a square root costs a few cycles, Pow
// tens of nanoseconds per coordinate.
func lpSum[T Float](a, b []T, p float64) float64 {
	var sum float64
	switch p {
	case 1:
		for i, x := range a {
			sum += math.Abs(float64(x) - float64(b[i]))
		}
	case 2:
		for i, x := range a {
			v := float64(x) - float64(b[i])
			sum += v * v
		}
	case 0.5:
		for i, x := range a {
			sum += math.Sqrt(math.Abs(float64(x) - float64(b[i])))
		}
	case 1.5:
		for i, x := range a {
			v := math.Abs(float64(x) - float64(b[i]))
			sum += v * math.Sqrt(v)
		}
	default:
		for i, x := range a {
			if v := math.Abs(float64(x) - float64(b[i])); v > 0 {
				sum += math.Pow(v, p)
			}
		}
	}
	return sum
}

// value is exp(−C·S^r).
func (f lpForm) value(sum float64) float64 {
	switch f.r {
	case 1:
		return math.Exp(-f.c * sum)
	case 0.5:
		return math.Exp(-f.c * math.Sqrt(sum))
	}
	return math.Exp(-f.c * math.Pow(sum, f.r))
}

// LpValue is K(a, b) for the lp-laplace kernel (a reference for tests and
// small callers).
func (s Spec) LpValue(a, b []float64) float64 {
	f := s.lp()
	return f.value(lpSum(a, b, f.p))
}

// lpTile writes the tile t of K(a, b) into o (see tileOf), pair by pair;
// lower keeps row i to columns ≤ i.
func lpTile[T Float](s Spec, a, b Points[T], t span, o tileOut[T], lower bool) {
	f := s.lp()
	ld := o.LD
	g := o.G[t.r0*ld+t.c0:]
	for i := t.r0; i < t.r1; i++ {
		ai := a.Row(i)
		cend := t.c1
		if lower {
			cend = min(cend, i+1)
		}
		row := g[(i-t.r0)*ld:]
		for j := t.c0; j < cend; j++ {
			row[j-t.c0] = T(f.value(lpSum(ai, b.Row(j), f.p)))
		}
	}
}

// lpTiny: coordinates and sums below it count as zero in gradients (the
// kernel is not differentiable where a coordinate difference vanishes when
// p ≤ 1, nor at the centre when q ≤ 1; the term is dropped there, as the
// radial kernels drop the centre).
const lpTiny = 1e-10

// LpGradients adds to g (c×d, output-major) the gradient with respect to
// the point a of Σ_j α_jk K(a, b_j) for every output k, with alpha b.N×c:
//
//	∂K/∂a_t = −K·q·L^−q·S^(q/p−1)·|v_t|^(p−1)·sign(v_t),  v = a − b_j.
//
// w is scratch of at least d values. The pairs are visited in order, so
// the result does not depend on how callers spread their rows over threads.
func LpGradients[T Float](s Spec, a []T, b Points[T], alpha []T, c int, g, w []float64) {
	f := s.lp()
	q := s.Exponent
	d := b.D
	w = w[:d]
	for j := 0; j < b.N; j++ {
		bj := b.Row(j)
		sum := lpSum(a, bj, f.p)
		if sum < lpTiny {
			continue
		}
		k := f.value(sum)
		var sr float64 // S^(q/p − 1)
		switch f.r {
		case 1:
			sr = 1
		case 0.5:
			sr = 1 / math.Sqrt(sum)
		default:
			sr = math.Pow(sum, f.r-1)
		}
		coef := -k * q * f.c * sr
		if coef == 0 {
			continue
		}
		for t, x := range a {
			v := float64(x) - float64(bj[t])
			switch {
			case math.Abs(v) < lpTiny:
				w[t] = 0
			case f.p == 1:
				w[t] = coef * math.Copysign(1, v)
			case f.p == 2:
				w[t] = coef * v
			case f.p == 0.5:
				w[t] = coef * math.Copysign(1/math.Sqrt(math.Abs(v)), v)
			case f.p == 1.5:
				w[t] = coef * math.Copysign(math.Sqrt(math.Abs(v)), v)
			default:
				w[t] = coef * math.Copysign(math.Pow(math.Abs(v), f.p-1), v)
			}
		}
		aj := alpha[j*c : j*c+c]
		for k := 0; k < c; k++ {
			ak := float64(aj[k])
			if ak == 0 {
				continue
			}
			gk := g[k*d : k*d+d]
			for t, v := range w {
				gk[t] += ak * v
			}
		}
	}
}
