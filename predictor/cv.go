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

// FoldError is the failure of one fold of CrossValidate.
type FoldError struct {
	Fold, Folds int // 1-based
	TrainRows   int
	Err         error
}

func (e *FoldError) Error() string { return fmt.Sprintf("fold %d of %d: %v", e.Fold, e.Folds, e.Err) }

func (e *FoldError) Unwrap() error { return e.Err }

// CrossValidate is a k-fold cross-validation of cfg on the table t, whose
// pipeline p fixes the input columns and scaling: the rows are split by
// rfm.KFold (stratified by labels, nil for a regression; seeded by
// cfg.Seed), the memory of the largest fold's fit is checked, and FitFold
// fits and scores each fold in turn (opt.Progress is replaced: progress,
// when set, is told how fold k's fit goes). name names the table in
// errors; a fold that fails is a *FoldError.
func CrossValidate(ctx context.Context, t *dataset.Table, name string, tg *dataset.Target, p *dataset.Pipeline, labels []int, cfg rfm.Config, opt fit.Options, k int, progress func(k int, pr rfm.Progress)) ([]*Fold, error) {
	trains, tests := rfm.KFold(t.NRows(), labels, k, cfg.Seed)
	largest := 0
	for _, tr := range trains {
		largest = max(largest, len(tr))
	}
	if _, _, err := fit.Prepare(cfg, FitShape(largest, p.Width(), tg)); err != nil {
		return nil, err
	}
	var folds []*Fold
	for i := range k {
		if progress != nil {
			opt.Progress = func(pr rfm.Progress) { progress(i, pr) }
		}
		fd, err := FitFold(ctx, t, name, tg, p.InputColumns(), p.Scaling.Name(), cfg, opt, trains[i], tests[i])
		if err != nil {
			return nil, &FoldError{Fold: i + 1, Folds: k, TrainRows: len(trains[i]), Err: err}
		}
		folds = append(folds, fd)
	}
	return folds, nil
}
