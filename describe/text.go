package describe

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/plot"
)

// Target describes the target: its name, task and classes (or mean and
// standard deviation).
func Target(tg *dataset.Target) string {
	if tg.IsClassification() {
		return fmt.Sprintf("%s: classification, %d classes (%s)", tg.Name, tg.NumClasses(), JoinLimited(tg.Classes, 10))
	}
	return fmt.Sprintf("%s: regression (mean %.4g, std %.4g)", tg.Name, tg.Mean, tg.Std)
}

// Config describes an engine configuration in one line: kernel, ridge,
// AGOP updates, the metric and the options that are not the default.
func Config(c rfm.Config) string {
	metric := "full M"
	if c.Diag {
		metric = "diagonal M"
	}
	if p := c.AGOPPower; p != 0 && p != 1 {
		metric += fmt.Sprintf(" = AGOP^%g", p)
	}
	s := fmt.Sprintf("%s, ridge %g, %d AGOP updates, %s (%s-normalized", c.Kernel, c.Ridge, c.Iters, metric, c.MNorm)
	if c.Centered {
		s += ", centered"
	}
	s += ")"
	if c.AdaptiveBandwidth > 0 {
		s += fmt.Sprintf(", adaptive bandwidth ×%g", c.AdaptiveBandwidth)
	}
	if c.NormalizeRows {
		s += ", unit-norm rows"
	}
	if c.Float32 {
		s += ", float32 solve"
	}
	if c.FinalKernel != nil {
		s += fmt.Sprintf(", final kernel %s", *c.FinalKernel)
	}
	if c.Loss == rfm.LossLogistic {
		s += ", logistic loss (kernel logistic regression head)"
	}
	return s
}

// Best is the line on the round a model kept: its validation score beside
// the plain kernel's, the head on that M and whether α was refitted.
func Best(m *rfm.Model, validated bool) string {
	var b strings.Builder
	if len(m.History) == 0 {
		return ""
	}
	best := m.History[min(m.BestRound, len(m.History)-1)]
	switch {
	case !validated:
		fmt.Fprintf(&b, "kept round %d (no validation rows)", m.BestRound)
	case m.Task == rfm.Classification:
		fmt.Fprintf(&b, "best round %d: validation accuracy %.4f (round 0, the plain kernel: %.4f)", m.BestRound, best.ValAccuracy, m.History[0].ValAccuracy)
	default:
		fmt.Fprintf(&b, "best round %d: validation loss %.4g (round 0, the plain kernel: %.4g)", m.BestRound, best.ValLoss, m.History[0].ValLoss)
	}
	if h := m.Head; h != nil && validated {
		head := fmt.Sprintf("final kernel %s", m.KernelUsed)
		if m.Config.Loss == rfm.LossLogistic {
			if m.Config.FinalKernel != nil {
				head = "logistic head with the " + head
			} else {
				head = "logistic head"
			}
			if h.Steps > 0 {
				head += fmt.Sprintf(" (%d steps", h.Steps)
				if h.StepLimit {
					head += ", stopped at the limit before its tolerance"
				}
				head += ")"
			}
		}
		if m.Task == rfm.Classification {
			fmt.Fprintf(&b, "; %s on that M: validation accuracy %.4f", head, h.ValAccuracy)
		} else {
			fmt.Fprintf(&b, "; %s on that M: validation loss %.4g", head, h.ValLoss)
		}
	}
	switch {
	case m.Refitted && m.Config.Solver == rfm.SolverNystrom:
		// m.N counts the centres: the model does not keep the rows' count.
		fmt.Fprintf(&b, "; α refitted on all training rows (Nyström on %d centres)", m.N)
	case m.Refitted:
		fmt.Fprintf(&b, "; α refitted on all %d rows", m.N)
	}
	b.WriteString("\n")
	return b.String()
}

