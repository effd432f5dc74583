package synth

import (
	"math"
	"slices"
	"testing"

	"github.com/rfmkit/rfm/internal/linalg"
)

// The closed forms match Monte Carlo averages of the gradient outer
// product, taken by central differences on 200 000 draws (to 3% of the
// largest entry: the sampling error of a fourth or sixth moment), and the
// chain's eigenvalues are those of SPEC §7.
func TestEGOPClosedForms(t *testing.T) {
	const n, d = 200000, 7
	for _, task := range []Task{Product, Chain, SingleIndex, Linear} {
		want, err := EGOP(task, d, 3)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := Generate(task, n, d, 3)
		u := Truth(task, d, 3)
		f := func(x []float64) float64 {
			switch task {
			case Product:
				return x[0] * x[1]
			case Chain:
				s := 0.0
				for k := 0; k < 5; k++ {
					s += x[k] * x[(k+1)%5]
				}
				return s
			case SingleIndex:
				t := dot(u, x)
				return t*t - 1 + t*t*t*t - 6*t*t + 3
			default:
				return dot(u, x)
			}
		}
		got := make([]float64, d*d)
		g := make([]float64, d)
		for i := 0; i < n; i++ {
			x := slices.Clone(data.X[i*d : (i+1)*d])
			for j := range g {
				old := x[j]
				x[j] = old + 1e-5
				up := f(x)
				x[j] = old - 1e-5
				g[j] = (up - f(x)) / 2e-5
				x[j] = old
			}
			for a := range g {
				for b := range g {
					got[a*d+b] += g[a] * g[b] / n
				}
			}
		}
		top := slices.Max(want)
		for i := range want {
			if math.Abs(got[i]-want[i]) > 0.03*top {
				t.Errorf("%s: EGOP[%d][%d] = %v, Monte Carlo %v", task, i/d, i%d, want[i], got[i])
			}
		}
	}
	g, _ := EGOP(Chain, 5, 1)
	vals, _, _ := linalg.EigSym(5, g)
	for i, w := range []float64{0.382, 0.382, 2.618, 2.618, 4} {
		if math.Abs(vals[i]-w) > 1e-3 {
			t.Errorf("chain eigenvalues %v", vals)
		}
	}
	if _, err := EGOP(LowRank, 10, 1); err == nil {
		t.Error("the low-rank task has an EGOP")
	}
}
