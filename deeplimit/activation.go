package deeplimit

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

func errorf(format string, args ...any) error {
	return fmt.Errorf("deeplimit: "+format, args...)
}

// Activation is an element-wise activation φ with its derivative. Breaks
// lists the points where φ or φ′ is not smooth (kinks, jumps): the
// quadratures cut there. The dual and the taxonomy use φ scaled to
// E[φ(z)²] = 1 (the thesis's normalization, SI appendix A), whatever the
// scale of F: NewDual does the scaling.
type Activation struct {
	Name   string
	F      func(float64) float64
	DF     func(float64) float64
	Breaks []float64
}

// namedActivation builds an activation from an optional parameter.
type namedActivation struct {
	about string
	make  func(param string) (Activation, error)
}

var activations = map[string]namedActivation{
	"relu": {"max(x, 0) (case 3: majority vote)", func(p string) (Activation, error) {
		if p != "" {
			return Activation{}, errorf("activation relu takes no parameter (got %q)", p)
		}
		return Activation{Name: "relu", F: func(x float64) float64 { return max(x, 0) },
			DF: step, Breaks: []float64{0}}, nil
	}},
	"leaky-relu": {"max(x, s·x), leaky-relu:S sets the slope s (default 0.1)", func(p string) (Activation, error) {
		s, err := floatParam("leaky-relu", p, 0.1)
		if err != nil {
			return Activation{}, err
		}
		return Activation{Name: "leaky-relu:" + fmtF(s), F: func(x float64) float64 {
			if x > 0 {
				return x
			}
			return s * x
		}, DF: func(x float64) float64 {
			if x > 0 {
				return 1
			}
			return s
		}, Breaks: []float64{0}}, nil
	}},
	"tanh":    {"tanh x (case 1)", plain("tanh", math.Tanh, func(x float64) float64 { t := math.Tanh(x); return 1 - t*t })},
	"erf":     {"erf x (case 1)", plain("erf", math.Erf, func(x float64) float64 { return 2 / math.SqrtPi * math.Exp(-x*x) })},
	"sigmoid": {"1/(1 + e^−x) (case 3)", plain("sigmoid", sigmoid, func(x float64) float64 { s := sigmoid(x); return s * (1 - s) })},
	"swish": {"x/(1 + e^−x) (case 3)", plain("swish", func(x float64) float64 { return x * sigmoid(x) },
		func(x float64) float64 { s := sigmoid(x); return s + x*s*(1-s) })},
	"cosid": {"cos x − x (case 3)", plain("cosid", func(x float64) float64 { return math.Cos(x) - x },
		func(x float64) float64 { return -math.Sin(x) - 1 })},
	"hardtanh": {"max(−a, min(a, x)), hardtanh:A (default a = 1)", func(p string) (Activation, error) {
		a, err := floatParam("hardtanh", p, 1)
		if err != nil {
			return Activation{}, err
		}
		if !(a > 0) {
			return Activation{}, errorf("activation hardtanh:%s: a must be > 0", p)
		}
		return Activation{Name: "hardtanh:" + fmtF(a), F: func(x float64) float64 { return max(-a, min(a, x)) },
			DF: func(x float64) float64 {
				if math.Abs(x) < a {
					return 1
				}
				return 0
			}, Breaks: []float64{-a, a}}, nil
	}},
	"sine": {"sin(a·x); sine:a2=T sets a² (default a² = 1), sine:a=V sets a", func(p string) (Activation, error) {
		a2 := 1.0
		switch {
		case p == "":
		case strings.HasPrefix(p, "a2="):
			v, err := strconv.ParseFloat(p[3:], 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return Activation{}, errorf("activation sine:%s: a² must be a number > 0", p)
			}
			a2 = v
		case strings.HasPrefix(p, "a="):
			v, err := strconv.ParseFloat(p[2:], 64)
			if err != nil || !(v > 0) || math.IsInf(v, 0) {
				return Activation{}, errorf("activation sine:%s: a must be a number > 0", p)
			}
			a2 = v * v
		default:
			return Activation{}, errorf("activation sine:%s: want sine:a2=T or sine:a=V", p)
		}
		return Sine(a2), nil
	}},
	"hermite": {"the k-th probabilists' Hermite polynomial h_k (hermite:K, K ≥ 1; h_2 is case 2: 1-NN)", func(p string) (Activation, error) {
		k, err := intParam("hermite", "K", p, 1, 30)
		if err != nil {
			return Activation{}, err
		}
		c := make([]float64, k+1)
		c[k] = 1
		return hermiteCombination(fmt.Sprintf("hermite:%d", k), c), nil
	}},
	"cor1": {"Corollary 1's polynomial for data dimension d (cor1:D; α = d)", func(p string) (Activation, error) {
		d, err := intParam("cor1", "D", p, 1, 60)
		if err != nil {
			return Activation{}, err
		}
		return Corollary1(d), nil
	}},
	"cor2": {"Corollary 2's sine sin(a·x) with a solving α = d (cor2:D, D ≥ 2)", func(p string) (Activation, error) {
		d, err := intParam("cor2", "D", p, 2, 60)
		if err != nil {
			return Activation{}, err
		}
		a2, err := Corollary2A2(float64(d))
		if err != nil {
			return Activation{}, err
		}
		act := Sine(a2)
		act.Name = fmt.Sprintf("cor2:%d", d)
		return act, nil
	}},
}

