package hyperbf

import (
	"context"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/testutil/synthset"
	"github.com/rfmkit/rfm/synth"
)

// Study trains, measures every epoch and with Compare fits the three
// kernel machines; on y = x0·x1 the learned metric moves toward the AGOP.
func TestStudyRegression(t *testing.T) {
	tr, te := synthset.Regression(t, synth.Product, 300, 5, 1), synthset.Regression(t, synth.Product, 200, 5, 2)
	var epochs, fits int
	res, err := Study(context.Background(), tr, te, StudyOptions{
		Config:      Config{Centers: 40, LR: 0.01, Epochs: 15, BatchSize: 50, Seed: 1},
		MeasureRows: 100, Compare: true,
		Progress: func(p StudyProgress) {
			if p.Epoch != nil {
				epochs++
			} else if p.Fitting != "" {
				fits++
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Epochs) != 16 || epochs != 16 || fits != 3 || res.Metric != "test MSE (standardized target)" || len(res.Compare) != 4 || len(res.Rounds) != 3 {
		t.Fatalf("%d epochs (%d reported), %d fits, %+v", len(res.Epochs), epochs, fits, res)
	}
	first, last := res.Epochs[1], res.Epochs[15]
	if !(last.TrainLoss < first.TrainLoss) || !(last.TestScore < res.Epochs[0].TestScore) {
		t.Errorf("training: loss %v → %v, test MSE %v → %v", first.TrainLoss, last.TrainLoss, res.Epochs[0].TestScore, last.TestScore)
	}
	if !(last.MetricVsAGOP.Cosine > res.Epochs[0].MetricVsAGOP.Cosine) {
		t.Errorf("ρ(WᵀW, AGOP) did not grow: %v → %v", res.Epochs[0].MetricVsAGOP.Cosine, last.MetricVsAGOP.Cosine)
	}
	if res.Compare["GD-HyperBF"] != last.TestScore {
		t.Errorf("GD-HyperBF's compared score %v is not its last epoch's %v", res.Compare["GD-HyperBF"], last.TestScore)
	}
}

// A classification set is trained on one-hot outputs and scored by
// accuracy.
func TestStudyClassification(t *testing.T) {
	tr, te := synthset.Regression(t, synth.Product, 200, 5, 3), synthset.Regression(t, synth.Product, 100, 5, 4)
	for _, ds := range []*rfm.Dataset{tr, te} {
		ds.Labels, ds.Classes = make([]int, ds.N), 2
		for i, v := range ds.Y {
			if v > 0 {
				ds.Labels[i] = 1
			}
		}
		ds.Y, ds.Outputs = nil, 0
	}
	res, err := Study(context.Background(), tr, te, StudyOptions{Config: Config{Centers: 30, LR: 0.01, Epochs: 3, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Metric != "test accuracy %" || res.Compare != nil {
		t.Fatalf("%+v", res)
	}
	if a := res.Epochs[3].TestScore; !(a > 50 && a <= 100) {
		t.Errorf("test accuracy %v%%, want better than chance", a)
	}
}

// With a validation share, Study trains on the rest of the training rows,
// scores on the held-out ones and needs no test set.
func TestStudyValidation(t *testing.T) {
	tr := synthset.Regression(t, synth.Product, 200, 5, 5)
	tr.Labels, tr.Classes = make([]int, tr.N), 2
	for i, v := range tr.Y {
		if v > 0 {
			tr.Labels[i] = 1
		}
	}
	tr.Y, tr.Outputs = nil, 0
	res, err := Study(context.Background(), tr, nil, StudyOptions{Config: Config{Centers: 20, LR: 0.01, Epochs: 2, Seed: 1, Schedule: Cosine}, Validation: 0.25})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scored != "validation" || res.Rows+res.ScoredRows != 200 || res.ScoredRows < 40 || res.ScoredRows > 60 || res.Metric != "validation accuracy %" {
		t.Fatalf("scored %q on %d rows, trained on %d, metric %q", res.Scored, res.ScoredRows, res.Rows, res.Metric)
	}
	if res.Epochs[1].LR != 0.01 || !(res.Epochs[2].LR < 0.01) {
		t.Errorf("learning rates %v, %v under the cosine schedule", res.Epochs[1].LR, res.Epochs[2].LR)
	}
	// Compared on the validation rows with one AGOP update at most.
	res, err = Study(context.Background(), tr, nil, StudyOptions{Config: Config{Centers: 20, Epochs: 1, Seed: 1}, Validation: 0.25, Compare: true, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Compare) != 4 || res.Rounds["RFM"] > 1 || res.Rounds["AGOP-HyperBF"] > 1 || !(res.Compare["RFM"] > 50) {
		t.Errorf("compare %v, rounds %v (want ≤ 1)", res.Compare, res.Rounds)
	}
	for _, v := range []float64{1, -0.1} {
		if _, err := Study(context.Background(), tr, nil, StudyOptions{Config: Config{Centers: 5}, Validation: v}); err == nil {
			t.Errorf("validation %v accepted", v)
		}
	}
	if _, err := Study(context.Background(), tr, nil, StudyOptions{Config: Config{Centers: 5}}); err == nil {
		t.Error("no test set and no validation share accepted")
	}
}
