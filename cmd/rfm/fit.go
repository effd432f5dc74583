package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/fit"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/tree"
)

// engineFlags are the engine's settings: the hyperparameters declared in
// rfm.Params, read straight into a Config, and the command line's own
// RFM-T switch and memory cap.
type engineFlags struct {
	cfg       rfm.Config
	memory    string
	rfmT      bool
	threshold float64
}

func (g *engineFlags) register(f *flagSet) {
	g.cfg = rfm.DefaultConfig()
	for _, p := range rfm.Params() {
		if p.Default != "" { // a kernel parameter the default kernel leaves at zero
			if err := p.Set(&g.cfg, p.Default); err != nil {
				panic(fmt.Sprintf("declared default of %s: %v", p.Name, err))
			}
		}
	}
	group := func(title string) {
		f.Section(title)
		for _, p := range rfm.Params() {
			if p.Group == title {
				f.Param(&g.cfg, p)
			}
		}
	}
	group(rfm.GroupKernel)
	f.Bool(&g.rfmT, "rfm-t", false, "thresholded RFM: keep the features whose scaled diag(M) exceeds --threshold and refit a plain Laplace kernel on them")
	f.Float(&g.threshold, "threshold", rfm.DefaultThreshold, "RFM-T cut `T` in [0, 1) on min-max scaled diag(M)")
	group(rfm.GroupSelection)
	group(rfm.GroupSolver)
	f.String(&g.memory, "memory-limit", "", "cap `SIZE` on the whole fit's memory (kernel matrix, M, copies of the data, per-thread blocks), e.g. 8G (default: 90% of available memory)")
}

// config checks the engine configuration, naming the flag at fault.
func (g *engineFlags) config(f *flagSet) (rfm.Config, error) {
	cfg := g.cfg
	rfm.FinishKernels(&cfg)
	for _, p := range rfm.Params() {
		if f.IsSet(p.Name) && !p.Applies(&cfg) {
			if strings.Contains(p.AppliesTo, "kernel") {
				return cfg, usagef("--%s applies to %s only (the kernel is %s)", p.Name, p.AppliesTo, cfg.Kernel.Kind)
			}
			return cfg, usagef("--%s applies to %s only", p.Name, p.AppliesTo)
		}
	}
	if err := cli.CheckFinite("threshold", g.threshold); err != nil {
		return cfg, err
	}
	switch {
	case !(g.threshold >= 0 && g.threshold < 1):
		return cfg, usagef("--threshold %v: must be in [0, 1)", g.threshold)
	case f.IsSet("threshold") && !g.rfmT:
		return cfg, usagef("--threshold applies with --rfm-t only")
	case g.rfmT && cfg.FinalKernel != nil:
		return cfg, usagef("--final-kernel does not apply with --rfm-t: RFM-T refits a plain Laplace kernel on the selected features")
	}
	if g.memory != "" {
		b, err := cli.ParseBytes(g.memory)
		if err != nil {
			return cfg, usagef("--memory-limit: %v", err)
		}
		cfg.MemoryLimit = b
	}
	if err := cfg.Validate(); err != nil {
		return cfg, paramUsage(err)
	}
	return cfg, nil
}

// paramUsage words a Config error as a usage error: a parameter out of
// range is named by its flag ("--agop-power 3: must be in (0, 2]").
func paramUsage(err error) error {
	var pe *rfm.ParamError
	if errors.As(err, &pe) {
		return usagef("--%s %s: %s", pe.Param.Name, pe.ValueText(), pe.Reason)
	}
	return usagef("%v", err)
}

// fitOptions are the fit's options: RFM-T when asked, the validation rows
// and the progress bar (nil: none).
func (g *engineFlags) fitOptions(valid *rfm.Dataset, bar *progress) fit.Options {
	opt := fit.Options{Valid: valid, Thresholded: g.rfmT, Threshold: g.threshold}
	if bar != nil {
		opt.Progress = func(pr rfm.Progress) { bar.Update(pr.Fraction, roundLabel(pr)) }
		opt.TreeProgress = func(pr tree.Progress) {
			label := fmt.Sprintf("splitting: %d nodes", pr.Node)
			if pr.Stage != "split" {
				label = fmt.Sprintf("leaves %d/%d", pr.Leaves, pr.Total)
			}
			bar.Update(pr.Fraction, label)
		}
	}
	return opt
}

