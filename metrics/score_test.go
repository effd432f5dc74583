package metrics

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestMetricDirections(t *testing.T) {
	higher := map[Metric]bool{MetricAccuracy: true, MetricAUC: true, MetricR2: true}
	for _, m := range Metrics {
		if got := m.HigherIsBetter(); got != higher[m] {
			t.Errorf("%s.HigherIsBetter() = %v, want %v", m, got, higher[m])
		}
		lo, hi := 0.25, 0.75
		want := hi
		if !higher[m] {
			want = lo
		}
		other := lo + hi - want
		if !m.Better(want, other) || m.Better(other, want) {
			t.Errorf("%s: Better(%g, %g) = %v, Better(%g, %g) = %v", m, want, other, m.Better(want, other), other, want, m.Better(other, want))
		}
		if w := m.Worst(); m.Better(w, 0) || !m.Better(0, w) || m.Better(w, w) {
			t.Errorf("%s: Worst() = %g is not beaten by 0", m, w)
		}
	}
}

func TestMetricTiesAreNotBetter(t *testing.T) {
	for _, m := range Metrics {
		for _, v := range []float64{0, 0.5, -3, math.Inf(1), math.Inf(-1)} {
			if m.Better(v, v) {
				t.Errorf("%s.Better(%g, %g) = true: a tie must not be better", m, v, v)
			}
			if c, err := m.Compare(v, v); c != 0 || err != nil {
				t.Errorf("%s.Compare(%g, %g) = %d, %v", m, v, v, c, err)
			}
		}
	}
	// The first of equal best scores is kept.
	if i, err := MetricAccuracy.Best([]float64{0.5, 0.9, 0.2, 0.9}); i != 1 || err != nil {
		t.Errorf("accuracy Best = %d, %v; want 1 (first of the tied maxima)", i, err)
	}
	if i, err := MetricMSE.Best([]float64{0.5, 0.1, 0.2, 0.1}); i != 1 || err != nil {
		t.Errorf("mse Best = %d, %v; want 1 (first of the tied minima)", i, err)
	}
}

func TestMetricNaN(t *testing.T) {
	nan := math.NaN()
	for _, m := range []Metric{MetricAccuracy, MetricLoss} {
		if m.Better(nan, 1) || m.Better(1, nan) || m.Better(nan, nan) {
			t.Errorf("%s: a NaN must compare as neither better nor worse", m)
		}
		if _, err := m.Compare(nan, 1); !errors.Is(err, ErrNaN) {
			t.Errorf("%s.Compare(NaN, 1): err = %v, want ErrNaN", m, err)
		}
		if err := m.Check(nan); !errors.Is(err, ErrNaN) || !strings.Contains(err.Error(), string(m)) {
			t.Errorf("%s.Check(NaN) = %v, want ErrNaN naming the metric", m, err)
		}
		if err := m.Check(0.5); err != nil {
			t.Errorf("%s.Check(0.5) = %v", m, err)
		}
		_, err := m.Best([]float64{0.1, nan, 0.3})
		if !errors.Is(err, ErrNaN) || !strings.Contains(err.Error(), "score 1") {
			t.Errorf("%s.Best with a NaN: err = %v, want ErrNaN naming score 1", m, err)
		}
	}
	if _, err := MetricMSE.Best(nil); err == nil {
		t.Error("Best of no scores: no error")
	}
}

func TestOrderBetter(t *testing.T) {
	o := Order{MetricAccuracy, MetricLoss}
	cases := []struct {
		a, b []float64
		want bool
	}{
		{[]float64{0.9, 5}, []float64{0.8, 1}, true},  // accuracy decides
		{[]float64{0.8, 1}, []float64{0.9, 5}, false}, // accuracy decides
		{[]float64{0.9, 1}, []float64{0.9, 2}, true},  // tie: the lower loss
		{[]float64{0.9, 2}, []float64{0.9, 1}, false},
		{[]float64{0.9, 1}, []float64{0.9, 1}, false}, // a full tie is not better
		{[]float64{math.NaN(), 0}, []float64{0.5, 9}, false},
		{[]float64{0.5, 9}, []float64{math.NaN(), 0}, false},
	}
	for _, c := range cases {
		if got := o.Better(c.a, c.b); got != c.want {
			t.Errorf("Better(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestParseMetric(t *testing.T) {
	for name, want := range map[string]Metric{"accuracy": MetricAccuracy, " MSE ": MetricMSE, "logloss": MetricLogLoss,
		"log-loss": MetricLogLoss, "r²": MetricR2, "R2": MetricR2, "auc": MetricAUC, "loss": MetricLoss} {
		m, err := ParseMetric(name)
		if err != nil || m != want {
			t.Errorf("ParseMetric(%q) = %q, %v; want %q", name, m, err, want)
		}
	}
	_, err := ParseMetric("f1")
	if err == nil || !strings.Contains(err.Error(), `"f1"`) || !strings.Contains(err.Error(), "accuracy") {
		t.Errorf("ParseMetric(f1): err = %v, want the name and the known metrics", err)
	}
	if Metric("f1").Known() || !MetricRMSE.Known() {
		t.Error("Known is wrong")
	}
}

func TestMetricScores(t *testing.T) {
	labels := []int{0, 1, 1}
	prob := []float64{0.8, 0.2, 0.3, 0.7, 0.6, 0.4}
	acc, err := MetricAccuracy.Classification(labels, prob, 2)
	if err != nil || acc != 2.0/3 {
		t.Errorf("accuracy = %g, %v; want 2/3", acc, err)
	}
	ll, _ := LogLoss(labels, prob, 2)
	if v, err := MetricLogLoss.Classification(labels, prob, 2); err != nil || v != ll {
		t.Errorf("log-loss = %g, %v; want %g", v, err, ll)
	}
	if _, err := MetricMSE.Classification(labels, prob, 2); err == nil {
		t.Error("mse of a classification: no error")
	}
	if _, err := MetricAccuracy.Classification(labels, prob[:4], 2); err == nil {
		t.Error("accuracy of 4 scores for 3 rows: no error")
	}
	y, p := []float64{1, 2, 3, 4}, []float64{1, 2, 3, 6}
	if v, err := MetricMSE.Regression(y, p, 1); err != nil || v != 1 {
		t.Errorf("mse = %g, %v; want 1", v, err)
	}
	if v, err := MetricRMSE.Regression(y, p, 1); err != nil || v != 1 {
		t.Errorf("rmse = %g, %v; want 1", v, err)
	}
	if v, err := MetricMAE.Regression(y, p, 1); err != nil || v != 0.5 {
		t.Errorf("mae = %g, %v; want 0.5", v, err)
	}
	if v, err := MetricR2.Regression(y, p, 1); err != nil || math.Abs(v-0.2) > 1e-12 {
		t.Errorf("r2 = %g, %v; want 0.2", v, err)
	}
	if _, err := MetricAccuracy.Regression(y, p, 1); err == nil {
		t.Error("accuracy of a regression: no error")
	}
	if _, err := MetricMSE.Regression(y, []float64{1, 2, math.NaN(), 4}, 1); err == nil {
		t.Error("mse of a NaN prediction: no error")
	}
}

func TestCorrect(t *testing.T) {
	if n, err := Correct([]int{0, 1, 2, 1}, []int{0, 2, 2, 1}); n != 3 || err != nil {
		t.Errorf("Correct = %d, %v; want 3", n, err)
	}
	if _, err := Correct([]int{0}, []int{0, 1}); err == nil {
		t.Error("Correct of unequal lengths: no error")
	}
}
