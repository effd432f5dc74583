package rfm

import (
	"context"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/synth"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/backend_golden.json (run with the pure-Go build)")

type golden struct {
	Backend string    `json:"backend"`
	M       []float64 `json:"m"`
	Pred    []float64 `json:"pred"`
}

// Both backends must give the same fit on a well-conditioned problem
// (λ = 0.1, 300 rows) to 1e-8 relative: the golden file is written by the
// pure-Go build and checked by every build, so CI, which runs both,
// compares them. The tolerance allows for different summation orders in
// GEMM/Cholesky (≈1e-15) amplified by the condition number (≤ 1e3) through
// two AGOP rounds.
func TestBackendsAgree(t *testing.T) {
	s, _ := synth.Generate(synth.Chain, 300, 8, 21)
	q, _ := synth.Generate(synth.Chain, 40, 8, 22)
	{
		cfg := DefaultConfig()
		cfg.Ridge = 0.1
		cfg.Iters = 2
		cfg.ValFraction = 0
		m := mustFit(t, cfg, &Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y}, nil)
		pred, err := m.Predict(context.Background(), q.X, q.N)
		if err != nil {
			t.Fatal(err)
		}
		got := golden{Backend: linalg.Backend(), M: m.M.Values, Pred: pred}
		path := filepath.Join("testdata", "backend_golden.json")
		if *updateGolden {
			if linalg.Backend() != "gonum" {
				t.Fatal("write the golden file with the pure-Go build")
			}
			data, _ := json.MarshalIndent(got, "", " ")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var want golden
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		compare := func(name string, a, b []float64) {
			if len(a) != len(b) {
				t.Fatalf("%s: %d values, golden has %d", name, len(a), len(b))
			}
			scale := 0.0
			for _, v := range b {
				scale = math.Max(scale, math.Abs(v))
			}
			worst := 0.0
			for i := range a {
				worst = math.Max(worst, math.Abs(a[i]-b[i])/scale)
			}
			t.Logf("%s (%s vs golden %s): worst relative difference %.2e", name, linalg.Backend(), want.Backend, worst)
			if worst > 1e-8 {
				t.Errorf("%s differs from the %s golden by %.2e relative (> 1e-8)", name, want.Backend, worst)
			}
		}
		compare("M", got.M, want.M)
		compare("predictions", got.Pred, want.Pred)
	}
}
