package rfm

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// On a 95/5 imbalanced task with overlapping classes, balanced class
// weights raise the minority class's recall on fresh rows; they are
// refused for a regression and for the Nyström solver.
func TestClassWeightBalanced(t *testing.T) {
	gen := func(n int, seed uint64) *Dataset {
		r := rand.New(rand.NewPCG(seed, 1))
		ds := &Dataset{N: n, D: 2, X: make([]float64, 2*n), Labels: make([]int, n)}
		for i := 0; i < n; i++ {
			k := 0
			if r.Float64() < 0.05 {
				k = 1
			}
			ds.Labels[i] = k
			ds.X[2*i] = r.NormFloat64() + 1.5*float64(k)
			ds.X[2*i+1] = r.NormFloat64()
		}
		return ds
	}
	train, test := gen(1500, 1), gen(4000, 2)
	ctx := context.Background()
	recall := func(w ClassWeight) float64 {
		cfg := DefaultConfig()
		cfg.Iters, cfg.ClassWeight, cfg.Ridge = 0, w, 1
		m, err := Fit(ctx, cfg, train, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		pred, err := m.PredictClass(ctx, test.X, test.N)
		if err != nil {
			t.Fatal(err)
		}
		hit, pos := 0, 0
		for i, l := range test.Labels {
			if l == 1 {
				pos++
				if pred[i] == 1 {
					hit++
				}
			}
		}
		return float64(hit) / float64(pos)
	}
	plain, balanced := recall(ClassWeightNone), recall(ClassWeightBalanced)
	t.Logf("minority recall: %.3f plain, %.3f balanced", plain, balanced)
	if !(balanced > plain+0.2) {
		t.Errorf("minority recall %.3f with balanced weights, %.3f without: want a clear gain", balanced, plain)
	}
	cfg := DefaultConfig()
	cfg.ClassWeight = ClassWeightBalanced
	reg := &Dataset{N: train.N, D: 2, X: train.X, Y: make([]float64, train.N), Outputs: 1}
	for i := range reg.Y {
		reg.Y[i] = train.X[2*i]
	}
	if _, err := Fit(ctx, cfg, reg, nil, nil); err == nil || !strings.Contains(err.Error(), "apply to classification") {
		t.Errorf("balanced weights on a regression: %v", err)
	}
	cfg.Solver = SolverNystrom
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "Nyström") {
		t.Errorf("balanced weights with Nyström: %v", err)
	}
}
