package tune

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/tree"
	"gonum.org/v1/gonum/stat"
)

// ProbeLeaves is how many leaves of the default tree's routing TreeFinal
// fits each candidate leaf configuration on.
const ProbeLeaves = 3

// NystromProbeRows is the most training rows on which TreeFinal also fits
// the Nyström alternative (Options.FinalCenters) to compare it with the
// tree: above, a Nyström fit of every row costs more than the tree itself.
const NystromProbeRows = 120000

// TreeZ is how many standard errors of the paired per-row differences a
// challenger's validation loss must beat the protected candidate's by.
const TreeZ = 2

// TreeChoice is how TreeFinal chose the final model of a large table.
type TreeChoice struct {
	// Kept: "default tree" (rfm fit's tree), "tuned tree" (the search's
	// best configuration in every leaf), or "nystrom" (the search's best
	// configuration solved by Nyström on every row).
	Kept string `json:"kept"`
	// Leaves probed, their training rows, and the validation rows scored.
	Leaves    int `json:"probe_leaves"`
	LeafRows  int `json:"probe_leaf_rows"`
	ValidRows int `json:"probe_validation_rows"`
	// Losses on those rows (the Brier score, or the MSE of the outputs),
	// and accuracies for classification; NaN when not fitted.
	DefaultLoss float64 `json:"default_loss,omitempty"`
	TunedLoss   float64 `json:"tuned_loss,omitempty"`
	NystromLoss float64 `json:"nystrom_loss,omitempty"`
	DefaultAcc  float64 `json:"default_accuracy,omitempty"`
	TunedAcc    float64 `json:"tuned_accuracy,omitempty"`
	NystromAcc  float64 `json:"nystrom_accuracy,omitempty"`
	// SE of the tuned-minus-default and Nyström-minus-tree differences.
	TunedSE   float64 `json:"tuned_se,omitempty"`
	NystromSE float64 `json:"nystrom_se,omitempty"`
	Z         float64 `json:"z"`
	// Forest is the trees of the forest tried (0: none); ForestLoss its
	// loss on every validation row, ForestTreeLoss its first tree's alone,
	// ForestSE the standard error of their difference.
	Forest         int     `json:"forest_trees,omitempty"`
	ForestLoss     float64 `json:"forest_loss,omitempty"`
	ForestTreeLoss float64 `json:"forest_tree_loss,omitempty"`
	ForestSE       float64 `json:"forest_se,omitempty"`
	// SoftTemperature is the temperature the soft-routing alternative
	// chose on its held-out rows (0: hard routing, so no alternative);
	// SoftLoss and HardLoss are that tree's loss on every validation row
	// with and without it, SoftSE the standard error of their difference.
	SoftTemperature float64 `json:"soft_temperature,omitempty"`
	SoftLoss        float64 `json:"soft_loss,omitempty"`
	HardLoss        float64 `json:"hard_loss,omitempty"`
	SoftSE          float64 `json:"soft_se,omitempty"`
	// NystromCenters are the centres of the Nyström alternative fitted
	// (0: not fitted): Options.FinalCenters, halved while its memory plan
	// exceeds the default tree's (or --memory-limit).
	NystromCenters int `json:"nystrom_centers,omitempty"`
	// Why says why a candidate was not tried.
	Why string `json:"why,omitempty"`
	// Phases are the timed steps, in order.
	Phases []Phase `json:"phases,omitempty"`
}

// Phase is one timed step of TreeFinal: what was fitted, on how many
// training rows, scored on how many validation rows, in how long.
type Phase struct {
	Name    string  `json:"name"`
	Rows    int     `json:"rows"`
	Scored  int     `json:"scored_rows,omitempty"`
	Seconds float64 `json:"seconds"`
}

// String is the phase as a progress line.
func (p Phase) String() string {
	s := fmt.Sprintf("final fit: %s on %d training rows", p.Name, p.Rows)
	if p.Scored > 0 {
		s += fmt.Sprintf(", scored on %d validation rows", p.Scored)
	}
	return s + fmt.Sprintf(", %.1f s", p.Seconds)
}

