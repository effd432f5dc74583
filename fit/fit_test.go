package fit

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/internal/testutil/modeltest"
	"github.com/rfmkit/rfm/internal/testutil/synthset"
	"github.com/rfmkit/rfm/synth"
	"github.com/rfmkit/rfm/tree"

	_ "github.com/rfmkit/rfm/ensemble" // its kind, for Decode
)

func data(t *testing.T, n int) *rfm.Dataset {
	t.Helper()
	return synthset.Regression(t, synth.LowRank, n, 6, 3)
}

func smallConfig() rfm.Config {
	cfg := rfm.DefaultConfig()
	cfg.Iters = 1
	return cfg
}

// Fit makes, for each solver, the model the solver's own function makes:
// the same kind and the same predictions, and a file of it decodes to the
// same kind through the registry.
func TestFitCallsTheSolver(t *testing.T) {
	ctx := context.Background()
	ds := data(t, 300)
	for _, solver := range []rfm.Solver{rfm.SolverAuto, rfm.SolverExact, rfm.SolverNystrom, rfm.SolverTree} {
		cfg := smallConfig()
		cfg.Solver = solver
		if solver == rfm.SolverNystrom {
			cfg.Centers = 100
		}
		if solver == rfm.SolverTree {
			cfg.LeafSize = 100
		}
		res, err := Fit(ctx, cfg, ds, Options{})
		if err != nil {
			t.Fatalf("%s: %v", solver, err)
		}
		want := cfg
		wantKind := "rfm"
		var direct rfm.Fitted
		switch solver {
		case rfm.SolverTree:
			wantKind = "tree"
			tm, _, err := tree.Fit(ctx, cfg, ds, nil)
			if err != nil {
				t.Fatal(err)
			}
			direct = tm
			if res.Plan == nil {
				t.Errorf("tree: no plan")
			}
		case rfm.SolverAuto:
			want.Solver = rfm.SolverExact // 300 rows fit one exact solve
			fallthrough
		default:
			m, err := rfm.Fit(ctx, want, ds, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			direct = m
		}
		if res.Solver != want.Solver && !(solver == rfm.SolverTree && res.Solver == rfm.SolverTree) {
			t.Errorf("%s: solved by %s, want %s", solver, res.Solver, want.Solver)
		}
		if (solver == rfm.SolverAuto) == (res.Why == "asked for") {
			t.Errorf("%s: why %q", solver, res.Why)
		}
		if res.Model.Kind() != wantKind {
			t.Errorf("%s: a %s model, want %s", solver, res.Model.Kind(), wantKind)
		}
		x := ds.X[:20*ds.D]
		got, exp := testutil.MustPredict(t, res.Model, x, 20), testutil.MustPredict(t, direct, x, 20)
		if !slices.Equal(got, exp) {
			t.Errorf("%s: Fit predicts other numbers than the solver's own fit", solver)
		}
		back := modeltest.RoundTrip(t, res.Model)
		if bk, ok := back.(rfm.Fitted); !ok || bk.Kind() != wantKind || bk.ModelHeader().D != ds.D {
			t.Errorf("%s: decoded %T", solver, back)
		}
	}
}

func TestThresholdedTreeRefused(t *testing.T) {
	cfg := smallConfig()
	cfg.Solver, cfg.LeafSize = rfm.SolverTree, 100
	if _, err := Fit(context.Background(), cfg, data(t, 200), Options{Thresholded: true, Threshold: 0.1}); !errors.Is(err, ErrThresholdedTree) {
		t.Fatalf("RFM-T on a tree: %v", err)
	}
	cfg.Solver = rfm.SolverExact
	res, err := Fit(context.Background(), cfg, data(t, 200), Options{Thresholded: true, Threshold: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Model.(*rfm.Model); m.Selected == nil {
		t.Errorf("RFM-T kept every column (Selected nil)")
	}
}
