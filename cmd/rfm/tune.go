package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/tune"
)

type tuneOptions struct {
	fitOptions
	budget     string
	trials     int
	folds      int
	jobs       int
	eta        int
	localAfter int
	minRows    int
	maxRows    int
	finalCtrs  int
	repeats    int
	ensemble   int
	forest     int
	resume     bool
	trialsOut  string
	plots      string
	scales     listFlag
	// large says why the table is fitted as a large one (tune.TreeFinal);
	// empty otherwise.
	large string
}

// tuneJSON is what 'rfm tune --json' prints.
type tuneJSON struct {
	fitData
	Design string `json:"design"`
	// Choice is how the saved configuration was chosen (the rule, the
	// margin over the defaults); TrialCap the cap on the configurations
	// the validation rows set (0: none, --trials given).
	Choice   *tune.Choice `json:"choice,omitempty"`
	TrialCap int          `json:"trial_cap,omitempty"`
	Rungs    []int        `json:"rungs"`
	// MaxRows and FinalCenters are the search's sample size and the saved
	// model's Nyström centres (0: every row, the search's solver), given or
	// chosen for a large table.
	MaxRows      int           `json:"max_rows,omitempty"`
	FinalCenters int           `json:"final_centers,omitempty"`
	Jobs         int           `json:"jobs"`
	Drawn        int           `json:"configurations"`
	Local        int           `json:"local_configurations"`
	Fits         int           `json:"trials"`
	Cached       int           `json:"cached"`
	Best         tuneTrialJSON `json:"best"`
	Plain        tuneTrialJSON `json:"plain_kernel"`
	Default      *tuneScore    `json:"base,omitempty"`
	Config       rfm.Config    `json:"config"`
	Scaling      string        `json:"scaling"`
	BestRound    int           `json:"best_round"`
	Refitted     bool          `json:"refitted"`
	// Members lists the trials an --ensemble model averages, best first.
	Members []int `json:"ensemble_trials,omitempty"`
	Asked   int   `json:"ensemble_asked"`
	// Validation scores the ensemble's mean against its best member and
	// the plain kernel on the held-out rows (with --calibrate).
	Validation  *ensemble.Validation `json:"ensemble_validation,omitempty"`
	TrialsFile  string               `json:"trials_file"`
	Figures     []string             `json:"figures,omitempty"`
	Seconds     float64              `json:"seconds"`
	FinalSecond float64              `json:"final_fit_seconds"`
}

type tuneScore struct {
	Trial    int      `json:"trial"`
	Accuracy *float64 `json:"accuracy,omitempty"`
	Loss     float64  `json:"loss"`
}

type tuneTrialJSON struct {
	tuneScore
	Round int `json:"round"`
	Rows  int `json:"rows"`
}