// phase records a step that began at start and tells log (if set).
func (c *TreeChoice) phase(log func(string), name string, rows, scored int, start time.Time) {
	p := Phase{Name: name, Rows: rows, Scored: scored, Seconds: time.Since(start).Seconds()}
	c.Phases = append(c.Phases, p)
	if log != nil {
		log(p.String())
	}
}

// FinalText says what a search's final fit does, for the line that ends
// the search: on a large table (TreeFinal) a choice among the default
// tree and the alternatives, then a fit on every row; otherwise the top
// k configurations fitted on the n rows.
func FinalText(large bool, k, n int) string {
	switch {
	case large:
		return fmt.Sprintf("now choosing the final model on the validation rows (rfm fit's default tree, protected, against a tree of the best configuration probed on a few leaves, a bounded Nyström fit of it, and soft routing), then fitting the choice on all %d rows", n)
	}
	return fmt.Sprintf("fitting %s on all %d rows", FinalWhat(k), n)
}

// MarshalJSON leaves out the losses of candidates not fitted (NaN, which
// JSON cannot hold).
func (c *TreeChoice) MarshalJSON() ([]byte, error) {
	type plain TreeChoice
	cp := plain(*c)
	for _, v := range []*float64{&cp.DefaultLoss, &cp.TunedLoss, &cp.NystromLoss, &cp.TunedSE, &cp.NystromSE} {
		if math.IsNaN(*v) || math.IsInf(*v, 0) {
			*v = 0
		}
	}
	return json.Marshal(cp)
}

// String is the choice in a sentence, for the model's note.
func (c *TreeChoice) String() string {
	if c.Leaves == 0 {
		s := "large table: " + c.Kept + " kept"
		if c.Why != "" {
			s += " (" + c.Why + ")"
		}
		return s + c.wholeTrees()
	}
	s := fmt.Sprintf("large table: the final model chosen on %d validation rows of %d probed leaves of the default tree's routing (losses: default tree %.4g", c.ValidRows, c.Leaves, c.DefaultLoss)
	if !math.IsNaN(c.TunedLoss) {
		s += fmt.Sprintf(", tuned tree %.4g ± %.2g", c.TunedLoss, c.TunedSE)
	}
	if !math.IsNaN(c.NystromLoss) {
		s += fmt.Sprintf(", Nyström %.4g ± %.2g", c.NystromLoss, c.NystromSE)
	}
	s += fmt.Sprintf("); the default tree protected, replaced only by a margin over %g standard errors: %s kept", c.Z, c.Kept)
	s += c.wholeTrees()
	if c.Why != "" {
		s += "; " + c.Why
	}
	return s
}

// wholeTrees says how the alternatives fitted as whole trees on the
// training rows (soft routing, a forest) scored on the validation rows.
func (c *TreeChoice) wholeTrees() string {
	s := ""
	if c.SoftTemperature > 0 {
		s += fmt.Sprintf("; soft routing (temperature %g) on all validation rows: loss %.4g against %.4g hard (SE %.2g)", c.SoftTemperature, c.SoftLoss, c.HardLoss, c.SoftSE)
	}
	if c.Forest > 1 {
		s += fmt.Sprintf("; a forest of %d trees on all validation rows: loss %.4g against its first tree's %.4g (SE %.2g)", c.Forest, c.ForestLoss, c.ForestTreeLoss, c.ForestSE)
	}
	for i, p := range c.Phases {
		if i == 0 {
			s += "; timed:"
		} else {
			s += ","
		}
		s += fmt.Sprintf(" %s %.0f s (%d rows)", p.Name, p.Seconds, p.Rows)
	}
	return s
}

// TreeFinalResult is the final model of a large table.
type TreeFinalResult struct {
	Model   rfm.Fitted
	Scaling string
	Config  rfm.Config
	Choice  *TreeChoice
	// Plan is the tree's (nil for Nyström).
	Plan *tree.Plan
}

