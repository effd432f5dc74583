// Package tune searches an RFM's hyperparameters within a time budget:
// random configurations from a Space (bandwidth and ridge on log scales,
// kernel family and exponent, full or diagonal M, AGOP power, M
// normalization, centred gradients, input scaling, row normalization, the
// number of rounds) and, after Options.LocalAfter of them, half the time
// perturbations of the best so far (local draws), cut early by successive
// halving (each bracket fits its configurations on a small stratified
// share of the training rows, keeps the best 1/η, and grows the share by η
// until the top rung uses every training row), several fits at once
// within the memory budget. Scores come
// from validation rows that no fit trains on: a seeded holdout of the
// training rows, k folds, or a validation set the caller gives; a test set
// is never an input. With the same seed the random configurations are
// drawn in the same order at the same places (the local draws between them
// follow the scores, from a generator of their own), so a
// search that is cut off can be resumed from its trials table
// (Options.Cache): finished trials are not fitted again.
package tune

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/tree"
)

// Options of a search.
type Options struct {
	// Base holds every setting the space does not cover (seed, float32,
	// AGOP samples, solver, class weights...) and is the first trial, as
	// given: the search's reference point. Base.ValFraction sizes the
	// holdout when there are no folds and no validation data.
	Base rfm.Config
	// BaseScaling names Base's version of the data (a key of Data).
	BaseScaling string
	Space       Space
	// Data maps a scaling name to the training rows encoded that way (the
	// same rows in the same order in every version); Space.Scalings, when
	// empty, becomes its keys.
	Data map[string]*rfm.Dataset
	// Valid, when set, maps the same names to validation rows: every fit
	// trains on all of Data and is scored there (no holdout, no folds).
	Valid map[string]*rfm.Dataset
	// Budget bounds the search's wall time (0: none; then Trials must be
	// set). Fits still running at the deadline are cut and not scored.
	Budget time.Duration
	// Trials bounds the configurations drawn (0: until the budget).
	Trials int
	// Folds ≥ 2 scores every fit by k-fold cross-validation of the
	// training rows instead of one holdout.
	Folds int
	// Repeats > 1 repeats the k-fold cross-validation with other seeded
	// fold assignments and averages over every fold of every repeat: on a
	// few hundred rows one assignment's luck weighs on the choice among
	// dozens of configurations (needs Folds; 0 or 1: once).
	Repeats int
	// Eta is the halving rate (0: 3): a rung keeps the best 1/η of its
	// trials and gives the next rung η times the rows.
	Eta int
	// MinRows is the fewest training rows of the first rung (0: 400).
	MinRows int
	// MaxRows, when > 0, caps the training rows of the top rung: the search
	// then scores configurations on stratified samples of at most MaxRows
	// of each split's training rows (validation rows stay whole), which
	// keeps the search's cost bounded on large tables; FinalFit still fits
	// every row.
	MaxRows int
	// FinalCenters, when > 0, bounds the exact solves of the final fits
	// (FinalFit, FinalEnsemble): a final model of more training rows than
	// FinalCenters is solved by Nyström on FinalCenters seeded, uniformly
	// drawn centres (in float64) instead of by Base's solver. With MaxRows
	// the search stays exact on samples while the model is fitted on every
	// row of a table too large to solve exactly. 0: Base's solver.
	FinalCenters int
	// Jobs is how many fits run at once (0: as many as threads and memory
	// allow). The threads of the linear algebra (linalg.SetThreads, process
	// wide) are shared among them while Run runs, and restored after.
	Jobs int
	// LocalAfter is how many configurations are drawn at random before
	// half of the later draws become local ones: a perturbation of one of
	// the three best configurations so far (see Space.perturb). 0: 30 (so a
	// search of at most 30 configurations, as the UCI protocol's, is pure
	// random search); −1: never.
	LocalAfter int
	// Cache holds earlier trials by key (a resumed search); a trial found
	// there is not fitted again.
	Cache map[string]Trial
	// Done, if set, is told each trial as it ends (one call at a time).
	Done func(Trial)
	// Forest, when > 1, makes TreeFinal also try a forest of that many
	// trees (tree.FitForest) of the chosen tree configuration, kept only
	// when it beats the tree on the validation rows (0 or 1: one tree).
	Forest int
	// Log, if set, is told one line as each phase of TreeFinal ends (the
	// probe, each alternative, the final fit: what was fitted, on how many
	// rows, in how many seconds), for the user to follow.
	Log func(line string)
	// Rule is how the configuration is chosen among those scored at the
	// top rung. RuleBest (the zero value, the UCI protocol's) keeps the
	// best score; RuleOneSE (the rfm tune command's) selects on the
	// validation loss with the base configuration protected and the
	// one-standard-error rule, and caps the trials (TrialCap) when Trials
	// is 0. See Choice.
	Rule Rule
	// Protected lists configurations drawn right after Base (trials 1, 2,
	// ...) that, like Base under RuleOneSE, reach the top rung whatever
	// their scores on the rungs below, so that the choice on validation
	// always compares them: e.g. ImageCandidates, the plain kernel and an
	// RFM on unit-norm raw pixels for image-like inputs.
	Protected []Point
}

// Rule is how a search chooses among its scored configurations.
type Rule int

const (
	// RuleBest keeps the best score: classification by accuracy, then
	// lower loss; regression by loss (Better).
	RuleBest Rule = iota
	// RuleOneSE selects on the validation loss (the squared error of the
	// class scores against the one-hot labels, the Brier score, or of the
	// standardized outputs; a proper score), never on raw accuracy. The
	// base configuration (trial 0, rfm fit's defaults) is scored at the top
	// rung whatever its score on the rungs below; a configuration replaces
	// it only when its mean loss is lower by more than the standard error
	// of the paired per-fold differences; among those that do, the
	// simplest (Complexity) whose loss is within one standard error of the
	// lowest is chosen.
	RuleOneSE
)

// SmallRows is the size below which one holdout is too noisy to choose
// among many configurations: SmallDesign then scores by folds.
const SmallRows = 2000

// SmallDesign is the validation design of a table of n training rows when
// the user names none (rfm tune without --folds, --valid or
// --val-fraction): below SmallRows rows 5-fold cross-validation, repeated
// twice below 1 000 rows (where a fit is cheap), so that every row is a
// validation row; 0, 0 (one holdout) from SmallRows up.
func SmallDesign(n int) (folds, repeats int) {
	switch {
	case n >= SmallRows || n < 4:
		return 0, 0
	case n < 10:
		return 2, 0
	case n < 1000:
		return 5, 2
	}
	return 5, 0
}

// TrialCap is the most configurations RuleOneSE draws when Options.Trials
// is 0, for v distinct validation rows (every row with folds): max(20,
// v/10). The standard error of a difference of two configurations' mean
// scores shrinks as 1/√v, and the luck of the best of T noise-equal
// configurations grows as √(2 ln T) of those errors: on a few hundred rows
// a few dozen draws already cover what the rows can tell apart, and more
// draws only find luckier ones (on 569 rows, 545 configurations scored on
// one 76-row holdout chose one 10 points worse on test than the defaults).
func TrialCap(v int) int { return max(20, v/10) }

// DefaultLocalAfter is Options.LocalAfter's default.
const DefaultLocalAfter = 30

