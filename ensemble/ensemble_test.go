package ensemble

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/internal/testutil/modeltest"
	"github.com/rfmkit/rfm/internal/testutil/synthset"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/synth"
)

func data(t *testing.T, n int, seed uint64, classify bool) *rfm.Dataset {
	t.Helper()
	ds := synthset.Regression(t, synth.LowRank, n, 6, seed)
	if classify {
		ds.Labels, ds.Y = synth.Classes(ds.Y, 0.02), nil
	}
	return ds
}

// members fits k RFMs that differ in bandwidth and ridge, with a 20%
// holdout (the same rows for each: one seed) and a power calibration
// fitted there; for classification the third has the logistic head.
func members(t *testing.T, ds *rfm.Dataset, k int) []*rfm.Model {
	t.Helper()
	var ms []*rfm.Model
	for i := 0; i < k; i++ {
		cfg := rfm.DefaultConfig()
		cfg.Iters, cfg.ValFraction, cfg.AGOPSamples = 2, 0.2, 300
		cfg.Kernel.Bandwidth = 5 * float64(i+1)
		cfg.Ridge = 1e-3 * math.Pow(10, float64(i))
		if ds.Labels != nil {
			cfg.Calibrate = rfm.CalibratePower
			if i == 2 {
				cfg.Loss = rfm.LossLogistic
			}
		}
		m, err := rfm.Fit(context.Background(), cfg, ds, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ms = append(ms, m)
	}
	return ms
}

// A classifier's scores are the mean of its members' uncalibrated
// probabilities, a regression's outputs the mean of theirs; the class is
// the argmax of the mean.
func TestPredictIsTheMean(t *testing.T) {
	ctx := context.Background()
	for _, classify := range []bool{true, false} {
		ds := data(t, 300, 1, classify)
		ms := members(t, ds, 3)
		e, err := New(ms)
		if err != nil {
			t.Fatal(err)
		}
		x, n := ds.X[:40*ds.D], 40
		if classify {
			// The members' own calibrations are not the ensemble's: a
			// power map of β = 3 on member 0 must not change the mean.
			ms[0].Calibration = &rfm.Calibration{Method: rfm.CalibratePower, Power: 3}
			if ms[2].Config.Loss != rfm.LossLogistic {
				t.Fatal("member 2 is not a logistic head")
			}
		}
		want := make([]float64, n*e.Outputs)
		for _, m := range ms {
			var y []float64
			if classify {
				if y, err = m.UncalibratedProba(ctx, x, n); err != nil {
					t.Fatal(err)
				}
			} else {
				y = testutil.MustPredict(t, m, x, n)
			}
			for j, v := range y {
				want[j] += v / 3
			}
		}
		got := testutil.MustPredict(t, e, x, n)
		for j := range want {
			if math.Abs(got[j]-want[j]) > 1e-12 {
				t.Fatalf("classify %v: output %d is %v, the members' mean %v", classify, j, got[j], want[j])
			}
		}
		if !classify {
			if _, err := e.PredictClass(ctx, x, n); err == nil {
				t.Error("a regression ensemble predicted classes")
			}
			continue
		}
		// A logistic member's probabilities are the softmax of its logits.
		lg := testutil.MustPredict(t, ms[2], x, n)
		pl, err := ms[2].UncalibratedProba(ctx, x, n)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			row, sum := lg[i*3:i*3+3], 0.0
			for _, v := range row {
				sum += math.Exp(v)
			}
			for j, v := range row {
				if q := math.Exp(v) / sum; math.Abs(q-pl[i*3+j]) > 1e-9 {
					t.Fatalf("logistic member, row %d class %d: probability %v, softmax %v", i, j, pl[i*3+j], q)
				}
			}
		}
		cls, err := e.PredictClass(ctx, x, n)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cls, rfm.Argmax(want, n, e.Outputs)) {
			t.Error("PredictClass is not the argmax of the mean probability")
		}
	}
}