// newTuneFlags declares tune's flags into o.
func newTuneFlags(o *tuneOptions) *flagSet {
	f := newFlagSet("tune", "rfm tune --data FILE --target COL [--time 20m] [--trials N] [--folds K] [flags]",
		`Search the hyperparameters for the best model within a time budget, and save it.

Configurations are drawn at random (seeded) from: bandwidth (log scale, relative
to the median distance between rows), ridge (log scale), kernel (laplace,
gen-laplace with its exponent, gaussian, and lp-laplace with its power on
tables of at most 64 features), full or diagonal M, M = AGOP or
AGOP^½, M normalization, centred gradients, column scaling (standard, none,
minmax, robust), unit-norm rows, the number of rounds and, for classification,
the loss of the final predictor (squared, or logistic: kernel logistic
regression on the learned M). The first is the
configuration the flags give. Any model flag given on the command line fixes
that setting instead (e.g. --diag, --kernel laplace, --scale none).

Successive halving cuts bad settings early: each bracket fits its configurations
on a small stratified share of the training rows, keeps the best third and
gives them three times the rows, up to every training row (or --max-rows of
them: on a large table the search then stays cheap, and only the final fit
sees every row). A table that --solver auto would fit by a tree (more than 25 000
rows, or an exact solve that does not fit in memory) is searched on samples of
4 000 rows unless --max-rows or --final-centers says otherwise; its model is then
rfm fit's default tree, a tree whose leaves fit the best configuration, or (up to
120 000 rows) a Nyström fit on 10 000 centres, chosen on the validation rows (the
default tree unless beaten there beyond the noise); tune says so.
Fits run side by side as far as threads and memory allow. Every fit is scored on validation rows
it does not train on (a seeded holdout, --folds K, or --valid; below 2 000 rows
5 folds by default): the selection never sees a test file. The round of each fit
is chosen there too, so round 0, the plain kernel, is always a candidate. The
choice is made on the validation loss: the first configuration (fit's defaults
with the flags given) is always scored on every row, and another replaces it only
when it beats it by more than the noise (standard errors of the per-fold
differences); of those, the simplest within one standard error of the lowest loss
is kept. Without --trials the configurations are capped at max(20, rows/10).

The best configuration is then fitted as 'rfm fit' would (the round chosen on
the same validation rows, α refitted on all rows unless --no-refit, calibrated
with --calibrate) and saved. Every trial is appended to a table (CSV) as it
ends; with --resume, a search with the same data, flags and seed reads it back
and fits only what it has not scored.

With --ensemble K the model is the K best configurations of the top rung (of
the best one's column scaling), each fitted as above, averaged: the mean of
their probabilities (of their outputs for regression), calibrated as a whole
with --calibrate on held-out scores. On Arora's 90 UCI sets the mean of the
top three scored higher than the best alone (see docs/tuning.md).`,
		`rfm tune --data train.csv --target churn --time 20m --out churn.rfm
rfm tune --data digits.npz --target label --time 20m --scale none --plots tune-figs
rfm tune --data train.csv --target y --trials 60 --folds 5 --resume`)
	f.positional = "data"
	o.registerData(f, true)
	o.eng.register(f)
	f.Section("Search")
	f.String(&o.budget, "time", "10m", "time `BUDGET` of the search, e.g. 90s, 20m, 2h (0: no limit; then give --trials); the final fit on every row comes after it")
	f.Int(&o.trials, "trials", 0, "most configurations `N` to draw (0: until the time is up or the cap the validation rows set, max(20, rows/10))")
	f.Int(&o.folds, "folds", 0, "score every fit by `K`-fold cross-validation of the training rows (0: 5 folds below 2 000 rows unless --val-fraction or --valid is given, else one holdout)")
	f.Int(&o.repeats, "repeats", 0, "repeat the --folds cross-validation `R` times with other seeded folds and average (steadier choices on small tables, R times the fits; 0: once, or twice on the default folds of fewer than 1 000 rows)")
	f.Int(&o.jobs, "jobs", 0, "fits `N` at once (0: as many as threads and memory allow)")
	f.Int(&o.eta, "eta", 3, "halving rate `η` ≥ 2 (0: 3): a rung keeps its best 1/η and the next gets η times the rows")
	f.Int(&o.localAfter, "local-after", tune.DefaultLocalAfter, "configurations `N` drawn at random before half the draws perturb one of the three best so far (0: 30; -1: never)")
	f.Int(&o.minRows, "min-rows", tune.DefaultMinRows, "fewest training rows `N` ≥ 10 of the first rung (0: 400)")
	f.Int(&o.maxRows, "max-rows", 0, "most training rows `N` of the top rung (0: all): on a large table the search scores stratified samples of N rows, and the best configuration is then fitted on every row")
	f.Int(&o.finalCtrs, "final-centers", 0, "fit the saved model by Nyström on `M` centres when it has more rows than M (the search stays exact on --max-rows samples; 0: the search's solver, or 10 000 with --max-rows 4 000 on a table --solver auto would fit by a tree)")
	f.List(&o.scales, "scales", "column scalings `LIST` to search (default: standard,none,minmax,robust; --scale fixes one)")
	f.Int(&o.ensemble, "ensemble", 1, "save the mean of the `K` best configurations (1: the best alone)")
	f.Int(&o.forest, "forest", 1, "on a table fitted by a tree, also try a forest of `K` trees of other seeds (their mean), kept only when it beats one tree on the validation rows (1: one tree)")
	f.Bool(&o.resume, "resume", false, "read the trials table and fit only the trials it has not scored")
	f.String(&o.trialsOut, "trials-out", "", "trials table `FILE` (CSV, default: the model file + .trials.csv)")
	f.String(&o.plots, "plots", "", "write PNG figures into `DIR`: the score against trials, bandwidth and ridge")
	f.Section("Output and resources")
	f.String(&o.out, "out", "model.rfm", "model `FILE` to write (replaced atomically)")
	o.common.register(f, true)
	return f
}

