package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/hyperbf"
	"github.com/rfmkit/rfm/science/nfa"
	"github.com/rfmkit/rfm/science/phenomena"
)

// rfm nfa trains, measures every layer at initialization and at the
// recorded epochs, compares with the exact EGOP and an RFM, and writes its
// files; bad flags are refused.
func TestNFACommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "nfa")
	r := runInProcess("nfa", "--task", "chain", "--n", "128", "--d", "8", "--test-n", "200", "--widths", "32,32", "--epochs", "80", "--points", "4",
		"--lr", "0.01", "--init-scale", "0.1,1,1", "--rfm", "--out", out, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res nfa.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	epochs := map[int]bool{}
	for _, rec := range res.Records {
		epochs[rec.Epoch] = true
		if (rec.Epoch == 0) != (rec.CNFA == nil) || rec.Layer < 1 || rec.Layer > 2 || rec.NFA.Cosine < -1 || rec.NFA.Cosine > 1 {
			t.Fatalf("record %+v", rec)
		}
	}
	if !epochs[0] || !epochs[1] || !epochs[80] || len(res.Records)%2 != 0 {
		t.Errorf("epochs recorded %v, %d records", epochs, len(res.Records))
	}
	last := res.Records[len(res.Records)-2]
	first := res.Records[0]
	if !(last.TrainLoss < first.TrainLoss/2) {
		t.Errorf("training did not lower the loss: %v → %v", first.TrainLoss, last.TrainLoss)
	}
	for _, k := range []string{"nfm_vs_egop", "agop_vs_egop", "rfm_m_vs_nfm", "rfm_m_vs_egop"} {
		if _, ok := res.Final[k]; !ok {
			t.Errorf("no %s in %v", k, res.Final)
		}
	}
	for _, f := range []string{"nfa.csv", "nfa.json", "nfa_correlations.png", "layer1_nfm.png", "layer1_agop.png", "rfm_m.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nfa", "--widths", "0"}, `--widths "0"`},
		{[]string{"nfa", "--activation", "gelu"}, `unknown activation "gelu"`},
		{[]string{"nfa", "--task", "spiral"}, `--task "spiral"`},
		{[]string{"nfa", "--init-scale", "-1"}, `--init-scale "-1"`},
		{[]string{"nfa", "--target", "y"}, "--target goes with --data"},
		{[]string{"nfa", "--task", "chain", "--d", "3"}, "needs d ≥ 5"},
		{[]string{"nfa", "--data", "x.csv", "--target", "y", "--n", "10"}, "with --data they do not apply"},
		{[]string{"nfa", "--momentum", "NaN"}, "momentum NaN"},
	} {
		r := runInProcess(c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d %q", c.args, r.code, r.stderr)
		}
	}
}

// rfm hyperbf trains, reports each epoch with the metric's alignment to
// the AGOP, and with --compare fits the three kernel machines beside it.
func TestHyperBFCommand(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "synth", "--task", "product", "--n", "300", "--d", "5", "--seed", "1", "--out", "train.csv")
	mustRun(t, dir, "synth", "--task", "product", "--n", "200", "--d", "5", "--seed", "2", "--out", "test.csv")
	r := runInProcess("hyperbf", "--data", filepath.Join(dir, "train.csv"), "--test", filepath.Join(dir, "test.csv"), "--target", "y",
		"--centers", "40", "--epochs", "15", "--lr", "0.01", "--batch", "50", "--measure-rows", "100", "--compare", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res hyperbf.StudyResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Epochs) != 16 || res.Metric != "test MSE (standardized target)" || len(res.Compare) != 4 {
		t.Fatalf("%+v", res)
	}
	first, last := res.Epochs[1], res.Epochs[15]
	if !(last.TrainLoss < first.TrainLoss) || !(last.TestScore < res.Epochs[0].TestScore) {
		t.Errorf("training: loss %v → %v, test MSE %v → %v", first.TrainLoss, last.TrainLoss, res.Epochs[0].TestScore, last.TestScore)
	}
	// y = x0·x1: the learned metric and the AGOP both weigh x0 and x1.
	if !(last.MetricVsAGOP.Cosine > res.Epochs[0].MetricVsAGOP.Cosine) {
		t.Errorf("ρ(WᵀW, AGOP) did not grow: %v → %v", res.Epochs[0].MetricVsAGOP.Cosine, last.MetricVsAGOP.Cosine)
	}
	if r := runInProcess("hyperbf", "--data", "x.csv"); r.code != 2 || !strings.Contains(r.stderr, "--data, --test and --target are required") {
		t.Errorf("missing flags: %d %s", r.code, r.stderr)
	}
}

// rfm phenomena on the shared MNIST digits, small: the RFM's round 1
// finds the marker (test accuracy up from the majority rate, the focus
// mass from ~0), and on the halves both models weigh the simple half and
// fall to chance when it is scrambled.
func TestPhenomenaCommand(t *testing.T) {
	const mnistDir = "../../../shared/data/mnist"
	r := runInProcess("phenomena", "--kind", "marker", "--mnist", mnistDir, "--n", "1000", "--epochs", "10", "--rounds", "1", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res phenomena.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	var r0, r1 phenomena.Point
	for _, p := range res.Points {
		if p.Model == "rfm" && p.Time == 0 {
			r0 = p
		}
		if p.Model == "rfm" && p.Time == 1 {
			r1 = p
		}
	}
	if !(r0.TestAcc < 95 && r1.TestAcc > 99 && r0.FocusMass < 0.05 && r1.FocusMass > 0.5) {
		t.Errorf("marker, RFM rounds 0 and 1: %+v %+v", r0, r1)
	}
	out := filepath.Join(t.TempDir(), "halves")
	r = runInProcess("phenomena", "--kind", "halves", "--mnist", mnistDir, "--n", "300", "--epochs", "10", "--rounds", "2", "--out", out, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	last := map[string]phenomena.Point{}
	for _, p := range res.Points {
		last[p.Model] = p
	}
	for _, m := range []string{"network", "rfm"} {
		p := last[m]
		if !(p.TestAcc > 97 && p.TestAcc2 < 70 && p.FocusMass > 0.55) {
			t.Errorf("halves, %s: %+v", m, p)
		}
	}
	for _, f := range []string{"phenomena.json", "network_accuracy.png", "rfm_accuracy.png", "network_diag.png", "rfm_diag.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if r := runInProcess("phenomena", "--kind", "spiral"); r.code != 2 || !strings.Contains(r.stderr, `--kind "spiral"`) {
		t.Errorf("bad kind: %d %s", r.code, r.stderr)
	}
}

// The synthetic test rows come from the training rows' function: on the
// linear task a fitted network's test MSE is as small as its training
// MSE (it once drew the test rows' direction from another seed).
func TestNFATestRowsShareTheTarget(t *testing.T) {
	r := runInProcess("nfa", "--task", "linear", "--n", "512", "--d", "8", "--test-n", "300", "--widths", "64", "--epochs", "150", "--points", "2",
		"--lr", "0.01", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res nfa.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	last := res.Records[len(res.Records)-1]
	if !(last.TrainLoss < 0.05 && last.TestLoss < 0.1) {
		t.Errorf("train MSE %v, test MSE %v (the target's variance is 1)", last.TrainLoss, last.TestLoss)
	}
	if r := runInProcess("phenomena", "--kind", "marker", "--mnist", "../../../shared/data/mnist", "--n", "100", "--epochs", "3", "--rounds", "1", "--lr", "1000"); r.code != 1 || !strings.Contains(r.stderr, "diverged") {
		t.Errorf("a diverging network: exit %d %s", r.code, r.stderr)
	}
}