// TreeConfig is cfg (a configuration the search scored) as the leaves of a
// tree fit it, with base's tree, calibration and resource settings.
func TreeConfig(base, cfg rfm.Config) rfm.Config {
	cfg.Solver, cfg.Centers = rfm.SolverTree, base.Centers
	cfg.LeafSize, cfg.LeafSolver, cfg.SplitRule, cfg.SplitSample, cfg.SoftRouting = base.LeafSize, base.LeafSolver, base.SplitRule, base.SplitSample, base.SoftRouting
	cfg.Refit, cfg.Calibrate, cfg.FinalKernel, cfg.MemoryLimit = base.Refit, base.Calibrate, base.FinalKernel, base.MemoryLimit
	cfg.ValFraction, cfg.Seed, cfg.Float32 = base.ValFraction, base.Seed, base.Float32
	return cfg
}

// TreeFinal fits the final model of a table too large for one exact fit
// (rfm tune on a table that --solver auto fits by a tree), from a search
// on samples (Options.MaxRows) with one holdout. The candidates are rfm
// fit's default tree (Options.Base with the tree solver: protected), the
// tree whose leaves fit the search's best configuration, and, on at most
// NystromProbeRows rows with Options.FinalCenters, that configuration
// solved by Nyström on every row. They are compared on the search's own
// validation rows, never on a test set: the default tree's routing is
// grown down to ProbeLeaves leaves on the training rows (tree.Probe), each
// tree candidate fits those leaves, and the Nyström candidate is fitted on
// the training rows (bounded: nystromAlternative); the challenger replaces
// the default only when its mean loss on the validation rows of those
// leaves is lower by more than TreeZ standard errors of the paired per-row
// differences. The tree kept is then tried with soft routing
// (softAlternative) and, with Options.Forest, as a forest, each kept by
// the same margin on every validation row, and grown on every row (the
// default tree, unchanged, is then exactly rfm fit's). Each phase is timed
// on the choice (TreeChoice.Phases) and told to Options.Log.
func TreeFinal(ctx context.Context, opt Options, res *Result, progress func(stage string, p rfm.Progress)) (*TreeFinalResult, error) {
	if res == nil || res.Best == nil {
		return nil, fmt.Errorf("tune: no scored configuration")
	}
	if opt.Valid == nil && opt.Folds >= 2 {
		return nil, fmt.Errorf("tune: the tree final fit needs the search's holdout or validation rows, not folds")
	}
	best := res.Best
	base := opt.Base
	defCfg := TreeConfig(base, base)
	tunedCfg := TreeConfig(base, best.Config)
	ch := &TreeChoice{Kept: "default tree", DefaultLoss: math.NaN(), TunedLoss: math.NaN(), NystromLoss: math.NaN(), Z: TreeZ}
	report := func(stage string) func(rfm.Progress) {
		if progress == nil {
			return nil
		}
		return func(p rfm.Progress) { progress(stage, p) }
	}
	sameAsBase := best.Scaling == opt.BaseScaling && (sameConfig(tunedCfg, defCfg) ||
		best.Index == 0 && best.Config.Iters == base.Iters && best.Config.Loss == base.Loss)
	// A configuration a tree's leaves cannot fit (the logistic loss) is no
	// tree candidate: the default tree and Nyström remain.
	tunedTree := !sameAsBase
	if err := tunedCfg.Validate(); tunedTree && err != nil {
		tunedTree = false
		ch.Why = joinWhy(fmt.Sprintf("no tuned tree (%v)", err), ch.Why)
	}
	ref := opt.Data[opt.BaseScaling]
	var trainRows, validRows []int
	split := func(name string) (tr, va *rfm.Dataset) {
		if opt.Valid != nil {
			return opt.Data[name], opt.Valid[name]
		}
		return opt.Data[name].Subset(trainRows), opt.Data[name].Subset(validRows)
	}
	if opt.Valid == nil {
		frac := base.ValFraction
		if frac <= 0 {
			frac = 0.2
		}
		var labels []int
		if ref.Labels != nil {
			labels = ref.Labels
		}
		trainRows, validRows = rfm.Holdout(ref.N, labels, frac, base.Seed)
	}
	nystrom := opt.FinalCenters > 0 && ref.N <= NystromProbeRows && base.ClassWeight != rfm.ClassWeightBalanced
	switch {
	case opt.FinalCenters == 0:
		ch.Why = joinWhy("Nyström not tried (no final centres)", ch.Why)
	case !nystrom:
		ch.Why = joinWhy(fmt.Sprintf("Nyström not tried on %d rows (more than %d: costlier than the tree)", ref.N, NystromProbeRows), ch.Why)
	}
	if sameAsBase {
		ch.Why = joinWhy("the search kept the defaults: no tuned tree", ch.Why)
	}
	if !tunedTree && !nystrom {
		return finalTree(ctx, opt, split, opt.BaseScaling, defCfg, ch, report)
	}
	// The probe: the default routing, its leaves fitted by each candidate.
	rtr, rva := split(opt.BaseScaling)
	cands := []tree.ProbeCandidate{{Config: defCfg, Train: rtr, Valid: rva}}
	if tunedTree {
		ttr, tva := split(best.Scaling)
		cands = append(cands, tree.ProbeCandidate{Config: tunedCfg, Train: ttr, Valid: tva})
	}
	if progress != nil {
		progress("probing leaves", rfm.Progress{})
	}
	t0 := time.Now()
	pr, err := tree.Probe(ctx, defCfg, rtr, rva, ProbeLeaves, cands)
	if err != nil {
		return nil, fmt.Errorf("probe the default tree's leaves: %w", err)
	}
	ch.Leaves, ch.ValidRows = len(pr.LeafRows), len(pr.Rows)
	for _, r := range pr.LeafRows {
		ch.LeafRows += len(r)
	}
	ch.phase(opt.Log, fmt.Sprintf("probe (the default routing grown to %d leaves, %d candidate leaf configurations fitted on them)", ch.Leaves, len(cands)), ch.LeafRows, ch.ValidRows, t0)
	ch.DefaultLoss, ch.DefaultAcc = pr.MeanLoss(0), pr.Accuracy(0)
	keepCfg, keepScaling, keepLoss := defCfg, opt.BaseScaling, pr.Loss[0]
	if len(cands) > 1 {
		ch.TunedLoss, ch.TunedAcc = pr.MeanLoss(1), pr.Accuracy(1)
		margin, se := pairedMargin(pr.Loss[0], pr.Loss[1])
		ch.TunedSE = se
		if margin > TreeZ*se {
			keepCfg, keepScaling, keepLoss = tunedCfg, best.Scaling, pr.Loss[1]
			ch.Kept = "tuned tree"
		}
	}
	if nystrom {
		ntr, nva := split(best.Scaling)
		nm, ncfg, nl, err := nystromAlternative(ctx, opt, best.Config, defCfg, ntr, nva, pr.Rows, ch, report)
		if err != nil {
			return nil, err
		}
		if nm != nil {
			margin, se := pairedMargin(keepLoss, nl)
			ch.NystromSE = se
			if margin > TreeZ*se {
				ch.Kept = "nystrom"
				// The model fitted on the training rows, its round chosen on the
				// validation rows: refitting on every row would cost as much again.
				return &TreeFinalResult{Model: nm, Scaling: best.Scaling, Config: ncfg, Choice: ch}, nil
			}
		}
	}
	return finalTree(ctx, opt, split, keepScaling, keepCfg, ch, report)
}

