package tune

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/kernel"
)

// FixedSpace narrows the space to the settings given and refuses the
// ones a search cannot hold fixed.
func TestFixedSpace(t *testing.T) {
	none := func(string) bool { return false }
	sp, err := FixedSpace(rfm.DefaultConfig(), none)
	if err != nil || sp.Kernels != nil || len(sp.Diag) != 2 || sp.BandwidthAbsolute {
		t.Fatalf("nothing fixed: %+v, %v", sp, err)
	}
	cfg := rfm.DefaultConfig()
	cfg.Diag, cfg.Iters, cfg.Ridge = true, 4, 0.5
	given := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	sp, err = FixedSpace(cfg, given("diag", "iters", "ridge", "kernel", "bandwidth"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sp.Diag, []bool{true}) || !slices.Equal(sp.Iters, []int{4}) || sp.Ridge != [2]float64{0.5, 0.5} ||
		!slices.Equal(sp.Kernels, []kernel.Kind{cfg.Kernel.Kind}) || !sp.BandwidthAbsolute || len(sp.Centered) != 2 {
		t.Fatalf("fixed: %+v", sp)
	}
	ntk := rfm.DefaultConfig()
	ntk.Kernel = kernel.Spec{Kind: kernel.NTK, Depth: 2}
	zero := rfm.DefaultConfig()
	zero.Ridge = 0
	for _, c := range []struct {
		cfg   rfm.Config
		fixed string
		want  string
	}{
		{ntk, "kernel", "--kernel ntk cannot be tuned"},
		{zero, "ridge", "--ridge 0 cannot be a fixed setting"},
		{rfm.DefaultConfig(), "adaptive-bandwidth", "--adaptive-bandwidth does not apply"},
	} {
		_, err := FixedSpace(c.cfg, given(c.fixed))
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, c.want) {
			t.Errorf("%s fixed: %v; want a SetupError %q", c.fixed, err, c.want)
		}
	}
}

// PlanSearch resolves the search's solver, sets a large table's defaults
// and refuses what cannot be searched.
func TestPlanSearch(t *testing.T) {
	opt := Options{Base: rfm.DefaultConfig()}
	opt.Base.Solver = rfm.SolverAuto
	large, err := PlanSearch(&opt, rfm.FitShape{N: 500, D: 10, Outputs: 3}, false)
	if err != nil || large != "" || opt.Base.Solver != rfm.SolverExact || opt.MaxRows != 0 {
		t.Fatalf("small table: %q, %v, solver %q, max rows %d", large, err, opt.Base.Solver, opt.MaxRows)
	}
	big := rfm.FitShape{N: rfm.AutoExactRows + 1, D: 10, Outputs: 2}
	opt = Options{Base: rfm.DefaultConfig()}
	opt.Base.Solver = rfm.SolverAuto
	large, err = PlanSearch(&opt, big, false)
	if err != nil || !strings.Contains(large, "--solver auto would fit a tree") || opt.MaxRows != LargeMaxRows ||
		opt.FinalCenters < 1000 || opt.FinalCenters > LargeCenters {
		t.Fatalf("large table: %q, %v, max rows %d, centres %d", large, err, opt.MaxRows, opt.FinalCenters)
	}
	for _, c := range []struct {
		name  string
		setup func(o *Options)
		given bool
		want  string
	}{
		{"auto tree, given", func(o *Options) {}, true, "tune fits exact RFMs"},
		{"class weights", func(o *Options) { o.MaxRows, o.FinalCenters, o.Base.ClassWeight = 2000, 1000, rfm.ClassWeightBalanced }, true, "--class-weight balanced"},
		{"centres above rows", func(o *Options) { o.MaxRows, o.FinalCenters = 2000, big.N }, true, "give M below"},
	} {
		opt := Options{Base: rfm.DefaultConfig()}
		opt.Base.Solver = rfm.SolverAuto
		c.setup(&opt)
		_, err := PlanSearch(&opt, big, c.given)
		var se *SetupError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, c.want) {
			t.Errorf("%s: %v; want a SetupError %q", c.name, err, c.want)
		}
	}
}