// The calibration is fitted on the mean of the members' held-out
// probabilities, lowers their log-loss there, and does not change the
// class; PredictProba applies it.
func TestCalibrate(t *testing.T) {
	ds := data(t, 400, 2, true)
	ms := members(t, ds, 3)
	e, err := New(ms)
	if err != nil {
		t.Fatal(err)
	}
	var scores [][]float64
	var labels []int
	for i, m := range ms {
		s, l := m.HoldoutScores()
		if s == nil || len(l) < 75 || len(l) > 85 || len(s) != 3*len(l) {
			t.Fatalf("member %d: %d held-out labels and %d scores, want ≈ 80 rows (20%% of 400) of 3 classes", i, len(l), len(s))
		}
		scores, labels = append(scores, s), l
	}
	if err := e.Calibrate(rfm.CalibratePower, scores, labels, nil); err != nil {
		t.Fatal(err)
	}
	cal := e.Calibration
	if cal == nil || cal.Rows != len(labels) || !(cal.LogLossAfter <= cal.LogLossBefore) {
		t.Fatalf("calibration %+v", cal)
	}
	x, n := ds.X[:50*ds.D], 50
	p, u := testutil.MustOutputs(t, e.PredictProba, x, n), testutil.MustOutputs(t, e.UncalibratedProba, x, n)
	if !slices.Equal(rfm.Argmax(p, n, 3), rfm.Argmax(u, n, 3)) {
		t.Error("the power calibration changed a class")
	}
	if slices.Equal(p, u) && cal.Power != 1 {
		t.Error("PredictProba does not apply the calibration")
	}
	if err := e.Calibrate(rfm.CalibratePower, scores[:2], labels, nil); err == nil {
		t.Error("scores of 2 members calibrated an ensemble of 3")
	}
	if err := e.Calibrate(rfm.CalibratePower, [][]float64{scores[0], scores[1], scores[2][:9]}, labels, nil); err == nil {
		t.Error("a member's short scores were accepted")
	}
}

// A file gives back the same predictions; a damaged one is refused with
// what is wrong.
func TestFileRoundTrip(t *testing.T) {
	ds := data(t, 300, 3, true)
	e, err := New(members(t, ds, 2))
	if err != nil {
		t.Fatal(err)
	}
	e.Calibration = &rfm.Calibration{Method: rfm.CalibratePower, Power: 1.5, Rows: 60}
	raw := modeltest.Encode(t, e, map[string]json.RawMessage{"x": json.RawMessage(`{"a":1}`)})
	back, extra := readBack(t, raw)
	if string(extra["x"]) != `{"a":1}` {
		t.Errorf("extra sections %v", extra)
	}
	x, n := ds.X[:30*ds.D], 30
	if !slices.Equal(testutil.MustPredict(t, e, x, n), testutil.MustPredict(t, back, x, n)) {
		t.Error("the file predicts other numbers")
	}
	if back.Calibration == nil || back.Calibration.Power != 1.5 {
		t.Errorf("calibration %+v after the file", back.Calibration)
	}

	damage := func(what string, edit func(f *modelfile.File)) {
		t.Helper()
		g, _ := modelfile.Read(bytes.NewReader(raw))
		edit(g)
		if _, _, err := FromFile(g); err == nil || !strings.Contains(err.Error(), what) {
			t.Errorf("%s: err %v", what, err)
		}
	}
	damage("names no member", func(f *modelfile.File) { f.Arrays[0].Name = "member7/alpha" })
	damage("names no member", func(f *modelfile.File) { f.Arrays[0].Name = "alpha" })
	damage("member 1", func(f *modelfile.File) {
		var keep []modelfile.Array
		for _, a := range f.Arrays {
			if !strings.HasPrefix(a.Name, "member1/") {
				keep = append(keep, a)
			}
		}
		f.Arrays = keep
	})
	damage("member models", func(f *modelfile.File) {
		f.Meta = []byte(strings.Replace(string(f.Meta), `"member_models":[`, `"member_models":[],"x":[`, 1))
	})
	damage("features", func(f *modelfile.File) {
		f.Meta = []byte(strings.Replace(string(f.Meta), `"d":6,"outputs"`, `"d":7,"outputs"`, 1))
	})
	damage("an ensemble model", func(f *modelfile.File) { f.Kind = "rfm.Tree" })
	damage("names no member", func(f *modelfile.File) { f.Arrays[0].Name = "member00/alpha" })
	damage("names no member", func(f *modelfile.File) { f.Arrays[0].Name = "member-1/alpha" })
	damage("65 member models", func(f *modelfile.File) {
		var many []string
		for i := 0; i < 65; i++ {
			many = append(many, "null")
		}
		// 65 null documents, the real ones moved to an unknown key.
		i := strings.Index(string(f.Meta), `"member_models":[`)
		f.Meta = []byte(string(f.Meta)[:i] + `"member_models":[` + strings.Join(many, ",") + `],"was":[` + string(f.Meta)[i+len(`"member_models":[`):])
	})
}