const finalCentersWant = "0 (the base configuration's solver) or M > 0 centres"

// DefaultMinRows is Options.MinRows's default.
const DefaultMinRows = 400

// LargeMaxRows and LargeCenters are how a table too large for an exact fit
// is tuned unless told otherwise (rfm tune with --solver auto, the tuned
// UCI protocol's largest sets): the search fits stratified samples of at
// most LargeMaxRows rows (Options.MaxRows), and the saved model is fitted
// on every row by Nyström on LargeCenters centres (Options.FinalCenters).
const (
	LargeMaxRows = 4000
	LargeCenters = 10000
)

// OptionError is a field of Options out of its range: Check's error, for a
// caller that names its own settings (the CLI's flags) after the fields.
type OptionError struct {
	Field string // the Options field
	Value any
	Want  string // what the field must be
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("tune: %s = %v: want %s", e.Field, e.Value, e.Want)
}

// Check validates the options that do not depend on the data (Run checks
// the rest): an *OptionError names the field out of its range.
func (o *Options) Check() error {
	minRows := o.MinRows
	if minRows == 0 {
		minRows = DefaultMinRows
	}
	bad := func(field string, v any, want string) error { return &OptionError{field, v, want} }
	switch {
	case o.Budget < 0:
		return bad("Budget", o.Budget, "a duration ≥ 0 (0: none)")
	case o.Trials < 0:
		return bad("Trials", o.Trials, "N ≥ 0 (0: until the time runs out)")
	case o.Budget == 0 && o.Trials == 0:
		return bad("Trials", o.Trials, "N > 0 when there is no time budget: the search must end somewhere")
	case o.Folds == 1 || o.Folds < 0:
		return bad("Folds", o.Folds, "0 (one holdout) or K ≥ 2")
	case o.Repeats < 0 || (o.Repeats > 1 && o.Folds < 2):
		return bad("Repeats", o.Repeats, "0 or 1 (once), or R ≥ 2 with K-fold cross-validation")
	case o.Jobs < 0:
		return bad("Jobs", o.Jobs, "0 (as many as threads and memory allow) or N ≥ 1")
	case o.Eta < 0 || o.Eta == 1:
		return bad("Eta", o.Eta, "η ≥ 2 (0: 3)")
	case o.LocalAfter < -1:
		return bad("LocalAfter", o.LocalAfter, fmt.Sprintf("N ≥ 1 random configurations before local ones (0: %d), or −1 for none", DefaultLocalAfter))
	case o.MinRows < 0 || (o.MinRows > 0 && o.MinRows < 10):
		return bad("MinRows", o.MinRows, fmt.Sprintf("N ≥ 10 (0: %d)", DefaultMinRows))
	case o.MaxRows < 0 || (o.MaxRows > 0 && o.MaxRows < minRows):
		return bad("MaxRows", o.MaxRows, fmt.Sprintf("0 (every row) or N ≥ the first rung's rows (%d)", minRows))
	case o.FinalCenters < 0:
		return bad("FinalCenters", o.FinalCenters, finalCentersWant)
	case o.Forest < 0 || o.Forest > tree.MaxTrees:
		return bad("Forest", o.Forest, fmt.Sprintf("0 or 1 (one tree) to %d trees", tree.MaxTrees))
	}
	return nil
}

// Trial is one configuration fitted on one rung.
type Trial struct {
	Index   int // configuration number, in drawing order (0 is Options.Base)
	Bracket int
	Rung    int
	Rows    int // training rows of each fit
	Scaling string
	Config  rfm.Config
	// Ratio is the bandwidth as a multiple of the median distance (0 when
	// the bandwidth was given absolutely).
	Ratio  float64
	Status string // StatusOK, StatusCached, StatusCut, or "failed: ..."
	// Scores of the kept round (the validation round choice; averaged over
	// the folds): Accuracy for classification, Loss the validation MSE of
	// the one-hot or standardized outputs.
	Accuracy, Loss float64
	Round          int
	// PlainAccuracy, PlainLoss score round 0: the plain kernel with the same
	// bandwidth, ridge and scaling.
	PlainAccuracy, PlainLoss float64
	// FoldLoss and PlainFoldLoss are Loss and PlainLoss on each split (each
	// fold of each repeat, in order): the paired differences of RuleOneSE.
	FoldLoss, PlainFoldLoss []float64
	Seconds                 float64
	Key                     string
}

// The trial states besides failures.
const (
	StatusOK     = "ok"
	StatusCached = "cached" // scored by an earlier run (Options.Cache)
	StatusCut    = "cut"    // stopped by the budget
)

// Scored reports whether the trial has scores.
func (t *Trial) Scored() bool { return t.Status == StatusOK || t.Status == StatusCached }

// Result of a search.
type Result struct {
	Task   rfm.Task
	Trials []Trial // in the order they ended
	// Rungs lists the training rows of each rung (the last is every
	// training row of a split).
	Rungs []int
	// Best is the best scored trial of the largest rung any trial reached
	// (or, when it scores higher, PlainTrial(Plain): the tuned RFM is never
	// below the tuned plain kernel on validation); Plain is the trial with
	// the best round-0 score there (the tuned plain kernel), and
	// Default the first configuration (Options.Base) there, nil if it was cut.
	Best, Plain, Default *Trial
	Jobs                 int
	Design               string // how the fits were scored, e.g. "holdout 20%" or "5 folds"
	Elapsed              time.Duration
	Drawn                int // configurations drawn
	Local                int // of them, local draws (Options.LocalAfter)
	// TrialCap is the cap RuleOneSE put on the configurations (0: none).
	TrialCap int
	// Choice says how Best was chosen (RuleOneSE; nil for RuleBest).
	Choice *Choice
}

// Choice is how RuleOneSE chose the best configuration.
type Choice struct {
	// Kept: "defaults" (nothing beat the base configuration by more than
	// its standard error), "lowest loss", or "simpler within 1 SE".
	Kept string `json:"kept"`
	// Lowest is the trial of the lowest mean validation loss and LowestLoss
	// that loss; DefaultLoss the base configuration's, ChosenLoss Best's.
	Lowest      int     `json:"lowest_loss_trial"`
	LowestLoss  float64 `json:"lowest_loss"`
	DefaultLoss float64 `json:"default_loss"`
	ChosenLoss  float64 `json:"chosen_loss"`
	// Margin is the base configuration's loss minus the lowest, SE its
	// standard error (paired per-fold differences; 0 with one split).
	Margin float64 `json:"margin_over_defaults"`
	SE     float64 `json:"margin_se"`
	// Z is how many standard errors the margin must exceed: max(1,
	// √(2 ln Candidates)), the luck of the best of that many noise-equal
	// configurations.
	Z float64 `json:"margin_z"`
	// Splits is how many splits the losses average, Folds how many of
	// them count as independent for the standard errors.
	Splits int `json:"splits"`
	Folds  int `json:"independent_folds"`
	// Candidates is how many scored configurations (and their plain
	// kernels) of the top rung were compared.
	Candidates int `json:"candidates"`
}

