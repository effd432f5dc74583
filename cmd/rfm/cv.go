package main

import (
	"errors"
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/predictor"
)

type cvOptions struct {
	fitOptions
	folds   int
	perFold bool
}

func cmdCV(e *env, args []string) error {
	var o cvOptions
	f := helpFlagSet("cv", "rfm cv --data FILE --target COL [--folds K] [flags]")
	f.positional = "data"
	o.registerData(f, false)
	f.Section("Cross-validation")
	f.Int(&o.folds, "folds", 5, "number of folds `K` ≥ 2")
	f.Bool(&o.perFold, "per-fold", false, "also print a table with every fold's metrics")
	o.eng.Register(f.FlagSet)
	f.Section("Output and resources")
	o.common.register(f, true)
	cfg, err := parseModelArgs(e, f, args, &o.data, &o.eng)
	if err != nil {
		return err
	}
	if o.folds < 2 {
		return usagef("--folds %d: must be ≥ 2", o.folds)
	}
	if o.data == "" {
		return usagef("--data is required: the table to cross-validate on")
	}
	if err := o.common.apply(); err != nil {
		return err
	}
	defer sysmem.BoundHeap(cfg.MemoryLimit)()
	t, tg, p, err := o.readTraining(e.ctx, cfg.MemoryLimit)
	if err != nil {
		return err
	}
	n := t.NRows()
	if o.folds > n {
		return usagef("--folds %d: %s has only %d rows", o.folds, o.data, n)
	}
	col, err := t.TargetColumn(tg.Name)
	if err != nil {
		return cli.InFile(o.data, err)
	}
	_, labels, err := tg.Encode(col)
	if err != nil {
		return cli.InFile(o.data, err)
	}
	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	res := describe.CV{Data: o.data, Target: tg.Name, Task: tg.Task, Rows: n, Folds: o.folds, Stratified: labels != nil, Config: cfg}
	folds, err := predictor.CrossValidate(e.ctx, t, o.data, tg, p, labels, cfg, o.eng.FitOptions(nil, nil), o.folds, func(k int, pr rfm.Progress) {
		bar.Update((float64(k)+pr.Fraction)/float64(o.folds), fmt.Sprintf("fold %d/%d %s", k+1, o.folds, roundLabel(pr)))
	})
	if err != nil {
		bar.Abort()
		var fe *predictor.FoldError
		if errors.As(err, &fe) {
			return fmt.Errorf("fold %d of %d: %w", fe.Fold, fe.Folds, o.eng.FitError(fe.Err, fe.TrainRows))
		}
		return err
	}
	for k, r := range folds {
		res.PerFold = append(res.PerFold, describe.Fold{Fold: k + 1, TrainRows: r.TrainRows, TestRows: r.TestRows, BestRound: r.BestRound,
			Leaves: r.Leaves, Values: describe.FoldValues(r.Report)})
	}
	names := describe.RegMetrics
	if tg.IsClassification() {
		names = describe.ClassMetrics
	}
	res.Summary = describe.FoldSummary(res.PerFold, names)
	elapsed := bar.Elapsed()
	res.Seconds = elapsed.Seconds()
	headline := names[0]
	if s, ok := res.Summary[headline]; ok {
		bar.Finish(fmt.Sprintf("cv: %d folds, %s %.4g ± %.2g, %s", o.folds, headline, s.Mean, s.Std, seconds(elapsed)))
	} else {
		bar.Finish(fmt.Sprintf("cv: %d folds, %s", o.folds, seconds(elapsed)))
	}
	if o.common.json {
		return writeJSON(e.stdout, res)
	}
	return describe.WriteCV(e.stdout, &res, names, tg, o.perFold)
}
