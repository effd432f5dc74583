package predictor

import (
	"context"
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/fit"
	"github.com/rfmkit/rfm/metrics"
)

// Fold is one fold of a cross-validation: its sizes, what the fit chose,
// and the scores of its held-out rows.
type Fold struct {
	TrainRows, TestRows int
	BestRound           int // an RFM's round (0 for a tree)
	Leaves              int // a tree's leaves (0 for an RFM)
	// Report is a *metrics.Classification or a *metrics.Regression of the
	// held-out rows.
	Report any
}

// FitFold is one fold of a k-fold cross-validation of the table t (see
// rfm.KFold for the rows): the column pipeline (features, scaled by
// scaling) and a model of cfg (fit.Fit with opt) are fitted on the rows
// train only, and the rows test are scored, as rfm cv does. name names
// the table in errors.
func FitFold(ctx context.Context, t *dataset.Table, name string, tg *dataset.Target, features []string, scaling dataset.Scaling, cfg rfm.Config, opt fit.Options, train, test []int) (*Fold, error) {
	trT, err := t.SelectRows(train)
	if err != nil {
		return nil, err
	}
	teT, err := t.SelectRows(test)
	if err != nil {
		return nil, err
	}
	p, err := dataset.FitPipelineScaled(trT, features, scaling)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	trDS, err := Encode(trT, p, tg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	teDS, err := Encode(teT, p, tg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	fd := &Fold{TrainRows: trDS.N, TestRows: teDS.N}
	fr, err := fit.Fit(ctx, cfg, trDS, opt)
	if err != nil {
		return nil, err
	}
	model := fr.Model
	if t, ok := model.(interface{ NumLeaves() int }); ok {
		fd.Leaves = t.NumLeaves()
	}
	if r, ok := model.(rfm.Rounded); ok {
		_, fd.BestRound = r.Rounds()
	}
	scores, err := model.Predict(ctx, teDS.X, teDS.N)
	if err != nil {
		return nil, err
	}
	var yTrue []float64
	if !tg.IsClassification() {
		yTrue = TrueValues(tg, teT, teDS.Y)
	}
	h := model.ModelHeader()
	if fd.Report, err = Score(tg, h.Calibration, teDS.Labels, yTrue, scores, teDS.N, h.Outputs); err != nil {
		return nil, err
	}
	return fd, nil
}

// TrueValues are the regression target's values of the rows of t: its
// column as read when it is numeric, else the standardized values yStd
// mapped back.
func TrueValues(tg *dataset.Target, t *dataset.Table, yStd []float64) []float64 {
	if col, ok := t.Column(tg.Name); ok && col.Kind == dataset.Numeric {
		return col.Num
	}
	return tg.Unstandardize(yStd)
}

// Score compares model outputs (n × c scores) with the true targets: the
// encoded labels of a classifier (probabilities by the model's
// calibration cal, nil for none), the values of a regression. It returns
// a *metrics.Classification or a *metrics.Regression.
func Score(tg *dataset.Target, cal *rfm.Calibration, labels []int, yTrue, scores []float64, n, c int) (any, error) {
	if tg.IsClassification() {
		cls, prob := Classify(cal, scores, n, c)
		return metrics.EvaluateClassification(labels, cls, prob, c, tg.Classes)
	}
	return metrics.EvaluateRegression(yTrue, tg.Unstandardize(scores), 1)
}
