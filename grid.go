package rfm

import (
	"context"
	"fmt"
	"reflect"
	"time"

	"github.com/rfmkit/rfm/metrics"
)

// GridSearch fits configurations one after the other on the same training
// and validation rows and keeps every round's validation score, so that a
// caller can pick a (configuration, round) by the first strict maximum in
// grid order (Best). Identical configurations are fitted once.
type GridSearch struct {
	// Fit fits one configuration; nil means Fit. Tests substitute it.
	Fit func(ctx context.Context, cfg Config, train, valid *Dataset, progress func(Progress)) (*Model, error)
	// Score gives a fitted model's scores, higher is better, one per round
	// it scored; nil means ValAccuracies.
	Score func(*Model) []float64
	// Progress, if set, is told the fraction of fit i done, and 1 when it
	// has finished (fits reused for an identical configuration report
	// nothing).
	Progress func(i int, fraction float64)
	// Done, if set, is called with each trial as soon as it is scored.
	Done func(i int, t *Trial)
}

// Trial is one configuration of a grid, fitted and scored.
type Trial struct {
	Config Config
	// Model is the fitted model; identical configurations share it.
	Model   *Model
	Scores  []float64 // by round (see GridSearch.Score)
	Seconds float64   // fitting time (0 for a reused fit)
}

// ValAccuracies is the validation accuracy of each round of m.
func ValAccuracies(m *Model) []float64 {
	s := make([]float64, len(m.History))
	for i, r := range m.History {
		s[i] = r.ValAccuracy
	}
	return s
}

// Run fits every configuration of grid in order. A fit that fails, or
// scores no round, stops the search with its error.
func (g *GridSearch) Run(ctx context.Context, grid []Config, train, valid *Dataset) ([]Trial, error) {
	fit, score := g.Fit, g.Score
	if fit == nil {
		fit = Fit
	}
	if score == nil {
		score = ValAccuracies
	}
	trials := make([]Trial, len(grid))
	for i, cfg := range grid {
		t := &trials[i]
		t.Config = cfg
		for j := range i {
			if reflect.DeepEqual(grid[j], cfg) {
				t.Model, t.Scores = trials[j].Model, trials[j].Scores
				break
			}
		}
		if t.Model == nil {
			var progress func(Progress)
			if g.Progress != nil {
				progress = func(p Progress) { g.Progress(i, min(max(p.Fraction, 0), 1)) }
			}
			start := time.Now()
			m, err := fit(ctx, cfg, train, valid, progress)
			if err != nil {
				return nil, err
			}
			t.Model, t.Scores, t.Seconds = m, score(m), time.Since(start).Seconds()
			if len(t.Scores) == 0 {
				return nil, fmt.Errorf("grid point %d: no round was scored", i+1)
			}
			if g.Progress != nil {
				g.Progress(i, 1)
			}
		}
		if g.Done != nil {
			g.Done(i, t)
		}
	}
	return trials, nil
}

// Best returns the trial and round of the first strict maximum of the
// scores, over the trials in order and, within a trial, rounds lo..hi in
// order (rounds a trial did not score are skipped). ok is false when no
// round is in range.
func Best(trials []Trial, lo, hi int) (trial, round int, ok bool) {
	for i, t := range trials {
		for r := max(lo, 0); r <= hi && r < len(t.Scores); r++ {
			if !ok || metrics.MetricAccuracy.Better(t.Scores[r], trials[trial].Scores[round]) {
				trial, round, ok = i, r, true
			}
		}
	}
	return trial, round, ok
}
