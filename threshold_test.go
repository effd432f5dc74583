package rfm

import (
	"context"
	"testing"

	"github.com/rfmkit/rfm/synth"
)

// RFM-T on the low-rank task keeps the three relevant coordinates (and few
// others) and then beats a plain Laplace machine on all 20 on test data.
func TestThresholdedKeepsRelevantFeatures(t *testing.T) {
	train := regression(t, synth.LowRank, 1500, 20, 1)
	test := regression(t, synth.LowRank, 1000, 20, 2)
	cfg := DefaultConfig()
	m, err := FitThresholded(context.Background(), cfg, DefaultThreshold, train, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(m.Note, m.Selected)
	has := map[int]bool{}
	for _, c := range m.Selected {
		has[c] = true
	}
	if !has[0] || !has[1] || !has[5] {
		t.Fatalf("selected %v, want it to include 0, 1 and 5", m.Selected)
	}
	if len(m.Selected) > 10 {
		t.Errorf("selected %d of 20 features; the target depends on 3", len(m.Selected))
	}
	plainCfg := DefaultConfig()
	plainCfg.Iters = 0
	plain := mustFit(t, plainCfg, train, nil)
	mse := func(m *Model) float64 {
		p, err := m.Predict(context.Background(), test.X, test.N)
		if err != nil {
			t.Fatal(err)
		}
		s := 0.0
		for i := range p {
			s += (p[i] - test.Y[i]) * (p[i] - test.Y[i])
		}
		return s / float64(len(p))
	}
	a, b := mse(m), mse(plain)
	t.Logf("test MSE: RFM-T %.5f, plain Laplace %.5f", a, b)
	if a >= b {
		t.Errorf("RFM-T test MSE %.5f not below plain Laplace %.5f", a, b)
	}
}
