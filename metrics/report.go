package metrics

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Classification holds every classification metric of one evaluation. It is
// what `rfm eval --json` prints. Metrics that need probabilities, or that are
// undefined on this input (AUC with one class in yTrue), are null in JSON.
type Classification struct {
	N       int      `json:"n"`
	Classes int      `json:"classes"`
	Labels  []string `json:"labels,omitempty"`

	Accuracy float64 `json:"accuracy"`
	// LogLoss is nil when no probabilities were given; so are Brier (the
	// multi-class Brier score) and ECE (expected calibration error over
	// ECEBins bins of the top probability, see Reliability).
	LogLoss *float64 `json:"log_loss"`
	Brier   *float64 `json:"brier"`
	ECE     *float64 `json:"ece"`
	// Reliability is the diagram behind ECE (nil without probabilities).
	Reliability []ReliabilityBin `json:"reliability,omitempty"`
	// AUC is the macro one-vs-rest AUC (MacroAUC); nil when no probabilities
	// were given or fewer than two classes occur in yTrue.
	AUC *float64 `json:"auc"`
	// AUCSkipped lists the classes absent from yTrue, left out of AUC.
	AUCSkipped []int `json:"auc_skipped_classes,omitempty"`

	// ConfusionMatrix is c×c, rows = true class, columns = predicted class.
	ConfusionMatrix [][]int `json:"confusion_matrix"`
}

// EvaluateClassification computes a Classification report. prob, the
// row-major n×c class probabilities, may be nil; then LogLoss and AUC are nil.
// yPred may be nil when prob is given: the predictions are then the row-wise
// argmax of prob. labels names the classes (len c) or is nil.
func EvaluateClassification(yTrue, yPred []int, prob []float64, c int, labels []string) (*Classification, error) {
	if c < 1 {
		return nil, fmt.Errorf("evaluate classification: number of classes c = %d, want ≥ 1", c)
	}
	if labels != nil && len(labels) != c {
		return nil, fmt.Errorf("evaluate classification: %d labels for %d classes", len(labels), c)
	}
	if yPred == nil {
		if prob == nil {
			return nil, errors.New("evaluate classification: need predictions or probabilities, got neither")
		}
		if err := checkProb(yTrue, prob, c); err != nil {
			return nil, fmt.Errorf("evaluate classification: %w", err)
		}
		var err error
		if yPred, err = Argmax(prob, c); err != nil {
			return nil, fmt.Errorf("evaluate classification: %w", err)
		}
	}
	r := &Classification{N: len(yTrue), Classes: c, Labels: labels}
	var err error
	if r.ConfusionMatrix, err = ConfusionMatrix(yTrue, yPred, c); err != nil {
		return nil, fmt.Errorf("evaluate classification: %w", err)
	}
	// Accuracy from the confusion matrix's diagonal would do, but calling the
	// public function keeps the two definitions from drifting apart.
	if r.Accuracy, err = Accuracy(yTrue, yPred); err != nil {
		return nil, fmt.Errorf("evaluate classification: %w", err)
	}
	if prob == nil {
		return r, nil
	}
	ll, err := LogLoss(yTrue, prob, c)
	if err != nil {
		return nil, fmt.Errorf("evaluate classification: %w", err)
	}
	r.LogLoss = &ll
	br, err := Brier(yTrue, prob, c)
	if err != nil {
		return nil, fmt.Errorf("evaluate classification: %w", err)
	}
	r.Brier = &br
	bins, ece, err := Reliability(yTrue, prob, c, ECEBins)
	if err != nil {
		return nil, fmt.Errorf("evaluate classification: %w", err)
	}
	r.Reliability, r.ECE = bins, &ece
	if c >= 2 {
		per, err := OneVsRestAUC(yTrue, prob, c)
		switch {
		case errors.Is(err, ErrUndefined):
			// Leave AUC nil: a single-class test split has no ROC curve.
		case err != nil:
			return nil, fmt.Errorf("evaluate classification: %w", err)
		default:
			sum, m := 0.0, 0
			for k, a := range per {
				if math.IsNaN(a) {
					r.AUCSkipped = append(r.AUCSkipped, k)
					continue
				}
				sum += a
				m++
			}
			auc := sum / float64(m)
			r.AUC = &auc
		}
	}
	return r, nil
}

