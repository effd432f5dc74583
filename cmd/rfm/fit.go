package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/fit"
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
	if err := checkFinite("threshold", g.threshold); err != nil {
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
		b, err := parseBytes(g.memory)
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
	target, err := chooseTarget(t, o.target, o.data)
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
	roles := inputRoles(p)
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

// fitJSON is what 'rfm fit --json' prints.
type fitJSON struct {
	fitData
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

// fitData is what every 'rfm fit --json' says of the data and the file.
type fitData struct {
	Model    string   `json:"model"`
	Data     string   `json:"data"`
	Rows     int      `json:"rows"`
	Inputs   int      `json:"inputs"`
	Features int      `json:"features"`
	Target   string   `json:"target"`
	Task     string   `json:"task"`
	Classes  []string `json:"classes,omitempty"`
}

func newFitData(o *fitOptions, train *rfm.Dataset, p *dataset.Pipeline, tg *dataset.Target) fitData {
	return fitData{Model: o.out, Data: o.data, Rows: train.N, Inputs: len(p.Inputs), Features: train.D,
		Target: tg.Name, Task: tg.Task, Classes: tg.Classes}
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
	vinfo := fitJSON{Validation: "none"}
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
	info := trainingInfo{Data: o.data, Rows: train.N, Validation: describeValidation(vinfo, cfg, tg), Version: versionString()}
	if err := saveModel(e.ctx, o.out, model, p, tg, info); err != nil {
		bar.Abort()
		return err
	}
	elapsed := bar.Elapsed()
	bar.Finish(fmt.Sprintf("fit: %d rows, best round %d of %d, %s; model written to %s", train.N, model.BestRound, len(model.History)-1, seconds(elapsed), o.out))

	names := p.FeatureNames()
	res := fitJSON{
		fitData:    newFitData(&o, train, p, tg),
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
	return writeFitText(e.stdout, &res, model, tg)
}

func roundLabel(p rfm.Progress) string {
	if p.Stage == "done" {
		return "done"
	}
	return fmt.Sprintf("round %d/%d %s", p.Round, max(p.Rounds-1, 0), p.Stage)
}

func describeValidation(v fitJSON, cfg rfm.Config, tg *dataset.Target) string {
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

func writeFitText(w io.Writer, r *fitJSON, m *rfm.Model, tg *dataset.Target) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "data\t%s: %d rows, %d input columns → %d features\n", r.Data, r.Rows, r.Inputs, r.Features)
	fmt.Fprintf(tw, "target\t%s\n", describeTarget(tg))
	fmt.Fprintf(tw, "validation\t%s\n", describeValidation(*r, r.Config, tg))
	fmt.Fprintf(tw, "model\t%s\n", describeConfig(r.Config))
	tw.Flush()
	b.WriteString("\n")
	writeHistory(&b, m.History, m.BestRound, m.Task, r.Validation != "none")
	b.WriteString("\n")
	b.WriteString(describeBest(m, r.Validation != "none"))
	if len(r.Selected) > 0 {
		fmt.Fprintf(&b, "RFM-T kept %d of %d features: %s\n", len(r.Selected), r.Features, joinLimited(r.Selected, 12))
	}
	if m.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", m.Note)
	}
	fmt.Fprintf(&b, "model written to %s\n", r.Model)
	_, err := io.WriteString(w, b.String())
	return err
}

func describeTarget(tg *dataset.Target) string {
	if tg.IsClassification() {
		return fmt.Sprintf("%s: classification, %d classes (%s)", tg.Name, tg.NumClasses(), joinLimited(tg.Classes, 10))
	}
	return fmt.Sprintf("%s: regression (mean %.4g, std %.4g)", tg.Name, tg.Mean, tg.Std)
}

func describeConfig(c rfm.Config) string {
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

func describeBest(m *rfm.Model, validated bool) string {
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

// writeHistory prints the per-round table; the chosen round is starred.
// The timing columns appear for a fit just made: model files do not store
// timings (so that equal fits give equal files), and inspect leaves them out.
func writeHistory(w io.Writer, h []rfm.Round, best int, task rfm.Task, validated bool) {
	timed, solved := false, false
	for _, r := range h {
		timed = timed || r.FitSeconds > 0
		solved = solved || solveNote(r) != ""
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
			note := solveNote(r)
			if note == "" {
				note = "-"
			}
			row += note + "\t"
		}
		fmt.Fprint(tw, row+"\n")
	}
	tw.Flush()
}

// solveNote says how a round's solve departed from the plain one asked
// for: a float32 fit solved in float64, a jitter added to the diagonal, a
// float32 residual left above solve.RefineTol; "" when none.
func solveNote(r rfm.Round) string {
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

func joinLimited(s []string, most int) string {
	if len(s) <= most {
		return strings.Join(s, ", ")
	}
	return strings.Join(s[:most], ", ") + fmt.Sprintf(", ... %d more", len(s)-most)
}

// writeJSON prints v indented. Non-finite numbers cannot be JSON; they are
// rejected by encoding/json and reported.
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode JSON result: %w", err)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// finite maps NaN and ±Inf to nil so they appear as null in JSON.
func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
