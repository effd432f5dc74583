package main

import (
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
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
	f := newFlagSet("cv", "rfm cv --data FILE --target COL [--folds K] [flags]",
		`Estimate how well a configuration generalizes by k-fold cross-validation.

The rows are split into K folds (stratified by class for classification,
seeded by --seed). For each fold, the column pipeline is fitted on the other
folds only, an RFM is trained on them exactly as 'rfm fit' would (round chosen
on a seeded holdout of those rows), and the held-out fold is scored. The mean
± standard deviation over folds of accuracy, log-loss and AUC (classification)
or MSE, RMSE, MAE and R² (regression) is printed. No model file is written.
All of fit's model flags apply.`,
		`rfm cv --data train.csv --target churn --folds 5
rfm cv --data train.csv --target churn --diag --ridge 0.01 --per-fold --json`)
	f.positional = "data"
	o.registerData(f, false)
	f.Section("Cross-validation")
	f.Int(&o.folds, "folds", 5, "number of folds `K` ≥ 2")
	f.Bool(&o.perFold, "per-fold", false, "also print a table with every fold's metrics")
	o.eng.register(f)
	f.Section("Output and resources")
	o.common.register(f, true)
	if err := f.ParsePositional(args, e.stdout, &o.data); err != nil {
		return err
	}
	cfg, err := o.eng.config(f)
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
	features := p.InputColumns()
	trains, tests := rfm.KFold(n, labels, o.folds, cfg.Seed)
	largest := 0
	for _, tr := range trains {
		largest = max(largest, len(tr))
	}
	if solver, _ := rfm.ChooseSolver(cfg, fitShape(largest, p.Width(), tg)); solver != rfm.SolverTree {
		c := cfg
		c.Solver = solver
		if err := planFit(c, largest, p.Width(), tg); err != nil {
			return err
		}
	}

	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	res := describe.CV{Data: o.data, Target: tg.Name, Task: tg.Task, Rows: n, Folds: o.folds, Stratified: labels != nil, Config: cfg}
	for k := range o.folds {
		fold, err := o.runFold(e, cfg, t, tg, features, trains[k], tests[k], func(pr rfm.Progress) {
			bar.Update((float64(k)+pr.Fraction)/float64(o.folds), fmt.Sprintf("fold %d/%d %s", k+1, o.folds, roundLabel(pr)))
		})
		if err != nil {
			bar.Abort()
			return fmt.Errorf("fold %d of %d: %w", k+1, o.folds, err)
		}
		fold.Fold = k + 1
		res.PerFold = append(res.PerFold, *fold)
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

// runFold fits the pipeline and the model on one fold's training rows and
// scores its test rows (predictor.FitFold), as the JSON row of the fold.
func (o *cvOptions) runFold(e *env, cfg rfm.Config, t *dataset.Table, tg *dataset.Target, features []string, train, test []int, progress func(rfm.Progress)) (*describe.Fold, error) {
	opt := o.eng.fitOptions(nil, nil)
	opt.Progress = progress
	r, err := predictor.FitFold(e.ctx, t, o.data, tg, features, dataset.Scaling(o.scale), cfg, opt, train, test)
	if err != nil {
		return nil, o.eng.fitError(err, len(train))
	}
	fd := &describe.Fold{TrainRows: r.TrainRows, TestRows: r.TestRows, BestRound: r.BestRound, Leaves: r.Leaves}
	fd.Values = describe.FoldValues(r.Report)
	return fd, nil
}
