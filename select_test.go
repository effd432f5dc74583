package rfm

import (
	"math"
	"testing"
)

// The round selection's rule, pinned: a strict improvement replaces the
// best round (ties keep the first), by accuracy or by loss as the
// configuration and task say; a NaN never replaces and is never replaced.
func TestRoundSelectionTies(t *testing.T) {
	nan := math.NaN()
	r := func(acc, loss float64) Round { return Round{ValAccuracy: acc, ValLoss: loss} }
	for _, c := range []struct {
		sel  Selection
		task Task
		a, b Round
		want bool
	}{
		{SelectByTask, Classification, r(0.9, 5), r(0.8, 1), true},
		{SelectByTask, Classification, r(0.9, 1), r(0.9, 2), false}, // accuracy alone: a tie
		{SelectByTask, Classification, r(nan, 1), r(0.1, 2), false},
		{SelectByTask, Classification, r(0.5, 1), r(nan, 2), false},
		{SelectByTask, Regression, r(0, 1), r(0, 2), true},
		{SelectByTask, Regression, r(0, 2), r(0, 2), false},
		{SelectLoss, Classification, r(0.1, 1), r(0.9, 2), true},
		{SelectLoss, Classification, r(0.9, 2), r(0.1, 2), false},
		{SelectAccuracy, Regression, r(0.9, 9), r(0.8, 1), true},
		{SelectAccuracy, Regression, r(0.8, 1), r(0.8, 9), false},
	} {
		f := &fitter{cfg: Config{Selection: c.sel}, task: c.task}
		if got := f.better(c.a, c.b); got != c.want {
			t.Errorf("%q %s: better(%+v, %+v) = %v, want %v", c.sel, c.task, c.a, c.b, got, c.want)
		}
	}
}
