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
	t, err := readRows(e.ctx, o.data, opt, roles)
	if err != nil {
		return err
	}
	if err := planPredict(lm, t.NRows(), 0); err != nil {
		return err
	}
	report, err := evaluate(e, lm, t, o.data, o.common.quiet)
	if err != nil {
		return err
	}
	res := evalJSON{Model: o.model, Data: o.data, Task: lm.target.Task, Target: lm.target.Name, Rows: t.NRows(), Metrics: report}
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

// evaluate predicts the rows of t and scores them against its target
// column. It returns a *metrics.Classification or *metrics.Regression.
func evaluate(e *env, lm *loadedModel, t *dataset.Table, path string, quiet bool) (any, error) {
	ds, err := encodeRows(t, path, lm.pipeline, lm.target)
	if err != nil {
		return nil, err
	}
	scores, err := predictChunked(e, lm, ds.X, ds.N, quiet, "score")
	if err != nil {
		return nil, err
	}
	return score(lm.target, t, ds.Labels, ds.Y, scores, ds.N, lm.outputs())
}

// score compares model outputs with the true targets of table t (whose
// encoded labels or standardized values are given).
func score(tg *dataset.Target, t *dataset.Table, labels []int, yStd, scores []float64, n, c int) (any, error) {
	if tg.IsClassification() {
		cls, prob := classify(scores, n, c)
		return metrics.EvaluateClassification(labels, cls, prob, c, tg.Classes)
	}
	yTrue := tg.Unstandardize(yStd)
	if col, ok := t.Column(tg.Name); ok && col.Kind == dataset.Numeric {
		yTrue = col.Num // the values as read, without a round trip through the scaling
	}
	return metrics.EvaluateRegression(yTrue, tg.Unstandardize(scores), 1)
}
