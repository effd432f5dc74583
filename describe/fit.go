package describe

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/fit"
	"github.com/rfmkit/rfm/tree"
)

// A FitReport is the report of a fit of any kind: a *Fit for one kernel
// machine (its rounds), a *FitTree for a tree (its leaves).
type FitReport interface {
	// WriteText prints the report.
	WriteText(w io.Writer) error
	// ModelValidation says how the model was validated, for its file.
	ModelValidation() string
	// Finish records the fit's time and words the line that ends its
	// progress.
	Finish(elapsed time.Duration) string
}

// FitInput is what a fit report says beside the fitted model.
type FitInput struct {
	Data FitData
	// Config is the configuration fitted, its solver resolved, and Why
	// why that solver.
	Config rfm.Config
	Why    string
	// Validation says where an RFM's rounds were scored (Validation,
	// ValidationFile, ValidationRows); Valid holds the rows of a
	// validation file (nil for none), on which a tree is scored whole.
	Validation Fit
	Valid      *rfm.Dataset
	// Names are the features' names; Target the target encoding.
	Names  []string
	Target *dataset.Target
}

// FitValidation says where a fit of cfg on train scores its rounds: the
// rows valid of the file named file when they are set, else the seeded
// holdout rfm.Fit draws (its size computed here, as rfm.Holdout draws it),
// else none.
func FitValidation(cfg rfm.Config, train *rfm.Dataset, file string, valid *rfm.Dataset) Fit {
	v := Fit{Validation: "none"}
	switch {
	case valid != nil:
		v.Validation, v.ValidationFile, v.ValidationRows = "file", file, valid.N
	case cfg.ValFraction > 0 && train.N >= 5:
		ti, vi := rfm.Holdout(train.N, train.Labels, cfg.ValFraction, cfg.Seed)
		if len(vi) > 0 && len(ti) >= 2 {
			v.Validation, v.ValidationRows = "holdout", len(vi)
		}
	}
	return v
}

// ReportFit describes the fit fr: a *Fit when it made one kernel machine,
// else the report of a tree.
func ReportFit(ctx context.Context, fr *fit.Result, in FitInput) (FitReport, error) {
	km, ok := fr.Model.(rfm.KernelMachine)
	if !ok {
		return reportTree(ctx, fr, in)
	}
	m := km.KernelMachine()
	v := in.Validation
	res := &Fit{
		FitData:    in.Data,
		Validation: v.Validation, ValidationFile: v.ValidationFile, ValidationRows: v.ValidationRows,
		Config: in.Config, History: m.History, BestRound: m.BestRound, Refitted: m.Refitted,
		Note: m.Note, model: m, tg: in.Target,
	}
	for _, j := range m.Selected {
		res.Selected = append(res.Selected, in.Names[j])
	}
	return res, nil
}

// WriteText prints the report (WriteFit).
func (r *Fit) WriteText(w io.Writer) error { return WriteFit(w, r, r.model, r.tg) }

// ModelValidation says where the rounds were scored (Validation).
func (r *Fit) ModelValidation() string { return Validation(*r, r.Config, r.tg) }

// Finish records the fit's time and words its last line.
func (r *Fit) Finish(elapsed time.Duration) string {
	r.Seconds = elapsed.Seconds()
	return fmt.Sprintf("fit: %d rows, best round %d of %d, %s; model written to %s", r.Rows, r.model.BestRound, len(r.model.History)-1, Seconds(elapsed), r.Model)
}

func reportTree(ctx context.Context, fr *fit.Result, in FitInput) (*FitTree, error) {
	tm, ok := fr.Model.(*tree.Model)
	if !ok {
		return nil, fmt.Errorf("describe: no fit report for a model of kind %q", fr.Model.Kind())
	}
	summary := SummarizeTree(tm, in.Names, in.Target, 5)
	summary.Plan = fr.Plan.String()
	if in.Valid != nil {
		v, err := tm.ValScore(ctx, in.Valid)
		if err != nil {
			return nil, fmt.Errorf("score the --valid rows: %w", err)
		}
		summary.ValScore, summary.ValidationOn = &v, fmt.Sprintf("%s (%d rows)", in.Validation.ValidationFile, in.Valid.N)
	}
	val := fmt.Sprintf("each leaf holds out a seeded %g%% of its rows to pick its round", 100*in.Config.ValFraction)
	if in.Config.ValFraction == 0 {
		val = "none: each leaf keeps its last round"
	}
	return &FitTree{FitData: in.Data, Solver: string(in.Config.Solver), Why: in.Why, Config: tm.Config, Tree: summary,
		val: val, tg: in.Target, task: tm.Task}, nil
}

// WriteText prints the report (WriteFitTree).
func (r *FitTree) WriteText(w io.Writer) error {
	return WriteFitTree(w, r, r.Tree.Plan, r.val, r.tg, r.task)
}

// ModelValidation says how the leaves picked their rounds.
func (r *FitTree) ModelValidation() string { return r.val }

// Finish records the fit's time and words its last line.
func (r *FitTree) Finish(elapsed time.Duration) string {
	r.Seconds = elapsed.Seconds()
	return fmt.Sprintf("fit: %d rows, a tree of %d leaves (depth %d), %s; model written to %s", r.Rows, len(r.Tree.Leaves), r.Tree.Depth, Seconds(elapsed), r.Model)
}
