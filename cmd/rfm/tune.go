package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/predictor"
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

// newTuneFlags declares tune's flags into o.
func newTuneFlags(o *tuneOptions) *flagSet {
	f := helpFlagSet("tune", "rfm tune --data FILE --target COL [--time 20m] [--trials N] [--folds K] [flags]")
	f.positional = "data"
	o.registerData(f, true)
	o.eng.Register(f.FlagSet)
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
	base, err := parseModelArgs(e, f, args, &o.data, &o.eng)
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

	defer sysmem.BoundHeap(base.MemoryLimit)()
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
	res, st, err := o.search(e, opt, n)
	if err != nil {
		return err
	}
	out := tune.NewReport(opt, res, st)
	out.Asked = o.ensemble
	if o.large != "" {
		return o.finishLarge(e, opt, res, out, pipelines, tg, n)
	}
	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	finalStart := time.Now()
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
	if err != nil {
		return o.finalError(e, bar, &out, fmt.Errorf("final fit of the best configuration (trial %d): %w", res.Best.Index, err))
	}
	if len(fm.Trials) > 1 {
		for _, t := range fm.Trials {
			out.Members = append(out.Members, t.Index)
		}
	}
	finalTime := time.Since(finalStart)
	sp := pipelines[res.Best.Scaling]
	info := trainingInfo{Data: o.data, Rows: n, Validation: "rfm tune: " + res.Design, Version: versionString()}
	if res.Choice != nil {
		info.Validation += "; " + res.Choice.String()
	}
	if err := saveModel(e.ctx, o.out, fm.Model, sp, tg, info); err != nil {
		bar.Abort()
		return err
	}
	if o.plots != "" {
		if out.Figures, err = tune.Figures(o.plots, res); err != nil {
			bar.Abort()
			return err
		}
	}
	bar.Finish(fmt.Sprintf("tune: final fit in %s; model written to %s", seconds(finalTime), o.out))
	// The best (first) member's configuration and rounds are reported.
	rm := fm.Best
	out.FitData = newFitData(&o.fitOptions, opt.Data[res.Best.Scaling], sp, tg)
	out.Config, out.Scaling, out.BestRound, out.Refitted = rm.Config, res.Best.Scaling, rm.BestRound, rm.Refitted
	out.Validation, out.FinalSecond = fm.Validation, finalTime.Seconds()
	return printReport(e, o.common, &out)
}

// finalError is a failed final fit's error: an interrupt says what it left.
func (o *tuneOptions) finalError(e *env, bar *progress, out *tune.Report, err error) error {
	bar.Abort()
	if e.ctx.Err() != nil {
		return &interrupted{fmt.Sprintf("in the final fit: no model was written; the %d trials are in %s (--resume reuses them)", out.Fits+out.Cached, o.trialsOut)}
	}
	return err
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
			n, tune.SmallRows, tune.FoldsText(opt.Folds, opt.Repeats))
	}
}

// search runs the search of opt, each trial journalled in the trials
// table as it ends, with a progress bar; n is the table's rows (for the
// bar's last line).
func (o *tuneOptions) search(e *env, opt tune.Options, n int) (*tune.Result, tune.SearchStats, error) {
	classification := opt.Data[opt.BaseScaling].Task() == rfm.Classification
	var err error
	if o.resume {
		if opt.Cache, err = tune.ReadTrials(o.trialsOut); err != nil {
			return nil, tune.SearchStats{}, fmt.Errorf("--resume: %w", err)
		}
	}
	journal, err := tune.OpenJournal(o.trialsOut, o.resume && len(opt.Cache) > 0, classification)
	if err != nil {
		return nil, tune.SearchStats{}, fmt.Errorf("--trials-out: %w", err)
	}
	defer journal.Close()
	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	res, st, err := tune.RunJournal(e.ctx, opt, journal, func(frac float64, tr, best *tune.Trial) {
		label := fmt.Sprintf("trial %d", tr.Index)
		if best != nil {
			label = fmt.Sprintf("trial %d, best %s on %d rows", tr.Index, tune.ScoreText(best, classification), best.Rows)
		}
		bar.Update(frac, label)
	})
	st.TrialsFile = o.trialsOut
	if err == nil && journal.Err() != nil {
		err = fmt.Errorf("--trials-out: %w", journal.Err())
	}
	if err != nil || e.ctx.Err() != nil {
		bar.Abort()
		if e.ctx.Err() != nil {
			return nil, st, &interrupted{fmt.Sprintf("no model was written; the %d trials that ended are in %s (--resume goes on from them)", st.Fits+st.Cached, o.trialsOut)}
		}
		return nil, st, err
	}
	// The search's end is a line of its own: --time bounds the search, and
	// the final fit on every row can take longer (its own bar and ETA).
	bar.Finish(fmt.Sprintf("tune: %d configurations, %d fits in %s; best trial %d; %s",
		res.Drawn, st.Fits, seconds(st.Time), res.Best.Index, tune.FinalText(o.large != "", len(tune.Top(res, o.ensemble)), n)))
	return res, st, nil
}

// prepareSearch settles the search's solver and sizes (tune.PlanSearch),
// encodes the rows by every column scaling searched (opt.Data, opt.Valid)
// and returns their pipelines.
func (o *tuneOptions) prepareSearch(e *env, f *flagSet, opt *tune.Options, t *dataset.Table, tg *dataset.Target, p *dataset.Pipeline) (map[string]*dataset.Pipeline, error) {
	n := t.NRows()
	large, err := tune.PlanSearch(opt, predictor.FitShape(n, p.Width(), tg), f.IsSet("max-rows") || f.IsSet("final-centers"))
	var se *tune.SetupError
	if errors.As(err, &se) {
		return nil, usagef("%s", se.Msg)
	}
	if err != nil {
		return nil, err
	}
	o.large = large
	if large != "" && !o.common.quiet {
		fmt.Fprintf(e.stderr, "tune: %s, so the search fits stratified samples of at most %d rows (--max-rows); the saved model is rfm fit's default tree, a tree of the best configuration, or (on at most %d rows) a Nyström fit on %d centres (--final-centers), whichever the validation rows prefer, the default tree unless beaten beyond the noise\n",
			large, opt.MaxRows, tune.NystromProbeRows, opt.FinalCenters)
	}
	pipelines, data, err := predictor.EncodeScalings(t, tg, p, o.scale, opt.Space.Scalings, o.target, o.task)
	if err != nil {
		return nil, cli.InFile(o.data, err)
	}
	opt.Data = data
	opt.Protected = append(tune.ImageCandidates(*opt), tune.LargeCandidates(*opt, large != "")...) // raw pixels: the plain kernel and the image RFM (docs/images.md); large tables: the defaults with a strong ridge
	if o.valid != "" {
		vt, err := o.readValid(e, p, tg, opt.Base.MemoryLimit)
		if err != nil {
			return nil, err
		}
		if opt.Valid, err = predictor.EncodeEach(vt, pipelines, tg); err != nil {
			return nil, cli.InFile(o.valid, err)
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
// the command line fix their settings (tune.FixedSpace), the others are
// searched.
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
	case o.eng.RFMT:
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
	sp, err := tune.FixedSpace(base, f.IsSet)
	if err != nil {
		return opt, usagef("%v", err)
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
