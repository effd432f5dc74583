package predictor

import (
	"context"
	"errors"
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/fit"
)

// Encode turns a table's rows into the engine's numeric dataset with a
// fitted pipeline and target encoding: the features by the pipeline, the
// target column by the encoding (class indices, or values).
func Encode(t *dataset.Table, p *dataset.Pipeline, tg *dataset.Target) (*rfm.Dataset, error) {
	x, n, d, err := p.Transform(t)
	if err != nil {
		return nil, err
	}
	col, err := t.TargetColumn(tg.Name)
	if err != nil {
		return nil, err
	}
	y, cls, err := tg.Encode(col)
	if err != nil {
		return nil, err
	}
	ds := &rfm.Dataset{X: x, N: n, D: d}
	if tg.IsClassification() {
		ds.Labels, ds.Classes = cls, tg.NumClasses()
	} else {
		ds.Y, ds.Outputs = y, 1
	}
	return ds, nil
}

// TrainOptions configure Train.
type TrainOptions struct {
	// Target names the column to predict (required).
	Target string
	// Task is dataset.TaskAuto (""), TaskClassification or
	// TaskRegression.
	Task string
	// Scaling of the numeric columns ("" is standard).
	Scaling dataset.Scaling
	// Config of the fit (the zero value means rfm.DefaultConfig()). Its
	// solver picks the model: a tree (rfm.SolverTree, or SolverAuto on
	// more rows than an exact solve takes), otherwise an exact or Nyström
	// RFM.
	Config *rfm.Config
}

// FitEncoding fits, on the training table t, the target encoding of the
// target column (for task: classification, regression or auto) and the
// feature pipeline of every other column, numeric columns scaled as
// scaling says.
func FitEncoding(t *dataset.Table, target, task string, scaling dataset.Scaling) (*dataset.Target, *dataset.Pipeline, error) {
	col, err := t.TargetColumn(target)
	if err != nil {
		return nil, nil, err
	}
	tg, err := dataset.FitTarget(col, task)
	if err != nil {
		return nil, nil, err
	}
	features := t.NamesExcept(target)
	if len(features) == 0 {
		return nil, nil, fmt.Errorf("predictor: no feature columns besides the target %q", target)
	}
	p, err := dataset.FitPipelineScaled(t, features, scaling)
	if err != nil {
		return nil, nil, err
	}
	return tg, p, nil
}

// Train fits a model on a table of raw rows: the target encoding and the
// column pipeline on its rows, then the RFM (or tree) on the encoded
// features, with a holdout of the rows for the round selection as
// Config says. The model predicts raw rows at once and is written with
// Model.WriteFile.
func Train(ctx context.Context, t *dataset.Table, opt TrainOptions) (*Model, error) {
	if opt.Target == "" {
		return nil, errors.New("predictor: Train needs the target column's name")
	}
	task := opt.Task
	if task == "" {
		task = dataset.TaskAuto
	}
	scaling := opt.Scaling
	if scaling == "" {
		scaling = dataset.ScaleStandard
	}
	tg, p, err := FitEncoding(t, opt.Target, task, scaling)
	if err != nil {
		return nil, err
	}
	ds, err := Encode(t, p, tg)
	if err != nil {
		return nil, err
	}
	cfg := rfm.DefaultConfig()
	if opt.Config != nil {
		cfg = *opt.Config
	}
	m := &Model{Name: "(trained)", Pipeline: p, Target: tg}
	res, err := fit.Fit(ctx, cfg, ds, fit.Options{})
	if err != nil {
		return nil, err
	}
	m.Fitted = res.Model
	if err := m.check(); err != nil {
		return nil, err
	}
	return m, nil
}

// WriteFile writes the model with its pipeline, target and training
// record to path (atomically; see the function WriteFile).
func (m *Model) WriteFile(ctx context.Context, path string) error {
	return WriteFile(ctx, path, m.Fitted, m.Pipeline, m.Target, m.Training, m.CreatedBy)
}
