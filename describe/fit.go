package describe

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/metrics"
)

// FitData is what every fit report says of the data and the model file.
type FitData struct {
	Model    string   `json:"model"`
	Data     string   `json:"data"`
	Rows     int      `json:"rows"`
	Inputs   int      `json:"inputs"`
	Features int      `json:"features"`
	Target   string   `json:"target"`
	Task     string   `json:"task"`
	Classes  []string `json:"classes,omitempty"`
}

// NewFitData describes a fit of train, encoded by p and tg from the table
// data, saved to model.
func NewFitData(model, data string, train *rfm.Dataset, p *dataset.Pipeline, tg *dataset.Target) FitData {
	return FitData{Model: model, Data: data, Rows: train.N, Inputs: len(p.Inputs), Features: train.D,
		Target: tg.Name, Task: tg.Task, Classes: tg.Classes}
}

// Fit is the report of one RFM fit ('rfm fit --json').
type Fit struct {
	FitData
	Validation     string      `json:"validation"` // "holdout", "file" or "none"
	ValidationFile string      `json:"validation_file,omitempty"`
	ValidationRows int         `json:"validation_rows"`
	Config         rfm.Config  `json:"config"`
	History        []rfm.Round `json:"history"`
	BestRound      int         `json:"best_round"`
	Refitted       bool        `json:"refitted"`
	Selected       []string    `json:"selected_features,omitempty"`
	Note           string      `json:"note,omitempty"`
	Seconds        float64     `json:"seconds"`
}

// Validation says where the rounds were scored: the validation file, the
// seeded holdout, or none.
func Validation(v Fit, cfg rfm.Config, tg *dataset.Target) string {
	switch v.Validation {
	case "file":
		return fmt.Sprintf("%s (%d rows)", v.ValidationFile, v.ValidationRows)
	case "holdout":
		s := fmt.Sprintf("seeded holdout of %d rows (%g%% of the training rows, seed %d", v.ValidationRows, 100*cfg.ValFraction, cfg.Seed)
		if tg.IsClassification() {
			s += ", stratified"
		}
		return s + ")"
	}
	if cfg.ValFraction > 0 && v.ValidationFile == "" {
		return "none: the holdout would have no rows (see the note); every round is kept in turn and the last one wins"
	}
	return "none: every round is kept in turn and the last one wins"
}

// WriteFit prints a fit's report: the data, target, validation and model,
// the per-round table and the kept round.
func WriteFit(w io.Writer, r *Fit, m *rfm.Model, tg *dataset.Target) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "data\t%s: %d rows, %d input columns → %d features\n", r.Data, r.Rows, r.Inputs, r.Features)
	fmt.Fprintf(tw, "target\t%s\n", Target(tg))
	fmt.Fprintf(tw, "validation\t%s\n", Validation(*r, r.Config, tg))
	fmt.Fprintf(tw, "model\t%s\n", Config(r.Config))
	tw.Flush()
	b.WriteString("\n")
	WriteHistory(&b, m.History, m.BestRound, m.Task, r.Validation != "none")
	b.WriteString("\n")
	b.WriteString(Best(m, r.Validation != "none"))
	if len(r.Selected) > 0 {
		fmt.Fprintf(&b, "RFM-T kept %d of %d features: %s\n", len(r.Selected), r.Features, JoinLimited(r.Selected, 12))
	}
	if m.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", m.Note)
	}
	fmt.Fprintf(&b, "model written to %s\n", r.Model)
	_, err := io.WriteString(w, b.String())
	return err
}

// FitTree is the report of a fit that made a tree of RFMs.
type FitTree struct {
	FitData
	Solver  string     `json:"solver"`
	Why     string     `json:"solver_reason"`
	Config  rfm.Config `json:"config"`
	Tree    Tree       `json:"tree"`
	Seconds float64    `json:"seconds"`
}

// WriteFitTree prints a tree fit's report: the data, target, why the tree
// solver, its plan, the leaves' configuration, the validation (val) and
// the tree.
func WriteFitTree(w io.Writer, r *FitTree, plan, val string, tg *dataset.Target, task rfm.Task) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "data\t%s: %d rows, %d input columns → %d features\n", r.Data, r.Rows, r.Inputs, r.Features)
	fmt.Fprintf(tw, "target\t%s\n", Target(tg))
	fmt.Fprintf(tw, "solver\ttree: %s\n", r.Why)
	fmt.Fprintf(tw, "plan\t%s\n", plan)
	fmt.Fprintf(tw, "model\t%s\n", Config(r.Config))
	fmt.Fprintf(tw, "validation\t%s\n", val)
	tw.Flush()
	b.WriteString("\n")
	WriteTree(&b, &r.Tree, task)
	fmt.Fprintf(&b, "model written to %s\n", r.Model)
	_, err := io.WriteString(w, b.String())
	return err
}

// FoldValues is a Fold's metrics from the report package metrics gave
// its test rows: accuracy, log_loss and auc for a *metrics.Classification,
// mse, rmse, mae and r2 for a *metrics.Regression (non-finite: null).
func FoldValues(report any) map[string]any {
	switch r := report.(type) {
	case *metrics.Classification:
		return map[string]any{"accuracy": Finite(r.Accuracy), "log_loss": r.LogLoss, "auc": r.AUC}
	case *metrics.Regression:
		return map[string]any{"mse": Finite(r.MSE), "rmse": Finite(r.RMSE), "mae": Finite(r.MAE), "r2": r.R2}
	}
	return nil
}
