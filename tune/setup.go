package tune

import (
	"context"
	"fmt"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
)

// SetupError is a combination of settings a search cannot run, found
// before any fit; its message names the settings as the rfm command line
// does (the command words it as a usage error).
type SetupError struct{ Msg string }

func (e *SetupError) Error() string { return e.Msg }

func setupf(format string, args ...any) error { return &SetupError{fmt.Sprintf(format, args...)} }

// FixedSpace is the default space narrowed to the settings of base that
// the caller fixed: fixed(name) says whether the parameter of that name
// (as rfm.Params names them: "kernel", "ridge", "diag", ...) was given, and
// a given one is not searched. A kernel tune cannot search, a ridge of 0
// (searched on a log scale) or an adaptive bandwidth is a *SetupError.
func FixedSpace(base rfm.Config, fixed func(param string) bool) (Space, error) {
	sp := DefaultSpace()
	sp.Kernels = nil // the default, lp-laplace included on narrow tables
	cfg := base
	if fixed("kernel") {
		switch cfg.Kernel.Kind {
		case kernel.Laplace, kernel.GenLaplace, kernel.Gaussian, kernel.LpLaplace:
		default:
			return sp, setupf("--kernel %s cannot be tuned: tune searches laplace, gen-laplace, gaussian and lp-laplace", cfg.Kernel.Kind)
		}
		sp.Kernels = []kernel.Kind{cfg.Kernel.Kind}
	}
	if fixed("exponent") {
		sp.Exponent = [2]float64{cfg.Kernel.Exponent, cfg.Kernel.Exponent}
	}
	if fixed("power") {
		sp.Power = [2]float64{cfg.Kernel.Power, cfg.Kernel.Power}
	}
	if fixed("bandwidth") {
		sp.Bandwidth, sp.BandwidthAbsolute = [2]float64{cfg.Kernel.Bandwidth, cfg.Kernel.Bandwidth}, true
	}
	if fixed("ridge") {
		if cfg.Ridge == 0 {
			return sp, setupf("--ridge 0 cannot be a fixed setting of tune (λ is searched on a log scale); give λ > 0")
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
		if fixed(name) {
			set()
		}
	}
	if fixed("adaptive-bandwidth") {
		return sp, setupf("--adaptive-bandwidth does not apply to tune: the bandwidth is searched")
	}
	return sp, nil
}

// PlanSearch settles the search of a table of n rows of the given shape
// before its rows are encoded: the defaults of a large table
// (LargeTableDefaults, unless given), the search's solver (opt.Base.Solver
// resolved from SolverAuto; a tree is refused), and the memory of its fits
// and of a Nyström final fit, whose centres, when chosen here, are halved
// down to 1 000 until they fit. It returns why the table is tuned as a
// large one ("" when it is not).
func PlanSearch(opt *Options, shape rfm.FitShape, given bool) (string, error) {
	n := shape.N
	large := LargeTableDefaults(opt, n, shape, given)
	plan := func(cfg rfm.Config, rows int) error {
		s := shape
		s.N = rows
		return rfm.PlanFit(s, cfg).Check(cfg.MemoryLimit)
	}
	// With a Nyström final fit, the search's own fits are at most MaxRows
	// rows: they pick the solver and are planned on that, the final fit
	// on every row.
	searchRows := n
	if NystromFinal(*opt, n) && opt.MaxRows > 0 {
		searchRows = min(n, opt.MaxRows)
	}
	if NystromFinal(*opt, n) && opt.Base.ClassWeight == rfm.ClassWeightBalanced {
		return "", setupf("--final-centers %d and --class-weight balanced exclude each other on %d rows: the Nyström solver weights rows equally", opt.FinalCenters, n)
	}
	ss := shape
	ss.N = searchRows
	solver, why := rfm.ChooseSolver(opt.Base, ss)
	if solver == rfm.SolverTree && opt.FinalCenters >= n {
		return "", setupf("--final-centers %d: the final fit is Nyström only on more rows than M; the table has %d (and --solver auto would fit them by a tree: %s): give M below %d", opt.FinalCenters, n, why, n)
	}
	if solver == rfm.SolverTree {
		return "", setupf("tune fits exact RFMs (or --solver nystrom), and --solver auto would fit the search's %d rows by a tree (%s): use --max-rows N --final-centers M to search exactly on samples of N rows and fit the model by Nyström on M centres, or --solver nystrom, or --solver exact --float32 if it fits", searchRows, why)
	}
	opt.Base.Solver = solver
	if err := plan(opt.Base, searchRows); err != nil {
		return "", err
	}
	if NystromFinal(*opt, n) {
		fc := opt.Base
		fc.Solver, fc.Centers = rfm.SolverNystrom, opt.FinalCenters
		err := plan(fc, n)
		// Centres chosen here, not given: as many as fit, down to 1 000.
		for large != "" && err != nil && fc.Centers/2 >= 1000 {
			fc.Centers /= 2
			err = plan(fc, n)
		}
		if err != nil {
			return "", fmt.Errorf("the final fit on %d Nyström centres (--final-centers): %w", fc.Centers, err)
		}
		opt.FinalCenters = fc.Centers
	}
	return large, nil
}

// RunJournal is Run with every trial appended to journal as it ends
// (journal.Err keeps its first write error). progress, when set, is told
// after each trial the share of the search done (of Budget, else of
// Trials; below 1), the trial and the best scored trial so far (of the
// most rows; nil before the first score). The stats count the trials
// fitted and read back, also when the search fails.
func RunJournal(ctx context.Context, opt Options, journal *Journal, progress func(frac float64, tr, best *Trial)) (*Result, SearchStats, error) {
	var st SearchStats
	task := rfm.Regression
	if ds := opt.Data[opt.BaseScaling]; ds != nil {
		task = ds.Task()
	}
	start := time.Now()
	var best *Trial
	opt.Done = func(tr Trial) {
		journal.Add(&tr)
		switch tr.Status {
		case StatusOK:
			st.Fits++
		case StatusCached:
			st.Cached++
		}
		if tr.Scored() && (best == nil || tr.Rows > best.Rows || tr.Rows == best.Rows && Better(task, &tr, best)) {
			c := tr
			best = &c
		}
		frac := 0.0
		if opt.Budget > 0 {
			frac = float64(time.Since(start)) / float64(opt.Budget)
		} else if opt.Trials > 0 {
			frac = float64(tr.Index+1) / float64(opt.Trials)
		}
		if progress != nil {
			progress(min(frac, 0.99), &tr, best)
		}
	}
	res, err := Run(ctx, opt)
	st.Time = time.Since(start)
	return res, st, err
}