func cmdTune(e *env, args []string) error {
	var o tuneOptions
	f := newTuneFlags(&o)
	if err := f.ParsePositional(args, e.stdout, &o.data); err != nil {
		return err
	}
	base, err := o.eng.config(f)
	if err != nil {
		return err
	}
	opt, err := o.searchOptions(f, base)
	if err != nil {
		return err
	}
	if err := o.common.apply(); err != nil {
		return err
	}
	if o.trialsOut == "" {
		o.trialsOut = o.out + ".trials.csv"
	}
	if err := checkOutPath("out", o.out, o.data, o.valid); err != nil {
		return err
	}
	if err := checkOutPath("trials-out", o.trialsOut, o.data, o.valid, o.out); err != nil {
		return err
	}

	t, tg, p, err := o.readTraining(e.ctx, base.MemoryLimit)
	if err != nil {
		return err
	}
	n := t.NRows()
	o.smallTableFolds(e, f, &opt, n)
	pipelines, err := o.prepareSearch(e, f, &opt, t, tg, p)
	if err != nil {
		return err
	}
	res, fits, cached, searchTime, err := o.search(e, opt, tg, n)
	if err != nil {
		return err
	}
	if o.large != "" {
		return o.finishLarge(e, opt, res, pipelines, tg, n, fits, cached, searchTime)
	}
	classification := tg.IsClassification()
	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	finalStart := time.Now()
	var members []int
	// One model, or the mean of the --ensemble best (the best alone when
	// only it reached the top rung, or when the mean lost to it on the
	// validation rows).
	fm, err := tune.FinalModel(e.ctx, opt, res, o.ensemble, func(i, k int, p rfm.Progress) {
		label := "final fit: " + roundLabel(p)
		if k > 1 {
			label = fmt.Sprintf("final fit, member %d of %d: %s", i+1, k, roundLabel(p))
		}
		bar.Update((float64(i)+p.Fraction)/float64(k), label)
	})
	if err == nil && len(fm.Trials) > 1 {
		for _, t := range fm.Trials {
			members = append(members, t.Index)
		}
	}
	if err != nil {
		bar.Abort()
		if e.ctx.Err() != nil {
			return &interrupted{fmt.Sprintf("in the final fit: no model was written; the %d trials are in %s (--resume reuses them)", fits+cached, o.trialsOut)}
		}
		return fmt.Errorf("final fit of the best configuration (trial %d): %w", res.Best.Index, err)
	}
	finalTime := time.Since(finalStart)
	sp := pipelines[res.Best.Scaling]
	info := trainingInfo{Data: o.data, Rows: n, Validation: "rfm tune: " + res.Design, Version: versionString()}
	if res.Choice != nil {
		info.Validation += "; " + res.Choice.String()
	}
	// The best (first) member's configuration and rounds are reported.
	rm := fm.Best
	if err := saveModel(e.ctx, o.out, fm.Model, sp, tg, info); err != nil {
		bar.Abort()
		return err
	}
	var figures []string
	if o.plots != "" {
		if figures, err = tuneFigures(o.plots, res, classification); err != nil {
			bar.Abort()
			return err
		}
	}
	bar.Finish(fmt.Sprintf("tune: final fit in %s; model written to %s", seconds(finalTime), o.out))

	out := tuneJSON{
		fitData: newFitData(&o.fitOptions, opt.Data[res.Best.Scaling], sp, tg),
		Design:  res.Design, Rungs: res.Rungs, MaxRows: opt.MaxRows, FinalCenters: opt.FinalCenters, Jobs: res.Jobs, Drawn: res.Drawn, Local: res.Local, Fits: fits, Cached: cached,
		Best:   trialJSON(res.Best, res.Best.Accuracy, res.Best.Loss, res.Best.Round, classification),
		Plain:  trialJSON(res.Plain, res.Plain.PlainAccuracy, res.Plain.PlainLoss, 0, classification),
		Config: rm.Config, Scaling: res.Best.Scaling, BestRound: rm.BestRound, Refitted: rm.Refitted, Members: members, Asked: o.ensemble,
		Validation: fm.Validation,
		TrialsFile: o.trialsOut, Figures: figures, Seconds: searchTime.Seconds(), FinalSecond: finalTime.Seconds(),
		Choice: res.Choice, TrialCap: res.TrialCap,
	}
	out.Default = baseScore(res, classification)
	if o.common.json {
		return writeJSON(e.stdout, out)
	}
	if o.common.quiet {
		return nil
	}
	return writeTuneText(e.stdout, res, &out, classification)
}

// smallTableFolds scores a table of fewer than tune.SmallRows rows by
// folds unless the command line chose the validation: one holdout of a
// small table is too noisy to choose among many configurations.
func (o *tuneOptions) smallTableFolds(e *env, f *flagSet, opt *tune.Options, n int) {
	if f.IsSet("folds") || f.IsSet("val-fraction") || o.valid != "" {
		return
	}
	k, r := tune.SmallDesign(n)
	if k == 0 {
		return
	}
	opt.Folds = k
	if !f.IsSet("repeats") {
		opt.Repeats = r
	}
	if !o.common.quiet {
		fmt.Fprintf(e.stderr, "tune: %d rows (< %d): every fit is scored by %s, not one holdout (--folds, --val-fraction or --valid choose otherwise)\n",
			n, tune.SmallRows, foldsText(opt.Folds, opt.Repeats))
	}
}

