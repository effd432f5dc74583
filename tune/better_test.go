package tune

import (
	"math"
	"testing"

	"github.com/rfmkit/rfm"
)

// The tie rules of Better and of the search's rule, pinned: classification
// by accuracy, then the lower loss; a full tie (or a NaN) is not better, so
// a stable sort keeps the earlier trial.
func TestBetterTies(t *testing.T) {
	nan := math.NaN()
	tr := func(acc, loss float64) *Trial { return &Trial{Accuracy: acc, Loss: loss} }
	for _, c := range []struct {
		task rfm.Task
		a, b *Trial
		want bool
	}{
		{rfm.Classification, tr(0.9, 5), tr(0.8, 1), true},
		{rfm.Classification, tr(0.8, 1), tr(0.9, 5), false},
		{rfm.Classification, tr(0.9, 1), tr(0.9, 2), true},
		{rfm.Classification, tr(0.9, 2), tr(0.9, 1), false},
		{rfm.Classification, tr(0.9, 1), tr(0.9, 1), false},
		{rfm.Classification, tr(nan, 0), tr(0.5, 9), false},
		{rfm.Classification, tr(0.5, 9), tr(nan, 0), false},
		{rfm.Regression, tr(0.1, 1), tr(0.9, 2), true},
		{rfm.Regression, tr(0.9, 2), tr(0.1, 1), false},
		{rfm.Regression, tr(0.9, 1), tr(0.1, 1), false},
		{rfm.Regression, tr(0, nan), tr(0, 1), false},
	} {
		if got := Better(c.task, c.a, c.b); got != c.want {
			t.Errorf("Better(%s, %+v, %+v) = %v, want %v", c.task, *c.a, *c.b, got, c.want)
		}
	}
	one := &search{opt: Options{Rule: RuleOneSE}, task: rfm.Classification}
	if !one.better(tr(0.5, 1), tr(0.9, 2)) || one.better(tr(0.9, 1), tr(0.5, 1)) {
		t.Error("RuleOneSE must compare the loss alone, a tie not better")
	}
	best := &search{opt: Options{Rule: RuleBest}, task: rfm.Classification}
	if best.better(tr(0.5, 1), tr(0.9, 2)) || !best.better(tr(0.9, 2), tr(0.9, 3)) {
		t.Error("RuleBest must compare accuracy first, then the loss")
	}
}
