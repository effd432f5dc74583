package predictor_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/fit"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/predictor"
)

func readTable(t *testing.T, n int) (*dataset.Table, *dataset.Target, *dataset.Pipeline) {
	t.Helper()
	tab, err := dataset.Read(strings.NewReader(tableCSV(n, 3)), "t.csv", dataset.ReadOptions{Ignore: []string{"id", "v"}})
	if err != nil {
		t.Fatal(err)
	}
	tg, p, err := predictor.FitEncoding(tab, "y", dataset.TaskAuto, dataset.ScaleStandard)
	if err != nil {
		t.Fatal(err)
	}
	return tab, tg, p
}

// CrossValidate scores every row once, one fold at a time, and names the
// fold that fails.
func TestCrossValidate(t *testing.T) {
	tab, tg, p := readTable(t, 240)
	col, _ := tab.TargetColumn("y")
	_, labels, err := tg.Encode(col)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 1
	seen := map[int]bool{}
	folds, err := predictor.CrossValidate(context.Background(), tab, "t.csv", tg, p, labels, cfg, fit.Options{}, 3, func(k int, _ rfm.Progress) { seen[k] = true })
	if err != nil {
		t.Fatal(err)
	}
	test := 0
	for _, f := range folds {
		test += f.TestRows
		if r, ok := f.Report.(*metrics.Classification); !ok || r.N != f.TestRows || f.TrainRows+f.TestRows != 240 {
			t.Fatalf("fold %+v", f)
		}
	}
	if len(folds) != 3 || test != 240 || len(seen) != 3 {
		t.Fatalf("%d folds, %d test rows, progress of folds %v", len(folds), test, seen)
	}
	cfg.Solver = rfm.SolverTree
	_, err = predictor.CrossValidate(context.Background(), tab, "t.csv", tg, p, labels, cfg, fit.Options{Thresholded: true}, 3, nil)
	var fe *predictor.FoldError
	if !errors.As(err, &fe) || fe.Fold != 1 || fe.Folds != 3 || fe.TrainRows != 160 || !errors.Is(err, fit.ErrThresholdedTree) {
		t.Fatalf("RFM-T in a tree: %v", err)
	}
	cfg.Solver, cfg.MemoryLimit = rfm.SolverExact, 1<<10
	if _, err := predictor.CrossValidate(context.Background(), tab, "t.csv", tg, p, labels, cfg, fit.Options{}, 3, nil); err == nil || errors.As(err, &fe) {
		t.Fatalf("a fit beyond the memory limit: %v", err)
	}
}

// EncodeScalings encodes the same rows once per scaling, the base one by
// its own pipeline; RowReadOptions reads the target as its task needs.
func TestEncodeScalings(t *testing.T) {
	tab, tg, p := readTable(t, 100)
	pipes, data, err := predictor.EncodeScalings(tab, tg, p, "standard", []string{"standard", "minmax"}, "y", dataset.TaskAuto)
	if err != nil {
		t.Fatal(err)
	}
	if pipes["standard"] != p || pipes["minmax"].Scaling.Name() != dataset.ScaleMinMax || data["minmax"].N != 100 || data["standard"].D != p.Width() {
		t.Fatalf("pipelines %v, data %v", pipes, data)
	}
	valid, err := predictor.EncodeEach(tab, pipes, tg)
	if err != nil || len(valid) != 2 || !slices.Equal(valid["minmax"].X, data["minmax"].X) {
		t.Fatalf("EncodeEach: %v", err)
	}
	if opt := predictor.RowReadOptions(p, tg, true); !slices.Contains(opt.Categorical, "y") {
		t.Errorf("a class target is read as text: %+v", opt)
	}
	if opt := predictor.RowReadOptions(p, tg, false); slices.Contains(opt.Categorical, "y") {
		t.Errorf("rows to predict need no target: %+v", opt)
	}
	if s := predictor.FitShape(10, 4, tg); s != (rfm.FitShape{N: 10, D: 4, Outputs: 2}) {
		t.Errorf("FitShape %+v", s)
	}
}

// PlanPredict passes a modest prediction and refuses a text table that
// cannot fit in memory.
func TestPlanPredict(t *testing.T) {
	for _, useTree := range []bool{false, true} {
		m, err := predictor.Load(fitFile(t, useTree, dataset.TaskClassification))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.PlanPredict(1000, 3); err != nil {
			t.Errorf("tree %v: 1000 rows: %v", useTree, err)
		}
		if err := m.PlanPredict(1<<40, 3); err == nil {
			t.Errorf("tree %v: 2^40 rows as text passed", useTree)
		}
	}
}
