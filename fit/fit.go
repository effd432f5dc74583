// Package fit is the one way to fit a model of any kind on encoded rows:
// Fit resolves the solver (SolverAuto by rfm.ChooseSolver, from the rows'
// shape) and calls the exact or Nyström RFM fit (rfm.Fit), the
// thresholded RFM (rfm.FitThresholded) or a tree of RFMs (tree.Fit), so
// that no caller chooses between them. It returns an rfm.Fitted, whatever
// the kind, that predictor.WriteFile saves and modelfile.Decode reads back.
//
// It is a package of its own because it sits above both solvers: tree
// imports rfm (its leaves are RFMs), so rfm.Fit cannot call tree.Fit; and
// below predictor, tune and the command line, which all call it. (An
// ensemble is the mean of several fitted configurations: tune.FinalModel
// builds it from the fits it asks of its members.)
package fit

import (
	"context"
	"errors"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/tree"
)

// ErrThresholdedTree is returned when RFM-T (Options.Thresholded) meets a
// fit that the tree solver makes: RFM-T refits one kernel machine on the
// selected columns, and a tree has one per leaf.
var ErrThresholdedTree = errors.New("RFM-T does not apply to a tree of RFMs")

// Options are what a fit needs beside its configuration and rows.
type Options struct {
	// Valid, when set, are the rows an RFM picks its round on (nil: a
	// seeded holdout of the training rows, Config.ValFraction). A tree
	// ignores them: each leaf holds out its own rows.
	Valid *rfm.Dataset
	// Thresholded fits RFM-T (rfm.FitThresholded) with Threshold.
	Thresholded bool
	Threshold   float64
	// Progress, when set, is told how an RFM's rounds go; a tree's
	// progress reaches it as Stage "tree" with its Fraction, unless
	// TreeProgress is set.
	Progress     func(rfm.Progress)
	TreeProgress func(tree.Progress)
}

// Result is a fitted model and how it was fitted.
type Result struct {
	Model rfm.Fitted
	// Solver is the solver that fitted it (SolverAuto resolved), Why why
	// ("asked for" when the configuration named it).
	Solver rfm.Solver
	Why    string
	// Plan is a tree's plan of its leaves (nil for an RFM).
	Plan *tree.Plan
}

// Shape is the shape of a fit on ds, as rfm.ChooseSolver and the memory
// plans take it.
func Shape(ds *rfm.Dataset) rfm.FitShape {
	return rfm.FitShape{N: ds.N, D: ds.D, Outputs: max(ds.Classes, ds.Outputs, 1)}
}

// Fit fits a model of cfg on train: an RFM (exact or Nyström), RFM-T or a
// tree, as cfg.Solver says (SolverAuto: as rfm.ChooseSolver resolves it
// for train's shape).
func Fit(ctx context.Context, cfg rfm.Config, train *rfm.Dataset, opt Options) (*Result, error) {
	if train == nil {
		return nil, errors.New("fit: no training rows")
	}
	solver, why := rfm.ChooseSolver(cfg, Shape(train))
	cfg.Solver = solver
	res := &Result{Solver: solver, Why: why}
	if solver == rfm.SolverTree {
		if opt.Thresholded {
			return nil, ErrThresholdedTree
		}
		tp := opt.TreeProgress
		if tp == nil && opt.Progress != nil {
			tp = func(p tree.Progress) { opt.Progress(rfm.Progress{Stage: "tree", Fraction: p.Fraction}) }
		}
		m, plan, err := tree.Fit(ctx, cfg, train, tp)
		if err != nil {
			return nil, err
		}
		res.Model, res.Plan = m, plan
		return res, nil
	}
	var m *rfm.Model
	var err error
	if opt.Thresholded {
		m, err = rfm.FitThresholded(ctx, cfg, opt.Threshold, train, opt.Valid, opt.Progress)
	} else {
		m, err = rfm.Fit(ctx, cfg, train, opt.Valid, opt.Progress)
	}
	if err != nil {
		return nil, err
	}
	res.Model = m
	return res, nil
}
