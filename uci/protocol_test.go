package uci

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
)

func TestPaperGrid(t *testing.T) {
	g := PaperGrid("iris")
	if len(g) != 10 {
		t.Fatalf("%d grid points, want 10", len(g))
	}
	// λ outer, normalization inner (on first), as in the authors' main.py.
	lams := []float64{10, 1, 0.1, 0.01, 0.001}
	for i, s := range g {
		if s.Lambda != lams[i/2] || s.Normalize != (i%2 == 0) {
			t.Errorf("grid[%d] = λ %g, normalize %v", i, s.Lambda, s.Normalize)
		}
		if s.Bandwidth != 10 || s.Iters != 4 || s.Diag || s.Centered || s.Norm != rfm.MNormMean {
			t.Errorf("grid[%d] = %+v, want L=10, 4 iterations, full M, mean AGOP", i, s)
		}
	}
	for i, s := range PaperGrid("balance-scale") {
		if s.Normalize || s.Lambda != lams[i/2] {
			t.Errorf("balance-scale grid[%d] = %+v: normalization must be off", i, s)
		}
	}
	tg := TunedGrid("iris")
	if len(tg) != 240 {
		t.Fatalf("tuned grid has %d points, want 2 powers × 2 centrings × 2 M shapes × 3 bandwidths × 10", len(tg))
	}
	for i := range g {
		if tg[i] != g[i] {
			t.Errorf("tuned grid[%d] = %+v, want the paper grid first (%+v)", i, tg[i], g[i])
		}
	}
	seen := map[Setting]bool{}
	for _, s := range tg {
		if seen[s] {
			t.Errorf("tuned grid repeats %+v", s)
		}
		seen[s] = true
	}
}

func TestSettingStringRoundTrip(t *testing.T) {
	for _, s := range append(TunedGrid("x"), Setting{Bandwidth: 2.5, Diag: true, Centered: true, Norm: rfm.MNormMax, Iters: 7},
		Setting{Bandwidth: 3, Kernel: kernel.Gaussian, Norm: rfm.MNormMean, Power: 0.5, Iters: 4}) {
		var back Setting
		back.Lambda, back.Normalize = s.Lambda, s.Normalize
		if err := parseSetting(s.String(), &back); err != nil {
			t.Fatal(err)
		}
		if back != s {
			t.Errorf("%q read back as %+v, want %+v", s.String(), back, s)
		}
	}
	if err := parseSetting("L=10 full wobble T=4", &Setting{}); err == nil {
		t.Error("unknown part accepted")
	}
}

// fakeFit returns canned round histories per grid point, choosing the best
// round like the engine (first strict maximum), and counts its calls.
type fakeFit struct {
	hist  map[float64][]float64 // by λ
	calls int
}

func (f *fakeFit) fit(_ context.Context, cfg rfm.Config, _, _ *rfm.Dataset, _ func(rfm.Progress)) (*rfm.Model, error) {
	f.calls++
	h := f.hist[cfg.Ridge]
	m := &rfm.Model{M: kernel.IdentityMatrix(2)}
	best := -1.0
	for r, a := range h {
		m.History = append(m.History, rfm.Round{Round: r, ValAccuracy: a})
		if a > best {
			best, m.BestRound = a, r
		}
	}
	if m.BestRound > 0 {
		m.M = kernel.DiagonalMatrix([]float64{float64(m.BestRound), cfg.Ridge})
	}
	return m, nil
}

