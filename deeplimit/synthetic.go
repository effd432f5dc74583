package deeplimit

import (
	"math"
	"math/rand/v2"
)

// Dirichlet is a two-class problem on the positive orthant of the sphere
// (the thesis's "normalized Dirichlet" distributions, SI appendix I): a
// label y = +1 with probability Prior, else −1; x̃ drawn from the Dirichlet
// distribution with parameters Pos (y = +1) or Neg (y = −1) on the simplex
// in len(Pos) coordinates; x = x̃/‖x̃‖. The data's dimension (the
// manifold's) is len(Pos) − 1, and the map x̃ → x is one-to-one and the
// same for both classes, so the Bayes classifier compares
// Prior·f_Pos(x̃) with (1 − Prior)·f_Neg(x̃).
type Dirichlet struct {
	Pos, Neg []float64
	Prior    float64
}

// Task2D and Task3D are the problems of the consistency experiment, on
// S²_+ and S³_+ (data dimensions 2 and 3).
var (
	Task2D = Dirichlet{Pos: []float64{2, 3, 4}, Neg: []float64{3, 3, 2.5}, Prior: 0.4}
	Task3D = Dirichlet{Pos: []float64{2, 3, 4, 3}, Neg: []float64{3, 3, 2.5, 3}, Prior: 0.4}
)

// Dim is the data's dimension (the sphere's: coordinates − 1).
func (t Dirichlet) Dim() int { return len(t.Pos) - 1 }

func (t Dirichlet) check() error {
	if len(t.Pos) < 2 || len(t.Pos) != len(t.Neg) {
		return errorf("Dirichlet task: %d and %d parameters: need two equal lengths ≥ 2", len(t.Pos), len(t.Neg))
	}
	for i := range t.Pos {
		if !(t.Pos[i] > 0 && t.Neg[i] > 0) || math.IsInf(t.Pos[i], 0) || math.IsInf(t.Neg[i], 0) {
			return errorf("Dirichlet task: parameters must be finite and > 0")
		}
	}
	if !(t.Prior > 0 && t.Prior < 1) {
		return errorf("Dirichlet task: prior %g is outside (0, 1)", t.Prior)
	}
	return nil
}

// Sample draws n labelled points (seeded).
func (t Dirichlet) Sample(n int, seed uint64) (Points, []float64, error) {
	if err := t.check(); err != nil {
		return Points{}, nil, err
	}
	if n < 1 {
		return Points{}, nil, errorf("Dirichlet task: %d rows: need at least 1", n)
	}
	r := rand.New(rand.NewPCG(seed, 0x6465_6570))
	D := len(t.Pos)
	p := Points{X: make([]float64, n*D), N: n, D: D}
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		par := t.Neg
		y[i] = -1
		if r.Float64() < t.Prior {
			par, y[i] = t.Pos, 1
		}
		row := p.Row(i)
		sum := 0.0
		for j, a := range par {
			row[j] = gamma(r, a)
			sum += row[j]
		}
		nr := 0.0
		for j := range row {
			row[j] /= sum
			nr += row[j] * row[j]
		}
		nr = math.Sqrt(nr)
		for j := range row {
			row[j] /= nr
		}
	}
	return p, y, nil
}

// Bayes returns the Bayes classifier's prediction at a point of the
// sphere's orthant.
func (t Dirichlet) Bayes(x []float64) float64 {
	return sign(t.logOdds(x))
}

// logOdds is log(P(y=+1|x)/P(y=−1|x)).
func (t Dirichlet) logOdds(x []float64) float64 {
	sum := 0.0
	for _, v := range x {
		sum += v
	}
	l := math.Log(t.Prior) - math.Log1p(-t.Prior) + logDirNorm(t.Pos) - logDirNorm(t.Neg)
	for j, v := range x {
		l += (t.Pos[j] - t.Neg[j]) * math.Log(v/sum)
	}
	return l
}

// BayesError estimates the Bayes error E[min(η, 1 − η)] (η the posterior
// of +1) by Monte Carlo over n seeded draws, with its standard error.
func (t Dirichlet) BayesError(n int, seed uint64) (float64, float64, error) {
	p, _, err := t.Sample(n, seed)
	if err != nil {
		return 0, 0, err
	}
	var s, s2 float64
	for i := 0; i < n; i++ {
		eta := 1 / (1 + math.Exp(-t.logOdds(p.Row(i))))
		m := min(eta, 1-eta)
		s += m
		s2 += m * m
	}
	mean := s / float64(n)
	return mean, math.Sqrt(max(s2/float64(n)-mean*mean, 0) / float64(n)), nil
}

// logDirNorm is log Γ(Σa) − Σ log Γ(a_j), the log of the Dirichlet
// density's normalizing constant.
func logDirNorm(a []float64) float64 {
	s := 0.0
	l := 0.0
	for _, v := range a {
		s += v
		g, _ := math.Lgamma(v)
		l -= g
	}
	g, _ := math.Lgamma(s)
	return l + g
}

// gamma draws from Gamma(a, 1) (Marsaglia–Tsang; a < 1 by the boost
// U^{1/a}).
func gamma(r *rand.Rand, a float64) float64 {
	if a < 1 {
		return gamma(r, a+1) * math.Pow(r.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
