package describe

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/fit"
	"github.com/rfmkit/rfm/internal/testutil/synthset"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/predictor"
	"github.com/rfmkit/rfm/synth"
	"github.com/rfmkit/rfm/tree"
)

// fitted fits a small regression of solver on 400 rows of 6 features.
func fitted(t *testing.T, solver rfm.Solver) (*fit.Result, *rfm.Dataset) {
	t.Helper()
	ds := synthset.Regression(t, synth.LowRank, 400, 6, 1)
	cfg := rfm.DefaultConfig()
	cfg.Iters, cfg.Solver, cfg.LeafSize = 1, solver, 150
	fr, err := fit.Fit(context.Background(), cfg, ds, fit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return fr, ds
}

// Each model kind inspects itself through the registry: an RFM its
// features and eigenvalues, a tree its leaves, a forest its first tree
// (the same JSON), an ensemble its members and its best one.
func TestInspectKinds(t *testing.T) {
	fr, _ := fitted(t, rfm.SolverExact)
	lm := &predictor.Model{Name: "m.rfm", Fitted: fr.Model}
	in, err := Inspect(lm, InspectOptions{Top: 3, Eigen: 2})
	if err != nil {
		t.Fatal(err)
	}
	r, ok := in.(*RFMInspection)
	if !ok || len(r.TopFeatures) != 3 || len(r.Eigenvalues) != 2 || r.TopFeatures[0].Relative != 1 || r.TopFeatures[0].Name != "x"+strings.TrimPrefix(r.TopFeatures[0].Name, "x") {
		t.Fatalf("rfm inspection %T %+v", in, in)
	}
	var b strings.Builder
	if err := in.WriteText(&b); err != nil || !strings.HasPrefix(b.String(), "model") || !strings.Contains(b.String(), "Top eigenvalues of M (2 of 6") {
		t.Fatalf("rfm text: %v\n%s", err, b.String())
	}

	em, err := ensemble.New([]*rfm.Model{fr.Model.(*rfm.Model), fr.Model.(*rfm.Model)})
	if err != nil {
		t.Fatal(err)
	}
	in, err = Inspect(&predictor.Model{Name: "e.rfm", Fitted: em}, InspectOptions{})
	if e, ok := in.(*EnsembleInspection); err != nil || !ok || len(e.Members) != 2 || e.Best == nil || len(e.Best.TopFeatures) != 6 {
		t.Fatalf("ensemble inspection %+v: %v", in, err)
	}
	b.Reset()
	if err := in.WriteText(&b); err != nil || strings.Count(b.String(), "e.rfm") != 1 || !strings.Contains(b.String(), "member 0 (the best) in detail") {
		t.Fatalf("ensemble text: %v\n%s", err, b.String())
	}

	tr, _ := fitted(t, rfm.SolverTree)
	tm := tr.Model.(*tree.Model)
	in, err = Inspect(&predictor.Model{Name: "t.rfm", Fitted: tm}, InspectOptions{Top: 2})
	ti, ok := in.(*TreeInspection)
	if err != nil || !ok || len(ti.TopFeatures) != 2 || len(ti.Tree.Leaves) != len(tm.Leaves) {
		t.Fatalf("tree inspection %+v: %v", in, err)
	}
	forest, err := tree.NewForest([]*tree.Model{tm, tm})
	if err != nil {
		t.Fatal(err)
	}
	in, err = Inspect(&predictor.Model{Name: "t.rfm", Fitted: forest}, InspectOptions{Top: 2})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(ti)
	f, _ := json.Marshal(in)
	if string(a) != string(f) {
		t.Errorf("a forest's JSON is not its first tree's:\n%s\n%s", f, a)
	}
	b.Reset()
	if err := in.WriteText(&b); err != nil || !strings.HasPrefix(b.String(), "forest of 2 trees") {
		t.Fatalf("forest text: %v\n%s", err, b.String())
	}
	// A tree draws its feature ranking only: images are an option error.
	_, err = Inspect(&predictor.Model{Name: "t.rfm", Fitted: tm}, InspectOptions{Plots: filepath.Join(t.TempDir(), "f"), ImageShape: &plot.ImageShape{H: 2, W: 3, C: 1}})
	var oe *OptionError
	if !errors.As(err, &oe) {
		t.Errorf("tree with --image-shape: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("a kind registered twice did not panic")
		}
	}()
	RegisterInspector("tree", inspectTree)
}

// A fit's report follows what the fit made: an RFM's rounds, or a tree's
// leaves scored on the validation rows.
func TestReportFit(t *testing.T) {
	fr, ds := fitted(t, rfm.SolverExact)
	cfg := fr.Model.ModelHeader().Config
	names := []string{"a", "b", "c", "d", "e", "f"}
	in := FitInput{Data: FitData{Model: "m.rfm", Rows: ds.N}, Config: cfg, Validation: Fit{Validation: "holdout", ValidationRows: 80}, Names: names,
		Target: nil}
	rep, err := ReportFit(context.Background(), fr, in)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rep.(*Fit); !ok {
		t.Fatalf("an RFM's report is a %T", rep)
	}
	if line := rep.Finish(1500e6); !strings.HasPrefix(line, "fit: 400 rows, best round") || !strings.HasSuffix(line, "1.50s; model written to m.rfm") {
		t.Errorf("finish line %q", line)
	}

	tr, ds := fitted(t, rfm.SolverTree)
	in.Config, in.Valid, in.Validation = tr.Model.ModelHeader().Config, ds, Fit{ValidationFile: "valid.csv"}
	rep, err = ReportFit(context.Background(), tr, in)
	if err != nil {
		t.Fatal(err)
	}
	ft, ok := rep.(*FitTree)
	if !ok || ft.Tree.ValScore == nil || ft.Tree.ValidationOn != "valid.csv (400 rows)" || !strings.Contains(rep.ModelValidation(), "each leaf holds out") {
		t.Fatalf("tree report %T %+v", rep, rep)
	}
	if line := rep.Finish(0); !strings.Contains(line, "a tree of") {
		t.Errorf("finish line %q", line)
	}
}

// FitValidation names the validation file, sizes the engine's holdout, or
// says there is none.
func TestFitValidation(t *testing.T) {
	ds := synthset.Regression(t, synth.LowRank, 100, 6, 2)
	cfg := rfm.DefaultConfig()
	if v := FitValidation(cfg, ds, "v.csv", ds); v.Validation != "file" || v.ValidationFile != "v.csv" || v.ValidationRows != 100 {
		t.Errorf("file: %+v", v)
	}
	if v := FitValidation(cfg, ds, "", nil); v.Validation != "holdout" || v.ValidationRows != 20 {
		t.Errorf("holdout of 20%%: %+v", v)
	}
	cfg.ValFraction = 0
	if v := FitValidation(cfg, ds, "", nil); v.Validation != "none" {
		t.Errorf("no holdout: %+v", v)
	}
}

// EvalFigures draws a classifier's reliability diagram, and nothing for a
// regression.
func TestEvalFigures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "figs")
	if figs, err := EvalFigures(dir, &metrics.Regression{}); err != nil || figs != nil {
		t.Fatalf("regression: %v, %v", figs, err)
	}
	labels := []int{0, 1, 1, 0, 1, 0}
	prob := []float64{0.9, 0.1, 0.2, 0.8, 0.4, 0.6, 0.7, 0.3, 0.3, 0.7, 0.6, 0.4}
	r, err := metrics.EvaluateClassification(labels, []int{0, 1, 1, 0, 1, 0}, prob, 2, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	figs, err := EvalFigures(dir, r)
	if err != nil || len(figs) != 1 {
		t.Fatalf("classification: %v, %v", figs, err)
	}
	if st, err := os.Stat(figs[0]); err != nil || st.Size() == 0 {
		t.Fatalf("figure %s: %v", figs[0], err)
	}
}