// nystromAlternative fits the search's best configuration cfg by Nyström
// on the training rows tr (its round chosen on va) and scores it on the
// validation rows rows of va. It is bounded: its centres
// (Options.FinalCenters) are halved, down to 1 000, while its memory plan
// exceeds the default tree's (or Base.MemoryLimit when set), and it is
// stopped at Options.Budget (the search's own time). When refused or
// stopped it returns no model and says why in ch.Why; err is only a
// failure or the caller's cancellation.
func nystromAlternative(ctx context.Context, opt Options, cfg, defCfg rfm.Config, tr, va *rfm.Dataset, rows []int, ch *TreeChoice,
	report func(string) func(rfm.Progress)) (rfm.Fitted, rfm.Config, []float64, error) {
	base := opt.Base
	ncfg := cfg
	ncfg.Solver, ncfg.Centers = rfm.SolverNystrom, opt.FinalCenters
	ncfg.Refit, ncfg.Calibrate, ncfg.FinalKernel, ncfg.MemoryLimit = false, rfm.CalibrateNone, base.FinalKernel, base.MemoryLimit
	limit, what := base.MemoryLimit, "--memory-limit"
	if limit == 0 {
		plan, err := tree.MakePlan(defCfg, tr.N+va.N, tr.D, tr.NumOutputs())
		if err != nil {
			return nil, ncfg, nil, fmt.Errorf("plan the default tree: %w", err)
		}
		limit = uint64(plan.Parallel)*plan.LeafBytes + uint64(tr.N+va.N)*uint64(tr.D)*16
		what = "the default tree's plan"
	}
	shape := rfm.FitShape{N: tr.N, Valid: va.N, D: tr.D, Outputs: tr.NumOutputs(), DataHeld: true}
	need := rfm.PlanFit(shape, ncfg).Total()
	for need > limit && ncfg.Centers/2 >= 1000 {
		ncfg.Centers /= 2
		need = rfm.PlanFit(shape, ncfg).Total()
	}
	if need > limit {
		ch.Why = joinWhy(fmt.Sprintf("Nyström not tried: %d centres on %d rows need %s, more than %s (%s)", ncfg.Centers, tr.N, sysmem.Human(need), sysmem.Human(limit), what), ch.Why)
		return nil, ncfg, nil, nil
	}
	if ncfg.Centers < opt.FinalCenters {
		ch.Why = joinWhy(fmt.Sprintf("Nyström on %d centres, not %d: %s planned, within %s (%s)", ncfg.Centers, opt.FinalCenters, sysmem.Human(need), sysmem.Human(limit), what), ch.Why)
	}
	fctx, cancel := budgeted(ctx, opt.Budget)
	defer cancel()
	t0 := time.Now()
	nm, err := rfm.Fit(fctx, ncfg, tr, va, report("Nyström alternative"))
	if err != nil {
		if ctx.Err() == nil && errors.Is(fctx.Err(), context.DeadlineExceeded) {
			ch.Why = joinWhy(fmt.Sprintf("Nyström alternative stopped unfinished at the search's budget (%s)", opt.Budget), ch.Why)
			ch.phase(opt.Log, fmt.Sprintf("Nyström alternative (%d centres), stopped at the budget", ncfg.Centers), tr.N, 0, t0)
			return nil, ncfg, nil, nil
		}
		return nil, ncfg, nil, fmt.Errorf("the Nyström alternative: %w", err)
	}
	sub := va.Subset(rows)
	sc, err := nm.Predict(ctx, sub.X, sub.N)
	if err != nil {
		return nil, ncfg, nil, err
	}
	c := va.NumOutputs()
	nl := make([]float64, len(rows))
	right := 0
	for i, v := range rows {
		l, ok := tree.RowLoss(sc[i*c:i*c+c], va, v)
		nl[i] = l
		if ok {
			right++
		}
	}
	ch.NystromCenters = ncfg.Centers
	ch.NystromLoss = stat.Mean(nl, nil)
	if va.Labels != nil {
		ch.NystromAcc = float64(right) / float64(len(nl))
	}
	ch.phase(opt.Log, fmt.Sprintf("Nyström alternative (%d centres)", ncfg.Centers), tr.N, len(rows), t0)
	return nm, ncfg, nl, nil
}

