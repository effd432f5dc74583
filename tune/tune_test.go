package tune

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/synth"
)

// classes is a three-class task on 10 inputs of which 3 carry the label.
func classes(t *testing.T, n int, seed uint64) *rfm.Dataset {
	t.Helper()
	s, err := synth.Generate(synth.LowRank, n, 10, seed)
	if err != nil {
		t.Fatal(err)
	}
	return &rfm.Dataset{X: s.X, N: n, D: 10, Labels: synth.Classes(s.Y, 0.02)}
}

func baseConfig() rfm.Config {
	cfg := rfm.DefaultConfig()
	cfg.AGOPSamples = 400
	return cfg
}

func options(ds *rfm.Dataset, trials int) Options {
	sp := DefaultSpace()
	sp.Iters = []int{1, 2}
	return Options{Base: baseConfig(), Data: map[string]*rfm.Dataset{"": ds}, Trials: trials, MinRows: 100, Jobs: 2, Space: sp}
}

// mustRun runs the search and fails the test on an error.
func mustRun(t *testing.T, opt Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// sorted orders trials by (bracket, rung, index): the completion order
// depends on which of two concurrent fits ends first.
func sorted(ts []Trial) []Trial {
	out := append([]Trial(nil), ts...)
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Bracket != b.Bracket {
			return a.Bracket < b.Bracket
		}
		if a.Rung != b.Rung {
			return a.Rung < b.Rung
		}
		return a.Index < b.Index
	})
	return out
}

// Successive halving: a bracket fits η^(rungs−1) configurations on the
// smallest rung and promotes the best 1/η of each rung; the same seed
// draws and scores the same trials; the best trial is at the top rung and
// scores at least as well as the plain kernel and the base configuration
// there.
func TestSearchHalvesAndRepeats(t *testing.T) {
	ds := classes(t, 1200, 1)
	opt := options(ds, 18)
	res := mustRun(t, opt)
	if want := []int{106, 320, 960}; len(res.Rungs) != 3 || res.Rungs[0] != want[0] || res.Rungs[2] != want[2] {
		t.Fatalf("rungs %v, want %v", res.Rungs, want)
	}
	if res.Drawn != 18 {
		t.Fatalf("%d configurations drawn, want 18", res.Drawn)
	}
	trials := sorted(res.Trials)
	count := map[[2]int]int{}
	for _, tr := range trials {
		if !tr.Scored() {
			t.Fatalf("trial %d: %s", tr.Index, tr.Status)
		}
		count[[2]int{tr.Bracket, tr.Rung}]++
		if tr.Rows != res.Rungs[tr.Rung] {
			t.Fatalf("trial %d on rung %d fitted %d rows", tr.Index, tr.Rung, tr.Rows)
		}
	}
	for b := range 2 {
		if count[[2]int{b, 0}] != 9 || count[[2]int{b, 1}] != 3 || count[[2]int{b, 2}] != 1 {
			t.Fatalf("bracket %d: %d, %d, %d trials per rung, want 9, 3, 1", b, count[[2]int{b, 0}], count[[2]int{b, 1}], count[[2]int{b, 2}])
		}
	}
	// Rung 1 of bracket 0 holds the best three of its rung 0.
	var r0 []Trial
	promoted := map[int]bool{}
	for _, tr := range trials {
		if tr.Bracket == 0 && tr.Rung == 0 {
			r0 = append(r0, tr)
		}
		if tr.Bracket == 0 && tr.Rung == 1 {
			promoted[tr.Index] = true
		}
	}
	sort.SliceStable(r0, func(i, j int) bool { return Better(res.Task, &r0[i], &r0[j]) })
	for _, tr := range r0[:3] {
		if !promoted[tr.Index] {
			t.Fatalf("trial %d (accuracy %.4f, one of the best three) was not promoted", tr.Index, tr.Accuracy)
		}
	}
	if trials[0].Index != 0 || trials[0].Config.Kernel != kernel.DefaultSpec() || trials[0].Config.Ridge != 1e-3 {
		t.Fatalf("the first trial is not the base configuration: %+v", trials[0].Config)
	}
	if res.Best == nil || res.Best.Rows != 960 {
		t.Fatalf("best %+v, want a trial of the top rung", res.Best)
	}
	for _, tr := range trials {
		if tr.Rows == 960 && Better(res.Task, &tr, res.Best) {
			t.Fatalf("trial %d scores better than the best", tr.Index)
		}
	}
	if res.Best.Accuracy < res.Plain.PlainAccuracy {
		t.Fatalf("tuned RFM %.4f below the tuned plain kernel %.4f", res.Best.Accuracy, res.Plain.PlainAccuracy)
	}

	again := mustRun(t, opt)
	other := sorted(again.Trials)
	if len(other) != len(trials) {
		t.Fatalf("%d trials, then %d", len(trials), len(other))
	}
	for i := range trials {
		a, b := trials[i], other[i]
		if a.Key != b.Key || a.Round != b.Round || math.Abs(a.Accuracy-b.Accuracy) > 1e-12 || math.Abs(a.Loss-b.Loss) > 1e-9*a.Loss {
			t.Fatalf("trial %d: %+v, then %+v", a.Index, a, b)
		}
	}
	if again.Best.Key != res.Best.Key {
		t.Fatalf("best %s, then %s", res.Best.Key, again.Best.Key)
	}
}

