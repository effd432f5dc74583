package tune

import (
	"bytes"
	"context"
	"encoding/csv"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
)

// oneSE is a search of k folds (no fits) whose chooseOneSE runs on trials
// made by hand.
func oneSE(k int) *search {
	s := &search{opt: Options{Rule: RuleOneSE, Folds: k, Base: rfm.DefaultConfig()}, task: rfm.Classification, res: &Result{}}
	s.splits = make([]split, k)
	return s
}

// handTrial is a top-rung trial of the given fold losses.
func handTrial(index int, cfg rfm.Config, folds []float64) Trial {
	// Its plain kernel (round 0) is far worse: a candidate that never wins.
	t := Trial{Index: index, Rows: 100, Status: StatusOK, Config: cfg, FoldLoss: folds}
	for _, v := range folds {
		t.Loss += v / float64(len(folds))
		t.PlainFoldLoss = append(t.PlainFoldLoss, v+0.1)
	}
	t.PlainLoss = t.Loss + 0.1
	return t
}

// Forty configurations whose fold losses are the defaults' plus noise of
// mean 0: the lowest mean loss is one of them (the luckiest), but it does
// not beat the defaults by more than its standard error, so the defaults
// are kept. Add one better by a wide margin and it is chosen; add beside
// it a simpler one within a standard error of it and the simpler wins.
func TestOneSEKeepsDefaultsAmongNoise(t *testing.T) {
	const k = 5
	rng := rand.New(rand.NewPCG(7, 1))
	base := rfm.DefaultConfig()
	defaults := make([]float64, k)
	for f := range defaults {
		defaults[f] = 0.10 + 0.02*rng.NormFloat64() // folds differ in difficulty
	}
	noisy := func() []float64 {
		out := make([]float64, k)
		for f := range out {
			out[f] = defaults[f] + 0.004*rng.NormFloat64()
		}
		return out
	}
	shifted := func(by float64) []float64 {
		out := noisy()
		for f := range out {
			out[f] -= by
		}
		return out
	}
	build := func(extra ...Trial) *search {
		s := oneSE(k)
		s.res.Trials = append(s.res.Trials, handTrial(0, base, defaults))
		rng = rand.New(rand.NewPCG(7, 2))
		for i := 1; i <= 40; i++ {
			s.res.Trials = append(s.res.Trials, handTrial(i, base, noisy()))
		}
		s.res.Trials = append(s.res.Trials, extra...)
		s.res.Default = &s.res.Trials[0]
		s.chooseOneSE(100)
		return s
	}

	s := build()
	c := s.res.Choice
	if s.res.Best.Index != 0 || c.Kept != "defaults" {
		t.Fatalf("noise-equal configurations: chose trial %d (%s), want the defaults: %s", s.res.Best.Index, c.Kept, c)
	}
	if c.Lowest == 0 || c.LowestLoss >= c.DefaultLoss {
		t.Fatalf("the test needs a luckier configuration than the defaults: lowest trial %d, %g vs %g", c.Lowest, c.LowestLoss, c.DefaultLoss)
	}
	// RuleBest keeps the luckiest.
	sb := oneSE(k)
	sb.opt.Rule = RuleBest
	sb.res.Trials = s.res.Trials
	if err := sb.finish(); err != nil {
		t.Fatal(err)
	}
	if sb.res.Best.Index == 0 {
		t.Fatalf("RuleBest kept the defaults: the noise gave no luckier configuration")
	}

	full := base
	full.Iters, full.Diag = 5, false
	better := handTrial(41, full, shifted(0.03))
	s = build(better)
	if s.res.Best.Index != 41 || s.res.Choice.Kept != "lowest loss" || !(s.res.Choice.Margin > s.res.Choice.SE) {
		t.Fatalf("a configuration better by 0.03 (SE ~0.002): chose trial %d: %s", s.res.Best.Index, s.res.Choice)
	}

	plain := base
	plain.Iters = 0
	// Its fold losses are the full-M one's ± 0.002 by turns: a mean
	// 0.0004 higher, well within a standard error (≈ 0.001).
	alt := make([]float64, k)
	for f := range alt {
		alt[f] = better.FoldLoss[f] + 0.002*float64(1-2*(f%2))
	}
	simpler := handTrial(42, plain, alt)
	s = build(better, simpler)
	if s.res.Best.Index != 42 || s.res.Choice.Kept != "simpler within 1 SE" {
		t.Fatalf("a plain kernel within 1 SE of a full-M one: chose trial %d: %s", s.res.Best.Index, s.res.Choice)
	}

	// A trial without fold losses (read back from an old table) cannot
	// show that it beats the defaults.
	blind := handTrial(43, full, shifted(0.03))
	blind.FoldLoss = nil
	s = build(blind)
	if s.res.Best.Index != 0 {
		t.Fatalf("a trial without fold losses replaced the defaults: %s", s.res.Choice)
	}
}