// finalTree fits the chosen tree configuration on every row: one tree, or
// (Options.Forest > 1) a forest when a forest fitted on the training rows
// beats its own first tree on the validation rows by more than TreeZ
// standard errors of the paired per-row differences.
func finalTree(ctx context.Context, opt Options, split func(string) (tr, va *rfm.Dataset), scaling string, cfg rfm.Config, ch *TreeChoice,
	report func(string) func(rfm.Progress)) (*TreeFinalResult, error) {
	treeProgress := func(stage string) func(tree.Progress) {
		p := report(stage)
		if p == nil {
			return nil
		}
		return func(tp tree.Progress) { p(rfm.Progress{Stage: "tree", Fraction: tp.Fraction}) }
	}
	all := opt.Data[scaling]
	if !cfg.SoftRouting {
		soft, err := softAlternative(ctx, opt, split, scaling, cfg, ch, treeProgress)
		if err != nil {
			return nil, err
		}
		if soft {
			cfg.SoftRouting = true
			ch.Kept += ", with soft routing"
		}
	}
	if opt.Forest > 1 {
		tr, va := split(scaling)
		t0 := time.Now()
		fr, err := tree.FitForest(ctx, cfg, tr, opt.Forest, treeProgress(fmt.Sprintf("forest of %d on the training rows", opt.Forest)))
		if err != nil {
			return nil, fmt.Errorf("the forest alternative: %w", err)
		}
		one, err := rowLosses(ctx, fr.Trees[0], va)
		if err != nil {
			return nil, err
		}
		mean, err := rowLosses(ctx, fr, va)
		if err != nil {
			return nil, err
		}
		margin, se := pairedMargin(one, mean)
		ch.Forest, ch.ForestTreeLoss, ch.ForestLoss, ch.ForestSE = opt.Forest, stat.Mean(one, nil), stat.Mean(mean, nil), se
		ch.phase(opt.Log, fmt.Sprintf("forest alternative (%d trees of the %s)", opt.Forest, ch.Kept), tr.N, va.N, t0)
		if margin > TreeZ*se {
			ch.Kept += fmt.Sprintf(", as a forest of %d trees", opt.Forest)
			t0 = time.Now()
			f, err := tree.FitForest(ctx, cfg, all, opt.Forest, treeProgress(fmt.Sprintf("final forest of %d", opt.Forest)))
			if err != nil {
				return nil, err
			}
			ch.phase(opt.Log, "the chosen "+ch.Kept, all.N, 0, t0)
			return &TreeFinalResult{Model: f, Scaling: scaling, Config: f.Config, Choice: ch}, nil
		}
	}
	t0 := time.Now()
	m, plan, err := tree.Fit(ctx, cfg, all, treeProgress("final tree"))
	if err != nil {
		return nil, err
	}
	ch.phase(opt.Log, "the chosen "+ch.Kept, all.N, 0, t0)
	return &TreeFinalResult{Model: m, Scaling: scaling, Config: m.Config, Choice: ch, Plan: plan}, nil
}

