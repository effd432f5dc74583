package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/internal/cli"
)

type evalOptions struct {
	model  string
	data   string
	plots  string
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
	// Figures lists the files --plots wrote.
	Figures []string `json:"figures,omitempty"`
}

func cmdEval(e *env, args []string) error {
	var o evalOptions
	f := helpFlagSet("eval", "rfm eval --model FILE --data FILE [flags]")
	registerScoringInput(f, &o.model, &o.data, "with the model's input columns and its target column", &o.read)
	f.Section("Output and resources")
	f.String(&o.plots, "plots", "", "write PNG figures into `DIR`: the reliability diagram of a classifier (accuracy against confidence, per bin)")
	o.common.register(f, true)
	if err := parseDataArgs(e, f, args, &o.data, "the table to score the model on", &o.common); err != nil {
		return err
	}
	lm, err := loadModel(o.model, true)
	if err != nil {
		return err
	}
	if o.plots != "" && !lm.Target.IsClassification() {
		return usagef("--plots: the figures of eval are for classifiers (a reliability diagram); %s is a regression model", o.model)
	}
	opt, err := rowReadOptions(lm.Pipeline, lm.Target, true, &o.read)
	if err != nil {
		return err
	}
	roles := cli.InputRoles(lm.Pipeline)
	roles[lm.Target.Name] = "target column"
	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	report, rows, err := cli.Evaluate(e.ctx, lm, o.data, cli.PredictOptions{Read: opt, Roles: roles, PieceBytes: pieceBytes,
		Started: func(first, last int) { bar.Update(0, fmt.Sprintf("score rows %d-%d", first, last)) }})
	bar.Abort()
	if err != nil {
		return err
	}
	res := evalJSON{Model: o.model, Data: o.data, Task: lm.Target.Task, Target: lm.Target.Name, Rows: rows, Metrics: report}
	if o.plots != "" {
		if res.Figures, err = describe.EvalFigures(o.plots, report); err != nil {
			return err
		}
	}
	if o.common.json {
		return writeJSON(e.stdout, res)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "model  %s\ndata   %s (%d rows)\ntask   %s\n", o.model, o.data, res.Rows, describeTarget(lm.Target))
	for _, fig := range res.Figures {
		fmt.Fprintf(&b, "figure %s\n", fig)
	}
	b.WriteString("\n")
	if _, err := io.WriteString(e.stdout, b.String()); err != nil {
		return err
	}
	return report.(interface{ WriteText(io.Writer) error }).WriteText(e.stdout)
}
