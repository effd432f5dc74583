package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/metrics"
)

type evalOptions struct {
	model  string
	data   string
	read   readFlags
	common commonFlags
}

// evalJSON is what 'rfm eval --json' prints. Metrics is a
// metrics.Classification (accuracy, log_loss, auc, confusion_matrix, ...)
// or a metrics.Regression (mse, rmse, mae, r2).
type evalJSON struct {
	Model   string `json:"model"`
	Data    string `json:"data"`
	Task    string `json:"task"`
	Target  string `json:"target"`
	Rows    int    `json:"rows"`
	Metrics any    `json:"metrics"`
}

func cmdEval(e *env, args []string) error {
	var o evalOptions
	f := newFlagSet("eval", "rfm eval --model FILE --data FILE [flags]",
		`Score a model on a table that has the target column.

Classification: accuracy, log-loss and macro one-vs-rest AUC of the predicted
probabilities, and the confusion matrix (rows = true class). Regression: MSE,
RMSE, MAE and R². A class that the model never saw in training is an error
naming its line.`,
		`rfm eval --model churn.rfm --data test.csv
rfm eval --model price.rfm --data test.parquet --json`)
	registerScoringInput(f, &o.model, &o.data, "with the model's input columns and its target column", &o.read)
	f.Section("Output and resources")
	o.common.register(f, true)
	if err := parseDataArgs(e, f, args, &o.data, "the table to score the model on", &o.common); err != nil {
		return err
	}
	lm, err := loadModel(o.model, true)
	if err != nil {
		return err
	}
	opt, err := rowReadOptions(lm.pipeline, lm.target, true, &o.read)
	if err != nil {
		return err
	}
	roles := inputRoles(lm.pipeline)
	roles[lm.target.Name] = "target column"
	report, rows, err := evaluate(e, lm, o.data, opt, roles, o.common.quiet)
	if err != nil {
		return err
	}
	res := evalJSON{Model: o.model, Data: o.data, Task: lm.target.Task, Target: lm.target.Name, Rows: rows, Metrics: report}
	if o.common.json {
		return writeJSON(e.stdout, res)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "model  %s\ndata   %s (%d rows)\ntask   %s\n\n", o.model, o.data, res.Rows, describeTarget(lm.target))
	if _, err := io.WriteString(e.stdout, b.String()); err != nil {
		return err
	}
	return report.(interface{ WriteText(io.Writer) error }).WriteText(e.stdout)
}

// evaluate reads the table at path a piece at a time (see readPieces),
// predicts its rows and keeps only the outputs and true targets, then
// scores them: memory grows with rows × outputs, not with the table. It
// returns a *metrics.Classification or *metrics.Regression and the rows.
func evaluate(e *env, lm *loadedModel, path string, opt dataset.ReadOptions, roles map[string]string, quiet bool) (any, int, error) {
	bar := newProgress(e.stderr, e.tty(), quiet)
	defer bar.Abort()
	tg := lm.target
	var (
		labels        []int
		yTrue, scores []float64
		n             int
	)
	err := readPieces(e.ctx, path, opt, roles, func(t *dataset.Table) error {
		if err := planPredict(lm, t.NRows(), 0); err != nil {
			return err
		}
		ds, err := encodeRows(t, path, lm.pipeline, tg)
		if err != nil {
			return err
		}
		s, err := predictRows(e.ctx, lm, ds.X, ds.N, func(r0, r1 int) {
			bar.Update(0, fmt.Sprintf("score rows %d-%d", n+r0+1, n+r1))
		})
		if err != nil {
			return err
		}
		scores = append(scores, s...)
		if tg.IsClassification() {
			labels = append(labels, ds.Labels...)
		} else {
			yTrue = append(yTrue, trueValues(tg, t, ds.Y)...)
		}
		n += ds.N
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	report, err := score(tg, labels, yTrue, scores, n, lm.outputs())
	return report, n, err
}

// trueValues are the regression targets of table t: the values as read
// (no round trip through the scaling), or yStd unstandardized.
func trueValues(tg *dataset.Target, t *dataset.Table, yStd []float64) []float64 {
	if col, ok := t.Column(tg.Name); ok && col.Kind == dataset.Numeric {
		return col.Num
	}
	return tg.Unstandardize(yStd)
}

// score compares model outputs with the true targets: the encoded labels
// of a classifier, the values of a regression.
func score(tg *dataset.Target, labels []int, yTrue, scores []float64, n, c int) (any, error) {
	if tg.IsClassification() {
		cls, prob := classify(scores, n, c)
		return metrics.EvaluateClassification(labels, cls, prob, c, tg.Classes)
	}
	return metrics.EvaluateRegression(yTrue, tg.Unstandardize(scores), 1)
}