// MarshalJSON writes the choice with a score that does not exist (the
// defaults' loss and margin when the defaults were cut before the top
// rung) as null: encoding/json refuses NaN.
func (c Choice) MarshalJSON() ([]byte, error) {
	type plain Choice // no methods: no recursion
	orNull := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	return json.Marshal(struct {
		plain
		LowestLoss  *float64 `json:"lowest_loss"`
		DefaultLoss *float64 `json:"default_loss"`
		ChosenLoss  *float64 `json:"chosen_loss"`
		Margin      *float64 `json:"margin_over_defaults"`
		SE          *float64 `json:"margin_se"`
	}{plain(c), orNull(c.LowestLoss), orNull(c.DefaultLoss), orNull(c.ChosenLoss), orNull(c.Margin), orNull(c.SE)})
}

// String is the choice in a sentence, for the model's note.
func (c *Choice) String() string {
	se := fmt.Sprintf("vs %.2g × SE %.2g over %d folds", c.Z, c.SE, c.Folds)
	if c.Folds < 2 {
		se = "(one split: no standard error)"
	}
	s := fmt.Sprintf("chosen on the validation loss among %d candidates, the defaults protected (replaced only by a margin over z standard errors) and the 1-SE rule: ", c.Candidates)
	switch c.Kept {
	case "defaults":
		return s + fmt.Sprintf("the defaults kept, fitted as rfm fit fits them (loss %.4g; the lowest, trial %d, %.4g: margin %.2g %s)", c.DefaultLoss, c.Lowest, c.LowestLoss, c.Margin, se)
	case "simpler within 1 SE":
		return s + fmt.Sprintf("a simpler configuration within 1 SE of the lowest (loss %.4g; lowest %.4g, trial %d; defaults %.4g, margin %.2g %s)", c.ChosenLoss, c.LowestLoss, c.Lowest, c.DefaultLoss, c.Margin, se)
	}
	return s + fmt.Sprintf("the lowest loss, trial %d (%.4g; defaults %.4g, margin %.2g %s)", c.Lowest, c.LowestLoss, c.DefaultLoss, c.Margin, se)
}

// Better reports whether a scores better than b: classification by
// accuracy, then lower loss; regression by loss (a tie is not better).
func Better(task rfm.Task, a, b *Trial) bool {
	if task == rfm.Classification {
		return byAccuracyThenLoss.Better([]float64{a.Accuracy, a.Loss}, []float64{b.Accuracy, b.Loss})
	}
	return metrics.MetricLoss.Better(a.Loss, b.Loss)
}

var byAccuracyThenLoss = metrics.Order{metrics.MetricAccuracy, metrics.MetricLoss}

type split struct {
	train []int // rows of Data
	valid []int // rows of Data; nil with Options.Valid
}

type search struct {
	opt    Options
	space  Space
	task   rfm.Task
	splits []split
	design string
	rungs  []int
	eta    int
	jobs   int
	// localAfter: configurations drawn before local draws start
	localAfter int
	threads    int
	finger     map[string]uint64
	// drawn holds every configuration drawn, by its index: the starting
	// points of local draws
	drawn []Point

	mu      sync.Mutex
	medians map[string]float64
	subsets map[string]*rfm.Dataset
	res     *Result
}

// Run searches. It returns an error when nothing could be scored (every
// trial failed or the budget ran out before one ended), or for bad options.
func Run(ctx context.Context, opt Options) (*Result, error) {
	s, err := newSearch(opt)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if opt.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(opt.Budget))
		defer cancel()
	}
	prev := linalg.Threads()
	defer linalg.SetThreads(prev)
	s.threads = prev
	s.run(ctx)
	s.res.Elapsed = time.Since(start)
	if err := s.finish(); err != nil {
		return s.res, err
	}
	return s.res, nil
}

func newSearch(opt Options) (*search, error) {
	if len(opt.Data) == 0 {
		return nil, errors.New("tune: no data")
	}
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if err := opt.Base.Validate(); err != nil {
		return nil, fmt.Errorf("tune: base configuration: %w", err)
	}
	if opt.Base.Solver == rfm.SolverTree {
		return nil, errors.New("tune: a tree of RFMs cannot be tuned; tune an exact or Nyström fit on a sample of the rows")
	}
	names := make([]string, 0, len(opt.Data))
	for k := range opt.Data {
		names = append(names, k)
	}
	sort.Strings(names)
	space := opt.Space
	if len(space.Scalings) == 0 {
		space.Scalings = names
	}
	for _, k := range space.Scalings {
		if opt.Data[k] == nil {
			return nil, fmt.Errorf("tune: no data for scaling %q", k)
		}
	}
	if opt.Data[opt.BaseScaling] == nil {
		return nil, fmt.Errorf("tune: no data for the base scaling %q", opt.BaseScaling)
	}
	if err := checkProtected(opt); err != nil {
		return nil, err
	}
	ref := opt.Data[opt.BaseScaling]
	if err := ref.Check("training"); err != nil {
		return nil, fmt.Errorf("tune: %w", err)
	}
	space, err := space.withDefaults(ref.D, ref.Task())
	if err != nil {
		return nil, err
	}
	for k, ds := range opt.Data {
		if ds.N != ref.N || ds.Task() != ref.Task() {
			return nil, fmt.Errorf("tune: the %q version of the data has %d rows (%s), the %q one %d (%s)", k, ds.N, ds.Task(), opt.BaseScaling, ref.N, ref.Task())
		}
		if opt.Valid != nil && opt.Valid[k] == nil {
			return nil, fmt.Errorf("tune: no validation data for scaling %q", k)
		}
	}
	if opt.Eta == 0 {
		opt.Eta = 3
	}
	if opt.MinRows == 0 {
		opt.MinRows = DefaultMinRows
	}
	if err := checkFinalCenters(opt, opt.Data[opt.BaseScaling]); err != nil {
		return nil, err
	}
	localAfter := opt.LocalAfter
	switch localAfter {
	case 0:
		localAfter = DefaultLocalAfter
	case -1:
		localAfter = math.MaxInt
	}
	s := &search{opt: opt, space: space, task: ref.Task(), eta: opt.Eta, medians: map[string]float64{},
		subsets: map[string]*rfm.Dataset{}, finger: map[string]uint64{}, localAfter: localAfter}
	s.res = &Result{Task: s.task}
	n := ref.N
	var labels []int
	if s.task == rfm.Classification {
		labels = ref.Labels
	}
	seed := opt.Base.Seed
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	switch {
	case opt.Valid != nil:
		s.splits = []split{{train: all}}
		s.design = fmt.Sprintf("validation rows (%d)", opt.Valid[opt.BaseScaling].N)
	case opt.Folds >= 2:
		if n < 2*opt.Folds {
			return nil, fmt.Errorf("tune: %d rows are too few for %d folds", n, opt.Folds)
		}
		for r := range max(opt.Repeats, 1) {
			// Repeat 0 is the plain k-fold of the seed (what FinalFit's
			// out-of-fold calibration uses).
			trains, tests := rfm.KFold(n, labels, opt.Folds, seed+uint64(r)*0x9e3779b97f4a7c15)
			for i := range trains {
				s.splits = append(s.splits, split{train: trains[i], valid: tests[i]})
			}
		}
		s.design = fmt.Sprintf("%d folds", opt.Folds)
		if opt.Repeats > 1 {
			s.design += fmt.Sprintf(" × %d repeats", opt.Repeats)
		}
	default:
		frac := opt.Base.ValFraction
		if frac <= 0 {
			frac = 0.2
		}
		tr, va := rfm.Holdout(n, labels, frac, seed)
		if len(va) == 0 || len(tr) < 2 {
			return nil, fmt.Errorf("tune: a %g%% holdout of %d rows leaves no validation rows; use more rows or --folds", 100*frac, n)
		}
		s.splits = []split{{train: tr, valid: va}}
		s.design = fmt.Sprintf("holdout %g%% (%d rows)", 100*frac, len(va))
	}
	s.res.Design = s.design
	if opt.Rule == RuleOneSE && opt.Trials == 0 {
		v := n
		switch {
		case opt.Valid != nil:
			v = opt.Valid[opt.BaseScaling].N
		case opt.Folds < 2:
			v = len(s.splits[0].valid)
		}
		s.opt.Trials = TrialCap(v)
		s.res.TrialCap = s.opt.Trials
	}
	top := len(s.splits[0].train)
	for _, sp := range s.splits {
		top = min(top, len(sp.train))
	}
	if opt.MaxRows > 0 {
		top = min(top, opt.MaxRows)
	}
	// Rungs: top, top/η, top/η², ... down to MinRows (at most 4 rungs).
	s.rungs = []int{top}
	for r := top / s.eta; r >= opt.MinRows && len(s.rungs) < 4; r /= s.eta {
		s.rungs = append(s.rungs, r)
	}
	slices.Reverse(s.rungs)
	s.res.Rungs = s.rungs
	for _, k := range space.Scalings {
		s.finger[k] = fingerprint(opt.Data[k], opt.Valid[k])
	}
	s.jobs = s.planJobs()
	s.res.Jobs = s.jobs
	return s, nil
}