// RunJournal writes every trial to the table as it ends and counts them;
// the report of the search says what it did, as text, JSON and figures.
func TestRunJournalAndReport(t *testing.T) {
	ds := classes(t, 300, 3)
	opt := options(ds, 4)
	opt.Rule = RuleOneSE
	dir := t.TempDir()
	path := filepath.Join(dir, "trials.csv")
	j, err := OpenJournal(path, false, true)
	if err != nil {
		t.Fatal(err)
	}
	calls, lastBest := 0, (*Trial)(nil)
	res, st, err := RunJournal(context.Background(), opt, j, func(frac float64, tr, best *Trial) {
		calls++
		if frac < 0 || frac >= 1 || tr == nil {
			t.Errorf("progress %v for %v", frac, tr)
		}
		lastBest = best
	})
	j.Close()
	if err != nil || j.Err() != nil {
		t.Fatal(err, j.Err())
	}
	if st.Fits == 0 || st.Cached != 0 || calls != len(res.Trials) || lastBest == nil || lastBest.Rows != res.Rungs[len(res.Rungs)-1] {
		t.Fatalf("stats %+v, %d calls for %d trials, last best %+v", st, calls, len(res.Trials), lastBest)
	}
	table, err := os.ReadFile(path)
	if rows := strings.Count(string(table), "\n"); err != nil || rows != 1+st.Fits {
		t.Fatalf("trials table: %d lines for %d fits, %v", rows, st.Fits, err)
	}
	st.TrialsFile = path
	rep := NewReport(opt, res, st)
	if rep.Best.Trial != res.Best.Index || rep.Best.Accuracy == nil || rep.Default == nil || rep.Fits != st.Fits || rep.TrialsFile != path {
		t.Fatalf("report %+v", rep)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Search: 4 configurations", "Plain kernel: trial", "Base config:  trial 0", "Best trials on"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
	js, err := json.Marshal(&rep)
	if err != nil || !strings.Contains(string(js), `"plain_kernel"`) || strings.Contains(string(js), `"res"`) {
		t.Fatalf("JSON %s: %v", js, err)
	}
	// A large table's report: the search, the choice and the tree.
	rep.Asked = 3
	large := LargeReport{Report: rep, Kind: "tree", Large: &TreeChoice{Kept: "default tree"},
		Tree: &describe.Tree{Depth: 2, Leaves: make([]describe.Leaf, 3), Plan: "the plan"}}
	b.Reset()
	if err := large.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Search: 4 configurations", "Final model:  ", "a tree (", "Tree:         3 leaves, depth 2; the plan", "Ensemble:     none (--ensemble 3"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("large text lacks %q:\n%s", want, b.String())
		}
	}
	if js, err := json.Marshal(&large); err != nil || !strings.Contains(string(js), `"model_kind":"tree","large_table":{"kept":"default tree"`) {
		t.Errorf("large JSON %s: %v", js, err)
	}
	figs, err := Figures(filepath.Join(dir, "figs"), res)
	if err != nil || len(figs) != 3 {
		t.Fatalf("figures %v: %v", figs, err)
	}
	for _, f := range figs {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("figure %s: %v", f, err)
		}
	}
}

func TestTexts(t *testing.T) {
	if s := FoldsText(5, 2); s != "5-fold cross-validation × 2 repeats" {
		t.Errorf("FoldsText: %q", s)
	}
	if s := FinalWhat(3); s != "the 3 best configurations" {
		t.Errorf("FinalWhat: %q", s)
	}
	tr := &Trial{Accuracy: 0.5, Loss: 0.25}
	if ScoreText(tr, true) != "accuracy 0.5000" || ScoreText(tr, false) != "loss 0.25" {
		t.Errorf("ScoreText: %q %q", ScoreText(tr, true), ScoreText(tr, false))
	}
}
