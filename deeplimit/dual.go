package deeplimit

import (
	"math"
)

// Case is the thesis's taxonomy of the infinitely deep NTK classifier.
type Case int

const (
	// CaseSingular: A = 0, A′ ≠ 0, a singular kernel classifier of order α
	// (Theorem 7).
	CaseSingular Case = 1
	// CaseNearest: A = A′ = 0, the 1-nearest-neighbour classifier
	// (Theorem 9).
	CaseNearest Case = 2
	// CaseMajority: A ≠ 0, the majority vote (Proposition 4, Lemmas 5-6).
	CaseMajority Case = 3
)

func (c Case) String() string {
	switch c {
	case CaseSingular:
		return "singular kernel"
	case CaseNearest:
		return "1-NN"
	case CaseMajority:
		return "majority vote"
	}
	return "unknown"
}

const (
	// MaxHermite is the number of Hermite coefficients kept (degrees
	// 0..MaxHermite−1).
	MaxHermite = 121
	// zeroTol: |A|, |A′| below it (for the normalized φ) count as 0; their
	// coefficients are then set to exactly 0, as the taxonomy requires
	// (a dual with φ̌(0) = 1e-17 would have a fixed point at 1e-17, not 0).
	zeroTol = 1e-9
	// seriesTail: when the Hermite series misses less than this of E[φ²]
	// and of E[φ′²] it is the dual (to rounding) on all of [−1, 1];
	// otherwise (kinks: ReLU, hard tanh) the series serves only |ρ| ≤
	// seriesRadius and a Chebyshev interpolant in θ = arccos ρ of the
	// bivariate quadrature the rest.
	seriesTail   = 1e-12
	seriesRadius = 0.25
	chebN        = 64
)

// Dual is the dual activation of a normalized activation: φ̌(ρ) = E[φ(u)φ(v)]
// over unit-variance Gaussians with correlation ρ, and its derivative
// φ̌′(ρ) = E[φ′(u)φ′(v)], with the taxonomy's constants.
type Dual struct {
	Act   Activation
	Scale float64 // φ = Scale·Act.F has E[φ(z)²] = 1
	// C holds the normalized Hermite coefficients c_k = E[φ(z)h_k(z)]
	// (h_k = He_k/√k!); φ̌(ρ) = Σ c_k² ρ^k.
	C []float64
	// A = E[φ(z)], A1 = A′ = E[φ′(z)], B1 = B′ = E[φ′(z)²] for z ~ N(0, 1).
	A, A1, B1 float64
	Case      Case
	// Alpha is −2 log(A′²)/log(B′) (case 1; NaN otherwise).
	Alpha float64
	// Exact reports that the truncated Hermite series is the dual on all of
	// [−1, 1]; TailF and TailDF are the parts of E[φ²] and E[φ′²] it misses.
	Exact         bool
	TailF, TailDF float64

	a    []float64 // a_k = c_k²
	low  int       // index of the first nonzero a_k
	cheb *chebTable
}

