package complete

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// strategyProblem: m×n with a random metadata prior (p features) and
//
//	"scattered": each cell missing with probability miss (every row its own pattern),
//	"columns":   cols entire columns missing, everything else observed (one pattern),
//	"blocks":    rows fall into 8 patterns of scattered missing cells.
func strategyProblem(kind string, m, n, p int, miss float64) (*Matrix, *Prior) {
	r := rand.New(rand.NewPCG(17, 18))
	y := NewMatrix(m, n)
	for k := range y.Values {
		y.Values[k] = r.NormFloat64()
	}
	e := make([]float64, n*p)
	for k := range e {
		e[k] = r.NormFloat64()
	}
	pr, _ := FromFeatures(n, p, e)
	switch kind {
	case "scattered":
		for k := range y.Observed {
			y.Observed[k] = r.Float64() >= miss
		}
	case "columns":
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				y.Observed[i*n+j] = j >= int(miss*float64(n))
			}
		}
	case "blocks":
		pats := make([][]bool, 8)
		for q := range pats {
			pats[q] = make([]bool, n)
			for j := range pats[q] {
				pats[q][j] = r.Float64() >= miss
			}
		}
		for i := 0; i < m; i++ {
			copy(y.Observed[i*n:(i+1)*n], pats[i%8])
		}
	}
	return y, pr
}

// BenchmarkStrategies times the solve strategies on the missingness
// patterns that decide between them (results/completion/strategies.md):
//
//	go test -tags openblas -run '^$' -bench Strategies -benchtime 1x ./complete
func BenchmarkStrategies(b *testing.B) {
	cases := []struct {
		kind string
		m, n int
		miss float64
	}{
		{"scattered", 300, 800, 0.02},
		{"scattered", 300, 800, 0.3},
		{"columns", 3000, 1200, 0.1},
		{"blocks", 3000, 1200, 0.05},
	}
	for _, c := range cases {
		y, pr := strategyProblem(c.kind, c.m, c.n, 50, c.miss)
		for _, st := range []string{StrategyNaive, StrategyDirect, StrategySchur, StrategyAuto} {
			if st == StrategyNaive && c.kind != "scattered" && c.m > 1000 {
				continue // thousands of n³ solves: minutes, the point is made by the direct column
			}
			name := fmt.Sprintf("%s-%dx%d-miss%g/%s", c.kind, c.m, c.n, c.miss, st)
			b.Run(name, func(b *testing.B) {
				var res *Result
				for it := 0; it < b.N; it++ {
					var err error
					res, err = Complete(context.Background(), y, pr, Options{Strategy: st, Ridge: 1e-3})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(res.Flops/1e9, "Gflop")
				b.ReportMetric(float64(res.Groups), "patterns")
				b.ReportMetric(float64(res.Schur), "schur")
				b.ReportMetric(float64(res.Fallback), "fallback")
				b.ReportMetric(float64(res.Plan.Total())/(1<<20), "MiB")
			})
		}
	}
}
