package metrics

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Metric names a score and knows which way is better. Every place in the
// module that keeps "the best" of several scores (a round, a temperature,
// a grid point, a tuning trial) compares through a Metric, so the
// direction and the tie rule are written once.
type Metric string

// The metrics by name. Loss is the fitting loss measured on held-out rows
// (rfm's validation MSE of the scores, or the log-loss of a logistic fit):
// lower is better, as for every error; accuracy, AUC and R² are higher
// when better.
const (
	MetricAccuracy Metric = "accuracy"
	MetricLogLoss  Metric = "log-loss"
	MetricBrier    Metric = "brier"
	MetricAUC      Metric = "auc"
	MetricMSE      Metric = "mse"
	MetricRMSE     Metric = "rmse"
	MetricMAE      Metric = "mae"
	MetricR2       Metric = "r2"
	MetricLoss     Metric = "loss"
)

// Metrics lists every known metric, classification ones first.
var Metrics = []Metric{MetricAccuracy, MetricLogLoss, MetricBrier, MetricAUC, MetricMSE, MetricRMSE, MetricMAE, MetricR2, MetricLoss}

// ErrNaN is wrapped by the errors of Compare, Best and Check when a score
// is NaN: a NaN is neither better nor worse than a number, so a choice
// among scores with a NaN has no answer.
var ErrNaN = errors.New("score is NaN")

// ParseMetric returns the metric of a name (case and surrounding spaces
// ignored; "logloss", "log_loss" and "r²" are accepted as spellings of
// log-loss and r2).
func ParseMetric(name string) (Metric, error) {
	s := strings.ToLower(strings.TrimSpace(name))
	switch s {
	case "logloss", "log_loss":
		s = string(MetricLogLoss)
	case "r²":
		s = string(MetricR2)
	}
	for _, m := range Metrics {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = string(m)
	}
	return "", fmt.Errorf("unknown metric %q (want one of %s)", name, strings.Join(names, ", "))
}

// String is the metric's name.
func (m Metric) String() string { return string(m) }

// Known reports whether m is one of Metrics.
func (m Metric) Known() bool {
	for _, k := range Metrics {
		if k == m {
			return true
		}
	}
	return false
}

// HigherIsBetter reports the metric's direction: true for accuracy, AUC
// and R², false for the errors and losses.
func (m Metric) HigherIsBetter() bool {
	switch m {
	case MetricAccuracy, MetricAUC, MetricR2:
		return true
	}
	return false
}

// Better reports whether score a is strictly better than score b. A tie is
// not better, so a search that replaces its incumbent only when Better
// keeps the first of equal scores. A NaN on either side is not better (as
// Go's < and > compare): a NaN candidate never replaces an incumbent and a
// NaN incumbent is never replaced. Use Compare or Best where a NaN must be
// an error.
func (m Metric) Better(a, b float64) bool {
	if m.HigherIsBetter() {
		return a > b
	}
	return a < b
}

// Worst is the score every number beats (or ties): −Inf for a metric
// where higher is better, +Inf otherwise. It starts a search for the best.
func (m Metric) Worst() float64 {
	if m.HigherIsBetter() {
		return math.Inf(-1)
	}
	return math.Inf(1)
}

// Compare returns +1 when a is better than b, −1 when worse, 0 when they
// tie; a NaN is an error wrapping ErrNaN.
func (m Metric) Compare(a, b float64) (int, error) {
	if math.IsNaN(a) || math.IsNaN(b) {
		return 0, fmt.Errorf("comparing %s %v with %v: %w", m, a, b, ErrNaN)
	}
	switch {
	case m.Better(a, b):
		return 1, nil
	case m.Better(b, a):
		return -1, nil
	}
	return 0, nil
}

// Check returns an error wrapping ErrNaN, naming the metric, when v is NaN.
func (m Metric) Check(v float64) error {
	if math.IsNaN(v) {
		return fmt.Errorf("%s: %w", m, ErrNaN)
	}
	return nil
}

// Best returns the index of the best of scores, the first of equal best
// ones. An empty slice or a NaN score (its index named) is an error.
func (m Metric) Best(scores []float64) (int, error) {
	if len(scores) == 0 {
		return 0, fmt.Errorf("best %s: no scores", m)
	}
	best := 0
	for i, v := range scores {
		if math.IsNaN(v) {
			return 0, fmt.Errorf("best %s: score %d: %w", m, i, ErrNaN)
		}
		if m.Better(v, scores[best]) {
			best = i
		}
	}
	return best, nil
}

// Classification scores n×c class scores or probabilities prob of the true
// classes yTrue: accuracy (of the argmax), log-loss, Brier or macro AUC.
// Another metric is an error.
func (m Metric) Classification(yTrue []int, prob []float64, c int) (float64, error) {
	switch m {
	case MetricAccuracy:
		if c < 1 || len(prob) != len(yTrue)*c {
			return 0, fmt.Errorf("accuracy: %d scores for %d rows of %d classes", len(prob), len(yTrue), c)
		}
		return Accuracy(yTrue, ArgmaxRows(prob, len(yTrue), c))
	case MetricLogLoss:
		return LogLoss(yTrue, prob, c)
	case MetricBrier:
		return Brier(yTrue, prob, c)
	case MetricAUC:
		return MacroAUC(yTrue, prob, c)
	}
	return 0, fmt.Errorf("%s does not score a classification (accuracy, log-loss, brier or auc do)", m)
}

// Regression scores predictions yPred of yTrue (row-major n×c for several
// outputs; R² is then the mean over outputs): MSE, RMSE, MAE or R². Another
// metric is an error.
func (m Metric) Regression(yTrue, yPred []float64, c int) (float64, error) {
	switch m {
	case MetricMSE:
		return MSE(yTrue, yPred)
	case MetricRMSE:
		v, err := MSE(yTrue, yPred)
		return math.Sqrt(v), err
	case MetricMAE:
		return MAE(yTrue, yPred)
	case MetricR2:
		if c <= 1 {
			return R2(yTrue, yPred)
		}
		return R2Multi(yTrue, yPred, c)
	}
	return 0, fmt.Errorf("%s does not score a regression (mse, rmse, mae or r2 do)", m)
}

// Order ranks by its first metric and, on a tie, by the next: score
// vectors hold one value per metric, in the Order's order.
type Order []Metric

// Better reports whether score vector a is strictly better than b: better
// by the first metric on which they differ; equal on all is a tie (not
// better). A NaN differs from everything and is never better
// (Metric.Better), so the comparison stops at the first metric where
// either side is NaN, and neither side is better.
func (o Order) Better(a, b []float64) bool {
	for i, m := range o {
		if a[i] != b[i] {
			return m.Better(a[i], b[i])
		}
	}
	return false
}