// NewDual normalizes act and computes its dual: the Hermite coefficients
// by quadrature, A, A′, B′, the case and α, and (for activations whose
// Hermite series converges slowly) the Chebyshev table of the bivariate
// quadrature. It checks that act.DF is act.F's derivative through Stein's
// identity E[φ′(z)] = E[z φ(z)].
func NewDual(act Activation) (*Dual, error) {
	if act.F == nil || act.DF == nil {
		return nil, errorf("activation %q: F and DF (its derivative) are both needed", act.Name)
	}
	nodes := gaussNodes(act.Breaks, panelWidth, glOrder)
	ff := expectNodes(nodes, func(z float64) float64 { v := act.F(z); return v * v })
	if !(ff > 0) || math.IsInf(ff, 0) {
		return nil, errorf("activation %q: E[φ(z)²] = %g: need a finite positive value", act.Name, ff)
	}
	d := &Dual{Act: act, Scale: 1 / math.Sqrt(ff)}
	sc := d.Scale
	d.A = sc * expectNodes(nodes, act.F)
	d.A1 = sc * expectNodes(nodes, act.DF)
	d.B1 = sc * sc * expectNodes(nodes, func(z float64) float64 { v := act.DF(z); return v * v })
	if math.IsNaN(d.A) || math.IsNaN(d.A1) || math.IsNaN(d.B1) || math.IsInf(d.B1, 0) {
		return nil, errorf("activation %q: A, A′, B′ = %g, %g, %g are not finite", act.Name, d.A, d.A1, d.B1)
	}
	d.C = make([]float64, MaxHermite)
	for _, n := range nodes {
		fz := sc * act.F(n.z) * n.w
		hermiteEach(n.z, MaxHermite-1, func(k int, p, _ float64) { d.C[k] += fz * p })
	}
	if math.Abs(d.C[1]-d.A1) > 1e-6*max(1, math.Abs(d.A1)) {
		return nil, errorf("activation %q: DF is not the derivative of F: E[φ′(z)] = %.9g but E[z φ(z)] = %.9g", act.Name, d.A1, d.C[1])
	}
	if math.Abs(d.A) < zeroTol {
		d.A, d.C[0] = 0, 0
	}
	if math.Abs(d.A1) < zeroTol {
		d.A1, d.C[1] = 0, 0
	}
	d.a = make([]float64, MaxHermite)
	s0, s1 := 0.0, 0.0
	for k, c := range d.C {
		d.a[k] = c * c
		s0 += d.a[k]
		s1 += float64(k) * d.a[k]
	}
	d.low = -1
	for k, v := range d.a {
		if v > 0 {
			d.low = k
			break
		}
	}
	last := 0
	for k, v := range d.a {
		if v > 0 {
			last = k
		}
	}
	d.a = d.a[:last+1] // polynomials: Horner over their degree only
	d.TailF, d.TailDF = max(1-s0, 0), max(d.B1-s1, 0)
	d.Exact = d.TailF < seriesTail && d.TailDF < seriesTail*max(1, d.B1)
	switch {
	case d.A != 0:
		d.Case = CaseMajority
	case d.A1 != 0:
		d.Case = CaseSingular
	default:
		d.Case = CaseNearest
	}
	d.Alpha = math.NaN()
	if d.Case == CaseSingular {
		if d.A1*d.A1 >= 1-1e-12 || d.B1 <= 1+1e-12 {
			return nil, errorf("activation %q is linear (A′² = %g, B′ = %g): its NTK is (L+1)·xᵀx, with no deep limit to classify by", act.Name, d.A1*d.A1, d.B1)
		}
		d.Alpha = -2 * math.Log(d.A1*d.A1) / math.Log(d.B1)
	}
	if d.low < 0 {
		return nil, errorf("activation %q: all Hermite coefficients vanish", act.Name)
	}
	if !d.Exact {
		d.cheb = newChebTable(d)
	}
	return d, nil
}

// Eval returns φ̌(ρ) and φ̌′(ρ) for ρ in [−1, 1] (clamped).
func (d *Dual) Eval(rho float64) (v, dv float64) {
	rho = min(max(rho, -1), 1)
	if rho == 1 {
		// φ̌(1) = E[φ²] = 1 and φ̌′(1) = B′ exactly: computed sums would be
		// off by an ulp, and for A = 0 the point 1 is a repelling fixed
		// point that an ulp below 1 would leave.
		return 1, d.B1
	}
	if d.Exact || math.Abs(rho) <= seriesRadius {
		return d.Series(rho)
	}
	return d.cheb.eval(rho)
}

// Series returns the truncated Hermite series Σ a_k ρ^k and its
// derivative (Horner).
func (d *Dual) Series(rho float64) (v, dv float64) {
	for k := len(d.a) - 1; k >= 1; k-- {
		v = v*rho + d.a[k]
		dv = dv*rho + float64(k)*d.a[k]
	}
	v = v*rho + d.a[0]
	return v, dv
}

// Coef returns a_k = c_k², the k-th coefficient of the dual's power series
// (0 beyond the kept degrees).
func (d *Dual) Coef(k int) float64 {
	if k < 0 || k >= len(d.a) {
		return 0
	}
	return d.a[k]
}

// Quad returns φ̌(ρ) and φ̌′(ρ) by nested quadrature of the bivariate
// expectations E[φ(u)φ(v)] and E[φ′(u)φ′(v)], v = ρu + √(1−ρ²)·w with u, w
// independent standard normals; the inner rule is cut where φ(ρu + s·w)
// has a breakpoint.
func (d *Dual) Quad(rho float64) (v, dv float64) {
	rho = min(max(rho, -1), 1)
	f := func(x float64) float64 { return d.Scale * d.Act.F(x) }
	df := func(x float64) float64 { return d.Scale * d.Act.DF(x) }
	return bivariate(rho, f, d.Act.Breaks), bivariate(rho, df, d.Act.Breaks)
}

