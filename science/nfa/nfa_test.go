package nfa

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/synth"
)

func network(t *testing.T, widths ...int) nn.Config {
	t.Helper()
	cfg := nn.DefaultConfig()
	cfg.Widths, cfg.LR, cfg.Seed, cfg.InitScale = widths, 0.01, 1, nil
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Run measures every hidden layer at initialization and at the recorded
// epochs (no C-NFA at initialization), lowers the loss, reports each
// measurement, and compares with the exact EGOP and an RFM's M.
func TestRunChain(t *testing.T) {
	tr, te, egop, err := Synthetic(synth.Chain, 128, 200, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tr.N != 128 || te.N != 200 || tr.D != 8 || len(egop) != 64 {
		t.Fatalf("data: %d, %d rows of %d; EGOP %d values", tr.N, te.N, tr.D, len(egop))
	}
	var measured []Measurement
	res, err := Run(context.Background(), tr, te, Options{Network: network(t, 32, 32), Epochs: 60, Points: 4, EGOP: egop, WithRFM: true, Seed: 1,
		Progress: func(m Measurement) { measured = append(measured, m) }})
	if err != nil {
		t.Fatal(err)
	}
	epochs := map[int]bool{}
	for _, rec := range res.Records {
		epochs[rec.Epoch] = true
		if (rec.Epoch == 0) != (rec.CNFA == nil) || rec.Layer < 1 || rec.Layer > 2 || rec.NFA.Cosine < -1 || rec.NFA.Cosine > 1 {
			t.Fatalf("record %+v", rec)
		}
	}
	if !epochs[0] || !epochs[1] || !epochs[60] || len(res.Records) != 2*len(measured) || len(res.Last) != 2 {
		t.Errorf("epochs %v, %d records, %d measurements, %d layers kept", epochs, len(res.Records), len(measured), len(res.Last))
	}
	if first, last := res.Records[0], res.Records[len(res.Records)-1]; !(last.TrainLoss < first.TrainLoss/2) {
		t.Errorf("training did not lower the loss: %v → %v", first.TrainLoss, last.TrainLoss)
	}
	if s := measured[0].LayerSummary(); !strings.HasPrefix(s, "L1 ") || !strings.Contains(s, "/-, L2 ") {
		t.Errorf("layer summary at initialization: %q", s)
	}
	for _, k := range []string{"nfm_vs_egop", "agop_vs_egop", "cnfm_vs_egop", "rfm_m_vs_nfm", "rfm_m_vs_agop", "rfm_m_vs_cnfm", "rfm_m_vs_egop"} {
		if _, ok := res.Final[k]; !ok {
			t.Errorf("no %s in %v", k, res.Final)
		}
	}
	// The chain's EGOP is what an RFM's M should approach.
	if c := res.Final["rfm_m_vs_egop"].(nn.Comparison); !(c.Cosine > 0.5) {
		t.Errorf("ρ(M, EGOP) = %v", c.Cosine)
	}
	dir := t.TempDir()
	if err := WriteFiles(context.Background(), dir, res, nil); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"nfa.csv", "nfa.json", "nfa_correlations.png", "layer1_nfm.png", "layer1_agop.png", "layer1_cnfm.png", "rfm_m.png"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "nfa.csv"))
	if lines := strings.Count(string(csv), "\n"); lines != len(res.Records)+1 {
		t.Errorf("nfa.csv has %d lines for %d records", lines, len(res.Records))
	}
	var back Result
	b, _ := os.ReadFile(filepath.Join(dir, "nfa.json"))
	if err := json.Unmarshal(b, &back); err != nil || len(back.Records) != len(res.Records) {
		t.Errorf("nfa.json: %v", err)
	}
}

// A one-hot classification set measures the test accuracy; with an image
// shape the matrices are drawn as their diagonals; a diverging learning
// rate is an error naming the epoch.
func TestRunClassesShapeDivergence(t *testing.T) {
	s, err := synth.Generate(synth.Product, 300, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	data := func(lo, hi int) *Data {
		d := &Data{X: s.X[lo*4 : hi*4], N: hi - lo, D: 4, K: 2}
		for _, v := range s.Y[lo:hi] {
			if v > 0 {
				d.Y = append(d.Y, 0, 1)
			} else {
				d.Y = append(d.Y, 1, 0)
			}
		}
		return d
	}
	tr, te := data(0, 200), data(200, 300)
	res, err := Run(context.Background(), tr, te, Options{Network: network(t, 16), Epochs: 20, Points: 2, Classes: 2})
	if err != nil {
		t.Fatal(err)
	}
	if last := res.Records[len(res.Records)-1]; !(last.TestAcc > 50) {
		t.Errorf("test accuracy %v%%", last.TestAcc)
	}
	if err := WriteFiles(context.Background(), t.TempDir(), res, &plot.ImageShape{H: 2, W: 2, C: 1}); err != nil {
		t.Error(err)
	}
	cfg := network(t, 16)
	cfg.LR = 1e6
	if _, err := Run(context.Background(), tr, te, Options{Network: cfg, Epochs: 5, Points: 5}); err == nil || !strings.Contains(err.Error(), "diverged") {
		t.Errorf("lr 1e6: err = %v, want a divergence", err)
	}
	if _, err := Run(context.Background(), tr, te, Options{Network: cfg, Epochs: 0, Points: 1}); err == nil {
		t.Error("0 epochs: no error")
	}
}

// The synthetic test rows come from the training rows' function: on the
// linear task a fitted network's test MSE is as small as its training
// MSE (it once drew the test rows' direction from another seed).
func TestSyntheticTestRowsShareTheTarget(t *testing.T) {
	tr, te, _, err := Synthetic(synth.Linear, 512, 300, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), tr, te, Options{Network: network(t, 64), Epochs: 150, Points: 2})
	if err != nil {
		t.Fatal(err)
	}
	last := res.Records[len(res.Records)-1]
	if !(last.TrainLoss < 0.05 && last.TestLoss < 0.1) {
		t.Errorf("train MSE %v, test MSE %v (the target's variance is 1)", last.TrainLoss, last.TestLoss)
	}
}