// WriteHistory prints the per-round table; the chosen round is starred.
// The timing columns appear for a fit just made: model files do not store
// timings (so that equal fits give equal files), and inspect leaves them out.
func WriteHistory(w io.Writer, h []rfm.Round, best int, task rfm.Task, validated bool) {
	timed, solved := false, false
	for _, r := range h {
		timed = timed || r.FitSeconds > 0
		solved = solved || SolveNote(r) != ""
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "round\tbandwidth\t"
	if task == rfm.Classification {
		head += "val_accuracy\t"
	}
	head += "val_loss\t"
	if timed {
		head += "fit_s\tagop_s\t"
	}
	if solved {
		head += "solve\t"
	}
	fmt.Fprint(tw, head+"\n")
	for _, r := range h {
		mark := "  "
		if r.Round == best {
			mark = "* "
		}
		acc, loss := fmt.Sprintf("%.4f", r.ValAccuracy), fmt.Sprintf("%.5g", r.ValLoss)
		bw := fmt.Sprintf("%.4g", r.Bandwidth)
		if r.Bandwidth == 0 { // ntk, nngp: no bandwidth
			bw = "-"
		}
		if !validated {
			acc, loss = "-", "-"
		}
		row := fmt.Sprintf("%s%d\t%s\t", mark, r.Round, bw)
		if task == rfm.Classification {
			row += acc + "\t"
		}
		row += loss + "\t"
		if timed {
			agop := "-"
			if r.AGOPSeconds > 0 {
				agop = fmt.Sprintf("%.2f", r.AGOPSeconds)
			}
			row += fmt.Sprintf("%.2f\t%s\t", r.FitSeconds, agop)
		}
		if solved {
			note := SolveNote(r)
			if note == "" {
				note = "-"
			}
			row += note + "\t"
		}
		fmt.Fprint(tw, row+"\n")
	}
	tw.Flush()
}

// SolveNote says how a round's solve departed from the plain one asked
// for: a float32 fit solved in float64, a jitter added to the diagonal, a
// float32 residual left above solve.RefineTol; "" when none.
func SolveNote(r rfm.Round) string {
	var parts []string
	if r.Float64Solve {
		parts = append(parts, "float64")
	}
	if r.Jitter > 0 {
		parts = append(parts, fmt.Sprintf("jitter %.2g", r.Jitter))
	}
	if r.Residual > 0 {
		parts = append(parts, fmt.Sprintf("residual %.2g", r.Residual))
	}
	return strings.Join(parts, ", ")
}

// JoinLimited joins the first most strings with ", " and counts the rest.
func JoinLimited(s []string, most int) string {
	if len(s) <= most {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:most], ", ") + fmt.Sprintf(", ... %d more", len(s)-most)
}

// Finite maps NaN and ±Inf to nil so they appear as null in JSON.
func Finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

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

	model *rfm.Model
	tg    *dataset.Target
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

	val  string
	tg   *dataset.Target
	task rfm.Task
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

// Stat is a metric's mean and (population) standard deviation over the
// folds where it is defined.
type Stat struct {
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	Folds int     `json:"folds"`
}

// Fold is one fold of a cross-validation: its sizes, the round its model
// kept (or its leaves, a tree) and its metrics.
type Fold struct {
	Fold      int            `json:"fold"`
	TrainRows int            `json:"train_rows"`
	TestRows  int            `json:"test_rows"`
	BestRound int            `json:"best_round"`
	Leaves    int            `json:"leaves,omitempty"` // a tree fold
	Values    map[string]any `json:"metrics"`
}

// CV is what 'rfm cv --json' prints.
type CV struct {
	Data       string          `json:"data"`
	Target     string          `json:"target"`
	Task       string          `json:"task"`
	Rows       int             `json:"rows"`
	Folds      int             `json:"folds"`
	Stratified bool            `json:"stratified"`
	Config     rfm.Config      `json:"config"`
	Summary    map[string]Stat `json:"summary"`
	PerFold    []Fold          `json:"per_fold"`
	Seconds    float64         `json:"seconds"`
}

