package rfm

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/synth"
)

// productClass is the class of a Product target value in the logistic
// tests: 2 above 0.1, 1 in (−0.1, 0.1], 0 at or below −0.1.
func productClass(v float64) int {
	switch {
	case v > 0.1:
		return 2
	case v > -0.1:
		return 1
	}
	return 0
}

// productClasses is n rows of the Product task (d = 5) from seed, labelled
// by productLabels.
func productClasses(t *testing.T, n int, seed uint64) *Dataset {
	t.Helper()
	s, err := synth.Generate(synth.Product, n, 5, seed)
	if err != nil {
		t.Fatal(err)
	}
	return &Dataset{X: s.X, N: s.N, D: s.D, Labels: productLabels(s.Y)}
}

// productLabels is productClass of each value of y.
func productLabels(y []float64) []int {
	labels := make([]int, len(y))
	for i, v := range y {
		labels[i] = productClass(v)
	}
	return labels
}

// The logistic loss: the rounds are the squared loss's (same history, same
// M), the predictor is a kernel logistic regression on the selected M
// scored on the validation rows (Head), its probabilities are the softmax
// of its scores (before and after a save/load), and its validation
// log-loss beats the clipped squared-loss scores'.
func TestFitLogistic(t *testing.T) {
	s, err := synth.Generate(synth.Product, 500, 5, 3)
	if err != nil {
		t.Fatal(err)
	}
	ds := &Dataset{X: s.X, N: s.N, D: s.D, Labels: productLabels(s.Y)}
	ctx := context.Background()
	cfg := DefaultConfig()
	cfg.Iters, cfg.Ridge = 2, 1e-2
	sq := mustFit(t, cfg, ds, nil)
	cfg.Loss = LossLogistic
	lg := mustFit(t, cfg, ds, nil)
	if len(lg.History) != len(sq.History) || lg.BestRound != sq.BestRound || !slices.Equal(lg.M.Values, sq.M.Values) {
		t.Fatal("the logistic head changed the rounds")
	}
	if lg.Head == nil || lg.Head.ValAccuracy <= 0 || !lg.Refitted || lg.Head.Steps < 1 || lg.Head.StepLimit {
		t.Fatalf("head %+v, refitted %v", lg.Head, lg.Refitted)
	}
	if c := lg.Calibration; c == nil || c.Method != CalibrateTemperature || c.Temperature != 1 {
		t.Fatalf("calibration %+v, want the softmax (temperature 1)", lg.Calibration)
	}
	n := 100
	x := s.X[:n*s.D]
	scores, _ := lg.Predict(ctx, x, n)
	p, _ := lg.PredictProba(ctx, x, n)
	for i := 0; i < n; i++ {
		row := scores[i*3 : i*3+3]
		top := max(row[0], row[1], row[2])
		sum := 0.0
		for _, v := range row {
			sum += math.Exp(v - top)
		}
		for k, v := range row {
			want := min(max(math.Exp(v-top)/sum, ProbEps), 1-ProbEps)
			if math.Abs(p[i*3+k]-want) > 1e-6 {
				t.Fatalf("row %d class %d: probability %v, softmax %v", i, k, p[i*3+k], want)
			}
		}
	}
	back := saveLoad(t, lg)
	if back.Config.Loss != LossLogistic {
		t.Fatalf("loss after load: %q", back.Config.Loss)
	}
	// UncalibratedProba keeps the logistic head's softmax (it is not a
	// fitted calibration).
	if pu, _ := lg.UncalibratedProba(ctx, x, n); !slices.Equal(p, pu) {
		t.Fatal("the logistic head's uncalibrated probabilities differ from its softmax")
	}
	p2, _ := back.PredictProba(ctx, x, n)
	if !slices.Equal(p, p2) {
		t.Fatal("probabilities changed on a save/load round trip")
	}
	// On held-out rows the logistic head's probabilities have a lower
	// log-loss than the squared loss's clipped scores.
	q, _ := synth.Generate(synth.Product, 400, 5, 4)
	ll := func(m *Model) float64 {
		pr, err := m.PredictProba(ctx, q.X, q.N)
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for i, v := range q.Y {
			sum -= math.Log(pr[i*3+productClass(v)])
		}
		return sum / float64(q.N)
	}
	lsq, llg := ll(sq), ll(lg)
	t.Logf("held-out log-loss: squared %.4f, logistic %.4f", lsq, llg)
	if !(llg < lsq) {
		t.Errorf("logistic log-loss %.4f is not below the squared loss's %.4f", llg, lsq)
	}
	// The combinations it does not take.
	for _, bad := range []func(c *Config){
		func(c *Config) { c.Solver = SolverTree },
		func(c *Config) { c.ClassWeight = ClassWeightBalanced },
		func(c *Config) { c.Ridge = 0 },
	} {
		c := cfg
		bad(&c)
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := Fit(ctx, cfg, &Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y, Outputs: 1}, nil, nil); err == nil || !strings.Contains(err.Error(), "classification") {
		t.Errorf("logistic regression of a real target: %v", err)
	}
}

// The logistic head on Nyström centres: with the Nyström solver the rounds
// and the head share the centres' machinery; the head's held-out log-loss
// is below the squared loss's on the same centres, its probabilities are
// the softmax of its scores, and the model survives a save/load.
func TestFitLogisticNystrom(t *testing.T) {
	ctx := context.Background()
	train, test := productClasses(t, 1500, 3), productClasses(t, 600, 4)
	cfg := DefaultConfig()
	cfg.Iters, cfg.Ridge, cfg.Solver, cfg.Centers = 2, 1e-2, SolverNystrom, 300
	sq := mustFit(t, cfg, train, nil)
	cfg.Loss = LossLogistic
	lg := mustFit(t, cfg, train, nil)
	if lg.N != 300 || lg.Head == nil || !slices.Equal(lg.M.Values, sq.M.Values) {
		t.Fatalf("centres %d, head %+v, same M %v", lg.N, lg.Head, slices.Equal(lg.M.Values, sq.M.Values))
	}
	ll := func(m *Model) (float64, float64) {
		p, err := m.PredictProba(ctx, test.X, test.N)
		if err != nil {
			t.Fatal(err)
		}
		l, _ := metrics.LogLoss(test.Labels, p, 3)
		pred, _ := m.PredictClass(ctx, test.X, test.N)
		a, _ := metrics.Accuracy(test.Labels, pred)
		return l, a
	}
	lsq, asq := ll(sq)
	llg, alg := ll(lg)
	t.Logf("held-out: squared log-loss %.4f accuracy %.3f, logistic %.4f %.3f", lsq, asq, llg, alg)
	if !(llg < lsq) || alg < asq-0.05 {
		t.Errorf("logistic head: log-loss %.4f (squared %.4f), accuracy %.3f (squared %.3f)", llg, lsq, alg, asq)
	}
	back := saveLoad(t, lg)
	p1, _ := lg.PredictProba(ctx, test.X, test.N)
	p2, _ := back.PredictProba(ctx, test.X, test.N)
	if !slices.Equal(p1, p2) {
		t.Fatal("probabilities changed on a save/load round trip")
	}
	// The automatic solver takes Nyström for the logistic loss on more
	// rows than an exact solve takes quickly (a tree's leaves cannot).
	auto := cfg
	auto.Solver = SolverAuto
	if s, why := ChooseSolver(auto, FitShape{N: AutoExactRows + 1, D: 5}); s != SolverNystrom {
		t.Errorf("auto solver for the logistic loss on %d rows: %s (%s)", AutoExactRows+1, s, why)
	}
}