// A search resumed from its trials table fits nothing it has scored.
func TestResumeFromTable(t *testing.T) {
	ds := classes(t, 600, 2)
	opt := options(ds, 9)
	res, _, cache := runJournalled(t, opt)
	if len(cache) != len(res.Trials) {
		t.Fatalf("%d trials read back, %d written", len(cache), len(res.Trials))
	}
	opt.Done, opt.Cache = nil, cache
	opt.Trials = 18 // one more bracket
	more := mustRun(t, opt)
	fitted := 0
	for _, tr := range more.Trials {
		c, ok := cache[tr.Key]
		switch {
		case ok && tr.Status != StatusCached:
			t.Fatalf("trial %d was in the table but fitted again (%s)", tr.Index, tr.Status)
		case ok && (c.Accuracy != tr.Accuracy || c.Loss != tr.Loss || c.Round != tr.Round):
			t.Fatalf("trial %d: cached scores changed", tr.Index)
		case !ok:
			fitted++
		}
	}
	if fitted != len(more.Trials)-len(res.Trials) {
		t.Fatalf("%d trials fitted, want %d", fitted, len(more.Trials)-len(res.Trials))
	}
}

func TestReadCacheErrors(t *testing.T) {
	if _, err := ReadCache(strings.NewReader("a,b\n")); err == nil {
		t.Fatal("a table of two columns was read")
	}
	var b strings.Builder
	b.WriteString(strings.Join(Columns, ",") + "\n")
	row := make([]string, len(Columns))
	for i, c := range Columns {
		row[i] = "1"
		switch c {
		case "status":
			row[i] = StatusOK
		case "loss":
			row[i] = "NaN"
		}
	}
	b.WriteString(strings.Join(row, ",") + "\n")
	_, err := ReadCache(strings.NewReader(b.String()))
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), `"loss"`) {
		t.Fatalf("got %v, want an error naming line 2 and the loss column", err)
	}
	cache, err := ReadCache(strings.NewReader(""))
	if err != nil || len(cache) != 0 {
		t.Fatalf("an empty table: %v, %v", cache, err)
	}
}

// A budget too short for one fit ends with an error that says so.
func TestBudgetTooShort(t *testing.T) {
	// A budget that has run out before the first trial is dispatched (a
	// millisecond was enough for a 100-row fit on an idle machine now and
	// then: the test failed once in the full run).
	opt := options(classes(t, 2000, 3), 0)
	opt.Budget = time.Nanosecond
	_, err := Run(context.Background(), opt)
	if err == nil || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("got %v, want a budget error", err)
	}
}