// softAlternative fits the tree of cfg with soft routing on the training
// rows (the tree chooses its temperature on rows it holds out, hard
// routing winning ties) and, when it chose a temperature, scores the same
// tree with and without it on the validation rows: soft routing pays when
// it beats hard routing there by more than TreeZ standard errors of the
// paired differences. The fit is stopped at Options.Budget (then: no).
func softAlternative(ctx context.Context, opt Options, split func(string) (tr, va *rfm.Dataset), scaling string, cfg rfm.Config, ch *TreeChoice,
	treeProgress func(string) func(tree.Progress)) (bool, error) {
	tr, va := split(scaling)
	soft := cfg
	soft.SoftRouting = true
	fctx, cancel := budgeted(ctx, opt.Budget)
	defer cancel()
	t0 := time.Now()
	sm, _, err := tree.Fit(fctx, soft, tr, treeProgress("soft-routing alternative"))
	if err != nil {
		if ctx.Err() == nil && errors.Is(fctx.Err(), context.DeadlineExceeded) {
			ch.Why = joinWhy(fmt.Sprintf("soft routing stopped unfinished at the search's budget (%s)", opt.Budget), ch.Why)
			ch.phase(opt.Log, "soft-routing alternative, stopped at the budget", tr.N, 0, t0)
			return false, nil
		}
		return false, fmt.Errorf("the soft-routing alternative: %w", err)
	}
	if sm.Temperature == 0 {
		ch.Why = joinWhy("soft routing chose hard routing on its held-out rows", ch.Why)
		ch.phase(opt.Log, "soft-routing alternative (hard routing chosen)", tr.N, 0, t0)
		return false, nil
	}
	hard := *sm
	hard.Temperature = 0
	hl, err := rowLosses(ctx, &hard, va)
	if err != nil {
		return false, err
	}
	sl, err := rowLosses(ctx, sm, va)
	if err != nil {
		return false, err
	}
	margin, se := pairedMargin(hl, sl)
	ch.SoftTemperature, ch.SoftLoss, ch.HardLoss, ch.SoftSE = sm.Temperature, stat.Mean(sl, nil), stat.Mean(hl, nil), se
	ch.phase(opt.Log, fmt.Sprintf("soft-routing alternative (temperature %g)", sm.Temperature), tr.N, va.N, t0)
	return margin > TreeZ*se, nil
}

