package tune

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/synth"
	"github.com/rfmkit/rfm/tree"
)

// On a table small enough for one leaf, the tree TreeFinal grows is the
// exact fit of the configuration it kept: its one leaf is that fit, on the
// same rows, and predicts the same numbers.
func TestTreeFinalOneLeafEqualsExact(t *testing.T) {
	ctx := context.Background()
	ds := classes(t, 700, 3)
	opt := options(ds, 8)
	opt.Base.Calibrate = rfm.CalibrateNone
	opt.Base.LeafSize = 5000
	opt.Base.Ridge = 30 // a poor base, so that the search finds better
	res := mustRun(t, opt)
	tf, err := TreeFinal(ctx, opt, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	tm, ok := tf.Model.(*tree.Model)
	if !ok {
		t.Fatalf("final model is a %s, want a tree", tf.Model.Kind())
	}
	if tm.NumLeaves() != 1 {
		t.Fatalf("%d leaves, want 1", tm.NumLeaves())
	}
	if res.Best.Index == 0 {
		t.Fatalf("the search kept the base configuration: nothing to probe (pick another seed)")
	}
	if tf.Choice.Leaves != 1 || tf.Choice.ValidRows == 0 {
		t.Errorf("probe: %d leaves, %d validation rows; want 1 leaf and some rows", tf.Choice.Leaves, tf.Choice.ValidRows)
	}
	exact := tf.Config
	exact.Solver, exact.Calibrate = rfm.SolverExact, ""
	m, err := rfm.Fit(ctx, exact, ds, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	x := ds.X[:50*ds.D]
	got, err := tm.Predict(ctx, x, 50)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(ctx, x, 50)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9*(1+math.Abs(want[i])) {
			t.Fatalf("output %d: tree %v, exact fit %v (kept %s)", i, got[i], want[i], tf.Choice.Kept)
		}
	}
	if tf.Choice.Kept == "default tree" && tf.Config.Kernel != opt.Base.Kernel {
		t.Errorf("kept the default tree but its kernel is %v, the base's %v", tf.Config.Kernel, opt.Base.Kernel)
	}
}

// A challenger replaces the protected candidate only by a margin beyond
// the noise of the paired differences.
func TestPairedMargin(t *testing.T) {
	a := []float64{1, 2, 3, 4}
	m, se := pairedMargin(a, a)
	if m != 0 || se != 0 {
		t.Errorf("identical losses: margin %v ± %v, want 0 ± 0", m, se)
	}
	m, se = pairedMargin([]float64{1, 1.2, 0.9, 1.1}, []float64{0, 0.1, 0, 0.1})
	if !(m > 0.9 && se > 0 && m > TreeZ*se) {
		t.Errorf("clear win: margin %v ± %v", m, se)
	}
	if _, se := pairedMargin([]float64{1}, []float64{0}); !math.IsInf(se, 1) {
		t.Errorf("one row: SE %v, want +Inf", se)
	}
}

// With Options.Forest the forest is tried on the validation rows and kept
// only when it beats its first tree there beyond the noise; either way the
// choice records both losses, and the final model is what was kept.
func TestTreeFinalForest(t *testing.T) {
	ctx := context.Background()
	opt, res := smallTreeSearch(t, 900, func(o *Options) { o.Forest = 3 })
	tf, err := TreeFinal(ctx, opt, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := tf.Choice
	if ch.Forest != 3 || !(ch.ForestLoss > 0) || !(ch.ForestTreeLoss > 0) || !(ch.ForestSE > 0) {
		t.Fatalf("forest not scored: %+v", ch)
	}
	pays := ch.ForestTreeLoss-ch.ForestLoss > TreeZ*ch.ForestSE
	f, isForest := tf.Model.(*tree.Forest)
	if pays != isForest {
		t.Fatalf("forest loss %.4g, its tree's %.4g (SE %.2g): kept a %s", ch.ForestLoss, ch.ForestTreeLoss, ch.ForestSE, tf.Model.Kind())
	}
	if isForest && len(f.Trees) != 3 {
		t.Errorf("a forest of %d trees, want 3", len(f.Trees))
	}
	opt.Forest = tree.MaxTrees + 1
	if err := opt.Check(); err == nil {
		t.Errorf("Forest %d accepted", opt.Forest)
	}
}

// A choice whose candidates were not all fitted (NaN losses) still goes
// into JSON, without them, and says what was kept.
func TestTreeChoiceJSON(t *testing.T) {
	c := &TreeChoice{Kept: "default tree", DefaultLoss: math.NaN(), TunedLoss: math.NaN(), NystromLoss: math.NaN(), Z: TreeZ, Why: "the search kept the defaults"}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); strings.Contains(s, "loss") || !strings.Contains(s, `"kept":"default tree"`) {
		t.Errorf("JSON %s", s)
	}
	if s := c.String(); !strings.Contains(s, "default tree kept") || strings.Contains(s, "NaN") {
		t.Errorf("note %q", s)
	}
}

// A search whose best configuration uses the logistic loss, which a tree's
// leaves cannot fit, still gets a final model (rfm tune failed on a9a and
// ijcnn1): the tuned tree is left out and the choice says why.
func TestTreeFinalLogisticBest(t *testing.T) {
	ctx := context.Background()
	opt, res := smallTreeSearch(t, 700, nil)
	best := *res.Best
	best.Index = 1
	best.Config.Loss = rfm.LossLogistic
	res.Best = &best
	tf, err := TreeFinal(ctx, opt, res, nil)
	if err != nil {
		t.Fatalf("TreeFinal with a logistic best: %v", err)
	}
	if tf.Choice.Kept != "default tree" || !math.IsNaN(tf.Choice.TunedLoss) {
		t.Errorf("kept %q, tuned loss %v; want the default tree and no tuned tree", tf.Choice.Kept, tf.Choice.TunedLoss)
	}
	if !strings.Contains(tf.Choice.Why, "no tuned tree") || !strings.Contains(tf.Choice.Why, "logistic") {
		t.Errorf("the choice does not say why there is no tuned tree: %q", tf.Choice.Why)
	}
	if _, ok := tf.Model.(*tree.Model); !ok {
		t.Errorf("final model is a %s, want the default tree", tf.Model.Kind())
	}
}

// smallTreeSearch is a 4-trial search on n rows whose base grows trees of
// 250-row leaves with one round, uncalibrated; edit, if set, changes the
// options before the search.
func smallTreeSearch(t *testing.T, n int, edit func(*Options)) (Options, *Result) {
	t.Helper()
	opt := options(classes(t, n, 4), 4)
	opt.Base.Calibrate = rfm.CalibrateNone
	opt.Base.LeafSize = 250
	opt.Base.Iters = 1
	if edit != nil {
		edit(&opt)
	}
	return opt, mustRun(t, opt)
}

// Every phase of the final fit is timed, recorded on the choice and told
// to Options.Log as it ends: the probe, the Nyström alternative (on the
// training rows, scored on the probe's validation rows) and the fit of
// what was kept on every row.
func TestTreeFinalPhases(t *testing.T) {
	ctx := context.Background()
	opt, res := smallTreeSearch(t, 700, func(o *Options) { o.FinalCenters = 200 })
	forceTuned(res)
	opt.Base.MemoryLimit = 1 << 30 // not the machine's free memory
	var lines []string
	opt.Log = func(s string) { lines = append(lines, s) }
	tf, err := TreeFinal(ctx, opt, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := tf.Choice
	if len(ch.Phases) != 4 || len(lines) != 4 {
		t.Fatalf("phases %+v, lines %q: want the probe, the Nyström and soft-routing alternatives and the final fit", ch.Phases, lines)
	}
	for i, want := range []string{"probe", "Nyström alternative (200 centres)", "soft-routing alternative", "the chosen "} {
		p := ch.Phases[i]
		if !strings.Contains(p.Name, want) || p.Rows <= 0 || p.Seconds < 0 || lines[i] != p.String() {
			t.Errorf("phase %d: %+v (line %q), want %q", i, p, lines[i], want)
		}
	}
	if ch.Phases[1].Scored != ch.ValidRows || ch.Phases[3].Rows != 700 {
		t.Errorf("Nyström scored %d rows (probe %d); final fit on %d rows, want 700", ch.Phases[1].Scored, ch.ValidRows, ch.Phases[3].Rows)
	}
	if note := ch.String(); !strings.Contains(note, "; timed: probe") || !strings.Contains(note, "the chosen default tree") && !strings.Contains(note, "the chosen tuned tree") {
		t.Errorf("the note does not give the phases' times: %q", note)
	}
	if ch.NystromCenters != 200 || math.IsNaN(ch.NystromLoss) {
		t.Errorf("Nyström not scored: %+v", ch)
	}
}

// The Nyström alternative is bounded: stopped at the search's budget, and
// refused, with its memory figure, when its plan exceeds the memory limit
// even at the fewest centres; the default tree is still fitted either way.
func TestTreeFinalNystromBounded(t *testing.T) {
	ctx := context.Background()
	opt, res := smallTreeSearch(t, 700, func(o *Options) { o.FinalCenters = 200 })
	forceTuned(res)
	opt.Base.MemoryLimit = 1 << 30
	opt.Budget = time.Nanosecond
	tf, err := TreeFinal(ctx, opt, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tf.Choice.Why, "Nyström alternative stopped unfinished at the search's budget") || tf.Choice.NystromCenters != 0 || tf.Choice.Kept == "nystrom" {
		t.Errorf("budget: %+v", tf.Choice)
	}
	if _, ok := tf.Model.(*tree.Model); !ok {
		t.Errorf("final model is a %s, want a tree", tf.Model.Kind())
	}

	opt.Budget = 0
	ncfg := res.Best.Config
	ncfg.Solver, ncfg.Centers = rfm.SolverNystrom, 200
	need := rfm.PlanFit(rfm.FitShape{N: 560, Valid: 140, D: 10, Outputs: 2, DataHeld: true}, ncfg).Total()
	opt.Base.MemoryLimit = need - 1
	if _, err := tree.MakePlan(TreeConfig(opt.Base, opt.Base), 700, 10, 2); err != nil {
		t.Fatalf("the tree does not fit in the Nyström's plan less a byte (%d bytes): %v", need-1, err)
	}
	tf, err = TreeFinal(ctx, opt, res, nil)
	if err != nil {
		t.Fatal(err)
	}
	if why := tf.Choice.Why; !strings.Contains(why, "Nyström not tried: 200 centres") || !strings.Contains(why, "--memory-limit") || tf.Choice.NystromCenters != 0 {
		t.Errorf("memory: %+v", tf.Choice)
	}
}

// forceTuned makes the search's best a configuration other than the base
// (a larger ridge), so that TreeFinal has a tuned tree to probe.
func forceTuned(res *Result) {
	best := *res.Best
	best.Index = 1
	best.Config.Ridge *= 10
	res.Best = &best
}

// Soft routing, where it chose a temperature on its held-out rows, is
// compared with the same tree routed hard on the validation rows, and
// kept only by a margin beyond the noise; its scores go on the choice.
func TestSoftAlternative(t *testing.T) {
	ctx := context.Background()
	s, err := synth.Generate(synth.LowRank, 1200, 10, 5)
	if err != nil {
		t.Fatal(err)
	}
	ds := &rfm.Dataset{X: s.X, N: 1200, D: 10, Y: s.Y, Outputs: 1}
	cfg := TreeConfig(baseConfig(), baseConfig())
	cfg.LeafSize, cfg.Iters, cfg.Calibrate = 60, 0, rfm.CalibrateNone
	tr, va := rfm.Holdout(ds.N, nil, 0.25, 1)
	split := func(string) (*rfm.Dataset, *rfm.Dataset) { return ds.Subset(tr), ds.Subset(va) }
	ch := &TreeChoice{}
	var lines []string
	opt := Options{Log: func(s string) { lines = append(lines, s) }}
	pays, err := softAlternative(ctx, opt, split, "", cfg, ch, func(string) func(tree.Progress) { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if ch.SoftTemperature == 0 {
		t.Fatalf("soft routing chose hard routing on a smooth target with leaves of 60 rows (%q): the test cannot tell", ch.Why)
	}
	if !(ch.SoftLoss > 0 && ch.HardLoss > 0 && ch.SoftSE > 0) || len(lines) != 1 || !strings.Contains(lines[0], "soft-routing alternative (temperature") {
		t.Fatalf("choice %+v, lines %q", ch, lines)
	}
	if want := ch.HardLoss-ch.SoftLoss > TreeZ*ch.SoftSE; pays != want {
		t.Errorf("kept %v; soft %.4g, hard %.4g, SE %.2g", pays, ch.SoftLoss, ch.HardLoss, ch.SoftSE)
	}
	if !strings.Contains(ch.String(), "soft routing (temperature") {
		t.Errorf("note %q", ch.String())
	}
}

// A large table's search always scores the defaults with each strong
// ridge above the base's, on the base's scaling; a small table gets none.
func TestLargeCandidates(t *testing.T) {
	opt := Options{Base: baseConfig(), BaseScaling: "standard"}
	if got := LargeCandidates(opt, false); got != nil {
		t.Errorf("small table: %v", got)
	}
	got := LargeCandidates(opt, true)
	if len(got) != len(LargeRidges) {
		t.Fatalf("%d candidates, want %d", len(got), len(LargeRidges))
	}
	for i, p := range got {
		want := opt.Base
		want.Ridge = LargeRidges[i]
		if !sameConfig(p.Config, want) || p.Scaling != "standard" {
			t.Errorf("candidate %d: %+v on %q, want the base with ridge %g", i, p.Config, p.Scaling, LargeRidges[i])
		}
	}
	opt.Base.Ridge = 100
	if got := LargeCandidates(opt, true); len(got) != 0 {
		t.Errorf("a base ridge above them all: %d candidates", len(got))
	}
	opt.Data = map[string]*rfm.Dataset{"standard": classes(t, 300, 2)}
	opt.Protected = LargeCandidates(Options{Base: baseConfig(), BaseScaling: "standard"}, true)
	if err := checkProtected(opt); err != nil {
		t.Errorf("the candidates are not valid protected ones: %v", err)
	}
}