// search runs the search of opt, each trial journalled in the trials
// table as it ends, with a progress bar; n is the table's rows (for the
// bar's last line). It returns the result and the fits made and read back.
func (o *tuneOptions) search(e *env, opt tune.Options, tg *dataset.Target, n int) (res *tune.Result, fits, cached int, searchTime time.Duration, err error) {
	classification := tg.IsClassification()
	if o.resume {
		if opt.Cache, err = tune.ReadTrials(o.trialsOut); err != nil {
			return nil, 0, 0, 0, fmt.Errorf("--resume: %w", err)
		}
	}
	journal, err := tune.OpenJournal(o.trialsOut, o.resume && len(opt.Cache) > 0, classification)
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("--trials-out: %w", err)
	}
	defer journal.Close()

	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	start := time.Now()
	var best *tune.Trial
	opt.Done = func(tr tune.Trial) {
		journal.Add(&tr)
		switch tr.Status {
		case tune.StatusOK:
			fits++
		case tune.StatusCached:
			cached++
		}
		if tr.Scored() && (best == nil || tr.Rows > best.Rows || tr.Rows == best.Rows && tune.Better(rfm.Task(tg.Task), &tr, best)) {
			c := tr
			best = &c
		}
		frac := 0.0
		if opt.Budget > 0 {
			frac = float64(time.Since(start)) / float64(opt.Budget)
		} else if opt.Trials > 0 {
			frac = float64(tr.Index+1) / float64(opt.Trials)
		}
		label := fmt.Sprintf("trial %d", tr.Index)
		if best != nil {
			label = fmt.Sprintf("trial %d, best %s on %d rows", tr.Index, scoreText(best, classification), best.Rows)
		}
		bar.Update(min(frac, 0.99), label)
	}
	res, err = tune.Run(e.ctx, opt)
	if err == nil && journal.Err() != nil {
		err = fmt.Errorf("--trials-out: %w", journal.Err())
	}
	if err != nil || e.ctx.Err() != nil {
		bar.Abort()
		if e.ctx.Err() != nil {
			return nil, 0, 0, 0, &interrupted{fmt.Sprintf("no model was written; the %d trials that ended are in %s (--resume goes on from them)", fits+cached, o.trialsOut)}
		}
		return nil, 0, 0, 0, err
	}
	searchTime = time.Since(start)
	// The search's end is a line of its own: --time bounds the search, and
	// the final fit on every row can take longer (its own bar and ETA).
	bar.Finish(fmt.Sprintf("tune: %d configurations, %d fits in %s; best trial %d; %s",
		res.Drawn, fits, seconds(searchTime), res.Best.Index, tune.FinalText(o.large != "", len(tune.Top(res, o.ensemble)), n)))
	return res, fits, cached, searchTime, nil
}