// New refuses no members and members that do not agree.
func TestNewRefusesMismatch(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("an ensemble of no members")
	}
	a := members(t, data(t, 200, 4, true), 1)[0]
	b := members(t, data(t, 200, 4, false), 1)[0]
	if _, err := New([]*rfm.Model{a, b}); err == nil || !strings.Contains(err.Error(), "member 1") {
		t.Errorf("a classifier and a regression: err %v", err)
	}
}

// Validate scores the mean and the best member on held-out scores: here
// the second member is confidently wrong on two rows the first gets right
// (the mean 2 of 4 against 3 of 4); the validation is saved with the file;
// bad shapes and regression are refused.
func TestValidate(t *testing.T) {
	ms := members(t, data(t, 200, 3, true), 2)
	e, err := New(ms)
	if err != nil {
		t.Fatal(err)
	}
	labels := []int{0, 1, 2, 0}
	s0 := []float64{0.6, 0.3, 0.1, 0.2, 0.7, 0.1, 0.5, 0.1, 0.4, 0.4, 0.35, 0.25}
	s1 := []float64{0.1, 0.8, 0.1, 0.1, 0.8, 0.1, 0.1, 0.1, 0.8, 0.1, 0.8, 0.1}
	if err := e.Validate([][]float64{s0, s1}, labels, true); err != nil {
		t.Fatal(err)
	}
	v := e.Validation
	if v.Rows != 4 || !v.Folds || v.Accuracy != 0.5 || v.BestAccuracy != 0.75 || v.MeanOnly != 1 || v.BestOnly != 2 || v.BelowFloor() {
		t.Fatalf("validation %+v, want the mean 2/4 (1 row alone) against the best 3/4 (2 alone)", v)
	}
	v.Floor = 0.6
	if !v.BelowFloor() {
		t.Fatalf("a mean below the floor: %+v", v)
	}
	wantBest := -(math.Log(0.6) + math.Log(0.7) + math.Log(0.4) + math.Log(0.4)) / 4
	if math.Abs(v.BestLogLoss-wantBest) > 1e-9 {
		t.Fatalf("best member's log-loss %g, want %g", v.BestLogLoss, wantBest)
	}
	if err := e.Validate([][]float64{s1, s0}, labels, false); err != nil || e.Validation.BestAccuracy != 0.5 || e.Validation.Floor != 0 {
		t.Fatalf("the mean against the other member: %+v, %v", e.Validation, err)
	}
	var nilV *Validation
	if nilV.BelowFloor() {
		t.Error("no validation is below the floor")
	}
	back, _ := readBack(t, modeltest.Encode(t, e, nil))
	if back.Validation == nil || *back.Validation != *e.Validation {
		t.Fatalf("validation read back %+v, want %+v", back.Validation, e.Validation)
	}
	if err := e.Validate([][]float64{s0}, labels, true); err == nil {
		t.Error("scores of one member for two were taken")
	}
	if err := e.Validate([][]float64{s0, s1[:9]}, labels, true); err == nil {
		t.Error("short scores were taken")
	}
	r, err := New(members(t, data(t, 200, 3, false), 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Validate([][]float64{{1}, {1}}, []int{0}, false); err == nil {
		t.Error("a regression ensemble was validated")
	}
}

// readBack reads an ensemble model file written by modeltest.Encode.
func readBack(t *testing.T, b []byte) (*Model, map[string]json.RawMessage) {
	t.Helper()
	g, err := modelfile.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	m, extra, err := FromFile(g)
	if err != nil {
		t.Fatal(err)
	}
	return m, extra
}