// planJobs is Options.Jobs, or as many fits as threads and memory allow:
// each at the top rung with a full M (the largest a trial can be).
func (s *search) planJobs() int {
	threads := linalg.Threads()
	if s.opt.Jobs > 0 {
		return s.opt.Jobs
	}
	ref := s.opt.Data[s.opt.BaseScaling]
	nv := 0
	if s.opt.Valid != nil {
		nv = s.opt.Valid[s.opt.BaseScaling].N
	} else {
		nv = len(s.splits[0].valid)
	}
	cfg := s.opt.Base
	cfg.Diag = cfg.Diag && !slices.Contains(s.space.Diag, false)
	need := rfm.PlanFit(rfm.FitShape{N: s.rungs[len(s.rungs)-1], Valid: nv, D: ref.D, Outputs: ref.NumOutputs(), Threads: 1}, cfg).Total()
	avail := s.opt.Base.MemoryLimit
	if avail == 0 {
		a, ok := rfm.MemoryAvailable()
		if !ok {
			return threads
		}
		avail = a / 10 * 8
	}
	jobs := int(avail / max(need, 1))
	return max(1, min(jobs, threads))
}

// fingerprint hashes a version of the data (and its validation rows), so
// that a resumed search does not reuse scores of other data.
func fingerprint(ds, valid *rfm.Dataset) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, d := range []*rfm.Dataset{ds, valid} {
		if d == nil {
			continue
		}
		binary.LittleEndian.PutUint64(b[:], uint64(d.N)<<20|uint64(d.D))
		h.Write(b[:])
		for _, v := range d.X {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
		for _, l := range d.Labels {
			binary.LittleEndian.PutUint64(b[:], uint64(l))
			h.Write(b[:])
		}
		for _, v := range d.Y {
			binary.LittleEndian.PutUint64(b[:], math.Float64bits(v))
			h.Write(b[:])
		}
	}
	return h.Sum64()
}

// run draws brackets until the budget or the trial count runs out. A
// bracket draws η^(rungs−1) configurations (the first bracket's first is
// the base), fits them on the smallest rung and promotes the best 1/η of
// each rung to the next.
func (s *search) run(ctx context.Context) {
	// The random draws and the coin that chooses between a random and a
	// local draw come from rng, the local draws from their own generator:
	// a local draw's use of random numbers depends on the leaders, that is
	// on the scores, and must not move the random draws after it (two runs
	// whose scores differ in the last bits, as another --jobs count can
	// make them, then draw the same random configurations).
	rng := rand.New(rand.NewPCG(s.opt.Base.Seed, 0x7e5e))
	near := rand.New(rand.NewPCG(s.opt.Base.Seed, 0x10ca1))
	width := 1
	for range len(s.rungs) - 1 {
		width *= s.eta
	}
	for bracket := 0; ctx.Err() == nil; bracket++ {
		if s.opt.Trials > 0 && s.res.Drawn >= s.opt.Trials {
			return
		}
		count := width
		if s.opt.Trials > 0 {
			count = min(count, s.opt.Trials-s.res.Drawn)
		}
		points := make([]Point, count)
		idx := make([]int, count)
		leaders := s.leaders(3)
		for i := range points {
			switch {
			case s.res.Drawn == 0:
				points[i] = Point{Config: s.opt.Base, Scaling: s.opt.BaseScaling}
			case s.res.Drawn <= len(s.opt.Protected):
				points[i] = s.opt.Protected[s.res.Drawn-1]
			case len(leaders) > 0 && s.res.Drawn >= s.localAfter && rng.IntN(2) == 0:
				points[i] = s.space.perturb(near, s.pointOf(leaders[near.IntN(len(leaders))]))
				s.res.Local++
			default:
				points[i] = s.space.draw(rng, s.opt.Base)
			}
			idx[i] = s.res.Drawn
			s.drawn = append(s.drawn, points[i])
			s.res.Drawn++
		}
		for rung, rows := range s.rungs {
			trials := s.rung(ctx, bracket, rung, rows, points, idx)
			if ctx.Err() != nil || rung == len(s.rungs)-1 {
				break
			}
			// Promote the best 1/η (at least one) of the scored trials.
			var ok []int
			for i := range trials {
				if trials[i].Scored() {
					ok = append(ok, i)
				}
			}
			sort.SliceStable(ok, func(a, b int) bool { return s.better(&trials[ok[a]], &trials[ok[b]]) })
			keep := min(len(ok), max(1, len(points)/s.eta))
			if keep == 0 {
				break
			}
			var np []Point
			var ni []int
			// Options.Protected reach the top rung whatever their scores
			// below; those that did not make the cut go first, so that a
			// budget running out within the rung cuts the others first.
			for _, j := range ok[keep:] {
				if idx[j] > 0 && idx[j] <= len(s.opt.Protected) {
					np, ni = append(np, points[j]), append(ni, idx[j])
				}
			}
			for _, j := range ok[:keep] {
				np, ni = append(np, points[j]), append(ni, idx[j])
			}
			if s.opt.Rule == RuleOneSE {
				// The base configuration is protected: it reaches the top
				// rung whatever its score below (its score there is the
				// reference the others must beat).
				for _, j := range ok[keep:] {
					if idx[j] == 0 {
						np, ni = append(np, points[j]), append(ni, 0)
					}
				}
			}
			points, idx = np, ni
		}
	}
}

