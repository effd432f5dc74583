package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/kernel"
)

// engineFlags hold every hyperparameter of rfm.Config, with the papers'
// defaults from rfm.DefaultConfig.
type engineFlags struct {
	kernel      string
	bandwidth   float64
	exponent    float64
	depth       int
	finalKernel string
	ridge       float64
	iters       int
	diag        bool
	centered    bool
	agopSamples int
	agopReplace bool
	norm        string
	agopPower   float64
	earlyStop   float64
	adaptive    float64
	normRows    bool
	float32     bool
	refine      int
	noRefit     bool
	seed        uint64
	selection   string
	valFraction float64
	memory      string
	rfmT        bool
	threshold   float64
}

func (g *engineFlags) register(f *flagSet) {
	def := rfm.DefaultConfig()
	kinds := make([]string, 0, 3)
	for _, k := range kernel.Kinds() {
		kinds = append(kinds, string(k))
	}
	f.Section("Kernel and feature learning")
	f.String(&g.kernel, "kernel", string(def.Kernel.Kind), "base kernel `NAME`: "+strings.Join(kinds, ", "))
	f.Float(&g.bandwidth, "bandwidth", def.Kernel.Bandwidth, "kernel bandwidth `L` > 0 (laplace, gen-laplace, gaussian)")
	f.Float(&g.exponent, "exponent", 1, "exponent `q` in (0, 2] of the gen-laplace kernel")
	f.Int(&g.depth, "depth", 2, fmt.Sprintf("depth `D` in 1..%d of the ntk and nngp kernels (they have no bandwidth)", kernel.MaxDepth))
	f.String(&g.finalKernel, "final-kernel", "", "refit α with this kernel `NAME` on the learned M, e.g. ntk for \"RFM (NTK)\" (same --bandwidth, --exponent, --depth)")
	f.Float(&g.ridge, "ridge", def.Ridge, "ridge regularization `λ` ≥ 0")
	f.Int(&g.iters, "iters", def.Iters, "AGOP updates `T` (T+1 fits; round 0 is the plain kernel)")
	f.Bool(&g.diag, "diag", def.Diag, "learn a diagonal M only (feature weighting; faster for many features)")
	f.Bool(&g.centered, "centered", def.Centered, "subtract the mean gradient before the outer products")
	f.Int(&g.agopSamples, "agop-samples", def.AGOPSamples, "rows used to estimate the AGOP, at most `N`")
	f.Bool(&g.agopReplace, "agop-replace", def.AGOPReplace, "sample the AGOP rows with replacement (the authors' UCI code)")
	f.String(&g.norm, "norm", def.Norm, "normalization `N` of a new M: mean (the papers) or max")
	f.Float(&g.agopPower, "agop-power", def.AGOPPower, "set the new M to AGOP^`P` (1: the papers; 0.5: the grokking work), 0 < P ≤ 2")
	f.Float(&g.adaptive, "adaptive-bandwidth", def.AdaptiveBandwidth, "when > 0, L = `F` × median pairwise M-distance, every round")
	f.Bool(&g.normRows, "normalize-rows", def.NormalizeRows, "scale every input row to unit length first (UCI protocol option)")
	f.Bool(&g.rfmT, "rfm-t", false, "thresholded RFM: keep the features whose scaled diag(M) exceeds --threshold and refit a plain Laplace kernel on them")
	f.Float(&g.threshold, "threshold", rfm.DefaultThreshold, "RFM-T cut `T` in [0, 1) on min-max scaled diag(M)")

	f.Section("Round selection")
	f.Float(&g.valFraction, "val-fraction", def.ValFraction, "share `F` of training rows held out (seeded, stratified) to pick the round when --valid is not given; 0 keeps the last round")
	f.String(&g.selection, "selection", def.Selection, "pick the round by `S`: accuracy (classification default) or loss (regression default)")
	f.Float(&g.earlyStop, "early-stop", def.EarlyStop, "stop once the validation loss exceeds `F` × the best (F > 1, e.g. 1.1; 0 = off)")
	f.Bool(&g.noRefit, "no-refit", !def.Refit, "keep α fitted on the training part instead of refitting on training + validation rows")
	f.Uint64(&g.seed, "seed", def.Seed, "`SEED` of the holdout and AGOP sampling")

	f.Section("Solver")
	f.Bool(&g.float32, "float32", def.Float32, "store and factor the kernel matrix in float32 (half the memory)")
	f.Int(&g.refine, "refine", def.Refine, "float64 refinement steps `K` of a float32 solve")
	f.String(&g.memory, "memory-limit", "", "cap `SIZE` on the kernel matrix, e.g. 8G (default: 90% of available memory)")
}