func TestSmallDesignAndTrialCap(t *testing.T) {
	for _, c := range []struct{ n, folds, repeats int }{
		{3, 0, 0}, {8, 2, 0}, {300, 5, 2}, {999, 5, 2}, {1000, 5, 0}, {1999, 5, 0}, {2000, 0, 0}, {50000, 0, 0},
	} {
		if f, r := SmallDesign(c.n); f != c.folds || r != c.repeats {
			t.Errorf("SmallDesign(%d) = %d, %d; want %d, %d", c.n, f, r, c.folds, c.repeats)
		}
	}
	for _, c := range []struct{ v, want int }{{50, 20}, {379, 37}, {2000, 200}} {
		if got := TrialCap(c.v); got != c.want {
			t.Errorf("TrialCap(%d) = %d, want %d", c.v, got, c.want)
		}
	}
}

// With RuleOneSE and no trial count, a search of 150 rows by 5 folds
// draws TrialCap(150) = 20 configurations however long its budget; a
// trial count given is kept.
func TestOneSETrialCap(t *testing.T) {
	ds := classes(t, 150, 3)
	opt := options(ds, 0)
	opt.Space.Iters = []int{1}
	opt.Rule, opt.Folds, opt.Budget = RuleOneSE, 5, time.Hour
	res := mustRun(t, opt)
	if res.TrialCap != 20 || res.Drawn != 20 {
		t.Fatalf("drew %d configurations (cap %d), want the cap 20", res.Drawn, res.TrialCap)
	}
	if res.Choice == nil || res.Choice.Splits != 5 || res.Choice.Folds != 5 || res.Default == nil {
		t.Fatalf("choice %+v, default %v", res.Choice, res.Default)
	}
	opt.Trials, opt.Budget = 4, 0
	if res := mustRun(t, opt); res.Drawn != 4 || res.TrialCap != 0 {
		t.Fatalf("--trials 4: drew %d (cap %d)", res.Drawn, res.TrialCap)
	}
}