// leaders returns up to k of the best scored trials of the largest rung
// any scored trial reached (ties kept in drawing order), for local draws.
// The brackets before have all ended, so with the same seed and scores the
// leaders, and so the draws, are the same (a resumed search repeats them).
func (s *search) leaders(k int) []*Trial {
	top := -1
	for i := range s.res.Trials {
		if t := &s.res.Trials[i]; t.Scored() {
			top = max(top, t.Rows)
		}
	}
	var out []*Trial
	for i := range s.res.Trials {
		if t := &s.res.Trials[i]; t.Scored() && t.Rows == top {
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		switch {
		case s.better(out[a], out[b]):
			return true
		case s.better(out[b], out[a]):
			return false
		}
		return out[a].Index < out[b].Index // a tie: the earlier draw
	})
	return out[:min(k, len(out))]
}

// pointOf is the configuration t was drawn as: the searched settings as
// drawn, the rest (memory limit, refit, calibration...) from Options.Base.
// Base's own absolute bandwidth becomes a ratio of the median distance when
// the space draws ratios, so that local draws near it stay in the space's
// range.
func (s *search) pointOf(t *Trial) Point {
	p := s.drawn[t.Index]
	if bw := p.Config.Kernel.Bandwidth; p.Ratio == 0 && !s.space.BandwidthAbsolute && bw > 0 {
		if med := s.median(p.Scaling, p.Config.NormalizeRows); med > 0 {
			p.Ratio = roundSig(clamp(bw/med, s.space.Bandwidth))
		}
	}
	return p
}