// prepareSearch settles the search's solver and sizes (the defaults of a
// large table, the Nyström final fit's centres), checks their memory,
// encodes the rows by every column scaling searched (opt.Data, opt.Valid)
// and returns their pipelines.
func (o *tuneOptions) prepareSearch(e *env, f *flagSet, opt *tune.Options, t *dataset.Table, tg *dataset.Target, p *dataset.Pipeline) (map[string]*dataset.Pipeline, error) {
	var err error
	n := t.NRows()
	large := tune.LargeTableDefaults(opt, n, fitShape(n, p.Width(), tg), f.IsSet("max-rows") || f.IsSet("final-centers"))
	// With a Nyström final fit (--final-centers), the search's own fits
	// are at most --max-rows rows: they pick the solver and are planned on
	// that, the final fit on every row.
	searchRows := n
	if tune.NystromFinal(*opt, n) && opt.MaxRows > 0 {
		searchRows = min(n, opt.MaxRows)
	}
	if tune.NystromFinal(*opt, n) && opt.Base.ClassWeight == rfm.ClassWeightBalanced {
		return nil, usagef("--final-centers %d and --class-weight balanced exclude each other on %d rows: the Nyström solver weights rows equally", opt.FinalCenters, n)
	}
	solver, why := rfm.ChooseSolver(opt.Base, fitShape(searchRows, p.Width(), tg))
	if solver == rfm.SolverTree && opt.FinalCenters >= n {
		return nil, usagef("--final-centers %d: the final fit is Nyström only on more rows than M; the table has %d (and --solver auto would fit them by a tree: %s): give M below %d", opt.FinalCenters, n, why, n)
	}
	if solver == rfm.SolverTree {
		return nil, usagef("tune fits exact RFMs (or --solver nystrom), and --solver auto would fit the search's %d rows by a tree (%s): use --max-rows N --final-centers M to search exactly on samples of N rows and fit the model by Nyström on M centres, or --solver nystrom, or --solver exact --float32 if it fits", searchRows, why)
	}
	opt.Base.Solver = solver
	if err := planFit(opt.Base, searchRows, p.Width(), tg); err != nil {
		return nil, err
	}
	if tune.NystromFinal(*opt, n) {
		fc := opt.Base
		fc.Solver, fc.Centers = rfm.SolverNystrom, opt.FinalCenters
		err := planFit(fc, n, p.Width(), tg)
		// Centres chosen here, not given: as many as fit, down to 1 000.
		for large != "" && err != nil && fc.Centers/2 >= 1000 {
			fc.Centers /= 2
			err = planFit(fc, n, p.Width(), tg)
		}
		if err != nil {
			return nil, fmt.Errorf("the final fit on %d Nyström centres (--final-centers): %w", fc.Centers, err)
		}
		opt.FinalCenters = fc.Centers
	}
	o.large = large
	if large != "" && !o.common.quiet {
		fmt.Fprintf(e.stderr, "tune: %s, so the search fits stratified samples of at most %d rows (--max-rows); the saved model is rfm fit's default tree, a tree of the best configuration, or (on at most %d rows) a Nyström fit on %d centres (--final-centers), whichever the validation rows prefer, the default tree unless beaten beyond the noise\n",
			large, opt.MaxRows, tune.NystromProbeRows, opt.FinalCenters)
	}
	pipelines := map[string]*dataset.Pipeline{}
	opt.Data = map[string]*rfm.Dataset{}
	for _, name := range opt.Space.Scalings {
		sp := p
		if name != o.scale {
			if _, sp, err = fitEncoding(t, o.data, o.target, o.task, dataset.Scaling(name)); err != nil {
				return nil, err
			}
		}
		pipelines[name] = sp
		if opt.Data[name], err = encodeRows(t, o.data, sp, tg); err != nil {
			return nil, err
		}
	}
	opt.Protected = append(tune.ImageCandidates(*opt), tune.LargeCandidates(*opt, large != "")...) // raw pixels: the plain kernel and the image RFM (docs/images.md); large tables: the defaults with a strong ridge
	if o.valid != "" {
		vt, err := o.readValid(e, p, tg, opt.Base.MemoryLimit)
		if err != nil {
			return nil, err
		}
		opt.Valid = map[string]*rfm.Dataset{}
		for name, sp := range pipelines {
			if opt.Valid[name], err = encodeRows(vt, o.valid, sp, tg); err != nil {
				return nil, err
			}
		}
	}
	return pipelines, nil
}

// tuneFlags names the flag of each tune.Options field that tune.Options.Check
// validates, for its messages.
var tuneFlags = map[string]string{"Budget": "--time", "Trials": "--trials", "Folds": "--folds", "Repeats": "--repeats",
	"Jobs": "--jobs", "Eta": "--eta", "LocalAfter": "--local-after", "MinRows": "--min-rows", "MaxRows": "--max-rows",
	"FinalCenters": "--final-centers", "Forest": "--forest"}