// FoldSummary is the mean ± standard deviation over the folds of each
// metric, over the folds where it is defined.
func FoldSummary(folds []Fold, names []string) map[string]Stat {
	sum := map[string]Stat{}
	for _, m := range names {
		var vals []float64
		for _, fd := range folds {
			if v, ok := fd.Values[m].(*float64); ok && v != nil {
				vals = append(vals, *v)
			}
		}
		if len(vals) > 0 {
			sum[m] = MeanStd(vals)
		}
	}
	return sum
}

// MeanStd is the mean and population standard deviation of v.
func MeanStd(v []float64) Stat {
	s := 0.0
	for _, x := range v {
		s += x
	}
	mean := s / float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return Stat{Mean: mean, Std: math.Sqrt(ss / float64(len(v))), Folds: len(v)}
}

// WriteCV prints a cross-validation: the data and model, the mean ± std of
// each metric in names and, with perFold, every fold's.
func WriteCV(w io.Writer, r *CV, names []string, tg *dataset.Target, perFold bool) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	how := "random"
	if r.Stratified {
		how = "stratified"
	}
	fmt.Fprintf(tw, "data\t%s: %d rows, %d-fold cross-validation (%s, seed %d)\n", r.Data, r.Rows, r.Folds, how, r.Config.Seed)
	fmt.Fprintf(tw, "target\t%s\n", Target(tg))
	fmt.Fprintf(tw, "model\t%s\n", Config(r.Config))
	tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "metric\tmean\t± std\tfolds\n")
	for _, m := range names {
		s, ok := r.Summary[m]
		if !ok {
			fmt.Fprintf(tw, "%s\tn/a\t\t0\n", m)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.4f\t± %.4f\t%d\n", m, s.Mean, s.Std, s.Folds)
	}
	tw.Flush()
	if perFold {
		b.WriteString("\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "fold\ttrain\ttest\tbest_round\t")
		for _, m := range names {
			fmt.Fprintf(tw, "%s\t", m)
		}
		fmt.Fprint(tw, "\n")
		for _, fd := range r.PerFold {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t", fd.Fold, fd.TrainRows, fd.TestRows, fd.BestRound)
			for _, m := range names {
				if v, ok := fd.Values[m].(*float64); ok && v != nil {
					fmt.Fprintf(tw, "%.4f\t", *v)
				} else {
					fmt.Fprint(tw, "n/a\t")
				}
			}
			fmt.Fprint(tw, "\n")
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ClassMetrics and RegMetrics are the metrics of a cross-validation, the
// first being the headline.
var (
	ClassMetrics = []string{"accuracy", "log_loss", "auc"}
	RegMetrics   = []string{"mse", "rmse", "mae", "r2"}
)

// RoundLabel is a progress report's label: "round R/N STAGE", or "done".
func RoundLabel(p rfm.Progress) string {
	if p.Stage == "done" {
		return "done"
	}
	return fmt.Sprintf("round %d/%d %s", p.Round, max(p.Rounds-1, 0), p.Stage)
}

// ReliabilityFigure draws a classifier's reliability diagram to path
// (PNG): the accuracy against the mean top probability of each non-empty
// bin, labelled with its rows, titled with the expected calibration error.
func ReliabilityFigure(path string, r *metrics.Classification) error {
	var x, y []float64
	var labels []string
	for _, b := range r.Reliability {
		if b.Count > 0 {
			x, y = append(x, b.Confidence), append(y, b.Accuracy)
			labels = append(labels, strconv.Itoa(b.Count))
		}
	}
	title := fmt.Sprintf("Reliability: ECE %.4f over %d rows", *r.ECE, r.N)
	return plot.Scatter(path, x, y, labels, "mean top probability (confidence)", "accuracy", title, true)
}

// Seconds formats a duration for summaries: 0.42s, 12.3s, 4m05s.
func Seconds(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
}
