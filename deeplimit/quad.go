package deeplimit

import (
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/mat"
)

// Quadrature rules for Gaussian expectations.
//
// expect integrates against the standard normal density with a composite
// Gauss–Legendre rule on [−quadRange, quadRange]: the interval is cut at the
// activation's breakpoints (kinks and jumps, where a global rule converges
// slowly) and into panels no wider than panelWidth, each with glOrder
// nodes. Beyond ±16 the density is below 1e-55, far under the rounding of
// any expectation computed here, for the polynomially bounded functions and
// Hermite polynomials up to degree maxHermite used.

const (
	quadRange  = 16.0
	panelWidth = 0.75
	glOrder    = 16
	// innerWidth and innerOrder are the coarser panels of the nested
	// (bivariate) rule, which evaluates the integrand order² times.
	innerWidth = 1.5
	innerOrder = 12
)

// node is a quadrature point z with its weight (density included).
type node struct{ z, w float64 }

var glCache sync.Map // int → [2][]float64 (nodes, weights on [−1, 1])

// gaussLegendre returns the n-point Gauss–Legendre nodes and weights on
// [−1, 1] (Newton's method on the Legendre recurrence).
func gaussLegendre(n int) (x, w []float64) {
	if v, ok := glCache.Load(n); ok {
		p := v.([2][]float64)
		return p[0], p[1]
	}
	x, w = make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		z := math.Cos(math.Pi * (float64(i) + 0.75) / (float64(n) + 0.5))
		var dp float64
		for it := 0; it < 100; it++ {
			p0, p1 := 1.0, z
			for k := 2; k <= n; k++ {
				p0, p1 = p1, ((2*float64(k)-1)*z*p1-(float64(k)-1)*p0)/float64(k)
			}
			if n == 1 {
				p0, p1 = 1, z
			}
			dp = float64(n) * (z*p1 - p0) / (z*z - 1)
			dz := p1 / dp
			z -= dz
			if math.Abs(dz) < 1e-16 {
				break
			}
		}
		// Recompute the derivative at the converged node.
		p0, p1 := 1.0, z
		for k := 2; k <= n; k++ {
			p0, p1 = p1, ((2*float64(k)-1)*z*p1-(float64(k)-1)*p0)/float64(k)
		}
		dp = float64(n) * (z*p1 - p0) / (z*z - 1)
		x[i] = z
		w[i] = 2 / ((1 - z*z) * dp * dp)
	}
	glCache.Store(n, [2][]float64{x, w})
	return x, w
}

// gaussNodes returns the composite rule for E[f(z)], z ~ N(0, 1), cut at
// the given breakpoints, with panels at most width wide of order nodes each.
func gaussNodes(breaks []float64, width float64, order int) []node {
	cuts := []float64{-quadRange, quadRange}
	for _, b := range breaks {
		if b > -quadRange && b < quadRange && !math.IsNaN(b) {
			cuts = append(cuts, b)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	gx, gw := gaussLegendre(order)
	var out []node
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		np := int(math.Ceil((b - a) / width))
		if np < 1 {
			np = 1
		}
		h := (b - a) / float64(np)
		for p := 0; p < np; p++ {
			lo := a + float64(p)*h
			for j, t := range gx {
				z := lo + h*(t+1)/2
				out = append(out, node{z, gw[j] * h / 2 * normPDF(z)})
			}
		}
	}
	return out
}

func normPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }

// expectNodes is Σ w f(z) over the nodes.
func expectNodes(nodes []node, f func(float64) float64) float64 {
	s := 0.0
	for _, n := range nodes {
		s += n.w * f(n.z)
	}
	return s
}

// GaussHermite returns the n-point probabilists' Gauss–Hermite rule:
// E[f(z)] ≈ Σ w_i f(x_i) for z ~ N(0, 1), exact for polynomials of degree
// up to 2n − 1 (Golub–Welsch: the eigenvalues of the Jacobi matrix of the
// Hermite recurrence and the first components of its eigenvectors).
func GaussHermite(n int) (x, w []float64, err error) {
	if n < 1 {
		return nil, nil, errorf("Gauss–Hermite rule of %d nodes: need at least 1", n)
	}
	j := mat.NewSymDense(n, nil)
	for i := 1; i < n; i++ {
		j.SetSym(i, i-1, math.Sqrt(float64(i)))
	}
	var es mat.EigenSym
	if !es.Factorize(j, true) {
		return nil, nil, errorf("Gauss–Hermite rule of %d nodes: eigendecomposition failed", n)
	}
	x = es.Values(nil)
	var v mat.Dense
	es.VectorsTo(&v)
	w = make([]float64, n)
	for i := range w {
		c := v.At(0, i)
		w[i] = c * c
	}
	return x, w, nil
}