// config builds and checks the engine configuration, naming the flag at
// fault.
func (g *engineFlags) config(f *flagSet) (rfm.Config, error) {
	cfg := rfm.DefaultConfig()
	kind := kernel.Kind(g.kernel)
	if !slices.Contains(kernel.Kinds(), kind) {
		return cfg, usagef("--kernel %q: want one of %s", g.kernel, kindList())
	}
	var final kernel.Kind
	if g.finalKernel != "" {
		final = kernel.Kind(g.finalKernel)
		if !slices.Contains(kernel.Kinds(), final) {
			return cfg, usagef("--final-kernel %q: want one of %s", g.finalKernel, kindList())
		}
	}
	uses := func(k ...kernel.Kind) bool { return slices.Contains(k, kind) || slices.Contains(k, final) }
	for name, v := range map[string]float64{"bandwidth": g.bandwidth, "exponent": g.exponent, "ridge": g.ridge,
		"early-stop": g.earlyStop, "adaptive-bandwidth": g.adaptive, "val-fraction": g.valFraction, "threshold": g.threshold} {
		if err := checkFinite(name, v); err != nil {
			return cfg, err
		}
	}
	switch {
	case !(g.bandwidth > 0):
		return cfg, usagef("--bandwidth %v: must be > 0", g.bandwidth)
	case !(g.exponent > 0 && g.exponent <= 2):
		return cfg, usagef("--exponent %v: must be in (0, 2]", g.exponent)
	case f.IsSet("exponent") && !uses(kernel.GenLaplace):
		return cfg, usagef("--exponent applies to the gen-laplace kernel only (the kernel is %s)", kind)
	case g.depth < 1 || g.depth > kernel.MaxDepth:
		return cfg, usagef("--depth %d: must be in 1..%d", g.depth, kernel.MaxDepth)
	case f.IsSet("depth") && !uses(kernel.NTK, kernel.NNGP):
		return cfg, usagef("--depth applies to the ntk and nngp kernels only (the kernel is %s)", kind)
	case f.IsSet("bandwidth") && !uses(kernel.Laplace, kernel.GenLaplace, kernel.Gaussian):
		return cfg, usagef("--bandwidth does not apply to the %s kernel, which has none", kind)
	case g.ridge < 0:
		return cfg, usagef("--ridge %v: must be ≥ 0", g.ridge)
	case g.iters < 0:
		return cfg, usagef("--iters %d: must be ≥ 0", g.iters)
	case g.agopSamples < 1:
		return cfg, usagef("--agop-samples %d: must be ≥ 1", g.agopSamples)
	case g.norm != rfm.NormMean && g.norm != rfm.NormMax:
		return cfg, usagef("--norm %q: want mean or max", g.norm)
	case g.earlyStop != 0 && !(g.earlyStop > 1):
		return cfg, usagef("--early-stop %v: must be > 1 (or 0 for off)", g.earlyStop)
	case g.adaptive < 0:
		return cfg, usagef("--adaptive-bandwidth %v: must be ≥ 0", g.adaptive)
	case g.refine < 0:
		return cfg, usagef("--refine %d: must be ≥ 0", g.refine)
	case g.selection != "" && g.selection != "accuracy" && g.selection != "loss":
		return cfg, usagef("--selection %q: want accuracy or loss", g.selection)
	case !(g.valFraction >= 0 && g.valFraction < 1):
		return cfg, usagef("--val-fraction %v: must be in [0, 1)", g.valFraction)
	case !(g.threshold >= 0 && g.threshold < 1):
		return cfg, usagef("--threshold %v: must be in [0, 1)", g.threshold)
	case f.IsSet("threshold") && !g.rfmT:
		return cfg, usagef("--threshold applies with --rfm-t only")
	case g.rfmT && g.finalKernel != "":
		return cfg, usagef("--final-kernel does not apply with --rfm-t: RFM-T refits a plain Laplace kernel on the selected features")
	}
	cfg.Kernel = g.spec(kind)
	if final != "" {
		fs := g.spec(final)
		cfg.FinalKernel = &fs
	}
	cfg.Ridge = g.ridge
	cfg.Iters = g.iters
	cfg.Diag = g.diag
	cfg.Centered = g.centered
	cfg.AGOPSamples = g.agopSamples
	cfg.AGOPReplace = g.agopReplace
	cfg.Norm = g.norm
	cfg.AGOPPower = g.agopPower
	cfg.EarlyStop = g.earlyStop
	cfg.ValFraction = g.valFraction
	cfg.Refit = !g.noRefit
	cfg.AdaptiveBandwidth = g.adaptive
	cfg.NormalizeRows = g.normRows
	cfg.Float32 = g.float32
	cfg.Refine = g.refine
	cfg.Selection = g.selection
	cfg.Seed = g.seed
	if g.memory != "" {
		b, err := parseBytes(g.memory)
		if err != nil {
			return cfg, usagef("--memory-limit: %v", err)
		}
		cfg.MemoryLimit = b
	}
	if err := cfg.Validate(); err != nil { // a backstop: the checks above should catch everything
		return cfg, usagef("%v", err)
	}
	return cfg, nil
}

// spec is the kernel of the given kind with the flags' parameters.
func (g *engineFlags) spec(kind kernel.Kind) kernel.Spec {
	switch kind {
	case kernel.NTK, kernel.NNGP:
		return kernel.Spec{Kind: kind, Depth: g.depth}
	case kernel.GenLaplace:
		return kernel.Spec{Kind: kind, Bandwidth: g.bandwidth, Exponent: g.exponent}
	}
	return kernel.Spec{Kind: kind, Bandwidth: g.bandwidth}
}