// rung fits points on rows training rows, Jobs at a time, sharing the
// threads among them.
func (s *search) rung(ctx context.Context, bracket, rung, rows int, points []Point, idx []int) []Trial {
	out := make([]Trial, len(points))
	jobs := max(1, min(s.jobs, len(points)))
	linalg.SetThreads(max(1, s.threads/jobs))
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= len(points) || ctx.Err() != nil {
					return
				}
				t := s.trial(ctx, points[i], rows, jobs)
				t.Index, t.Bracket, t.Rung = idx[i], bracket, rung
				out[i] = t
				s.mu.Lock()
				s.res.Trials = append(s.res.Trials, t)
				if s.opt.Done != nil {
					s.opt.Done(t)
				}
				s.mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

// trial fits one configuration on every split and scores it.
func (s *search) trial(ctx context.Context, p Point, rows, jobs int) Trial {
	cfg := p.Config
	if p.Ratio > 0 {
		cfg.Kernel.Bandwidth = roundSig(p.Ratio * s.median(p.Scaling, cfg.NormalizeRows))
	}
	cfg.Refit, cfg.Calibrate, cfg.FinalKernel = false, rfm.CalibrateNone, nil
	if cfg.MemoryLimit > 0 {
		cfg.MemoryLimit /= uint64(jobs)
	}
	t := Trial{Rows: rows, Scaling: p.Scaling, Config: cfg, Ratio: p.Ratio}
	t.Key = s.key(cfg, p.Scaling, rows)
	if c, ok := s.opt.Cache[t.Key]; ok && c.Scored() {
		t.Status, t.Accuracy, t.Loss, t.Round = StatusCached, c.Accuracy, c.Loss, c.Round
		t.PlainAccuracy, t.PlainLoss, t.Seconds = c.PlainAccuracy, c.PlainLoss, c.Seconds
		t.FoldLoss, t.PlainFoldLoss = c.FoldLoss, c.PlainFoldLoss
		return t
	}
	if err := cfg.Validate(); err != nil {
		t.Status = "failed: " + err.Error()
		return t
	}
	start := time.Now()
	var acc, loss []float64 // by round, summed over splits
	var headAcc, headLoss float64
	splitLoss := make([][]float64, len(s.splits)) // by split, by round
	headSplit := make([]float64, len(s.splits))
	for i, sp := range s.splits {
		train, valid := s.subset(p.Scaling, i, rows, sp)
		m, err := rfm.Fit(ctx, cfg, train, valid, nil)
		if err != nil {
			if ctx.Err() != nil {
				t.Status = StatusCut
			} else {
				t.Status = "failed: " + err.Error()
			}
			return t
		}
		if m.Head != nil { // the logistic head: scored at the round the rounds chose
			headAcc += m.Head.ValAccuracy
			headLoss += m.Head.ValLoss
			headSplit[i] = m.Head.ValLoss
			t.Round = m.BestRound
		}
		h := m.History
		if i == 0 {
			acc, loss = make([]float64, len(h)), make([]float64, len(h))
		} else if len(h) < len(acc) { // an early stop: compare the rounds all splits have
			acc, loss = acc[:len(h)], loss[:len(h)]
		}
		for r := range acc {
			acc[r] += h[r].ValAccuracy
			loss[r] += h[r].ValLoss
		}
		splitLoss[i] = make([]float64, len(h))
		for r := range h {
			splitLoss[i][r] = h[r].ValLoss
		}
	}
	k := float64(len(s.splits))
	best := 0
	for r := range acc {
		acc[r] /= k
		loss[r] /= k
		a, b := &Trial{Accuracy: acc[r], Loss: loss[r]}, &Trial{Accuracy: acc[best], Loss: loss[best]}
		if s.better(a, b) {
			best = r
		}
	}
	t.Status = StatusOK
	if cfg.Loss == rfm.LossLogistic {
		t.Accuracy, t.Loss = headAcc/k, headLoss/k
	} else {
		t.Round, t.Accuracy, t.Loss = best, acc[best], loss[best]
	}
	t.PlainAccuracy, t.PlainLoss = acc[0], loss[0]
	t.FoldLoss, t.PlainFoldLoss = make([]float64, len(s.splits)), make([]float64, len(s.splits))
	for i := range s.splits {
		t.PlainFoldLoss[i] = splitLoss[i][0]
		if cfg.Loss == rfm.LossLogistic {
			t.FoldLoss[i] = headSplit[i]
		} else {
			t.FoldLoss[i] = splitLoss[i][t.Round]
		}
	}
	t.Seconds = time.Since(start).Seconds()
	return t
}

// subset returns split i's training rows (a stratified sample of rows of
// them, the same for every trial of that size) and validation rows, in the
// given scaling.
func (s *search) subset(scaling string, i, rows int, sp split) (train, valid *rfm.Dataset) {
	ds := s.opt.Data[scaling]
	key := fmt.Sprintf("%s/%d/%d", scaling, i, rows)
	vkey := fmt.Sprintf("%s/%d/valid", scaling, i)
	s.mu.Lock()
	defer s.mu.Unlock()
	if tr, ok := s.subsets[key]; ok {
		return tr, s.subsets[vkey]
	}
	idx := sp.train
	if rows < len(idx) {
		var labels []int
		if ds.Labels != nil {
			labels = make([]int, len(idx))
			for j, r := range idx {
				labels[j] = ds.Labels[r]
			}
		}
		_, pick := rfm.Holdout(len(idx), labels, float64(rows)/float64(len(idx)), s.opt.Base.Seed+uint64(rows))
		sub := make([]int, len(pick))
		for j, r := range pick {
			sub[j] = idx[r]
		}
		idx = sub
	}
	train = withClasses(ds.Subset(idx), ds)
	if sp.valid != nil {
		if valid = s.subsets[vkey]; valid == nil {
			valid = withClasses(ds.Subset(sp.valid), ds)
		}
	} else {
		valid = s.opt.Valid[scaling]
	}
	s.subsets[key], s.subsets[vkey] = train, valid
	return train, valid
}

// withClasses keeps the full data's class count on a sample that may miss
// a class.
func withClasses(sub, full *rfm.Dataset) *rfm.Dataset {
	if full.Labels != nil && sub.Classes == 0 {
		sub.Classes = full.NumOutputs()
	}
	return sub
}

// median is the median pairwise distance of up to 1 000 training rows of
// the first split in the given scaling (row-normalized when asked).
func (s *search) median(scaling string, normalize bool) float64 {
	key := fmt.Sprintf("%s/%v", scaling, normalize)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.medians[key]; ok {
		return v
	}
	ds := s.opt.Data[scaling]
	idx := s.splits[0].train
	rng := rand.New(rand.NewPCG(s.opt.Base.Seed, 0x3ed1))
	if len(idx) > 1000 {
		perm := rng.Perm(len(idx))[:1000]
		sub := make([]int, len(perm))
		for j, r := range perm {
			sub[j] = idx[r]
		}
		idx = sub
	}
	d := ds.D
	x := make([]float64, 0, len(idx)*d)
	for _, r := range idx {
		x = append(x, ds.X[r*d:(r+1)*d]...)
	}
	if normalize {
		x = rfm.NormalizedRows(x, len(idx), d)
	}
	m := len(idx)
	pts := kernel.NewPoints(x, m, d)
	sq := make([]float64, m*m)
	kernel.SquaredDistances(pts, pts, sq)
	var dist []float64
	for i := range m {
		for j := range i {
			if q := sq[i*m+j]; q > 0 {
				dist = append(dist, math.Sqrt(q))
			}
		}
	}
	v := 1.0
	if len(dist) > 0 {
		slices.Sort(dist)
		v = dist[len(dist)/2]
	}
	s.medians[key] = v
	return v
}

// key names a trial for the cache: the configuration, the data version
// and the validation design.
func (s *search) key(cfg rfm.Config, scaling string, rows int) string {
	b, _ := json.Marshal(cfg)
	h := fnv.New64a()
	fmt.Fprintf(h, "%s|%s|%d|%s|%d|%x|%d", b, scaling, rows, s.design, s.opt.Base.Seed, s.finger[scaling], s.opt.MinRows)
	return fmt.Sprintf("%016x", h.Sum64())
}

// finish picks the best trial of the largest rung reached.
func (s *search) finish() error {
	r := s.res
	top := -1
	for i := range r.Trials {
		if r.Trials[i].Scored() {
			top = max(top, r.Trials[i].Rows)
		}
	}
	if top < 0 {
		msg := "no trial ended within the budget; give more time"
		for i := range r.Trials {
			if t := &r.Trials[i]; !t.Scored() && t.Status != StatusCut {
				msg = fmt.Sprintf("every trial failed; trial %d: %s", t.Index, t.Status)
				break
			}
		}
		return errors.New("tune: " + msg)
	}
	for i := range r.Trials {
		t := &r.Trials[i]
		if !t.Scored() || t.Rows != top {
			continue
		}
		if r.Best == nil || s.better(t, r.Best) {
			r.Best = t
		}
		plain := &Trial{Accuracy: t.PlainAccuracy, Loss: t.PlainLoss}
		if r.Plain == nil || s.better(plain, &Trial{Accuracy: r.Plain.PlainAccuracy, Loss: r.Plain.PlainLoss}) {
			r.Plain = t
		}
		if t.Index == 0 {
			r.Default = t
		}
	}
	// Round 0 is a candidate of every fit, but a logistic trial is scored
	// by its head, not by its round 0: when the best round 0 beats every
	// trial's score, the plain kernel is the best model.
	if p := PlainTrial(r.Plain); s.better(p, r.Best) {
		r.Best = p
	}
	if s.opt.Rule == RuleOneSE {
		s.chooseOneSE(top)
	}
	return nil
}

// better is Better under the search's rule: RuleOneSE compares the loss
// alone (a proper score), RuleBest accuracy first for classification.
func (s *search) better(a, b *Trial) bool {
	if s.opt.Rule == RuleOneSE {
		return metrics.MetricLoss.Better(a.Loss, b.Loss)
	}
	return Better(s.task, a, b)
}

// independentFolds is how many of the splits count as independent for a
// standard error: the folds of one assignment (the repeats reuse the same
// rows, so their differences are not independent of each other).
func (s *search) independentFolds() int {
	if s.opt.Folds >= 2 {
		return s.opt.Folds
	}
	return len(s.splits)
}

// pairedSE is the standard error of the mean of a's split losses minus
// b's: the spread of the per-split differences over √(independent folds).
// +Inf when either lacks them (a trial read back without them); 0 with one
// split.
func (s *search) pairedSE(a, b *Trial) float64 {
	k := len(s.splits)
	if len(a.FoldLoss) != k || len(b.FoldLoss) != k {
		return math.Inf(1)
	}
	if k < 2 {
		return 0
	}
	var mean float64
	for i := range k {
		mean += a.FoldLoss[i] - b.FoldLoss[i]
	}
	mean /= float64(k)
	var ss float64
	for i := range k {
		d := a.FoldLoss[i] - b.FoldLoss[i] - mean
		ss += d * d
	}
	return math.Sqrt(ss/float64(k-1)) / math.Sqrt(float64(s.independentFolds()))
}

// Complexity orders configurations from simple to elaborate for the
// one-standard-error rule: the plain kernel (no AGOP round) before a
// diagonal M before a full M, the squared loss before the logistic head,
// and base's kernel family and column scaling before others.
func Complexity(c rfm.Config, scaling string, base rfm.Config, baseScaling string) int {
	k := 0
	if c.Iters > 0 {
		k += 2
		if !c.Diag {
			k += 2
		}
	}
	if c.Loss == rfm.LossLogistic {
		k++
	}
	if c.Kernel.Kind != base.Kernel.Kind {
		k++
	}
	if scaling != baseScaling {
		k++
	}
	return k
}

// chooseOneSE sets res.Best and res.Choice by RuleOneSE among the scored
// trials of the top rung (of top training rows) and their plain kernels.
func (s *search) chooseOneSE(top int) {
	r := s.res
	var cands []*Trial
	for i := range r.Trials {
		t := &r.Trials[i]
		if !t.Scored() || t.Rows != top {
			continue
		}
		cands = append(cands, t)
		if t.Config.Iters > 0 || t.Config.Loss == rfm.LossLogistic {
			p := PlainTrial(t)
			p.FoldLoss = t.PlainFoldLoss
			cands = append(cands, p)
		}
	}
	lowest := cands[0]
	for _, c := range cands[1:] {
		if metrics.MetricLoss.Better(c.Loss, lowest.Loss) {
			lowest = c
		}
	}
	ch := &Choice{Lowest: lowest.Index, LowestLoss: lowest.Loss, Splits: len(s.splits), Folds: s.independentFolds(), Candidates: len(cands)}
	r.Choice = ch
	d := r.Default
	if d == nil {
		// The base configuration was cut: nothing to protect.
		ch.Kept, ch.DefaultLoss, ch.Margin, ch.SE = "lowest loss", math.NaN(), math.NaN(), math.NaN()
		r.Best, ch.ChosenLoss = lowest, lowest.Loss
		return
	}
	// The margin over the defaults must exceed Z standard errors of the
	// paired differences. A 5-fold standard deviation has 4 degrees of
	// freedom and is now and then tiny by chance, so each candidate's is
	// floored at the median over the candidates (the noise of a difference
	// is much the same for all); and the best of T noise-equal candidates
	// beats the defaults by about √(2 ln T) of them by luck alone.
	var ses []float64
	for _, c := range cands {
		if se := s.pairedSE(d, c); c != d && !math.IsInf(se, 1) {
			ses = append(ses, se)
		}
	}
	floor := 0.0
	if len(ses) > 0 {
		slices.Sort(ses)
		floor = ses[len(ses)/2]
	}
	seD := func(c *Trial) float64 { return max(s.pairedSE(d, c), floor) }
	ch.Z = max(1, math.Sqrt(2*math.Log(float64(len(cands)))))
	ch.DefaultLoss, ch.Margin, ch.SE = d.Loss, d.Loss-lowest.Loss, seD(lowest)
	if !(ch.Margin > ch.Z*ch.SE) {
		ch.Kept, ch.ChosenLoss, r.Best = "defaults", d.Loss, d
		return
	}
	// Every candidate within 1 SE of the lowest that also beats the
	// defaults by more than its SE; the simplest of them (then the lowest
	// loss, then the earliest drawn).
	base := s.opt.Base
	cx := func(t *Trial) int { return Complexity(t.Config, t.Scaling, base, s.opt.BaseScaling) }
	var pick *Trial
	for _, c := range cands {
		if c.Loss-lowest.Loss > s.pairedSE(c, lowest) || !(d.Loss-c.Loss > ch.Z*seD(c)) {
			continue
		}
		if pick == nil || cx(c) < cx(pick) || cx(c) == cx(pick) && metrics.MetricLoss.Better(c.Loss, pick.Loss) {
			pick = c
		}
	}
	r.Best, ch.ChosenLoss, ch.Kept = pick, pick.Loss, "lowest loss"
	if pick != lowest {
		ch.Kept = "simpler within 1 SE"
	}
}

// PlainTrial is trial t's plain kernel as a trial of its own: round 0 of
// its squared-loss fits (no AGOP round, the squared loss), with t's round-0
// scores. FinalFit fits it.
func PlainTrial(t *Trial) *Trial {
	p := *t
	p.Config.Iters, p.Config.Loss = 0, rfm.LossSquared
	p.Round, p.Accuracy, p.Loss = 0, t.PlainAccuracy, t.PlainLoss
	return &p
}

// FinalFit fits the chosen configuration for use: on the holdout design
// with the same training and validation rows as the search (the round is
// chosen there, then α refitted on both when Base.Refit), with validation
// data on it. With folds it runs the round the folds chose on every row,
// and fits Base's calibration on the out-of-fold scores of that
// configuration (k more fits). Base's Refit and Calibrate apply.
//
// Under RuleOneSE, when the choice kept the base configuration itself
// (KeepsBase), it is fitted as rfm fit fits it, on a holdout of
// Base.ValFraction (or the validation rows), whatever the search's design:
// the saved model is then the one the defaults give, not a variant of it.
func FinalFit(ctx context.Context, opt Options, best *Trial, progress func(rfm.Progress)) (*rfm.Model, error) {
	if KeepsBase(opt, best) {
		opt.Folds, opt.Repeats = 0, 0
	}
	m, cd, err := finalFit(ctx, opt, best, opt.Base.Calibrate, progress)
	if err != nil || cd == nil {
		return m, err
	}
	if err := m.Recalibrate(opt.Base.Calibrate, cd.scores, cd.labels, cd.folds); err != nil {
		return nil, err
	}
	return m, nil
}

// KeepsBase reports whether FinalFit fits best as rfm fit fits the base
// configuration: under RuleOneSE, best is trial 0 with base's rounds and
// loss (not its plain kernel), in base's scaling.
func KeepsBase(opt Options, best *Trial) bool {
	return opt.Rule == RuleOneSE && best != nil && best.Index == 0 && best.Scaling == opt.BaseScaling &&
		best.Config.Iters == opt.Base.Iters && best.Config.Loss == opt.Base.Loss
}

// NystromFinal reports whether a final fit on n training rows is solved by
// Nyström (Options.FinalCenters) rather than by Base's solver. n counts
// every training row: on the holdout design the fit that chooses the round
// trains on the others (80% by default), so for n up to 1.25·FinalCenters
// that fit takes each of its rows as a centre (Nyström without savings).
func NystromFinal(opt Options, n int) bool {
	return opt.FinalCenters > 0 && n > opt.FinalCenters
}

// checkFinalCenters refuses FinalCenters that no final fit on ds could
// use: negative, or a Nyström fit of a configuration with class weights.
func checkFinalCenters(opt Options, ds *rfm.Dataset) error {
	switch {
	case opt.FinalCenters < 0:
		return &OptionError{"FinalCenters", opt.FinalCenters, finalCentersWant}
	case ds != nil && NystromFinal(opt, ds.N) && opt.Base.ClassWeight == rfm.ClassWeightBalanced:
		return fmt.Errorf("tune: class weights apply to exact solves: a Nyström final fit of %d rows on %d centres (FinalCenters) would weight rows equally", ds.N, opt.FinalCenters)
	}
	return nil
}

// calData is what a final model's calibration is fitted on: out-of-fold
// scores of every training row, with their folds.
type calData struct {
	scores []float64
	labels []int
	folds  []int
}

// finalFit is FinalFit with the calibration method given; on the folds
// design it fits the model uncalibrated and returns the out-of-fold scores
// that the method is to be fitted on (nil when none is wanted).
func finalFit(ctx context.Context, opt Options, best *Trial, method rfm.CalibrationMethod, progress func(rfm.Progress)) (*rfm.Model, *calData, error) {
	cfg := best.Config
	cfg.Refit, cfg.Calibrate, cfg.FinalKernel = opt.Base.Refit, method, opt.Base.FinalKernel
	cfg.MemoryLimit = opt.Base.MemoryLimit
	ds := opt.Data[best.Scaling]
	if ds == nil {
		return nil, nil, fmt.Errorf("tune: no data for scaling %q", best.Scaling)
	}
	if err := checkFinalCenters(opt, ds); err != nil {
		return nil, nil, err
	}
	if NystromFinal(opt, ds.N) {
		cfg.Solver, cfg.Centers = rfm.SolverNystrom, opt.FinalCenters
	}
	if opt.Valid != nil {
		m, err := rfm.Fit(ctx, cfg, ds, opt.Valid[best.Scaling], progress)
		return m, nil, err
	}
	if opt.Folds < 2 {
		// The search's holdout is Base.ValFraction with Base.Seed, which
		// is also what Fit draws: the same rows.
		if cfg.ValFraction <= 0 {
			cfg.ValFraction = 0.2
		}
		m, err := rfm.Fit(ctx, cfg, ds, nil, progress)
		return m, nil, err
	}
	// The folds chose the round (their validation scores averaged): the
	// final model runs that many rounds on every row and keeps the last,
	// rather than choosing again on a holdout of the same rows (fewer rows
	// for M, and a noisier choice than the folds').
	cfg.Iters, cfg.ValFraction, cfg.Refit, cfg.EarlyStop = best.Round, 0, false, 0
	if !method.Enabled() || ds.Labels == nil {
		m, err := rfm.Fit(ctx, cfg, ds, nil, progress)
		return m, nil, err
	}
	cfg.Calibrate = rfm.CalibrateNone
	m, err := rfm.Fit(ctx, cfg, ds, nil, progress)
	if err != nil {
		return nil, nil, err
	}
	s, folds, err := outOfFold(ctx, cfg, ds, opt.Folds)
	if err != nil {
		return nil, nil, err
	}
	return m, &calData{scores: s, labels: ds.Labels, folds: folds}, nil
}

// Top returns up to k configurations of a search for an ensemble, best
// first: res.Best, then the other scored trials of its rung and scaling
// (the members must read the same features) in order of validation score.
// It returns fewer when fewer reached the top rung (with 4 rungs, one
// trial per bracket does). When res.Best is a trial's plain kernel
// (PlainTrial), that trial's own fit stays a candidate: another model of
// the same configuration (its chosen round, or its logistic head).
func Top(res *Result, k int) []*Trial {
	if res.Best == nil || k < 1 {
		return nil
	}
	top := []*Trial{res.Best}
	var rest []*Trial
	for i := range res.Trials {
		t := &res.Trials[i]
		if t != res.Best && t.Scored() && t.Rows == res.Best.Rows && t.Scaling == res.Best.Scaling {
			rest = append(rest, t)
		}
	}
	sort.SliceStable(rest, func(i, j int) bool { return Better(res.Task, rest[i], rest[j]) })
	return append(top, rest[:min(len(rest), k-1)]...)
}

// FinalEnsemble fits Top(res, k) as FinalFit fits one configuration and
// combines them (package ensemble): the mean of their uncalibrated
// probabilities (of their outputs for regression). Base's calibration, if
// any, is fitted on the mean of the members' held-out probabilities: the
// out-of-fold scores of every training row with folds (checked across the
// folds), the validation rows otherwise; on those rows the mean is also
// scored against its best member alone and the tuned plain kernel
// (ensemble.Model.Validation, informative: see its BelowFloor).
func FinalEnsemble(ctx context.Context, opt Options, res *Result, k int, progress func(member, members int, p rfm.Progress)) (*ensemble.Model, error) {
	trials := Top(res, k)
	if len(trials) == 0 {
		return nil, errors.New("tune: no scored trial to build an ensemble from")
	}
	method := opt.Base.Calibrate
	classify := res.Task == rfm.Classification && method.Enabled()
	if !classify {
		method = rfm.CalibrateNone
	}
	note := ""
	members := make([]*rfm.Model, len(trials))
	var scores [][]float64
	var labels, folds []int
	for i, t := range trials {
		var pr func(rfm.Progress)
		if progress != nil {
			pr = func(p rfm.Progress) { progress(i, len(trials), p) }
		}
		// The members stay uncalibrated (the ensemble's own probability
		// is calibrated), but with folds their out-of-fold scores are
		// needed: finalFit asks for them by the method.
		m, cd, err := finalFit(ctx, opt, t, method, pr)
		if err != nil {
			return nil, fmt.Errorf("member %d (trial %d): %w", i, t.Index, err)
		}
		m.Calibration = nil
		if m.Config.Loss == rfm.LossLogistic {
			m.Calibration = &rfm.Calibration{Method: rfm.CalibrateTemperature, Temperature: 1}
		}
		m.Config.Calibrate = rfm.CalibrateNone
		members[i] = m
		if !classify {
			continue
		}
		s, l, f := []float64(nil), []int(nil), []int(nil)
		if cd != nil {
			s, l, f = cd.scores, cd.labels, cd.folds
		} else {
			s, l = m.HoldoutScores()
		}
		if s == nil {
			// Too few rows for a holdout: as FinalFit, the model is
			// saved uncalibrated and says so.
			classify, note = false, rfm.NoValidationNote
			continue
		}
		if i > 0 && !slices.Equal(l, labels) {
			return nil, fmt.Errorf("member %d (trial %d) was validated on other rows than member 0", i, t.Index)
		}
		scores, labels, folds = append(scores, s), l, f
	}
	e, err := ensemble.New(members)
	if err != nil {
		return nil, err
	}
	e.Note = note
	if classify {
		if err := e.Validate(scores, labels, folds != nil); err != nil {
			return nil, err
		}
		if res.Plain != nil {
			e.Validation.Floor = res.Plain.PlainAccuracy
		}
		if err := e.Calibrate(method, scores, labels, folds); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// Final is the model a search ends with: the best configuration alone, or
// the ensemble of the best K.
type Final struct {
	// Model is an *rfm.Model, or the *ensemble.Model of the best K.
	Model rfm.Classifier
	// Trials are the configurations fitted, best first; Best is the first
	// one's model (Model itself when it is alone).
	Trials []*Trial
	Best   *rfm.Model
	// Validation is the ensemble's (nil for one model).
	Validation *ensemble.Validation
}

// FinalModel fits a search's final model with up to k members: the best
// configuration alone (FinalFit) when k is 1 or only it reached the top
// rung, otherwise the ensemble of Top(res, k) (FinalEnsemble).
//
// The ensemble is kept even when its validation score is below its best
// member's or the tuned plain kernel's: those are maxima chosen on the
// same rows, so biased upward (ensemble.Validation.BelowFloor). Replacing
// such a mean by its best member was measured on Arora's UCI sets and
// lowered the test accuracy.
func FinalModel(ctx context.Context, opt Options, res *Result, k int, progress func(member, members int, p rfm.Progress)) (*Final, error) {
	if top := Top(res, k); len(top) > 1 {
		e, err := FinalEnsemble(ctx, opt, res, k, progress)
		if err != nil {
			return nil, err
		}
		return &Final{Model: e, Trials: top, Best: e.Members[0], Validation: e.Validation}, nil
	}
	var pr func(rfm.Progress)
	if progress != nil {
		pr = func(p rfm.Progress) { progress(0, 1, p) }
	}
	m, err := FinalFit(ctx, opt, res.Best, pr)
	if err != nil {
		return nil, err
	}
	return &Final{Model: m, Trials: []*Trial{res.Best}, Best: m}, nil
}

// outOfFold returns the n×c scores of every row by the configuration
// fitted without it, and each row's fold: k folds (the search's), each
// scored by a fit on the others. With folds the search chose on, the final
// model's calibration is fitted on these scores, on every row, not on the
// few rows of one holdout (on small tables a holdout of a dozen rows gave a
// temperature that raised the test log-loss), and kept only when it helps
// across the folds (rfm.Model.Recalibrate).
func outOfFold(ctx context.Context, cfg rfm.Config, ds *rfm.Dataset, k int) ([]float64, []int, error) {
	c := ds.NumOutputs()
	out := make([]float64, ds.N*c)
	folds := make([]int, ds.N)
	trains, tests := rfm.KFold(ds.N, ds.Labels, k, cfg.Seed)
	for f := range trains {
		m, err := rfm.Fit(ctx, cfg, withClasses(ds.Subset(trains[f]), ds), nil, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("fold %d of the calibration: %w", f+1, err)
		}
		te := ds.Subset(tests[f])
		s, err := m.Predict(ctx, te.X, te.N)
		if err != nil {
			return nil, nil, err
		}
		for j, r := range tests[f] {
			copy(out[r*c:r*c+c], s[j*c:j*c+c])
			folds[r] = f
		}
	}
	return out, folds, nil
}
