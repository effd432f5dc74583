package tune

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/ensemble"
)

// Top puts the best trial first and then the others of its rung and
// scaling in order of score; trials of other rungs or scalings are left
// out.
func TestTopOrdersByScore(t *testing.T) {
	res := &Result{Task: rfm.Classification, Trials: []Trial{
		{Index: 0, Rows: 100, Status: StatusOK, Accuracy: 0.99}, // lower rung
		{Index: 1, Rows: 300, Status: StatusOK, Accuracy: 0.80},
		{Index: 2, Rows: 300, Status: StatusOK, Accuracy: 0.90},
		{Index: 3, Rows: 300, Status: StatusOK, Accuracy: 0.85, Scaling: "none"}, // other scaling
		{Index: 4, Rows: 300, Status: StatusCut, Accuracy: 0.95},                 // not scored
		{Index: 5, Rows: 300, Status: StatusOK, Accuracy: 0.85},
		{Index: 6, Rows: 300, Status: StatusOK, Accuracy: 0.70},
	}}
	res.Best = &res.Trials[2]
	var got []int
	for _, tr := range Top(res, 3) {
		got = append(got, tr.Index)
	}
	if want := []int{2, 5, 1}; !slices.Equal(got, want) {
		t.Errorf("Top 3: trials %v, want %v", got, want)
	}
	if n := len(Top(res, 10)); n != 4 {
		t.Errorf("Top 10 of 4 eligible trials gave %d", n)
	}
	if Top(res, 0) != nil {
		t.Error("Top 0 gave trials")
	}
}

// FinalEnsemble fits the top configurations, best first, each as FinalFit
// would (the round the folds chose), averages their uncalibrated
// probabilities, and fits the calibration of the mean on the out-of-fold
// scores of every training row; with a holdout it uses the validation rows.
func TestFinalEnsemble(t *testing.T) {
	ctx := context.Background()
	for _, folds := range []int{3, 0} {
		ds := classes(t, 400, 7)
		opt := options(ds, 6)
		opt.Folds, opt.Jobs = folds, 1
		opt.Base.Calibrate = rfm.CalibratePower
		res := mustRun(t, opt)
		top := Top(res, 3)
		if len(top) < 2 {
			t.Fatalf("folds %d: only %d trials on the top rung", folds, len(top))
		}
		e, err := FinalEnsemble(ctx, opt, res, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(e.Members) != len(top) {
			t.Fatalf("folds %d: %d members for %d top trials", folds, len(e.Members), len(top))
		}
		for i, m := range e.Members {
			if m.Config.Ridge != top[i].Config.Ridge || m.Config.Kernel.Kind != top[i].Config.Kernel.Kind {
				t.Errorf("folds %d: member %d is not trial %d", folds, i, top[i].Index)
			}
			if folds > 0 && m.BestRound != top[i].Round {
				t.Errorf("folds %d: member %d kept round %d, the folds chose %d", folds, i, m.BestRound, top[i].Round)
			}
			if c := m.Calibration; c != nil && c.Method != rfm.CalibrateTemperature {
				t.Errorf("folds %d: member %d keeps a calibration of its own (%s)", folds, i, c.Method)
			}
		}
		wantRows := ds.N
		if folds == 0 {
			wantRows = int(math.Round(0.2 * float64(ds.N)))
		}
		cal := e.Calibration
		if cal == nil || cal.Method != rfm.CalibratePower || math.Abs(float64(cal.Rows-wantRows)) > 3 {
			t.Fatalf("folds %d: calibration %+v, want power on ≈ %d held-out rows", folds, cal, wantRows)
		}
		if !(cal.LogLossAfter <= cal.LogLossBefore) {
			t.Errorf("folds %d: held-out log-loss %v → %v", folds, cal.LogLossBefore, cal.LogLossAfter)
		}
		// The mean of the members' uncalibrated probabilities.
		x, n := ds.X[:20*ds.D], 20
		got, err := e.UncalibratedProba(ctx, x, n)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, n*e.Outputs)
		for _, m := range e.Members {
			p, err := m.UncalibratedProba(ctx, x, n)
			if err != nil {
				t.Fatal(err)
			}
			for j, v := range p {
				want[j] += v / float64(len(e.Members))
			}
		}
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-9 {
				t.Fatalf("folds %d: probability %d is %v, the members' mean %v", folds, j, got[j], want[j])
			}
		}
	}
}