// budgeted is ctx bounded by budget (none when budget is 0).
func budgeted(ctx context.Context, budget time.Duration) (context.Context, context.CancelFunc) {
	if budget > 0 {
		return context.WithTimeout(ctx, budget)
	}
	return context.WithCancel(ctx)
}

// rowLosses is a model's tree.RowLoss on every row of ds.
func rowLosses(ctx context.Context, m rfm.Fitted, ds *rfm.Dataset) ([]float64, error) {
	s, err := m.Predict(ctx, ds.X, ds.N)
	if err != nil {
		return nil, err
	}
	c := ds.NumOutputs()
	out := make([]float64, ds.N)
	for i := range out {
		out[i], _ = tree.RowLoss(s[i*c:i*c+c], ds, i)
	}
	return out, nil
}

func joinWhy(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// sameConfig reports whether two tree configurations fit the same leaves.
func sameConfig(a, b rfm.Config) bool {
	ja, ea := json.Marshal(a)
	jb, eb := json.Marshal(b)
	return ea == nil && eb == nil && string(ja) == string(jb)
}

// pairedMargin is mean(a − b) and its standard error over the rows.
func pairedMargin(a, b []float64) (margin, se float64) {
	n := len(a)
	if n < 2 {
		return 0, math.Inf(1)
	}
	for i := range a {
		margin += a[i] - b[i]
	}
	margin /= float64(n)
	var ss float64
	for i := range a {
		d := a[i] - b[i] - margin
		ss += d * d
	}
	return margin, math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
}

// LargeRidges are the ridges of LargeCandidates. On a9a (32 561 rows, 123
// binary columns, about 15% of labels that no model gets right), exact
// fits of rfm fit's defaults on 4 000 rows, scored on 6 512 other training
// rows: ridge 10⁻³ (the default) 83.20%, log-loss 0.508; 0.3: 84.86%,
// 0.321; 1: 85.01%, 0.321; 3: 84.84%, 0.325; 10: 84.38%, 0.336 (the
// commands: results/scale-tuned/README.md). A ridge near the kernel's unit diagonal
// keeps the fit from interpolating noisy labels; the default's tiny one
// suits clean tables (ijcnn1), so validation decides.
var LargeRidges = []float64{1}

// LargeCandidates returns the protected candidates (Options.Protected) of
// the search of a large table (large: LargeTableDefaults said so): Base
// with each of LargeRidges above its own ridge, on Base's scaling, so that
// the search always scores the defaults with a strong ridge on its
// samples and, if they win there, TreeFinal probes them as the tuned
// tree. Otherwise nil.
func LargeCandidates(opt Options, large bool) []Point {
	if !large {
		return nil
	}
	var out []Point
	for _, r := range LargeRidges {
		if r > opt.Base.Ridge {
			c := opt.Base
			c.Ridge = r
			out = append(out, Point{Config: c, Scaling: opt.BaseScaling})
		}
	}
	return out
}