// ActivationNames lists the names ParseActivation accepts, with a line on
// each.
func ActivationNames() []string {
	var out []string
	for k, v := range activations {
		out = append(out, k+": "+v.about)
	}
	sort.Strings(out)
	return out
}

// ParseActivation returns the activation NAME or NAME:PARAM (see
// ActivationNames).
func ParseActivation(spec string) (Activation, error) {
	name, param, _ := strings.Cut(strings.TrimSpace(spec), ":")
	a, ok := activations[name]
	if !ok {
		var names []string
		for k := range activations {
			names = append(names, k)
		}
		sort.Strings(names)
		return Activation{}, errorf("unknown activation %q: want one of %s", spec, strings.Join(names, ", "))
	}
	return a.make(param)
}

func plain(name string, f, df func(float64) float64) func(string) (Activation, error) {
	return func(p string) (Activation, error) {
		if p != "" {
			return Activation{}, errorf("activation %s takes no parameter (got %q)", name, p)
		}
		return Activation{Name: name, F: f, DF: df}, nil
	}
}

func floatParam(name, p string, def float64) (float64, error) {
	if p == "" {
		return def, nil
	}
	v, err := strconv.ParseFloat(p, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errorf("activation %s:%s: the parameter must be a finite number", name, p)
	}
	return v, nil
}

func intParam(name, sym, p string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(p)
	if err != nil || v < lo || v > hi {
		return 0, errorf("activation %s:%s: want %s:%s with an integer %s in %d..%d", name, p, name, sym, sym, lo, hi)
	}
	return v, nil
}

func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func step(x float64) float64 {
	if x > 0 {
		return 1
	}
	return 0
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Sine is sin(a·x) with a² = a2 (its normalized form is
// e^{a²/2} sin(a·x)/√sinh(a²), whose dual is sinh(a²ρ)/sinh(a²)).
func Sine(a2 float64) Activation {
	a := math.Sqrt(a2)
	return Activation{Name: "sine:a2=" + fmtF(a2),
		F:  func(x float64) float64 { return math.Sin(a * x) },
		DF: func(x float64) float64 { return a * math.Cos(a*x) }}
}

// hermiteCombination is Σ c_k h_k with h_k the normalized probabilists'
// Hermite polynomials He_k/√k!.
func hermiteCombination(name string, c []float64) Activation {
	return Activation{Name: name,
		F: func(x float64) float64 {
			s := 0.0
			hermiteEach(x, len(c)-1, func(k int, p, _ float64) { s += c[k] * p })
			return s
		},
		DF: func(x float64) float64 {
			s := 0.0
			hermiteEach(x, len(c)-1, func(k int, _, dp float64) { s += c[k] * dp })
			return s
		}}
}

// hermiteEach calls fn(k, p_k(x), p_k′(x)) for k = 0..kmax, with
// p_k = He_k/√k! (p_k′ = √k·p_{k−1}).
func hermiteEach(x float64, kmax int, fn func(k int, p, dp float64)) {
	pm, p := 0.0, 1.0
	for k := 0; k <= kmax; k++ {
		fn(k, p, math.Sqrt(float64(k))*pm)
		pm, p = p, (x*p-math.Sqrt(float64(k))*pm)/math.Sqrt(float64(k+1))
	}
}

// Corollary1 is the activation of Corollary 1 for data of dimension d:
// (h_7 + h_1)/√2 for d = 1, and 2^{−d/4} h_3 + √(1 − 2·2^{−d/2}) h_2 +
// 2^{−d/4} h_1 for d ≥ 2 (h_k normalized Hermite polynomials). Its dual has
// A = 0, A′² = 2^{−d/2}, B′ = 2, so α = d.
func Corollary1(d int) Activation {
	var c []float64
	if d == 1 {
		c = make([]float64, 8)
		c[7], c[1] = 1/math.Sqrt2, 1/math.Sqrt2
	} else {
		q := math.Pow(2, -float64(d)/4)
		c = []float64{0, q, math.Sqrt(max(1-2*q*q, 0)), q}
	}
	return hermiteCombination(fmt.Sprintf("cor1:%d", d), c)
}

// Corollary2A2 solves Corollary 2's equation
// −log(a²/sinh a²)/log(a² cosh a²/sinh a²) = d/2 for a² (d > 1; bisection:
// the left side rises from 1/2 at a² → 0 without bound).
func Corollary2A2(d float64) (float64, error) {
	if !(d > 1) || math.IsInf(d, 0) {
		return 0, errorf("Corollary 2 needs a data dimension d > 1 (got %g)", d)
	}
	f := func(t float64) float64 {
		ls := logSinh(t)
		return -(math.Log(t)-ls)/(math.Log(t)+logCosh(t)-ls) - d/2
	}
	lo, hi := 1e-3, 1.0
	for f(hi) < 0 {
		hi *= 2
		if hi > 1e6 {
			return 0, errorf("Corollary 2: no a² below 1e6 for d = %g", d)
		}
	}
	for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
		mid := (lo + hi) / 2
		if f(mid) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2, nil
}

// logSinh and logCosh are log sinh t and log cosh t for t > 0 without
// overflow.
func logSinh(t float64) float64 { return t + math.Log1p(-math.Exp(-2*t)) - math.Ln2 }
func logCosh(t float64) float64 { return t + math.Log1p(math.Exp(-2*t)) - math.Ln2 }
