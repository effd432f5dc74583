package rfm

import (
	"context"
	"testing"

	"github.com/rfmkit/rfm/synth"
)

// A row's prediction does not depend on the rows predicted with it, bit
// for bit, in both backends (OpenBLAS rounds by call shape: Predict pads
// batches to whole bands, see kernel.BatchRows): exact fits with full and
// diagonal M, and a Nyström fit.
func TestPredictionsDoNotDependOnTheBatch(t *testing.T) {
	train := regression(t, synth.LowRank, 700, 10, 31)
	q, _ := synth.Generate(synth.LowRank, 300, 10, 32)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		set  func(c *Config)
	}{
		{"full M", func(c *Config) {}},
		{"diagonal M", func(c *Config) { c.Diag = true }},
		{"nystrom", func(c *Config) { c.Solver, c.Centers = SolverNystrom, 300 }},
	} {
		cfg := DefaultConfig()
		cfg.Iters = 2
		tc.set(&cfg)
		m := mustFit(t, cfg, train, nil)
		all, err := m.Predict(ctx, q.X, q.N)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []int{1, 7, 130} {
			for r0 := 0; r0 < q.N; r0 += b {
				r1 := min(r0+b, q.N)
				p, err := m.Predict(ctx, q.X[r0*10:r1*10], r1-r0)
				if err != nil {
					t.Fatal(err)
				}
				for i := range p {
					if p[i] != all[r0+i] {
						t.Fatalf("%s: row %d predicted in batches of %d: %v, in one batch %v", tc.name, r0+i, b, p[i], all[r0+i])
					}
				}
			}
		}
	}
}