// fitError words fit.ErrThresholdedTree as a usage error.
func (g *engineFlags) fitError(err error, rows int) error {
	if errors.Is(err, fit.ErrThresholdedTree) {
		return usagef("--rfm-t does not apply to a tree of RFMs (--solver tree, or auto with %d rows)", rows)
	}
	return err
}

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
	f := newFlagSet("fit", "rfm fit --data FILE --target COL [flags]",
		`Train a Recursive Feature Machine on a table and save it to one model file.

Columns are typed automatically (numbers → numeric, anything else → categorical)
and encoded by a pipeline fitted on the training rows: missing numbers take the
mean plus a missing-indicator feature, numbers are standardized (or scaled as
--scale says), categories are one-hot encoded. The pipeline and the target's
classes are stored in the model, so 'rfm predict' takes raw rows with the same
column names.

Each round fits a kernel machine, scores it on validation rows (a seeded holdout
of the training rows, or --valid), then learns the feature matrix M from the
average gradient outer product. The best round is kept (round 0 is the plain
kernel), and α is refitted on all rows. fit prints the per-round table.`,
		`rfm fit --data train.csv --target churn --out churn.rfm
rfm fit --data houses.parquet --target price --task regression --ignore id --diag
rfm fit --data train.csv --target y --valid valid.csv --kernel gaussian --bandwidth 5 --json`)
	f.positional = "data"
	o.registerData(f, true)
	o.eng.register(f)
	f.Section("Output and resources")
	f.String(&o.out, "out", "model.rfm", "model `FILE` to write (replaced atomically)")
	o.common.register(f, true)
	return f
}

func newFitData(o *fitOptions, train *rfm.Dataset, p *dataset.Pipeline, tg *dataset.Target) fitData {
	return describe.NewFitData(o.out, o.data, train, p, tg)
}

func cmdFit(e *env, args []string) error {
	var o fitOptions
	f := fitFlags(&o)
	if err := f.ParsePositional(args, e.stdout, &o.data); err != nil {
		return err
	}
	cfg, err := o.eng.config(f)
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
	solver, why := rfm.ChooseSolver(cfg, fitShape(t.NRows(), p.Width(), tg))
	cfg.Solver = solver
	if solver != rfm.SolverTree { // tree.Fit plans its leaves itself
		if err := planFit(cfg, t.NRows(), p.Width(), tg); err != nil {
			return err
		}
	}
	train, err := encodeRows(t, o.data, p, tg)
	if err != nil {
		return err
	}
	var valid *rfm.Dataset
	vinfo := describe.Fit{Validation: "none"}
	switch {
	case o.valid != "":
		vt, err := o.readValid(e, p, tg, cfg.MemoryLimit)
		if err != nil {
			return err
		}
		if valid, err = encodeRows(vt, o.valid, p, tg); err != nil {
			return err
		}
		vinfo.Validation, vinfo.ValidationFile, vinfo.ValidationRows = "file", o.valid, valid.N
	case cfg.ValFraction > 0 && train.N >= 5:
		// The engine's own split; computed here only to report its size.
		ti, vi := rfm.Holdout(train.N, train.Labels, cfg.ValFraction, cfg.Seed)
		if len(vi) > 0 && len(ti) >= 2 {
			vinfo.Validation, vinfo.ValidationRows = "holdout", len(vi)
		}
	}

	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	fr, err := fit.Fit(e.ctx, cfg, train, o.eng.fitOptions(valid, bar))
	if err != nil {
		bar.Abort()
		return o.eng.fitError(err, train.N)
	}
	// What a fit prints depends on what it made: one kernel machine's
	// rounds, or the tree's leaves.
	km, ok := fr.Model.(rfm.KernelMachine)
	if !ok {
		return fitTree(e, &o, bar, cfg, why, fr, train, valid, p, tg)
	}
	model := km.KernelMachine()
	info := trainingInfo{Data: o.data, Rows: train.N, Validation: describe.Validation(vinfo, cfg, tg), Version: versionString()}
	if err := saveModel(e.ctx, o.out, model, p, tg, info); err != nil {
		bar.Abort()
		return err
	}
	elapsed := bar.Elapsed()
	bar.Finish(fmt.Sprintf("fit: %d rows, best round %d of %d, %s; model written to %s", train.N, model.BestRound, len(model.History)-1, seconds(elapsed), o.out))

	names := p.FeatureNames()
	res := describe.Fit{
		FitData:    newFitData(&o, train, p, tg),
		Validation: vinfo.Validation, ValidationFile: vinfo.ValidationFile, ValidationRows: vinfo.ValidationRows,
		Config: cfg, History: model.History, BestRound: model.BestRound, Refitted: model.Refitted,
		Note: model.Note, Seconds: elapsed.Seconds(),
	}
	for _, j := range model.Selected {
		res.Selected = append(res.Selected, names[j])
	}
	if o.common.json {
		return writeJSON(e.stdout, res)
	}
	if o.common.quiet {
		return nil
	}
	return describe.WriteFit(e.stdout, &res, model, tg)
}