func kindList() string {
	var names []string
	for _, k := range kernel.Kinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// train runs the engine: a plain RFM or, with --rfm-t, the thresholded one.
func (g *engineFlags) train(ctx context.Context, cfg rfm.Config, train, valid *rfm.Dataset, progress func(rfm.Progress)) (*rfm.Model, error) {
	if g.rfmT {
		return rfm.FitThresholded(ctx, cfg, g.threshold, train, valid, progress)
	}
	return rfm.Fit(ctx, cfg, train, valid, progress)
}

// fitOptions are the flags of fit (and, but for --out and --valid, of cv).
type fitOptions struct {
	data   string
	target string
	task   string
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
	tg, p, err := fitEncoding(t, o.data, target, o.task)
	if err != nil {
		return nil, nil, nil, err
	}
	return t, tg, p, nil
}

func fitFlags(o *fitOptions) *flagSet {
	f := newFlagSet("fit", "rfm fit --data FILE --target COL [flags]",
		`Train a Recursive Feature Machine on a table and save it to one model file.

Columns are typed automatically (numbers → numeric, anything else → categorical)
and encoded by a pipeline fitted on the training rows: missing numbers take the
mean plus a missing-indicator feature, numbers are standardized, categories are
one-hot encoded. The pipeline and the target's classes are stored in the model,
so 'rfm predict' takes raw rows with the same column names.

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
	Model          string      `json:"model"`
	Data           string      `json:"data"`
	Rows           int         `json:"rows"`
	Inputs         int         `json:"inputs"`
	Features       int         `json:"features"`
	Target         string      `json:"target"`
	Task           string      `json:"task"`
	Classes        []string    `json:"classes,omitempty"`
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
	train, err := encodeRows(t, o.data, p, tg)
	if err != nil {
		return err
	}
	var valid *rfm.Dataset
	vinfo := fitJSON{Validation: "none"}
	switch {
	case o.valid != "":
		vopt, err := rowReadOptions(p, tg, true, &o.read)
		if err != nil {
			return err
		}
		roles := inputRoles(p)
		roles[tg.Name] = "target column"
		vopt.MemoryBudget = cfg.MemoryLimit
		vt, err := readRows(e.ctx, o.valid, vopt, roles)
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
	model, err := o.eng.train(e.ctx, cfg, train, valid, func(pr rfm.Progress) {
		bar.Update(pr.Fraction, roundLabel(pr))
	})
	if err != nil {
		bar.Abort()
		return err
	}
	info := trainingInfo{Data: o.data, Rows: train.N, Validation: describeValidation(vinfo, cfg, tg), Version: versionString()}
	if err := saveModel(o.out, model, p, tg, info); err != nil {
		bar.Abort()
		return err
	}
	elapsed := bar.Elapsed()
	bar.Finish(fmt.Sprintf("fit: %d rows, best round %d of %d, %s; model written to %s", train.N, model.BestRound, len(model.History)-1, seconds(elapsed), o.out))

	names := p.FeatureNames()
	res := fitJSON{
		Model: o.out, Data: o.data, Rows: train.N, Inputs: len(p.Inputs), Features: train.D,
		Target: tg.Name, Task: tg.Task, Classes: tg.Classes,
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
	s := fmt.Sprintf("%s, ridge %g, %d AGOP updates, %s (%s-normalized", c.Kernel, c.Ridge, c.Iters, metric, c.Norm)
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
		if m.Task == rfm.Classification {
			fmt.Fprintf(&b, "; final kernel %s on that M: validation accuracy %.4f", m.Kernel, h.ValAccuracy)
		} else {
			fmt.Fprintf(&b, "; final kernel %s on that M: validation loss %.4g", m.Kernel, h.ValLoss)
		}
	}
	if m.Refitted {
		fmt.Fprintf(&b, "; α refitted on all %d rows", m.N)
	}
	b.WriteString("\n")
	return b.String()
}

// writeHistory prints the per-round table; the chosen round is starred.
func writeHistory(w io.Writer, h []rfm.Round, best int, task rfm.Task, validated bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	if task == rfm.Classification {
		fmt.Fprint(tw, "round\tbandwidth\tval_accuracy\tval_loss\tfit_s\tagop_s\t\n")
	} else {
		fmt.Fprint(tw, "round\tbandwidth\tval_loss\tfit_s\tagop_s\t\n")
	}
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
		agop := "-"
		if r.AGOPSeconds > 0 {
			agop = fmt.Sprintf("%.2f", r.AGOPSeconds)
		}
		if task == rfm.Classification {
			fmt.Fprintf(tw, "%s%d\t%s\t%s\t%s\t%.2f\t%s\t\n", mark, r.Round, bw, acc, loss, r.FitSeconds, agop)
		} else {
			fmt.Fprintf(tw, "%s%d\t%s\t%s\t%.2f\t%s\t\n", mark, r.Round, bw, loss, r.FitSeconds, agop)
		}
	}
	tw.Flush()
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
