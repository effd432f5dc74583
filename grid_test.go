package rfm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// Best is the first strict maximum in grid order, then round order, over
// the rounds asked for.
func TestBest(t *testing.T) {
	trials := []Trial{
		{Scores: []float64{0.5, 0.7, 0.7}},
		{Scores: []float64{0.6, 0.7}},
		{Scores: []float64{0.65, 0.8, 0.8, 0.9}},
	}
	for _, tc := range []struct{ lo, hi, trial, round int }{
		{0, 100, 2, 3},
		{0, 0, 2, 0},
		{1, 2, 2, 1},
		{0, 1, 2, 1},
		{1, 1, 2, 1},
	} {
		i, r, ok := Best(trials, tc.lo, tc.hi)
		if !ok || i != tc.trial || r != tc.round {
			t.Errorf("Best(%d..%d) = %d, %d, %v; want %d, %d", tc.lo, tc.hi, i, r, ok, tc.trial, tc.round)
		}
	}
	// Ties keep the first: trial 0 round 1 (0.7) against trial 1 round 1 (0.7).
	if i, r, _ := Best(trials[:2], 1, 1); i != 0 || r != 1 {
		t.Errorf("tie: %d, %d", i, r)
	}
	if _, _, ok := Best(trials, 5, 9); ok {
		t.Error("no round in range, but ok")
	}
}

// GridSearch fits in order, once per distinct configuration, reports
// progress per fit and stops at the first error.
func TestGridSearch(t *testing.T) {
	a, b := DefaultConfig(), DefaultConfig()
	b.Ridge = 0.5
	var fitted []float64
	var done []int
	progress := map[int]float64{}
	g := GridSearch{
		Fit: func(_ context.Context, cfg Config, _, _ *Dataset, _ func(Progress)) (*Model, error) {
			fitted = append(fitted, cfg.Ridge)
			return &Model{History: []Round{{ValAccuracy: cfg.Ridge}, {ValAccuracy: 2 * cfg.Ridge}}}, nil
		},
		Progress: func(i int, f float64) { progress[i] = f },
		Done:     func(i int, _ *Trial) { done = append(done, i) },
	}
	trials, err := g.Run(context.Background(), []Config{a, b, a}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fitted) != 2 || fitted[0] != a.Ridge || fitted[1] != 0.5 {
		t.Errorf("fitted %v, want each distinct configuration once, in order", fitted)
	}
	if trials[2].Model != trials[0].Model || trials[2].Scores[1] != 2*a.Ridge || len(done) != 3 {
		t.Errorf("the repeated configuration is not the first one's: %+v, done %v", trials[2], done)
	}
	if progress[0] != 1 || progress[1] != 1 || len(progress) != 2 {
		t.Errorf("progress %v", progress)
	}
	g.Fit = func(context.Context, Config, *Dataset, *Dataset, func(Progress)) (*Model, error) {
		return nil, errors.New("boom")
	}
	if _, err := g.Run(context.Background(), []Config{a}, nil, nil); err == nil || err.Error() != "boom" {
		t.Errorf("error %v", err)
	}
	g.Fit = func(context.Context, Config, *Dataset, *Dataset, func(Progress)) (*Model, error) {
		return &Model{}, nil
	}
	if _, err := g.Run(context.Background(), []Config{a}, nil, nil); err == nil || !strings.Contains(err.Error(), "no round was scored") {
		t.Errorf("unscored fit: %v", err)
	}
}

func TestOverlay(t *testing.T) {
	type point struct {
		L     float64        `param:"bandwidth"`
		Norm  MNormalization `param:"norm"`
		P     float64        `param:"agop-power,omitzero"`
		T     int            `param:"iters"`
		Plain string
	}
	c := DefaultConfig()
	if err := Overlay(&c, point{L: 3, Norm: MNormMax, T: 0}); err != nil {
		t.Fatal(err)
	}
	if c.Kernel.Bandwidth != 3 || c.MNorm != MNormMax || c.AGOPPower != 1 || c.Iters != 0 {
		t.Errorf("overlay: %+v", c)
	}
	type bad struct {
		X float64 `param:"nope"`
	}
	if err := Overlay(&c, bad{}); err == nil {
		t.Error("unknown parameter accepted")
	}
	type wrong struct {
		X string `param:"ridge"`
	}
	if err := Overlay(&c, wrong{}); err == nil {
		t.Error("string for a float parameter accepted")
	}
}
