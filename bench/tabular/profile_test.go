package tabular

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rfmkit/rfm"
)

// BenchmarkPaperSplit fits the paper grid on split 1 of the task named by
// $TABULAR_TASK (group/name, under ../../../shared/data/tabular-benchmark),
// float32 as the recorded runs: the harness for profiling the protocol
// (go test -tags openblas -run - -bench PaperSplit -cpuprofile ...).
func BenchmarkPaperSplit(b *testing.B) {
	id := os.Getenv("TABULAR_TASK")
	if id == "" {
		b.Skip("set TABULAR_TASK=group/name to profile the paper protocol on a task")
	}
	tasks, err := Discover(filepath.Join("..", "..", "..", "shared", "data", "tabular-benchmark"))
	if err != nil {
		b.Fatal(err)
	}
	sel, err := Select(tasks, []string{id})
	if err != nil {
		b.Fatal(err)
	}
	t := sel[0]
	tab, err := Load(t)
	if err != nil {
		b.Fatal(err)
	}
	splits, err := Splits(tab.Rows(), 10000, 1)
	if err != nil {
		b.Fatal(err)
	}
	e, err := tab.Encode(splits[0])
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %d train, %d features", t.ID(), e.Train.N, e.Train.D)
	f := &fitter{protocol: ProtocolPaper, float32: os.Getenv("TABULAR_FLOAT64") == "", seed: 1}
	// Each fit's rounds: seconds of the solve and of the AGOP, and whether
	// a float32 solve was redone in float64.
	f.fit = func(ctx context.Context, cfg rfm.Config, train, valid *rfm.Dataset, progress func(rfm.Progress)) (*rfm.Model, error) {
		m, err := rfm.Fit(ctx, cfg, train, valid, progress)
		if err == nil {
			for _, r := range m.History {
				b.Logf("λ=%g norm=%v round %d: solve %.2fs agop %.2fs float64 %v jitter %g", cfg.Ridge, cfg.NormalizeRows, r.Round, r.FitSeconds, r.AGOPSeconds, r.Float64Solve, r.Jitter)
			}
		}
		return m, err
	}
	for b.Loop() {
		grid := newPaperGrid()
		if k, err := strconv.Atoi(os.Getenv("TABULAR_POINTS")); err == nil && k > 0 && k < len(grid) {
			grid = grid[:k]
		}
		if err := f.paperSplit(context.Background(), e, grid, t.Classification(), func(string) {}); err != nil {
			b.Fatal(err)
		}
		for _, g := range grid {
			b.Logf("λ=%g norm=%v val %.10g test %.10g round %d", g.Ridge, g.Normalize, g.Val[0], g.Test[0], g.Rounds[0])
		}
	}
}
