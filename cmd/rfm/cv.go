package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/predictor"
)

type cvOptions struct {
	fitOptions
	folds   int
	perFold bool
}

// stat is a metric's mean and (population) standard deviation over the
// folds where it is defined.
type stat struct {
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	Folds int     `json:"folds"`
}

type cvFold struct {
	Fold      int            `json:"fold"`
	TrainRows int            `json:"train_rows"`
	TestRows  int            `json:"test_rows"`
	BestRound int            `json:"best_round"`
	Leaves    int            `json:"leaves,omitempty"` // a tree fold
	Values    map[string]any `json:"metrics"`
}

// cvJSON is what 'rfm cv --json' prints.
type cvJSON struct {
	Data       string          `json:"data"`
	Target     string          `json:"target"`
	Task       string          `json:"task"`
	Rows       int             `json:"rows"`
	Folds      int             `json:"folds"`
	Stratified bool            `json:"stratified"`
	Config     rfm.Config      `json:"config"`
	Summary    map[string]stat `json:"summary"`
	PerFold    []cvFold        `json:"per_fold"`
	Seconds    float64         `json:"seconds"`
}

var (
	classMetrics = []string{"accuracy", "log_loss", "auc"}
	regMetrics   = []string{"mse", "rmse", "mae", "r2"}
)

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
		return inFile(o.data, err)
	}
	_, labels, err := tg.Encode(col)
	if err != nil {
		return inFile(o.data, err)
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
	res := cvJSON{Data: o.data, Target: tg.Name, Task: tg.Task, Rows: n, Folds: o.folds, Stratified: labels != nil, Config: cfg}
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
	names := regMetrics
	if tg.IsClassification() {
		names = classMetrics
	}
	res.Summary = foldSummary(res.PerFold, names)
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
	return writeCVText(e.stdout, &res, names, tg, o.perFold)
}

// runFold fits the pipeline and the model on one fold's training rows and
// scores its test rows (predictor.FitFold), as the JSON row of the fold.
func (o *cvOptions) runFold(e *env, cfg rfm.Config, t *dataset.Table, tg *dataset.Target, features []string, train, test []int, progress func(rfm.Progress)) (*cvFold, error) {
	opt := o.eng.fitOptions(nil, nil)
	opt.Progress = progress
	r, err := predictor.FitFold(e.ctx, t, o.data, tg, features, dataset.Scaling(o.scale), cfg, opt, train, test)
	if err != nil {
		return nil, o.eng.fitError(err, len(train))
	}
	fd := &cvFold{TrainRows: r.TrainRows, TestRows: r.TestRows, BestRound: r.BestRound, Leaves: r.Leaves}
	switch r := r.Report.(type) {
	case *metrics.Classification:
		fd.Values = map[string]any{"accuracy": finite(r.Accuracy), "log_loss": r.LogLoss, "auc": r.AUC}
	case *metrics.Regression:
		fd.Values = map[string]any{"mse": finite(r.MSE), "rmse": finite(r.RMSE), "mae": finite(r.MAE), "r2": r.R2}
	}
	return fd, nil
}

// foldSummary is the mean ± standard deviation over the folds of each
// metric, over the folds where it is defined.
func foldSummary(folds []cvFold, names []string) map[string]stat {
	sum := map[string]stat{}
	for _, m := range names {
		var vals []float64
		for _, fd := range folds {
			if v, ok := fd.Values[m].(*float64); ok && v != nil {
				vals = append(vals, *v)
			}
		}
		if len(vals) > 0 {
			sum[m] = meanStd(vals)
		}
	}
	return sum
}

func meanStd(v []float64) stat {
	s := 0.0
	for _, x := range v {
		s += x
	}
	mean := s / float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return stat{Mean: mean, Std: math.Sqrt(ss / float64(len(v))), Folds: len(v)}
}

func writeCVText(w io.Writer, r *cvJSON, names []string, tg *dataset.Target, perFold bool) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	how := "random"
	if r.Stratified {
		how = "stratified"
	}
	fmt.Fprintf(tw, "data\t%s: %d rows, %d-fold cross-validation (%s, seed %d)\n", r.Data, r.Rows, r.Folds, how, r.Config.Seed)
	fmt.Fprintf(tw, "target\t%s\n", describeTarget(tg))
	fmt.Fprintf(tw, "model\t%s\n", describeConfig(r.Config))
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