func bivariate(rho float64, f func(float64) float64, breaks []float64) float64 {
	s := math.Sqrt(max((1-rho)*(1+rho), 0))
	// Near a breakpoint b the inner expectation g(u) = E[f(ρu + s·w)]
	// changes over a width of order s/|ρ| around u = b/ρ (for ρ → ±1 a
	// near-jump): the outer rule is cut geometrically there.
	ocuts := append([]float64(nil), breaks...)
	if rho != 0 && s > 0 {
		for _, b := range breaks {
			for _, t := range []float64{0, 0.125, 0.25, 0.5, 1, 2, 4, 8, 16} {
				ocuts = append(ocuts, (b-s*t)/rho, (b+s*t)/rho)
			}
		}
	}
	outer := gaussNodes(ocuts, innerWidth, innerOrder)
	fixed := gaussNodes(nil, innerWidth, innerOrder)
	total := 0.0
	cut := make([]float64, len(breaks))
	for _, o := range outer {
		fu := f(o.z)
		if fu == 0 {
			continue
		}
		var g float64
		if s == 0 {
			g = f(rho * o.z)
		} else {
			inner := fixed
			if len(breaks) > 0 {
				for i, b := range breaks {
					cut[i] = (b - rho*o.z) / s
				}
				inner = gaussNodes(cut, innerWidth, innerOrder)
			}
			for _, n := range inner {
				g += n.w * f(rho*o.z+s*n.z)
			}
		}
		total += o.w * fu * g
	}
	return total
}

// GH returns φ̌(ρ) and φ̌′(ρ) by an n×n tensor Gauss–Hermite rule of the
// bivariate expectations (a cross-check: it converges slowly for
// activations with kinks).
func (d *Dual) GH(rho float64, n int) (v, dv float64, err error) {
	x, w, err := GaussHermite(n)
	if err != nil {
		return 0, 0, err
	}
	rho = min(max(rho, -1), 1)
	s := math.Sqrt(max((1-rho)*(1+rho), 0))
	for i, u := range x {
		fu, du := d.Act.F(u), d.Act.DF(u)
		for j, z := range x {
			t := rho*u + s*z
			ww := w[i] * w[j]
			v += ww * fu * d.Act.F(t)
			dv += ww * du * d.Act.DF(t)
		}
	}
	return v * d.Scale * d.Scale, dv * d.Scale * d.Scale, nil
}

// chebTable interpolates φ̌ and φ̌′ in θ = arccos ρ by Chebyshev series on
// [0, π] (coefficients from the values at the Chebyshev–Lobatto points,
// evaluation by Clenshaw's recurrence): the duals of activations with kinks
// have a square-root singularity at ρ = ±1 in ρ but are smooth in θ (the
// ReLU's are polynomials in θ, sin θ and cos θ).
type chebTable struct {
	cf, cdf []float64
}

func newChebTable(d *Dual) *chebTable {
	n := chebN
	f := make([]float64, n+1)
	df := make([]float64, n+1)
	for j := 0; j <= n; j++ {
		// x_j = cos(jπ/n) in [−1, 1] ↔ θ = π(x + 1)/2.
		th := math.Pi / 2 * (math.Cos(float64(j)*math.Pi/float64(n)) + 1)
		f[j], df[j] = d.Quad(math.Cos(th))
	}
	coef := func(v []float64) []float64 {
		c := make([]float64, n+1)
		for k := 0; k <= n; k++ {
			s := 0.0
			for j := 0; j <= n; j++ {
				w := 1.0
				if j == 0 || j == n {
					w = 0.5
				}
				s += w * v[j] * math.Cos(float64(k*j)*math.Pi/float64(n))
			}
			c[k] = 2 * s / float64(n)
		}
		c[0] /= 2
		c[n] /= 2
		return c
	}
	return &chebTable{cf: coef(f), cdf: coef(df)}
}

func (t *chebTable) eval(rho float64) (v, dv float64) {
	x := 2*math.Acos(rho)/math.Pi - 1
	return clenshaw(t.cf, x), clenshaw(t.cdf, x)
}

// clenshaw evaluates Σ c_k T_k(x).
func clenshaw(c []float64, x float64) float64 {
	var b1, b2 float64
	for k := len(c) - 1; k >= 1; k-- {
		b1, b2 = 2*x*b1-b2+c[k], b1
	}
	return x*b1 - b2 + c[0]
}