// A base configuration that cannot fit (a bandwidth of 1% of the median
// distance: the kernel matrix is nearly the identity) is still scored at
// the top rung of successive halving, and a configuration far better on
// every fold replaces it; with labels independent of the inputs and a
// space of settings near the defaults', the defaults are kept.
func TestOneSEEndToEnd(t *testing.T) {
	ds := classes(t, 300, 5)
	opt := options(ds, 9)
	opt.Rule, opt.Folds, opt.MinRows = RuleOneSE, 5, 20
	opt.Space.Iters = []int{1}
	opt.Space.Kernels = []kernel.Kind{kernel.Laplace}
	opt.Base.Kernel.Bandwidth = 0.01 * medianOf(t, ds)
	res := mustRun(t, opt)
	if len(res.Rungs) < 2 {
		t.Fatalf("rungs %v: the test needs successive halving", res.Rungs)
	}
	top := res.Rungs[len(res.Rungs)-1]
	if res.Default == nil || res.Default.Rows != top {
		t.Fatalf("the base configuration did not reach the top rung (%d rows): %+v", top, res.Default)
	}
	if res.Best.Index == 0 || res.Choice.Kept == "defaults" || !(res.Choice.Margin > res.Choice.SE) {
		t.Fatalf("a useless base was kept: %s", res.Choice)
	}

	noise := *ds
	rng := rand.New(rand.NewPCG(11, 0))
	noise.Labels = make([]int, ds.N)
	for i := range noise.Labels {
		noise.Labels[i] = rng.IntN(2)
	}
	noise.Classes = 2
	opt = options(&noise, 12)
	opt.Rule, opt.Folds, opt.Repeats = RuleOneSE, 5, 2
	opt.Space = Space{Bandwidth: [2]float64{5, 10}, Ridge: [2]float64{1e-3, 1e-3}, Kernels: []kernel.Kind{kernel.Laplace},
		Diag: []bool{false, true}, Iters: []int{1}, Loss: []rfm.Loss{rfm.LossSquared}}
	opt.Base.Ridge, opt.Base.Iters = 1e-3, 1
	res = mustRun(t, opt)
	if res.Best.Index != 0 || res.Choice.Kept != "defaults" {
		t.Fatalf("labels independent of the inputs: chose trial %d: %s", res.Best.Index, res.Choice)
	}
	// The defaults kept are fitted as rfm fit fits them (a holdout, α
	// refitted), not by the search's folds: the same predictions.
	if !KeepsBase(opt, res.Best) {
		t.Fatal("KeepsBase is false for the base trial")
	}
	ctx := context.Background()
	m, err := FinalFit(ctx, opt, res.Best, nil)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := rfm.Fit(ctx, opt.Base, &noise, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p1, err1 := m.Predict(ctx, noise.X[:20*noise.D], 20)
	p2, err2 := direct.Predict(ctx, noise.X[:20*noise.D], 20)
	if err1 != nil || err2 != nil || !m.Refitted || m.BestRound != direct.BestRound || !slices.Equal(p1, p2) {
		t.Fatalf("the kept defaults: round %d refitted %v, rfm fit's round %d (%v %v)", m.BestRound, m.Refitted, direct.BestRound, err1, err2)
	}
}

// medianOf is the search's median pairwise distance of ds.
func medianOf(t *testing.T, ds *rfm.Dataset) float64 {
	t.Helper()
	s, err := newSearch(options(ds, 1))
	if err != nil {
		t.Fatal(err)
	}
	return s.median("", false)
}

// The per-split losses survive the trials table, so a resumed RuleOneSE
// search makes the same choice; a table written before those columns is
// still read (its trials without them).
func TestOneSEResume(t *testing.T) {
	ds := classes(t, 200, 4)
	opt := options(ds, 6)
	opt.Rule, opt.Folds = RuleOneSE, 4
	res, table, cache := runJournalled(t, opt)
	opt.Done, opt.Cache = nil, cache
	again := mustRun(t, opt)
	for _, tr := range again.Trials {
		if tr.Status != StatusCached || len(tr.FoldLoss) != 4 || len(tr.PlainFoldLoss) != 4 {
			t.Fatalf("trial %d: %s with %d fold losses", tr.Index, tr.Status, len(tr.FoldLoss))
		}
	}
	if again.Best.Index != res.Best.Index || again.Choice.Kept != res.Choice.Kept || again.Choice.SE != res.Choice.SE {
		t.Fatalf("resumed choice %s, first %s", again.Choice, res.Choice)
	}

	// The same table without its last two columns.
	var old bytes.Buffer
	ow := csv.NewWriter(&old)
	r := csv.NewReader(strings.NewReader(table))
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		ow.Write(rec[:len(rec)-foldColumns])
	}
	ow.Flush()
	cache, err = ReadCache(strings.NewReader(old.String()))
	if err != nil || len(cache) != len(res.Trials) {
		t.Fatalf("an older table: %d trials, %v", len(cache), err)
	}
	for _, c := range cache {
		if c.FoldLoss != nil {
			t.Fatalf("fold losses from a table without them: %v", c.FoldLoss)
		}
	}
}

// runJournalled runs the search with its trials written to a table, as
// rfm tune journals them, and returns the table and what ReadCache reads
// back from it.
func runJournalled(t *testing.T, opt Options) (*Result, string, map[string]Trial) {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(Columns)
	opt.Done = func(tr Trial) { w.Write(tr.Record(true)) }
	res := mustRun(t, opt)
	w.Flush()
	cache, err := ReadCache(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	return res, buf.String(), cache
}
