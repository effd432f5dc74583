package main

import (
	"context"
	"io"
	"slices"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/fit"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/predictor"
)

// engineFlags are the engine's settings (cli.EngineFlags).
type engineFlags = cli.EngineFlags

// fitOptions are the flags of fit (and, but for --out and --valid, of cv).
type fitOptions struct {
	data   string
	target string
	task   string
	scale  string
	valid  string
	out    string
	cols   columnFlags
	read   readFlags
	eng    engineFlags
	common commonFlags
}

// registerData adds the data flags shared by fit and cv.
func (o *fitOptions) registerData(f *flagSet, withValid bool) {
	f.Section("Data")
	f.String(&o.data, "data", "", "training table `FILE`: CSV/TSV, Parquet, NPY/NPZ or LIBSVM, optionally .gz (\"-\": standard input)")
	f.String(&o.target, "target", "", "column `COL` to predict (default: \"label\" or \"y\" when the file has one)")
	f.String(&o.task, "task", "auto", "`TASK`: auto, classification or regression (auto: classification for text or ≤ 20 distinct integers)")
	f.String(&o.scale, "scale", string(dataset.ScaleStandard), "scaling `S` of numeric columns, fitted on the training rows: standard (mean 0, std 1), none (as they are), minmax (training range → [0, 1]) or robust (median 0, interquartile range 1)")
	if withValid {
		f.String(&o.valid, "valid", "", "validation table `FILE` to pick the round on (default: a seeded holdout, see --val-fraction)")
	}
	o.cols.register(f)
	o.read.register(f, true)
}

// readTraining reads the training table, within budget bytes (0: the
// reader's default share of available memory), and fits the encodings.
func (o *fitOptions) readTraining(ctx context.Context, budget uint64) (*dataset.Table, *dataset.Target, *dataset.Pipeline, error) {
	switch o.task {
	case dataset.TaskAuto, dataset.TaskClassification, dataset.TaskRegression:
	default:
		return nil, nil, nil, usagef("--task %q: want auto, classification or regression", o.task)
	}
	if err := dataset.Scaling(o.scale).Check(); err != nil {
		return nil, nil, nil, usagef("--scale %q: %s", o.scale, strings.TrimPrefix(err.Error(), "dataset: "))
	}
	if o.target != "" && slices.Contains(o.cols.ignore, o.target) {
		return nil, nil, nil, usagef("--target %q is also in --ignore", o.target)
	}
	opt := dataset.ReadOptions{Categorical: o.cols.categorical, Numeric: o.cols.numeric, Ignore: o.cols.ignore, MemoryBudget: budget}
	if err := o.read.apply(&opt); err != nil {
		return nil, nil, nil, err
	}
	t, err := readTable(ctx, o.data, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	target, err := cli.ChooseTarget(t, o.target, o.data)
	if err != nil {
		return nil, nil, nil, err
	}
	o.target = target
	tg, p, err := fitEncoding(t, o.data, target, o.task, dataset.Scaling(o.scale))
	if err != nil {
		return nil, nil, nil, err
	}
	return t, tg, p, nil
}

// readValid reads the --valid table's rows with the training pipeline's
// columns and the target, within budget bytes.
func (o *fitOptions) readValid(e *env, p *dataset.Pipeline, tg *dataset.Target, budget uint64) (*dataset.Table, error) {
	vopt, err := rowReadOptions(p, tg, true, &o.read)
	if err != nil {
		return nil, err
	}
	roles := cli.InputRoles(p)
	roles[tg.Name] = "target column"
	vopt.MemoryBudget = budget
	return readRows(e.ctx, o.valid, vopt, roles)
}

func fitFlags(o *fitOptions) *flagSet {
	f := helpFlagSet("fit", "rfm fit --data FILE --target COL [flags]")
	f.positional = "data"
	o.registerData(f, true)
	o.eng.Register(f.FlagSet)
	f.Section("Output and resources")
	f.String(&o.out, "out", "model.rfm", "model `FILE` to write (replaced atomically)")
	o.common.register(f, true)
	return f
}

func newFitData(o *fitOptions, train *rfm.Dataset, p *dataset.Pipeline, tg *dataset.Target) fitData {
	return describe.NewFitData(o.out, o.data, train, p, tg)
}

// parseModelArgs starts the commands that fit models (fit, cv, tune): it
// parses args (the training table may be the one positional argument)
// and reads the model flags into a configuration.
func parseModelArgs(e *env, f *flagSet, args []string, data *string, eng *engineFlags) (rfm.Config, error) {
	if err := f.ParsePositional(args, e.stdout, data); err != nil {
		return rfm.Config{}, err
	}
	return eng.Config(f.FlagSet)
}

func cmdFit(e *env, args []string) error {
	var o fitOptions
	f := fitFlags(&o)
	cfg, err := parseModelArgs(e, f, args, &o.data, &o.eng)
	if err != nil {
		return err
	}
	if o.valid != "" && f.IsSet("val-fraction") {
		return usagef("--valid and --val-fraction exclude each other: the round is picked on the --valid rows")
	}
	if o.data == "" {
		return usagef("--data is required: the training table")
	}
	if o.out == "" {
		return usagef("--out must name the model file to write")
	}
	if err := o.common.apply(); err != nil {
		return err
	}
	if err := checkOutPath("out", o.out, o.data, o.valid); err != nil {
		return err
	}

	defer sysmem.BoundHeap(cfg.MemoryLimit)()
	t, tg, p, err := o.readTraining(e.ctx, cfg.MemoryLimit)
	if err != nil {
		return err
	}
	cfg, why, err := fit.Prepare(cfg, predictor.FitShape(t.NRows(), p.Width(), tg))
	if err != nil {
		return err
	}
	train, err := encodeRows(t, o.data, p, tg)
	if err != nil {
		return err
	}
	var valid *rfm.Dataset
	if o.valid != "" {
		vt, err := o.readValid(e, p, tg, cfg.MemoryLimit)
		if err != nil {
			return err
		}
		if valid, err = encodeRows(vt, o.valid, p, tg); err != nil {
			return err
		}
	}
	vinfo := describe.FitValidation(cfg, train, o.valid, valid)

	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	fr, err := fit.Fit(e.ctx, cfg, train, o.eng.FitOptions(valid, bar))
	if err != nil {
		bar.Abort()
		return o.eng.FitError(err, train.N)
	}
	// What a fit prints depends on what it made: one kernel machine's
	// rounds, or the tree's leaves.
	rep, err := describe.ReportFit(e.ctx, fr, describe.FitInput{Data: newFitData(&o, train, p, tg), Config: cfg, Why: why,
		Validation: vinfo, Valid: valid, Names: p.FeatureNames(), Target: tg})
	if err != nil {
		bar.Abort()
		return err
	}
	info := trainingInfo{Data: o.data, Rows: train.N, Validation: rep.ModelValidation(), Version: versionString()}
	if err := saveModel(e.ctx, o.out, fr.Model, p, tg, info); err != nil {
		bar.Abort()
		return err
	}
	bar.Finish(rep.Finish(bar.Elapsed()))
	return printReport(e, o.common, rep)
}

// printReport prints a command's report as --json and --quiet say.
func printReport(e *env, c commonFlags, r interface{ WriteText(io.Writer) error }) error {
	if c.json {
		return writeJSON(e.stdout, r)
	}
	if c.quiet {
		return nil
	}
	return r.WriteText(e.stdout)
}
