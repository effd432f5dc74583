package predictor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
)

// Predictions are a model's answers for n rows.
type Predictions struct {
	N int
	// Scores are the model's raw outputs, n × outputs row-major: class
	// scores, or the standardized regression value.
	Scores []float64
	// Classification: the model's class labels, and per row the class
	// (an index into Classes: the highest score), its label, and the
	// probabilities (n × len(Classes) row-major; calibrated when the model
	// is, else the scores clipped and renormalized).
	Classes []string
	Class   []int
	Labels  []string
	Proba   []float64
	// Regression: the value per row, in the target's units.
	Values []float64
}

// ReadOptions are the options for reading rows to predict: the model's
// column kinds (so "007" stays a level, and text in a numeric column is an
// error with its line), missing tokens and header setting.
func (m *Model) ReadOptions() (dataset.ReadOptions, error) {
	if err := m.NeedPipeline(); err != nil {
		return dataset.ReadOptions{}, err
	}
	return m.Pipeline.ReadOptions(), nil
}

// ReadTable reads a table of rows to predict with the model's read
// options; format is one of dataset.ReadOptions' formats, "" to detect it
// (from name's extension, else the first bytes). name is used in errors.
// Columns that are not inputs are read (and ignored by Predict).
func (m *Model) ReadTable(ctx context.Context, r io.Reader, name, format string) (*dataset.Table, error) {
	opt, err := m.ReadOptions()
	if err != nil {
		return nil, err
	}
	opt.Format = format
	t, err := dataset.ReadContext(ctx, r, name, opt)
	return t, m.inputError(err)
}

// inputError says "the model's input column" for a column that the read
// options force to a kind and the file lacks.
func (m *Model) inputError(err error) error {
	var nf *dataset.ColumnNotFoundError
	if errors.As(err, &nf) && slices.Contains(m.Pipeline.InputColumns(), nf.Name) {
		e := *nf
		e.Role = "the model's input column"
		return &e
	}
	return err
}

// Predict predicts the rows of t, whose input columns are matched by name
// (other columns are ignored).
func (m *Model) Predict(ctx context.Context, t *dataset.Table) (*Predictions, error) {
	if err := m.NeedPipeline(); err != nil {
		return nil, err
	}
	x, n, _, err := m.Pipeline.Transform(t)
	if err != nil {
		return nil, err
	}
	scores, err := m.PredictFeatures(ctx, x, n, nil)
	if err != nil {
		return nil, err
	}
	return m.Decode(scores, n)
}

// PredictRecords predicts rows given as records keyed by column name, as
// a JSON object per row decodes (see dataset.Pipeline.RecordsTable: every
// input present, nothing else, nil for missing); source names them in
// errors ("" for "request").
func (m *Model) PredictRecords(ctx context.Context, source string, recs []map[string]any) (*Predictions, error) {
	if err := m.NeedPipeline(); err != nil {
		return nil, err
	}
	t, err := m.Pipeline.RecordsTable(source, recs)
	if err != nil {
		return nil, err
	}
	return m.Predict(ctx, t)
}

// PredictRows predicts rows given as column names and rows of values (see
// dataset.Pipeline.RowsTable).
func (m *Model) PredictRows(ctx context.Context, source string, columns []string, rows [][]any) (*Predictions, error) {
	if err := m.NeedPipeline(); err != nil {
		return nil, err
	}
	t, err := m.Pipeline.RowsTable(source, columns, rows)
	if err != nil {
		return nil, err
	}
	return m.Predict(ctx, t)
}

// Decode turns the raw outputs of n rows (from PredictFeatures) into
// classes and probabilities, or values in the target's units. Classes and
// probabilities come from the same scores, exactly as rfm.Model's
// PredictClass and PredictProba compute them.
func (m *Model) Decode(scores []float64, n int) (*Predictions, error) {
	c := m.Outputs()
	if len(scores) != n*c {
		return nil, fmt.Errorf("%s: %d scores are not %d rows of %d outputs", m.Name, len(scores), n, c)
	}
	p := &Predictions{N: n, Scores: scores}
	if m.Task() == rfm.Regression {
		if m.Target != nil {
			p.Values = m.Target.Unstandardize(scores)
		} else {
			p.Values = slices.Clone(scores)
		}
		return p, nil
	}
	p.Class, p.Proba = Classify(m.Calibration(), scores, n, c)
	if m.Target != nil {
		p.Classes = slices.Clone(m.Target.Classes)
		labels, err := m.Target.Labels(p.Class)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		p.Labels = labels
	}
	return p, nil
}

// Classify turns the class scores of n rows (n × c) into classes and
// probabilities in one pass, exactly as rfm.Model's PredictClass and
// PredictProba do: the argmax of the scores, and the calibration cal (nil:
// the scores clipped to [rfm.ProbEps, 1−rfm.ProbEps] and renormalized).
// Classes and probabilities from one kernel evaluation always agree.
func Classify(cal *rfm.Calibration, scores []float64, n, c int) (classes []int, proba []float64) {
	classes = rfm.Argmax(scores, n, c)
	proba = slices.Clone(scores[:n*c])
	cal.Apply(proba, n, c)
	return classes, proba
}

// PredictionHeader is the CSV header of prediction rows: "prediction",
// then with proba one "proba_<class>" column per class.
func (m *Model) PredictionHeader(proba bool) []string {
	h := []string{"prediction"}
	if proba {
		for _, c := range m.Target.Classes {
			h = append(h, "proba_"+c)
		}
	}
	return h
}

// Rows formats the predictions as text, a row each: the class label, and
// with proba the probability of each class; or the regression value.
// Numbers take the shortest form that reads back exactly (FormatFloat).
func (p *Predictions) Rows(proba bool) [][]string {
	rows := make([][]string, p.N)
	if p.Labels == nil {
		for i, v := range p.Values[:p.N] {
			rows[i] = []string{FormatFloat(v)}
		}
		return rows
	}
	c := len(p.Classes)
	for i := range rows {
		row := []string{p.Labels[i]}
		if proba {
			for _, v := range p.Proba[i*c : i*c+c] {
				row = append(row, FormatFloat(v))
			}
		}
		rows[i] = row
	}
	return rows
}

// FormatFloat writes the shortest text that parses back to exactly v.
func FormatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