// searchOptions turns the flags into the search: the model flags given on
// the command line fix their settings, the others are searched.
func (o *tuneOptions) searchOptions(f *flagSet, base rfm.Config) (tune.Options, error) {
	opt := tune.Options{Base: base, BaseScaling: o.scale, Trials: o.trials, Folds: o.folds, Jobs: o.jobs, Eta: o.eta, LocalAfter: o.localAfter, MinRows: o.minRows, MaxRows: o.maxRows, FinalCenters: o.finalCtrs, Repeats: o.repeats, Forest: o.forest,
		Rule: tune.RuleOneSE}
	switch {
	case o.data == "":
		return opt, usagef("--data is required: the training table")
	case o.out == "":
		return opt, usagef("--out must name the model file to write")
	case o.ensemble < 1 || o.ensemble > ensemble.MaxMembers:
		return opt, usagef("--ensemble %d: want 1 (the best alone) to %d", o.ensemble, ensemble.MaxMembers)
	case o.valid != "" && o.folds > 0:
		return opt, usagef("--valid and --folds exclude each other: the fits are scored on the --valid rows")
	case o.valid != "" && f.IsSet("val-fraction"):
		return opt, usagef("--valid and --val-fraction exclude each other: the fits are scored on the --valid rows")
	case o.eng.rfmT:
		return opt, usagef("--rfm-t does not apply to tune")
	case base.Solver == rfm.SolverTree:
		return opt, usagef("--solver tree: tune fits exact RFMs (or --solver nystrom)")
	}
	d, err := time.ParseDuration(o.budget)
	if o.budget == "0" {
		d, err = 0, nil
	}
	if err != nil || d < 0 {
		return opt, usagef("--time %q: want a duration such as 90s, 20m or 2h", o.budget)
	}
	opt.Budget = d
	if d == 0 && o.trials == 0 {
		return opt, usagef("--time 0 needs --trials N: the search must end somewhere")
	}
	if err := opt.Check(); err != nil {
		var oe *tune.OptionError
		if errors.As(err, &oe) && tuneFlags[oe.Field] != "" {
			return opt, usagef("%s %v: want %s", tuneFlags[oe.Field], oe.Value, oe.Want)
		}
		return opt, usagef("%v", err)
	}
	sp := tune.DefaultSpace()
	sp.Kernels = nil // the default, lp-laplace included on narrow tables
	cfg := base
	if f.IsSet("kernel") {
		switch cfg.Kernel.Kind {
		case kernel.Laplace, kernel.GenLaplace, kernel.Gaussian, kernel.LpLaplace:
		default:
			return opt, usagef("--kernel %s cannot be tuned: tune searches laplace, gen-laplace, gaussian and lp-laplace", cfg.Kernel.Kind)
		}
		sp.Kernels = []kernel.Kind{cfg.Kernel.Kind}
	}
	if f.IsSet("exponent") {
		sp.Exponent = [2]float64{cfg.Kernel.Exponent, cfg.Kernel.Exponent}
	}
	if f.IsSet("power") {
		sp.Power = [2]float64{cfg.Kernel.Power, cfg.Kernel.Power}
	}
	if f.IsSet("bandwidth") {
		sp.Bandwidth, sp.BandwidthAbsolute = [2]float64{cfg.Kernel.Bandwidth, cfg.Kernel.Bandwidth}, true
	}
	if f.IsSet("ridge") {
		if cfg.Ridge == 0 {
			return opt, usagef("--ridge 0 cannot be a fixed setting of tune (λ is searched on a log scale); give λ > 0")
		}
		sp.Ridge = [2]float64{cfg.Ridge, cfg.Ridge}
	}
	fix := map[string]func(){
		"diag":           func() { sp.Diag = []bool{cfg.Diag} },
		"centered":       func() { sp.Centered = []bool{cfg.Centered} },
		"agop-power":     func() { sp.AGOPPower = []float64{cfg.AGOPPower} },
		"norm":           func() { sp.MNorm = []rfm.MNormalization{cfg.MNorm} },
		"normalize-rows": func() { sp.NormalizeRows = []bool{cfg.NormalizeRows} },
		"iters":          func() { sp.Iters = []int{cfg.Iters} },
		"loss":           func() { sp.Loss = []rfm.Loss{cfg.Loss} },
	}
	for name, set := range fix {
		if f.IsSet(name) {
			set()
		}
	}
	if f.IsSet("adaptive-bandwidth") {
		return opt, usagef("--adaptive-bandwidth does not apply to tune: the bandwidth is searched")
	}
	switch {
	case f.IsSet("scale") && len(o.scales) > 0:
		return opt, usagef("--scale and --scales exclude each other: --scale fixes one scaling, --scales lists those to search")
	case f.IsSet("scale"):
		sp.Scalings = []string{o.scale}
	case len(o.scales) > 0:
		for _, s := range o.scales {
			if err := dataset.Scaling(s).Check(); err != nil {
				return opt, usagef("--scales: %q: %s", s, strings.TrimPrefix(err.Error(), "dataset: "))
			}
		}
		sp.Scalings = append([]string(nil), o.scales...)
		o.scale = sp.Scalings[0]
		opt.BaseScaling = o.scale
	default:
		sp.Scalings = []string{string(dataset.ScaleStandard), string(dataset.ScaleNone), string(dataset.ScaleMinMax), string(dataset.ScaleRobust)}
	}
	opt.Space = sp
	return opt, nil
}

// baseScore is the base configuration's score at the top rung (nil when
// it was cut).
func baseScore(res *tune.Result, classification bool) *tuneScore {
	d := res.Default
	if d == nil {
		return nil
	}
	s := trialJSON(d, d.Accuracy, d.Loss, d.Round, classification).tuneScore
	return &s
}