// FinalModel returns the ensemble of the top trials, its mean scored
// against the best alone and the tuned plain kernel (the floor) on the
// held-out rows when a calibration is fitted (no validation without one);
// its members stay uncalibrated (a logistic head keeps its softmax), with
// or without a method; one configuration only gives FinalFit's model.
func TestFinalModelValidated(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		folds    int
		method   rfm.CalibrationMethod
		logistic bool // every configuration with the logistic head
	}{{3, rfm.CalibratePower, false}, {0, rfm.CalibrateNone, false}, {0, rfm.CalibrateTemperature, false}, {3, rfm.CalibrateNone, false},
		{3, rfm.CalibratePower, true}, {0, rfm.CalibrateNone, true}} {
		ds := classes(t, 400, 7)
		opt := options(ds, 6)
		opt.Folds, opt.Jobs = c.folds, 1
		opt.Base.Calibrate = c.method
		if c.logistic {
			opt.Space.Loss = []rfm.Loss{rfm.LossLogistic}
		}
		res := mustRun(t, opt)
		fm, err := FinalModel(ctx, opt, res, 3, nil)
		if err != nil {
			t.Fatal(err)
		}
		e, _ := fm.Model.(*ensemble.Model)
		if e == nil || fm.Validation != e.Validation || len(fm.Trials) != len(e.Members) || len(e.Members) < 2 {
			t.Fatalf("folds %d, %s: final %+v", c.folds, c.method, fm)
		}
		v := e.Validation
		if !c.method.Enabled() {
			if v != nil || e.Calibration != nil {
				t.Fatalf("folds %d: no method asked, validation %+v, calibration %+v", c.folds, v, e.Calibration)
			}
		} else {
			wantRows := ds.N
			if c.folds == 0 {
				wantRows = int(math.Round(0.2 * float64(ds.N)))
			}
			if v == nil || v.Rows != wantRows || v.Folds != (c.folds > 0) || v.Accuracy <= 0 || v.BestAccuracy <= 0 || v.LogLoss <= 0 {
				t.Fatalf("folds %d, %s: validation %+v on %d rows", c.folds, c.method, v, wantRows)
			}
			if v.Floor != res.Plain.PlainAccuracy {
				t.Fatalf("folds %d, %s: floor %g, the plain kernel's validation accuracy %g", c.folds, c.method, v.Floor, res.Plain.PlainAccuracy)
			}
			if c.folds > 0 && math.Abs(v.BestAccuracy-res.Best.Accuracy) > 0.02 {
				t.Fatalf("folds %d, %s: the best member's out-of-fold accuracy %g, its search score %g", c.folds, c.method, v.BestAccuracy, res.Best.Accuracy)
			}
		}
		for i, m := range e.Members {
			if m.Config.Calibrate != rfm.CalibrateNone || (m.Calibration != nil && (m.Config.Loss != rfm.LossLogistic || m.Calibration.Temperature != 1)) {
				t.Fatalf("folds %d, %s: member %d keeps calibration %q %+v", c.folds, c.method, i, m.Config.Calibrate, m.Calibration)
			}
			if c.logistic && m.Config.Loss == rfm.LossLogistic && m.Calibration == nil {
				t.Fatalf("member %d: a logistic head without its softmax", i)
			}
		}
	}
	// One configuration: FinalFit's model.
	ds := classes(t, 400, 7)
	opt := options(ds, 6)
	opt.Jobs = 1
	res := mustRun(t, opt)
	fm, err := FinalModel(ctx, opt, res, 1, nil)
	if err != nil || fm.Model.Kind() != "rfm" || fm.Validation != nil || len(fm.Trials) != 1 || fm.Trials[0] != res.Best {
		t.Fatalf("k = 1: %+v, %v", fm, err)
	}
}