// Folds and given validation rows are both scored; the final fit on the
// holdout design repeats the search's fit of the best configuration.
func TestDesigns(t *testing.T) {
	ds := classes(t, 600, 4)
	opt := options(ds, 3)
	opt.Folds = 3
	res := mustRun(t, opt)
	if res.Design != "3 folds" || res.Rungs[len(res.Rungs)-1] != 400 {
		t.Fatalf("design %q, rungs %v", res.Design, res.Rungs)
	}
	opt.Folds = 0
	opt.Valid = map[string]*rfm.Dataset{"": classes(t, 200, 5)}
	if res = mustRun(t, opt); !strings.HasPrefix(res.Design, "validation rows") {
		t.Fatalf("validation design: %q", res.Design)
	}
	opt.Valid = nil
	opt.Jobs = 1
	res = mustRun(t, opt)
	m, err := FinalFit(context.Background(), opt, res.Best, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := m.History[res.Best.Round]
	if h.ValAccuracy != res.Best.Accuracy || math.Abs(h.ValLoss-res.Best.Loss) > 1e-12 {
		t.Fatalf("final fit scores %.6f / %.6g on validation, the search %.6f / %.6g", h.ValAccuracy, h.ValLoss, res.Best.Accuracy, res.Best.Loss)
	}
	if !m.Refitted {
		t.Fatal("the final model was not refitted on all rows")
	}
}

// With folds, the final model runs the round the folds chose on every row
// (no holdout of its own), and its calibration is fitted on the
// out-of-fold scores of every row; the probabilities follow it.
func TestFinalFitFolds(t *testing.T) {
	ds := classes(t, 300, 6)
	opt := options(ds, 2)
	opt.Folds, opt.Jobs = 3, 1
	opt.Base.Calibrate = rfm.CalibratePower
	ctx := context.Background()
	res := mustRun(t, opt)
	m, err := FinalFit(ctx, opt, res.Best, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.BestRound != res.Best.Round || m.Config.Iters != res.Best.Round || m.Refitted {
		t.Errorf("final model: round %d of %d (refitted %v), the folds chose %d", m.BestRound, m.Config.Iters, m.Refitted, res.Best.Round)
	}
	cal := m.Calibration
	if cal == nil || cal.Method != rfm.CalibratePower || cal.Rows != ds.N {
		t.Fatalf("calibration %+v, want power on all %d rows", cal, ds.N)
	}
	if !(cal.LogLossAfter <= cal.LogLossBefore) {
		t.Errorf("out-of-fold log-loss %v → %v", cal.LogLossBefore, cal.LogLossAfter)
	}
	p, err := m.PredictProba(ctx, ds.X[:10*ds.D], 10)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := m.Predict(ctx, ds.X[:10*ds.D], 10)
	cal.Apply(s, 10, m.Outputs)
	if !slices.Equal(p, s) {
		t.Error("PredictProba does not apply the out-of-fold calibration")
	}
}

// Draws stay inside the space, and a one-value choice fixes a setting.
func TestDrawRespectsSpace(t *testing.T) {
	sp := DefaultSpace()
	sp.Kernels = nil // the default: lp-laplace too on 10 features
	sp.Diag = []bool{true}
	sp.Ridge = [2]float64{1e-4, 1e-2}
	sp, err := sp.withDefaults(10, rfm.Classification)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := map[kernel.Kind]bool{}
	for range 500 {
		p := sp.draw(rng, baseConfig())
		c := p.Config
		kinds[c.Kernel.Kind] = true
		if !c.Diag || c.Ridge < 1e-4*0.999 || c.Ridge > 1e-2*1.001 || p.Ratio < 0.0999 || p.Ratio > 10.01 {
			t.Fatalf("draw outside the space: %+v ratio %v", c, p.Ratio)
		}
		if (c.Kernel.Kind == kernel.GenLaplace || c.Kernel.Kind == kernel.LpLaplace) && !(c.Kernel.Exponent >= 0.5 && c.Kernel.Exponent <= 1.6) {
			t.Fatalf("exponent %v", c.Kernel.Exponent)
		}
		if c.Kernel.Kind == kernel.LpLaplace && (c.Kernel.Exponent > c.Kernel.Power || !slices.Contains([]float64{0.5, 1, 1.5, 2}, c.Kernel.Power)) {
			t.Fatalf("lp-laplace p = %v (want one of 0.5, 1, 1.5, 2), q = %v", c.Kernel.Power, c.Kernel.Exponent)
		}
		c.Kernel.Bandwidth = 1 // drawn relative to the data's distances
		if err := c.Kernel.Validate(); err != nil {
			t.Fatal(err)
		}
		if c.Seed != 1 || c.AGOPSamples != 400 {
			t.Fatal("a setting outside the space changed")
		}
	}
	if len(kinds) != 4 {
		t.Fatalf("kernels drawn: %v", kinds)
	}
	bad := DefaultSpace()
	bad.Ridge = [2]float64{1, 0.1}
	if _, err := bad.withDefaults(10, rfm.Classification); err == nil {
		t.Fatal("an inverted ridge range was accepted")
	}
}

// A logistic trial is scored by its head, which can fall below its own
// round 0: when the best round 0 beats every trial's score, the plain
// kernel becomes the best model, so the tuned RFM is never below the
// tuned plain kernel on validation.
func TestBestNeverBelowPlain(t *testing.T) {
	logistic := rfm.DefaultConfig()
	logistic.Loss, logistic.Iters = rfm.LossLogistic, 3
	squared := rfm.DefaultConfig()
	trials := []Trial{
		{Index: 0, Status: StatusOK, Rows: 100, Accuracy: 0.80, PlainAccuracy: 0.70, Config: squared},
		{Index: 1, Status: StatusOK, Rows: 100, Accuracy: 0.82, PlainAccuracy: 0.85, Round: 3, Config: logistic},
		{Index: 2, Status: StatusOK, Rows: 50, Accuracy: 0.99, PlainAccuracy: 0.99, Config: squared}, // a lower rung
	}
	s := &search{task: rfm.Classification, res: &Result{Trials: trials}}
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
	b := s.res.Best
	if b.Index != 1 || b.Accuracy != 0.85 || b.Round != 0 || b.Config.Iters != 0 || b.Config.Loss != rfm.LossSquared {
		t.Fatalf("best %+v, want trial 1's plain kernel (round 0, squared loss, 0.85)", b)
	}
	if s.res.Plain.Index != 1 || s.res.Trials[1].Config.Loss != rfm.LossLogistic {
		t.Fatalf("plain %+v; the trial itself must stay as run", s.res.Plain)
	}
	trials[1].PlainAccuracy = 0.75
	s = &search{task: rfm.Classification, res: &Result{Trials: trials}}
	if err := s.finish(); err != nil {
		t.Fatal(err)
	}
	if b := s.res.Best; b.Index != 1 || b.Accuracy != 0.82 || b.Config.Loss != rfm.LossLogistic {
		t.Fatalf("best %+v, want trial 1 as run", b)
	}
}

// MaxRows caps the top rung: every fit of the search trains on at most
// MaxRows rows (a stratified sample of the holdout's training rows), the
// validation rows stay whole, and the final fit still uses every row.
func TestMaxRowsCapsSearch(t *testing.T) {
	ds := classes(t, 1200, 9)
	opt := options(ds, 6)
	opt.MaxRows = 300
	opt.Base.Refit = true
	ctx := context.Background()
	res := mustRun(t, opt)
	if !slices.Equal(res.Rungs, []int{100, 300}) {
		t.Fatalf("rungs %v, want [100 300]", res.Rungs)
	}
	for _, tr := range res.Trials {
		if !tr.Scored() || tr.Rows > 300 {
			t.Fatalf("trial %d: %d rows, %s", tr.Index, tr.Rows, tr.Status)
		}
	}
	if res.Best == nil || res.Best.Rows != 300 {
		t.Fatalf("best %+v, want a trial of the capped top rung", res.Best)
	}
	m, err := FinalFit(ctx, opt, res.Best, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.N != ds.N {
		t.Fatalf("final model holds %d centres, want every one of the %d rows", m.N, ds.N)
	}
	for _, bad := range []int{-1, 50} {
		o := opt
		o.MaxRows = bad
		if _, err := Run(ctx, o); err == nil || !strings.Contains(err.Error(), "MaxRows") {
			t.Errorf("MaxRows %d: %v", bad, err)
		}
	}
}

// Repeated k-fold: every trial is scored on the folds of each repeat (a
// trial's score is their mean, so it differs from one repeat's), the first
// repeat is the plain k-fold, and repeats need folds.
func TestRepeatedFolds(t *testing.T) {
	ds := classes(t, 300, 8)
	ctx := context.Background()
	opt := options(ds, 3)
	opt.Folds, opt.Jobs = 3, 1
	once := mustRun(t, opt)
	opt.Repeats = 3
	rep := mustRun(t, opt)
	if rep.Design != "3 folds × 3 repeats" {
		t.Fatalf("design %q", rep.Design)
	}
	s, err := newSearch(opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.splits) != 9 {
		t.Fatalf("%d splits, want 9", len(s.splits))
	}
	o1 := options(ds, 3)
	o1.Folds = 3
	s1, err := newSearch(o1)
	if err != nil {
		t.Fatal(err)
	}
	for i, sp := range s1.splits {
		if !slices.Equal(sp.valid, s.splits[i].valid) {
			t.Fatalf("fold %d of the first repeat is not the plain k-fold's", i)
		}
	}
	seen := map[string]bool{}
	for _, sp := range s.splits {
		if len(sp.valid) < 90 || len(sp.valid) > 110 || len(sp.train)+len(sp.valid) != ds.N {
			t.Fatalf("a fold of %d training and %d validation rows", len(sp.train), len(sp.valid))
		}
		seen[fmt.Sprint(sp.valid)] = true
	}
	if len(seen) != 9 {
		t.Fatalf("%d distinct validation folds of 9: the repeats drew the same folds", len(seen))
	}
	differ := false
	for i := range once.Trials {
		a := once.Trials[i]
		for _, b := range rep.Trials {
			if b.Index == a.Index && b.Rung == a.Rung && b.Bracket == a.Bracket && b.Accuracy != a.Accuracy {
				differ = true
			}
		}
	}
	if !differ {
		t.Error("every trial scored the same with 3 repeats as with one")
	}
	opt.Folds = 0
	var oe *OptionError
	if _, err := Run(ctx, opt); !errors.As(err, &oe) || oe.Field != "Repeats" {
		t.Errorf("repeats without folds: %v", err)
	}
}

// Check names the field out of its range, one rule at a time, and takes
// the zero values as defaults.
func TestOptionsCheck(t *testing.T) {
	ok := Options{Trials: 5}
	if err := ok.Check(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, tc := range []struct {
		field string
		set   func(o *Options)
	}{
		{"Budget", func(o *Options) { o.Budget = -time.Second }},
		{"Trials", func(o *Options) { o.Trials = -1 }},
		{"Trials", func(o *Options) { o.Trials = 0 }}, // and no budget
		{"Folds", func(o *Options) { o.Folds = 1 }},
		{"Folds", func(o *Options) { o.Folds = -2 }},
		{"Repeats", func(o *Options) { o.Repeats = 2 }},
		{"Repeats", func(o *Options) { o.Folds, o.Repeats = 3, -1 }},
		{"Jobs", func(o *Options) { o.Jobs = -1 }},
		{"Eta", func(o *Options) { o.Eta = 1 }},
		{"LocalAfter", func(o *Options) { o.LocalAfter = -2 }},
		{"MinRows", func(o *Options) { o.MinRows = 9 }},
		{"MaxRows", func(o *Options) { o.MaxRows = DefaultMinRows - 1 }},
		{"MaxRows", func(o *Options) { o.MinRows, o.MaxRows = 50, 49 }},
		{"FinalCenters", func(o *Options) { o.FinalCenters = -1 }},
	} {
		o := ok
		tc.set(&o)
		var oe *OptionError
		if err := o.Check(); !errors.As(err, &oe) || oe.Field != tc.field {
			t.Errorf("%+v: %v, want an error on %s", o, err, tc.field)
		}
	}
	for _, set := range []func(o *Options){
		func(o *Options) { o.Trials, o.Budget = 0, time.Minute },
		func(o *Options) { o.Folds, o.Repeats = 3, 2 },
		func(o *Options) { o.Eta, o.LocalAfter, o.MinRows = 2, -1, 10 },
		func(o *Options) { o.MinRows, o.MaxRows = 50, 50 },
	} {
		o := ok
		set(&o)
		if err := o.Check(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

// FinalCenters: a final fit of more rows than FinalCenters is a Nyström
// fit on that many centres (float64 even when the search ran float32), the
// ensemble's members too; one of fewer rows keeps Base's exact solve; the
// Nyström model classifies about as well as the exact one; bad values and
// class weights are refused.
func TestFinalCentersNystrom(t *testing.T) {
	ds := classes(t, 1200, 9)
	test := classes(t, 600, 19)
	opt := options(ds, 6)
	opt.MaxRows, opt.Base.Refit, opt.Base.Float32 = 300, true, true
	ctx := context.Background()
	res := mustRun(t, opt)
	exact, err := FinalFit(ctx, opt, res.Best, nil)
	if err != nil {
		t.Fatal(err)
	}
	opt.FinalCenters = 500
	ny, err := FinalFit(ctx, opt, res.Best, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ny.Config.Solver != rfm.SolverNystrom || ny.N != 500 || !ny.Config.Float32 {
		t.Fatalf("final fit: solver %q, %d centres, float32 %v; want nystrom on 500, Base's float32 kept", ny.Config.Solver, ny.N, ny.Config.Float32)
	}
	if exact.Config.Solver == rfm.SolverNystrom || exact.N != ds.N {
		t.Fatalf("without FinalCenters: solver %q on %d centres, want exact on %d", exact.Config.Solver, exact.N, ds.N)
	}
	acc := func(m *rfm.Model) float64 {
		pred, err := m.PredictClass(ctx, test.X, test.N)
		if err != nil {
			t.Fatal(err)
		}
		right := 0
		for i, p := range pred {
			if p == test.Labels[i] {
				right++
			}
		}
		return float64(right) / float64(test.N)
	}
	if a, b := acc(ny), acc(exact); a < b-0.05 {
		t.Fatalf("Nyström final fit %.3f against exact %.3f on test", a, b)
	}
	e, err := FinalEnsemble(ctx, opt, res, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range e.Members {
		if m.Config.Solver != rfm.SolverNystrom || m.N != 500 {
			t.Fatalf("member %d: solver %q on %d centres", i, m.Config.Solver, m.N)
		}
	}
	o := opt
	o.FinalCenters = ds.N
	if m, err := FinalFit(ctx, o, res.Best, nil); err != nil {
		t.Fatal(err)
	} else if m.Config.Solver == rfm.SolverNystrom || m.N != ds.N {
		t.Fatalf("FinalCenters = n: solver %q on %d centres; want Base's exact solve", m.Config.Solver, m.N)
	}
	o.FinalCenters = -1
	for _, err := range []error{func() error { _, err := Run(ctx, o); return err }(), func() error { _, err := FinalFit(ctx, o, res.Best, nil); return err }()} {
		if oe := (*OptionError)(nil); !errors.As(err, &oe) || oe.Field != "FinalCenters" {
			t.Errorf("FinalCenters -1: %v", err)
		}
	}
	o.FinalCenters, o.Base.ClassWeight = 500, rfm.ClassWeightBalanced
	if _, err := FinalFit(ctx, o, res.Best, nil); err == nil || !strings.Contains(err.Error(), "class weights") {
		t.Errorf("FinalCenters with class weights: %v", err)
	}
}

// A local draw stays in the space (fixed settings fixed, ranges kept),
// changes at most one discrete setting, and moves the bandwidth ratio and
// λ by factors of the size its constants give.
func TestPerturbStaysNear(t *testing.T) {
	sp := DefaultSpace()
	sp.Kernels = nil
	sp.Diag = []bool{true}
	sp.Ridge = [2]float64{1e-4, 1e-2}
	sp.Scalings = []string{"standard", "none"}
	sp, err := sp.withDefaults(10, rfm.Classification)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var logBW, logRidge []float64
	for range 2000 {
		p := sp.draw(rng, baseConfig())
		q := sp.perturb(rng, p)
		a, b := p.Config, q.Config
		if !b.Diag || b.Ridge < 1e-4*0.999 || b.Ridge > 1e-2*1.001 || q.Ratio < 0.0999 || q.Ratio > 10.01 {
			t.Fatalf("local draw outside the space: %+v ratio %v", b, q.Ratio)
		}
		if k := b.Kernel.Kind; (k == kernel.GenLaplace || k == kernel.LpLaplace) && !(b.Kernel.Exponent >= 0.5 && b.Kernel.Exponent <= 1.6) ||
			k == kernel.LpLaplace && b.Kernel.Exponent > b.Kernel.Power {
			t.Fatalf("local draw's kernel %+v", b.Kernel)
		}
		changed := 0
		for _, d := range []bool{a.Kernel.Kind != b.Kernel.Kind || a.Kernel.Power != b.Kernel.Power, a.AGOPPower != b.AGOPPower,
			a.MNorm != b.MNorm, a.Centered != b.Centered, a.NormalizeRows != b.NormalizeRows, a.Iters != b.Iters,
			a.Loss != b.Loss, p.Scaling != q.Scaling} {
			if d {
				changed++
			}
		}
		if changed > 1 {
			t.Fatalf("%d discrete settings changed: %+v -> %+v", changed, a, b)
		}
		if b.Seed != 1 || b.AGOPSamples != 400 {
			t.Fatal("a setting outside the space changed")
		}
		if p.Ratio > 0.2 && p.Ratio < 5 {
			logBW = append(logBW, math.Log(q.Ratio/p.Ratio))
		}
		if a.Ridge > 1e-3 && a.Ridge < 1e-3*1.5 {
			logRidge = append(logRidge, math.Log(b.Ridge/a.Ridge))
		}
	}
	sd := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x * x
		}
		return math.Sqrt(s / float64(len(v)))
	}
	if s := sd(logBW); s < 0.25 || s > 0.45 {
		t.Errorf("bandwidth moved by e^N(0, %.2f²), want σ ≈ %v", s, localBandwidth)
	}
	if s := sd(logRidge); s < 0.6 || s > 1.1 { // clamped at 1e-4 and 1e-2
		t.Errorf("λ moved by e^N(0, %.2f²), want σ ≈ %v before clamping", s, localRidge)
	}
}

// After LocalAfter configurations, about half the draws are local; the
// search stays deterministic for a seed; and a search of at most the
// default LocalAfter configurations draws exactly what pure random search
// draws (the UCI protocol's 30 are unchanged).
func TestLocalDraws(t *testing.T) {
	ds := classes(t, 300, 5)
	keys := func(res *Result) []string {
		var out []string
		for _, tr := range sorted(res.Trials) {
			out = append(out, tr.Key)
		}
		return out
	}
	run := func(trials, after int) *Result {
		opt := options(ds, trials)
		opt.MinRows = 200 // one rung: every draw reaches the top
		opt.LocalAfter = after
		res := mustRun(t, opt)
		return res
	}
	a, b := run(30, 0), run(30, -1)
	if a.Local != 0 || b.Local != 0 || !slices.Equal(keys(a), keys(b)) {
		t.Fatalf("30 draws: %d and %d local, trials differ: %v", a.Local, b.Local, !slices.Equal(keys(a), keys(b)))
	}
	c, d := run(40, 10), run(40, 10)
	if !slices.Equal(keys(c), keys(d)) || c.Local != d.Local {
		t.Fatal("the same seed drew other local configurations")
	}
	if c.Local < 8 || c.Local > 22 {
		t.Errorf("%d of the 30 draws after the first 10 were local, want about half", c.Local)
	}
	if !slices.Equal(keys(c)[:10], keys(b)[:10]) {
		t.Error("the first 10 draws changed")
	}
}

// The random draws do not depend on the scores: two searches of the same
// seed on other data (other scores, so other leaders and local draws)
// draw the same random configurations at the same places, and their local
// draws elsewhere.
func TestRandomDrawsIgnoreScores(t *testing.T) {
	point := func(tr Trial) string {
		c := tr.Config
		return fmt.Sprint(tr.Scaling, tr.Ratio, c.Kernel.Kind, c.Kernel.Exponent, c.Kernel.Power, c.Ridge, c.Diag,
			c.AGOPPower, c.MNorm, c.Centered, c.NormalizeRows, c.Iters, c.Loss)
	}
	run := func(seed uint64) (map[int]string, int) {
		opt := options(classes(t, 300, seed), 40)
		opt.MinRows = 200 // one rung: one trial per configuration
		opt.LocalAfter = 10
		res := mustRun(t, opt)
		out := map[int]string{}
		for _, tr := range res.Trials {
			out[tr.Index] = point(tr)
		}
		return out, res.Local
	}
	a, la := run(5)
	b, lb := run(6)
	if la != lb || la == 0 {
		t.Fatalf("%d and %d local draws, want the same number, above 0", la, lb)
	}
	same := 0
	for i := 1; i < 40; i++ {
		if a[i] == "" || b[i] == "" {
			t.Fatalf("configuration %d missing", i)
		}
		if a[i] == b[i] {
			same++
		}
	}
	if want := 39 - la; same != want {
		t.Errorf("%d configurations drawn alike, want the %d random ones", same, want)
	}
}

// Local draws near the base configuration (whose bandwidth is absolute)
// start from its bandwidth as a ratio of the median distance, clamped to
// the space's range, so they stay in the space; Base's other settings
// (outside the space) are kept, whatever the trial's copy holds (trial()
// divides the memory limit between the jobs). Drawn configurations start
// from the point they were drawn as.
func TestPointOfBase(t *testing.T) {
	ds := classes(t, 300, 7)
	opt := options(ds, 3)
	opt.Base.Kernel.Bandwidth = 1e6 // far above 10 × the median distance
	opt.Base.MemoryLimit = 1 << 40
	s, err := newSearch(opt)
	if err != nil {
		t.Fatal(err)
	}
	s.run(context.Background())
	var p Point
	for i := range s.res.Trials {
		tr := &s.res.Trials[i]
		if !tr.Scored() {
			t.Fatalf("trial %d: %s", tr.Index, tr.Status)
		}
		if tr.Index != 0 {
			// A drawn configuration starts from the point it was drawn as.
			q := s.pointOf(tr)
			c := tr.Config
			if q.Ratio != tr.Ratio || q.Scaling != tr.Scaling || q.Config.Ridge != c.Ridge || q.Config.Kernel.Kind != c.Kernel.Kind ||
				q.Config.Diag != c.Diag || q.Config.Iters != c.Iters || q.Config.NormalizeRows != c.NormalizeRows {
				t.Errorf("trial %d: point %+v is not the trial's configuration", tr.Index, q)
			}
			continue
		}
		p = s.pointOf(tr)
	}
	if p.Ratio != s.space.Bandwidth[1] {
		t.Errorf("base bandwidth 1e6 as ratio %v, want the range's top %v", p.Ratio, s.space.Bandwidth[1])
	}
	if p.Config.MemoryLimit != 1<<40 {
		t.Errorf("memory limit %d carried over from the trial", p.Config.MemoryLimit)
	}
}

// TestLpWidthCap: the default space draws lp-laplace on tables of up to
// LpMaxFeatures features and leaves it out above; a space that names its
// kernels keeps them at any width.
func TestLpWidthCap(t *testing.T) {
	for _, c := range []struct {
		d    int
		kern []kernel.Kind
		want bool
	}{{10, nil, true}, {LpMaxFeatures, nil, true}, {LpMaxFeatures + 1, nil, false}, {784, []kernel.Kind{kernel.LpLaplace}, true}} {
		sp, err := Space{Kernels: c.kern}.withDefaults(c.d, rfm.Classification)
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(sp.Kernels, kernel.LpLaplace); got != c.want {
			t.Errorf("%d features, kernels %v: lp-laplace drawn %v, want %v", c.d, c.kern, got, c.want)
		}
	}
}