func trialJSON(t *tune.Trial, acc, loss float64, round int, classification bool) tuneTrialJSON {
	s := tuneTrialJSON{tuneScore: tuneScore{Trial: t.Index, Loss: loss}, Round: round, Rows: t.Rows}
	if classification {
		s.Accuracy = &acc
	}
	return s
}

func scoreText(t *tune.Trial, classification bool) string {
	if classification {
		return fmt.Sprintf("accuracy %.4f", t.Accuracy)
	}
	return fmt.Sprintf("loss %.4g", t.Loss)
}

func writeTuneText(w io.Writer, res *tune.Result, out *tuneJSON, classification bool) error {
	metric := func(acc *float64, loss float64) string {
		if acc != nil {
			return fmt.Sprintf("accuracy %.4f (loss %.4g)", *acc, loss)
		}
		return fmt.Sprintf("loss %.4g (MSE of standardized targets)", loss)
	}
	rungs := make([]string, len(res.Rungs))
	for i, r := range res.Rungs {
		rungs[i] = fmt.Sprint(r)
	}
	fmt.Fprintf(w, "Search: %d configurations (%d local), %d fits (%d from the trials table) in %s; scored on %s; rungs of %s training rows; %d fit(s) at once\n",
		out.Drawn, out.Local, out.Fits+out.Cached, out.Cached, seconds(time.Duration(out.Seconds*float64(time.Second))), res.Design, strings.Join(rungs, "/"), res.Jobs)
	fmt.Fprintf(w, "Best:         trial %d, round %d: validation %s\n", out.Best.Trial, out.Best.Round, metric(out.Best.Accuracy, out.Best.Loss))
	fmt.Fprintf(w, "              %s, %s scaling\n", describeConfig(res.Best.Config), res.Best.Scaling)
	fmt.Fprintf(w, "Plain kernel: trial %d, round 0: validation %s (the best round 0 of the same rung)\n", out.Plain.Trial, metric(out.Plain.Accuracy, out.Plain.Loss))
	if out.Choice != nil {
		fmt.Fprintf(w, "Choice:       %s\n", out.Choice)
	}
	if out.TrialCap > 0 {
		fmt.Fprintf(w, "Trial cap:    %d configurations (max(20, validation rows/10); --trials N sets another)\n", out.TrialCap)
	}
	if out.Default != nil {
		fmt.Fprintf(w, "Base config:  trial 0: validation %s\n", metric(out.Default.Accuracy, out.Default.Loss))
	} else {
		fmt.Fprintln(w, "Base config:  trial 0 did not reach the top rung")
	}
	refit := "α refitted on all rows"
	if !out.Refitted {
		refit = "not refitted"
	}
	fmt.Fprintf(w, "Model: %s (%d rows, round %d kept, %s; final fit %s); trials: %s\n", out.Model, out.Rows, out.BestRound, refit,
		seconds(time.Duration(out.FinalSecond*float64(time.Second))), out.TrialsFile)
	writeEnsembleText(w, out)
	for _, fig := range out.Figures {
		fmt.Fprintf(w, "Figure: %s\n", fig)
	}
	// The best five of the top rung.
	top := res.Best.Rows
	var ts []tune.Trial
	for _, t := range res.Trials {
		if t.Scored() && t.Rows == top {
			ts = append(ts, t)
		}
	}
	sort.SliceStable(ts, func(i, j int) bool { return tune.Better(res.Task, &ts[i], &ts[j]) })
	ts = ts[:min(len(ts), 5)]
	fmt.Fprintf(w, "\nBest trials on %d rows:\n", top)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	score := "loss"
	if classification {
		score = "accuracy"
	}
	fmt.Fprintf(tw, "trial\t%s\tround\tkernel\tridge\tM\tscaling\trows normalized\tloss\n", score)
	for _, t := range ts {
		m := "full"
		if t.Config.Diag {
			m = "diag"
		}
		if t.Config.AGOPPower != 1 {
			m += fmt.Sprintf(" ^%g", t.Config.AGOPPower)
		}
		v := fmt.Sprintf("%.4g", t.Loss)
		if classification {
			v = fmt.Sprintf("%.4f", t.Accuracy)
		}
		loss := t.Config.Loss
		if loss == "" {
			loss = rfm.LossSquared
		}
		fmt.Fprintf(tw, "%d\t%s\t%d/%d\t%s\t%g\t%s\t%s\t%v\t%s\n", t.Index, v, t.Round, t.Config.Iters, t.Config.Kernel, t.Config.Ridge, m, t.Scaling, t.Config.NormalizeRows, loss)
	}
	return tw.Flush()
}