// WriteText writes the report for people: one metric per line, then the
// confusion matrix.
func (r *Classification) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "samples   %d\nclasses   %d\naccuracy  %.4f\n", r.N, r.Classes, r.Accuracy)
	fmt.Fprintf(&b, "log loss  %s\n", optional(r.LogLoss))
	fmt.Fprintf(&b, "brier     %s\n", optional(r.Brier))
	fmt.Fprintf(&b, "ece       %s\n", optional(r.ECE))
	fmt.Fprintf(&b, "auc       %s", optional(r.AUC))
	if len(r.AUCSkipped) > 0 {
		fmt.Fprintf(&b, " (macro one-vs-rest; classes absent from the truth skipped: %v)", r.AUCSkipped)
	}
	b.WriteString("\n\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write classification report: %w", err)
	}
	return WriteConfusion(w, r.ConfusionMatrix, r.Labels)
}

// Regression holds every regression metric of one evaluation, for
// `rfm eval --json`. R2 is null when every target column is constant.
type Regression struct {
	N       int `json:"n"`
	Outputs int `json:"outputs"`

	MSE  float64 `json:"mse"`
	RMSE float64 `json:"rmse"`
	MAE  float64 `json:"mae"`
	// R2 is the uniform average over non-constant outputs (R2Multi).
	R2 *float64 `json:"r2"`
	// R2PerOutput is set only when Outputs > 1; constant outputs are null.
	R2PerOutput []*float64 `json:"r2_per_output,omitempty"`
}

// EvaluateRegression computes a Regression report for row-major n×c targets
// and predictions (c = 1 for a single output).
func EvaluateRegression(yTrue, yPred []float64, c int) (*Regression, error) {
	if c < 1 || len(yTrue)%c != 0 {
		return nil, fmt.Errorf("evaluate regression: %d values is not a multiple of c = %d outputs", len(yTrue), c)
	}
	r := &Regression{N: len(yTrue) / c, Outputs: c}
	var err error
	if r.MSE, err = MSE(yTrue, yPred); err != nil {
		return nil, fmt.Errorf("evaluate regression: %w", err)
	}
	r.RMSE = math.Sqrt(r.MSE)
	if r.MAE, err = MAE(yTrue, yPred); err != nil {
		return nil, fmt.Errorf("evaluate regression: %w", err)
	}
	per, err := R2Outputs(yTrue, yPred, c)
	if err != nil {
		return nil, fmt.Errorf("evaluate regression: %w", err)
	}
	sum, m := 0.0, 0
	for _, v := range per {
		if !math.IsNaN(v) {
			sum += v
			m++
		}
	}
	if m > 0 {
		avg := sum / float64(m)
		r.R2 = &avg
	}
	if c > 1 {
		r.R2PerOutput = make([]*float64, c)
		for k, v := range per {
			if !math.IsNaN(v) {
				r.R2PerOutput[k] = &per[k]
			}
		}
	}
	return r, nil
}

// WriteText writes the report for people, one metric per line.
func (r *Regression) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "samples  %d\noutputs  %d\nmse      %.6g\nrmse     %.6g\nmae      %.6g\nr2       %s\n",
		r.N, r.Outputs, r.MSE, r.RMSE, r.MAE, optional(r.R2))
	for k, v := range r.R2PerOutput {
		fmt.Fprintf(&b, "r2[%d]    %s\n", k, optional(v))
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write regression report: %w", err)
	}
	return nil
}

func optional(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", *p)
}
