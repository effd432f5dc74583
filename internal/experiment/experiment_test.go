package experiment

import (
	"slices"
	"testing"
)

func TestAccuracyPct(t *testing.T) {
	scores := []float64{0.9, 0.1, 0.2, 0.8, 0.6, 0.4, 0.3, 0.7}
	if got := AccuracyPct(scores, []int{0, 1, 1, 1}, 2); got != 75 {
		t.Errorf("accuracy %v, want 75", got)
	}
	if got := AccuracyPct(scores, nil, 2); got != 0 {
		t.Errorf("no labels: %v, want 0", got)
	}
}

func TestLogEpochs(t *testing.T) {
	got := LogEpochs(100, 3)
	var keys []int
	for k := range got {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []int{1, 10, 100}) {
		t.Errorf("epochs %v, want [1 10 100]", keys)
	}
	if got := LogEpochs(1, 5); len(got) != 1 || !got[1] {
		t.Errorf("one epoch: %v", got)
	}
}