// tuneFigures draws the search: the top rung's scores in the order the
// trials ended with the best so far, and every scored trial of the first
// rung against its bandwidth and its ridge.
func tuneFigures(dir string, res *tune.Result, classification bool) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--plots %s: %w", dir, err)
	}
	val := func(t *tune.Trial) float64 {
		if classification {
			return t.Accuracy
		}
		return t.Loss
	}
	ylabel := "validation loss (MSE, standardized)"
	if classification {
		ylabel = "validation accuracy"
	}
	top := res.Best.Rows
	var xs, ys, bests []float64
	var best *tune.Trial
	for i := range res.Trials {
		t := &res.Trials[i]
		if !t.Scored() || t.Rows != top {
			continue
		}
		if best == nil || tune.Better(res.Task, t, best) {
			best = t
		}
		xs = append(xs, float64(len(xs)+1))
		ys = append(ys, val(t))
		bests = append(bests, val(best))
	}
	var files []string
	path := filepath.Join(dir, "trials.png")
	title := fmt.Sprintf("rfm tune: %d trials on %d rows (%s)", len(xs), top, res.Design)
	if err := plot.Curve(path, xs, map[string][]float64{"trial": ys, "best so far": bests}, "trial (in the order they ended)", ylabel, title); err != nil {
		return nil, err
	}
	files = append(files, path)
	first := res.Rungs[0]
	// The bandwidth as the search drew it: relative to the median distance
	// between rows of its scaling (trials given an absolute L are left out),
	// or absolute when it was fixed.
	relative := false
	for i := range res.Trials {
		relative = relative || res.Trials[i].Ratio > 0
	}
	var bw, bsc, rd, sc []float64
	for i := range res.Trials {
		t := &res.Trials[i]
		if !t.Scored() || t.Rows != first {
			continue
		}
		switch {
		case !relative:
			bw, bsc = append(bw, math.Log10(t.Config.Kernel.Bandwidth)), append(bsc, val(t))
		case t.Ratio > 0:
			bw, bsc = append(bw, math.Log10(t.Ratio)), append(bsc, val(t))
		}
		rd = append(rd, math.Log10(t.Config.Ridge))
		sc = append(sc, val(t))
	}
	if len(sc) == 0 {
		return files, nil
	}
	bwLabel := "log10 bandwidth L"
	if relative {
		bwLabel = "log10 (bandwidth L / median distance between rows)"
	}
	for _, p := range []struct {
		name, label string
		x, y        []float64
	}{{"bandwidth.png", bwLabel, bw, bsc}, {"ridge.png", "log10 ridge λ", rd, sc}} {
		if len(p.x) == 0 {
			continue
		}
		path := filepath.Join(dir, p.name)
		title := fmt.Sprintf("rfm tune: %d trials on %d rows", len(p.x), first)
		if err := plot.Scatter(path, p.x, p.y, nil, p.label, ylabel, title, false); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}

// joinInts joins integers with sep.
func joinInts(v []int, sep string) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, sep)
}

// writeEnsembleText says what became of --ensemble K > 1: the members
// saved, or why the best was saved alone, and the mean's validation.
func writeEnsembleText(w io.Writer, out *tuneJSON) {
	if out.Asked < 2 {
		return
	}
	ids := out.Members
	switch {
	case len(ids) == 0:
		fmt.Fprintf(w, "Ensemble: none (--ensemble %d): only the best trial reached the top rung with its column scaling; saved alone\n", out.Asked)
	case len(ids) < out.Asked:
		fmt.Fprintf(w, "Ensemble: the mean of trials %s: %d of the %d asked, all that reached the top rung with the best one's column scaling (round and refit above are the best one's)\n", joinInts(ids, ", "), len(ids), out.Asked)
	default:
		fmt.Fprintf(w, "Ensemble: the mean of trials %s (round and refit above are the best one's)\n", joinInts(ids, ", "))
	}
	if v := out.Validation; len(ids) > 0 && v != nil {
		rows := "validation rows"
		if v.Folds {
			rows = "out-of-fold rows"
		}
		fmt.Fprintf(w, "Ensemble on the %d %s: %.2f%% right (log-loss %.4f); the best alone %.2f%% (%.4f), the plain kernel %.2f%% (both chosen on these rows, so their scores lean high)\n",
			v.Rows, rows, 100*v.Accuracy, v.LogLoss, 100*v.BestAccuracy, v.BestLogLoss, 100*v.Floor)
	}
}

// foldsText names a cross-validation design: "5-fold cross-validation"
// or "5-fold cross-validation × 2 repeats".
func foldsText(folds, repeats int) string {
	s := fmt.Sprintf("%d-fold cross-validation", folds)
	if repeats > 1 {
		s += fmt.Sprintf(" × %d repeats", repeats)
	}
	return s
}