// The selection keeps the first strict maximum over the grid order (λ
// outer, normalization inner) and, inside a grid point, the round order.
func TestSelectFirstStrictMax(t *testing.T) {
	grid := []Setting{
		{Lambda: 10, Bandwidth: 10, Norm: rfm.MNormMean, Iters: 2},
		{Lambda: 1, Bandwidth: 10, Norm: rfm.MNormMean, Iters: 2},
		{Lambda: 0.1, Bandwidth: 10, Norm: rfm.MNormMean, Iters: 2},
		{Lambda: 0.01, Bandwidth: 10, Norm: rfm.MNormMean, Iters: 2},
		{Lambda: 0.001, Bandwidth: 10, Norm: rfm.MNormMean, Iters: 2},
	}
	cases := []struct {
		name        string
		hist        map[float64][]float64
		rfmLambda   float64
		rfmRound    int
		rfmAcc      float64
		lapLambda   float64
		lapAccuracy float64
	}{
		{
			name: "later tie does not replace",
			hist: map[float64][]float64{
				10: {0.5, 0.7, 0.7}, 1: {0.6, 0.7, 0.8}, 0.1: {0.8, 0.8, 0.75},
				0.01: {0.6, 0.8, 0.8}, 0.001: {0.2, 0.3, 0.4},
			},
			rfmLambda: 1, rfmRound: 2, rfmAcc: 80, lapLambda: 0.1, lapAccuracy: 80,
		},
		{
			name: "strictly better later point wins",
			hist: map[float64][]float64{
				10: {0.5, 0.7, 0.7}, 1: {0.6, 0.7, 0.8}, 0.1: {0.8, 0.8, 0.75},
				0.01: {0.6, 0.9, 0.9}, 0.001: {0.85, 0.3, 0.4},
			},
			rfmLambda: 0.01, rfmRound: 1, rfmAcc: 90, lapLambda: 0.001, lapAccuracy: 85,
		},
		{
			name: "all equal keeps the first grid point and round 0",
			hist: map[float64][]float64{
				10: {0.5, 0.5, 0.5}, 1: {0.5, 0.5, 0.5}, 0.1: {0.5, 0.5, 0.5},
				0.01: {0.5, 0.5, 0.5}, 0.001: {0.5, 0.5, 0.5},
			},
			rfmLambda: 10, rfmRound: 0, rfmAcc: 50, lapLambda: 10, lapAccuracy: 50,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeFit{hist: c.hist}
			fits := 0
			sel, err := selectModel(context.Background(), f.fit, base{seed: 1}, grid, nil, nil, func(_ Setting, f float64) {
				if f == 1 {
					fits++
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			r, l := sel.rfm, sel.laplace
			if r.Lambda != c.rfmLambda || r.Round != c.rfmRound || r.ValAccuracy != c.rfmAcc {
				t.Errorf("RFM choice λ=%g round %d acc %g, want λ=%g round %d acc %g", r.Lambda, r.Round, r.ValAccuracy, c.rfmLambda, c.rfmRound, c.rfmAcc)
			}
			if l.Lambda != c.lapLambda || l.Round != 0 || l.ValAccuracy != c.lapAccuracy || !l.M.IsIdentity() {
				t.Errorf("Laplace choice λ=%g round %d acc %g, want λ=%g round 0 acc %g", l.Lambda, l.Round, l.ValAccuracy, c.lapLambda, c.lapAccuracy)
			}
			// The kept M is the one of the chosen grid point and round.
			if r.Round > 0 && (r.M.Form != kernel.Diagonal || r.M.Values[0] != float64(r.Round) || r.M.Values[1] != r.Lambda) {
				t.Errorf("RFM choice carries M %v (%s)", r.M.Values, r.M.Form)
			}
			if r.Round == 0 && (!r.M.IsIdentity() || r.M.Values != nil) {
				t.Errorf("round-0 choice carries M %v (%s)", r.M.Values, r.M.Form)
			}
			if f.calls != 5 || fits != 5 {
				t.Errorf("%d fits (%d reported), want 5", f.calls, fits)
			}
		})
	}
}

// balance-scale's grid repeats every point; each is fitted once and the
// selection is as if the duplicates were absent.
func TestSelectDuplicatesFittedOnce(t *testing.T) {
	f := &fakeFit{hist: map[float64][]float64{10: {0.5}, 1: {0.6}, 0.1: {0.7}, 0.01: {0.7}, 0.001: {0.6}}}
	grid := PaperGrid("balance-scale")
	sel, err := selectModel(context.Background(), f.fit, base{}, grid, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.calls != 5 {
		t.Errorf("%d fits for 5 distinct grid points", f.calls)
	}
	if len(sel.history) != 10 {
		t.Errorf("history has %d grid points, want 10", len(sel.history))
	}
	if sel.rfm.Lambda != 0.1 || sel.rfm.Normalize {
		t.Errorf("choice %+v, want λ=0.1 without normalization", sel.rfm.Setting)
	}
}

// fixedKRR with a model's M, λ and normalization, trained on the same rows,
// reproduces the validation accuracy the engine measured for that round.
func TestFixedKRRMatchesEngine(t *testing.T) {
	s := noisySet(300, 8, 3, 4)
	b := base{seed: 1}
	tr, va := s.subset(s.Select.Train), s.subset(s.Select.Test)
	learned := 0
	for _, st := range []Setting{
		{Lambda: 0.1, Normalize: true, Bandwidth: 10, Norm: rfm.MNormMean, Iters: 3},
		{Lambda: 1e-3, Normalize: false, Bandwidth: 2, Diag: true, Norm: rfm.MNormMean, Iters: 3},
	} {
		model, err := rfm.Fit(context.Background(), b.config(st), tr, va, nil)
		if err != nil {
			t.Fatal(err)
		}
		if model.BestRound > 0 {
			learned++
		}
		for _, round := range []int{0, model.BestRound} {
			ch := Choice{Setting: st, Round: round}
			if round == model.BestRound && round > 0 {
				ch.M = model.M
			}
			acc, err := fixedKRR(context.Background(), b, ch, tr, va, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := model.History[round].ValAccuracy
			if want < 0.4 || want > 0.95 {
				t.Errorf("validation accuracy %g: the test set should be neither trivial nor hopeless", want)
			}
			if math.Abs(acc-want) > 1e-12 {
				t.Errorf("%s λ=%g round %d: fixed-M accuracy %g, engine %g", st, st.Lambda, round, acc, want)
			}
		}
	}
	if learned == 0 {
		t.Error("no setting kept a learned M: the test does not exercise fixed M ≠ I")
	}
}

// noisySet is a synthetic set whose classes depend on a product of two
// features plus noise, with a selection split and one fold.
func noisySet(n, d, c int, seed uint64) *Set {
	rng := rand.New(rand.NewPCG(seed, 99))
	s := &Set{Meta: Meta{Name: "noisy", D: d, Classes: c, N1: n, NTrain: n / 2, NVal: n - n/2}}
	s.X = make([]float64, n*d)
	s.Labels = make([]int, n)
	for i := 0; i < n; i++ {
		row := s.X[i*d : i*d+d]
		for j := range row {
			row[j] = rng.NormFloat64()
		}
		v := row[0]*row[1] + 0.3*rng.NormFloat64()
		switch {
		case v < -0.3:
			s.Labels[i] = 0
		case v < 0.3:
			s.Labels[i] = 1 % c
		default:
			s.Labels[i] = 2 % c
		}
	}
	perm := rng.Perm(n)
	s.Select = Split{Train: perm[:n/2], Test: perm[n/2:]}
	perm = rng.Perm(n)
	s.Folds = []Split{{Train: perm[:n-n/4], Test: perm[n-n/4:]}}
	return s
}

// The tuned protocol learns the selected M again on both halves of the
// selection split, with the selected setting and number of rounds, and
// no validation rows (so the last round is kept).
func TestTunedRelearnsOnBothHalves(t *testing.T) {
	s := &Set{X: make([]float64, 12*2), Labels: make([]int, 12), Select: Split{Train: []int{0, 1, 2, 3, 4, 5}, Test: []int{6, 7, 8, 9}}}
	s.D, s.Classes, s.Name = 2, 2, "toy"
	for i := range s.Labels {
		s.Labels[i] = i % 2
		s.X[2*i], s.X[2*i+1] = float64(i), float64(i%3)
	}
	var got struct {
		n, iters int
		valid    bool
		first    float64
	}
	j := &job{protocol: ProtocolTunedGrid, base: base{seed: 1}, fit: func(ctx context.Context, cfg rfm.Config, train, valid *rfm.Dataset, _ func(rfm.Progress)) (*rfm.Model, error) {
		got.n, got.iters, got.valid, got.first = train.N, cfg.Iters, valid != nil, train.X[0]
		return &rfm.Model{M: kernel.DiagonalMatrix([]float64{7, 8})}, nil
	}}
	ch := Choice{Setting: Setting{Lambda: 0.1, Bandwidth: 5, Diag: true, Norm: rfm.MNormMean, Iters: 4}, Round: 3, M: kernel.DiagonalMatrix([]float64{1, 2})}
	both := append(append([]int(nil), s.Select.Train...), s.Select.Test...)
	if err := j.relearn(context.Background(), s, both, &ch); err != nil {
		t.Fatal(err)
	}
	if got.n != 10 || got.iters != 3 || got.valid || got.first != 0 {
		t.Errorf("relearn fitted %+v, want 10 rows, 3 rounds, no validation", got)
	}
	if ch.M.Values[0] != 7 || ch.M.Values[1] != 8 || ch.Round != 3 || ch.Lambda != 0.1 {
		t.Errorf("choice after relearn: %+v", ch)
	}
	// A fit that leaves M = I is an error, not a silent Laplace machine.
	j.fit = func(context.Context, rfm.Config, *rfm.Dataset, *rfm.Dataset, func(rfm.Progress)) (*rfm.Model, error) {
		return &rfm.Model{M: kernel.IdentityMatrix(2)}, nil
	}
	if err := j.relearn(context.Background(), s, both, &ch); err == nil {
		t.Error("M = I accepted")
	}
}

// Two directions' scores are averaged per (grid point, round) and the
// first strict maximum of the mean is chosen, for RFM over all rounds and
// for Laplace over round 0.
func TestAveragedSelection(t *testing.T) {
	grid := []Setting{{Lambda: 1, Bandwidth: 10}, {Lambda: 0.1, Bandwidth: 10}, {Lambda: 0.01, Bandwidth: 10}}
	x := &selection{history: [][]float64{{0.5, 0.9, 0.6}, {0.7, 0.7, 0.8}, {0.6, 0.7, 0.9}}}
	y := &selection{history: [][]float64{{0.7, 0.5, 0.6}, {0.5, 0.7, 0.8}, {0.8, 0.8, 0.7}}}
	// means: {0.6, 0.7, 0.6}, {0.6, 0.7, 0.8}, {0.7, 0.75, 0.8}
	sel, err := averaged(grid, x, y)
	if err != nil {
		t.Fatal(err)
	}
	if sel.rfm.Lambda != 0.1 || sel.rfm.Round != 2 || math.Abs(sel.rfm.ValAccuracy-80) > 1e-9 {
		t.Errorf("RFM choice %+v, want λ=0.1 round 2 (first 0.8)", sel.rfm)
	}
	if !sel.rfm.M.IsIdentity() || sel.rfm.M.Values != nil {
		t.Errorf("averaged choice carries an M of one direction: %+v", sel.rfm)
	}
	if sel.laplace.Lambda != 0.01 || sel.laplace.Round != 0 || math.Abs(sel.laplace.ValAccuracy-70) > 1e-9 {
		t.Errorf("Laplace choice %+v, want λ=0.01 (round-0 mean 0.7)", sel.laplace)
	}
	if len(sel.history) != 3 || math.Abs(sel.history[2][1]-0.75) > 1e-12 {
		t.Errorf("history %v", sel.history)
	}
	if _, err := averaged(grid, x, &selection{history: y.history[:2]}); err == nil {
		t.Error("selections of different grids averaged")
	}
}

// The overlay of a Setting gives the configuration the hand-written
// mapping used to give, for every grid point of every protocol.
func TestSettingOverlay(t *testing.T) {
	refine := 3
	b := base{seed: 7, float32: true, refine: &refine}
	old := func(s Setting) rfm.Config {
		cfg := rfm.DefaultConfig()
		cfg.Kernel = kernel.Spec{Kind: kernel.Laplace, Bandwidth: s.Bandwidth}
		if s.Kernel != "" {
			cfg.Kernel.Kind = s.Kernel
		}
		if s.Power != 0 {
			cfg.AGOPPower = s.Power
		}
		cfg.Ridge, cfg.Iters, cfg.Diag, cfg.Centered, cfg.MNorm = s.Lambda, s.Iters, s.Diag, s.Centered, s.Norm
		cfg.AGOPSamples, cfg.AGOPReplace, cfg.NormalizeRows = 20000, true, s.Normalize
		cfg.Refit, cfg.EarlyStop, cfg.Selection = false, 0, rfm.SelectAccuracy
		cfg.Float32, cfg.Refine, cfg.Seed = true, 3, 7
		return cfg
	}
	grid := append(TunedGrid("iris"), Setting{Lambda: 0, Bandwidth: 3, Kernel: kernel.Gaussian, Norm: rfm.MNormMax, Power: 0.5, Iters: 0})
	for _, s := range grid {
		got, want := b.config(s), old(s)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s λ=%g: overlay\n%+v\nwant\n%+v", s, s.Lambda, got, want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

// The tuned protocol never looks at a test row: changing the features of
// the first split's test rows (which no other row of that split's search
// sees) leaves its choices and validation scores exactly as they were,
// while the test accuracies are computed from them.
func TestTunedIsLeakFree(t *testing.T) {
	for _, k := range []int{1, 3} {
		tunedLeakFree(t, k)
	}
}

// tunedLeakFree runs TestTunedIsLeakFree with an ensemble of k.
func tunedLeakFree(t *testing.T, k int) {
	s := noisySet(240, 4, 3, 5)
	perm := rand.New(rand.NewPCG(7, 8)).Perm(s.N1)
	s.Folds = []Split{{Train: perm[:180], Test: perm[180:]}}
	j := &job{protocol: ProtocolTuned, base: base{seed: 1}, fit: engineFit, trials: 6, ensemble: k}
	res, err := j.evaluate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RFM) != 1 || len(res.TestAccuracies) != 1 || res.TestAccuracy <= 0 || res.LaplaceAccuracy <= 0 {
		t.Fatalf("ensemble %d: result %+v", k, res)
	}
	if k == 1 && res.Members != nil {
		t.Fatalf("ensemble 1 recorded members %v", res.Members)
	}
	if k > 1 && (len(res.Members) != 1 || res.Members[0] < 1 || res.Members[0] > k) {
		t.Fatalf("ensemble %d: members %v, want one count in 1..%d", k, res.Members, k)
	}
	if len(res.LogLosses) != 1 || len(res.CalLogLosses) != 1 || !(res.LogLosses[0] > 0) || !(res.CalLogLosses[0] > 0) {
		t.Fatalf("log-losses %v, calibrated %v", res.LogLosses, res.CalLogLosses)
	}
	// The ridge scores clipped and renormalized are far from calibrated on
	// a noisy 5-class set; the calibration must improve them. The mean of
	// an ensemble is closer, and its calibration is kept only when it
	// helps across the folds: it must not be worse.
	if k == 1 && res.CalLogLosses[0] >= res.LogLosses[0] {
		t.Errorf("calibrated log-loss %.4f is not below the uncalibrated %.4f", res.CalLogLosses[0], res.LogLosses[0])
	}
	if res.CalLogLosses[0] > res.LogLosses[0]+1e-9 {
		t.Errorf("ensemble %d: calibrated log-loss %.4f is above the uncalibrated %.4f", k, res.CalLogLosses[0], res.LogLosses[0])
	}
	if res.RFM[0].ValAccuracy < res.Laplace[0].ValAccuracy {
		t.Fatalf("the tuned RFM (%.2f%%) is below the tuned plain kernel (%.2f%%) on validation", res.RFM[0].ValAccuracy, res.Laplace[0].ValAccuracy)
	}
	for _, r := range s.Folds[0].Test {
		for k := 0; k < s.D; k++ {
			s.X[r*s.D+k] = 100 * float64(k+1) // far from every training row
		}
	}
	again, err := j.evaluate(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b Choice) bool {
		return a.Setting == b.Setting && a.Round == b.Round && a.ValAccuracy == b.ValAccuracy
	}
	if !same(again.RFM[0], res.RFM[0]) || !same(again.Laplace[0], res.Laplace[0]) || !slices.Equal(again.Members, res.Members) {
		t.Fatalf("changing test rows changed the choice: %+v / %+v, then %+v / %+v", res.RFM[0], res.Laplace[0], again.RFM[0], again.Laplace[0])
	}
	if again.TestAccuracy == res.TestAccuracy {
		t.Fatalf("the test rows changed beyond recognition and the test accuracy did not (%.2f%%): are they scored?", res.TestAccuracy)
	}
}
