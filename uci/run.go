package uci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/benchstore"
	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/internal/workers"
)

// Options configure a benchmark run. The zero value of every field but
// DataDir and OutDir has a default.
type Options struct {
	// DataDir is the uci121 folder (holding data/ and the Fernández-Delgado
	// results table) or the folder of data sets itself.
	DataDir string
	// Subset is SubsetArora90 (default), SubsetAll or a comma list of names.
	Subset string
	// Protocol is ProtocolPaper (default), ProtocolClean, ProtocolTuned or
	// ProtocolTunedGrid.
	Protocol string
	// Jobs is the number of data sets run at once (default 1). With more
	// than one, each job gets Threads/Jobs BLAS threads, and the large data
	// sets (evaluation splits over LargeRows rows) run afterwards one at a
	// time with all threads.
	Jobs int
	// Threads is the total number of BLAS and element-wise threads (0: one
	// per CPU).
	Threads int
	// OutDir receives results.tsv, summary.md, summary.json and
	// rfm_vs_laplace.png.
	OutDir string
	// Force recomputes data sets already in OutDir/results.tsv.
	Force bool
	// Progress, if set, is called (from one goroutine at a time) as the run
	// advances.
	Progress func(Progress)
	// Seed drives the AGOP sampling (sets over 20 000 training rows) and the
	// clean protocol's splits; 0 means 1.
	Seed uint64
	// Float32 stores and factors the kernel matrices in float32.
	Float32 bool
	// Trials is the number of configurations ProtocolTuned's search draws
	// in each evaluation split (0: 30).
	Trials int
	// Ensemble is how many of the best configurations of each split's
	// search ProtocolTuned averages (tune.FinalEnsemble; 0 or 1: the best
	// alone).
	Ensemble int
	// Refine is the number of float64 refinement steps of a float32
	// solve (the engine's Config.Refine); nil means the engine's default.
	Refine *int
}

// LargeRows is the evaluation-split size from which a data set counts as
// large for scheduling (see Options.Jobs).
const LargeRows = 6000

// tag identifies the computation a result row came from: results with
// another tag are not reused.
func (o *Options) tag() string {
	t := o.Protocol
	if o.Protocol == ProtocolTunedGrid {
		t += "/v2" // 240-point grid, M learned again on both halves
	}
	if o.Protocol == ProtocolTuned {
		t += fmt.Sprintf("/trials=%d", searchTrials(o.Trials))
		if o.Ensemble > 1 {
			// v2: the best alone when the mean loses on validation.
			t += fmt.Sprintf("/ensemble=%d/v2", o.Ensemble)
		}
	}
	if o.Float32 {
		t += "/float32"
		if o.Refine != nil && *o.Refine != rfm.DefaultConfig().Refine {
			t += fmt.Sprintf("/refine=%d", *o.Refine)
		}
	}
	if o.Seed != 1 {
		t += fmt.Sprintf("/seed=%d", o.Seed)
	}
	return t
}

// Progress reports how far a run has come.
type Progress struct {
	Done  int // data sets finished in this run (computed, skipped or failed)
	Total int // data sets this run computes
	// Dataset is the data set the event is about; Event is "start",
	// "fit" (one grid point or evaluation fit finished), "split" (the tuned
	// protocol saved an evaluation split; Result is the partial row),
	// "done", "failed" or "skipped".
	Dataset string
	Event   string
	// Fraction of the run's estimated work (by a cost model in n³), Elapsed
	// and ETA.
	Fraction float64
	Elapsed  time.Duration
	ETA      time.Duration // 0 until something finished
	// Result is set on "split", "done", "failed" and "skipped".
	Result *Result
}

// Report is what Run returns.
type Report struct {
	Protocol string `json:"protocol"`
	Subset   string `json:"subset"`
	Tag      string `json:"tag"`
	OutDir   string `json:"out_dir"`
	// Results has one entry per selected data set, in name order.
	Results  []Result `json:"results"`
	Computed int      `json:"computed"` // data sets computed by this run
	Reused   int      `json:"reused"`   // taken from an earlier results.tsv
	OK       int      `json:"ok"`
	Skipped  int      `json:"skipped"`
	Failed   int      `json:"failed"`
	// MeanAccuracy and MeanLaplace average the test accuracies (%) of the
	// OK data sets.
	MeanAccuracy float64 `json:"mean_accuracy_pct"`
	MeanLaplace  float64 `json:"mean_laplace_pct"`
	// Calibration compares the RFM's test log-loss before and after its
	// calibration, over the data sets that recorded both.
	Calibration *CalibrationSummary `json:"calibration,omitempty"`
	// Members counts the tuned protocol's splits by the configurations
	// their model averages (nil for the other protocols).
	Members *MembersSummary `json:"members,omitempty"`
	// Scopes compare RFM and Laplace with the 179 classifiers of
	// Fernández-Delgado et al. on the data sets present.
	Scopes []Scope  `json:"scopes"`
	Notes  []string `json:"notes,omitempty"`
	// Elapsed is the wall time of this run (ElapsedSeconds in JSON).
	Elapsed        time.Duration `json:"-"`
	ElapsedSeconds float64       `json:"elapsed_seconds"`
	Jobs           int           `json:"jobs"`
	Threads        int           `json:"threads"`
	Files          []string      `json:"files"`
}

func (o *Options) defaults() error {
	if o.Subset == "" {
		o.Subset = SubsetArora90
	}
	if o.Protocol == "" {
		o.Protocol = ProtocolPaper
	}
	if !slices.Contains(Protocols(), o.Protocol) {
		return fmt.Errorf("unknown protocol %q (known: %s)", o.Protocol, strings.Join(Protocols(), ", "))
	}
	if o.Jobs == 0 {
		o.Jobs = 1
	}
	if o.Jobs < 0 {
		return fmt.Errorf("jobs = %d must be ≥ 1", o.Jobs)
	}
	if o.Threads < 0 {
		return fmt.Errorf("threads = %d must be ≥ 0", o.Threads)
	}
	if o.Threads == 0 {
		o.Threads = runtime.NumCPU()
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.DataDir == "" {
		return errors.New("no data directory given")
	}
	if o.OutDir == "" {
		return errors.New("no output directory given")
	}
	return nil
}

// ResultsName and the other output names inside OutDir.
const (
	ResultsName     = "results.tsv"
	SummaryMDName   = "summary.md"
	SummaryJSONName = "summary.json"
	PlotName        = "rfm_vs_laplace.png"
)

// Run benchmarks the selected data sets under a protocol, writes the
// outputs into OutDir and returns the report. Data sets already in
// OutDir/results.tsv with the same protocol tag are reused unless Force;
// results.tsv is rewritten atomically after every data set (and, under the
// tuned protocol, after every evaluation split as a StatusPartial row), so
// an interrupted run resumes where it stopped: at the next set, or at the
// next split of a tuned set (its large sets take hours). A data set that fails is
// recorded as failed (and retried by the next run); Run then still returns
// the report, with Failed > 0.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	start := time.Now()
	layout, err := FindLayout(opt.DataDir)
	if err != nil {
		return nil, err
	}
	all, err := Discover(layout.SetsDir)
	if err != nil {
		return nil, err
	}
	selected, err := Select(all, opt.Subset)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opt.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	resultsPath := filepath.Join(opt.OutDir, ResultsName)
	tag := opt.tag()
	store := benchstore.New(resultsPath, func(r *Result) string { return r.Name }, WriteResults)
	if !opt.Force {
		prev, err := ReadResults(resultsPath)
		if err != nil {
			return nil, fmt.Errorf("resume: %w (pass --force to overwrite it)", err)
		}
		for _, r := range prev {
			if r.Protocol != tag {
				return nil, fmt.Errorf("%s holds results computed with %q, this run is %q: pass --force to recompute, or choose another output directory", resultsPath, r.Protocol, tag)
			}
			store.Put(r)
		}
	}
	rep := &Report{Protocol: opt.Protocol, Subset: opt.Subset, Tag: tag, OutDir: opt.OutDir, Jobs: opt.Jobs, Threads: opt.Threads}
	var todo []Entry
	for _, e := range selected {
		if e.Skip != "" {
			store.Put(Result{Name: e.Meta.Name, Protocol: tag, Status: StatusSkipped, Reason: e.Skip, N: e.Meta.N1, D: e.Meta.D, Classes: e.Meta.Classes})
			continue
		}
		if r, ok := store.Get(e.Meta.Name); ok && r.Status == StatusOK {
			rep.Reused++
			continue
		}
		todo = append(todo, e)
	}
	r := &runner{opt: opt, store: store, start: start, total: len(todo), inflight: map[string]float64{}}
	for _, e := range todo {
		c := setCost(opt.Protocol, &e.Meta, opt.Trials)
		if p, ok := store.Get(e.Meta.Name); ok && p.Status == StatusPartial {
			c *= float64(EvalSplits-min(len(p.TestAccuracies), EvalSplits-1)) / EvalSplits // the splits left
		}
		r.costs = append(r.costs, c)
		r.totalCost += c
	}
	// Write the file once up front: skipped sets appear even if the run is
	// interrupted, and an unwritable output fails before hours of work.
	if err := store.Save(); err != nil {
		return nil, err
	}
	prevThreads := linalg.Threads()
	defer linalg.SetThreads(prevThreads)
	runErr := r.schedule(ctx, todo)
	rep.Computed = r.computed
	for _, e := range selected {
		res, ok := store.Get(e.Meta.Name)
		if !ok {
			continue // not reached: the run was interrupted
		}
		rep.Results = append(rep.Results, res)
		switch res.Status {
		case StatusOK:
			rep.OK++
		case StatusSkipped:
			rep.Skipped++
		case StatusFailed:
			rep.Failed++
		}
	}
	if err := store.Save(); err != nil {
		return rep, err
	}
	rep.Files = append(rep.Files, resultsPath)
	rep.Elapsed = time.Since(start)
	rep.ElapsedSeconds = rep.Elapsed.Seconds()
	if runErr != nil {
		return rep, runErr
	}
	if err := finish(rep, layout); err != nil {
		return rep, err
	}
	return rep, nil
}

// runner executes the data sets and keeps results.tsv current.
type runner struct {
	opt   Options
	start time.Time

	mu        sync.Mutex // guards everything below and serializes Progress
	store     *benchstore.Store[Result]
	costs     []float64 // per todo entry
	totalCost float64
	doneCost  float64
	inflight  map[string]float64 // finished part of the running fits, by data set
	done      int
	total     int
	computed  int
}

// report sends a progress event; the caller holds r.mu.
func (r *runner) report(name, event string, res *Result) {
	if r.opt.Progress == nil {
		return
	}
	p := Progress{Done: r.done, Total: r.total, Dataset: name, Event: event, Result: res, Elapsed: time.Since(r.start)}
	done := r.doneCost
	for _, v := range r.inflight {
		done += v
	}
	if r.totalCost > 0 {
		p.Fraction = min(done/r.totalCost, 1)
	}
	if done > 0 && p.Fraction < 1 {
		p.ETA = time.Duration(float64(p.Elapsed) * (r.totalCost - done) / done)
	}
	r.opt.Progress(p)
}

// schedule runs the todo entries (index i has cost r.costs[i]).
func (r *runner) schedule(ctx context.Context, todo []Entry) error {
	type task struct {
		e    Entry
		cost float64
	}
	var small, large []task
	for i, e := range todo {
		t := task{e, r.costs[i]}
		if r.opt.Jobs > 1 && e.Meta.N1-e.Meta.N1/4 >= LargeRows {
			large = append(large, t)
		} else {
			small = append(small, t)
		}
	}
	jobs := min(r.opt.Jobs, max(len(small), 1))
	if jobs > 1 {
		// Longest first balances the workers; results.tsv stays sorted anyway.
		slices.SortStableFunc(small, func(a, b task) int {
			switch {
			case a.cost > b.cost:
				return -1
			case a.cost < b.cost:
				return 1
			}
			return 0
		})
	}
	run := func(tasks []task, n, threads int) error {
		linalg.SetThreads(threads)
		return workers.Run(ctx, tasks, n, func(t task) error { return r.one(ctx, t.e, t.cost) })
	}
	if err := run(small, jobs, max(1, r.opt.Threads/jobs)); err != nil {
		return err
	}
	return run(large, 1, r.opt.Threads)
}

// one computes a data set. It returns an error only when the run must stop
// (cancellation, results.tsv not writable); a data set's own failure is
// recorded.
func (r *runner) one(ctx context.Context, e Entry, cost float64) error {
	name := e.Meta.Name
	counted := 0.0
	j := &job{protocol: r.opt.Protocol, base: base{seed: r.opt.Seed, float32: r.opt.Float32, refine: r.opt.Refine}, fit: engineFit, trials: r.opt.Trials, ensemble: r.opt.Ensemble}
	r.mu.Lock()
	if p, ok := r.store.Get(name); ok && p.Status == StatusPartial {
		j.resume = &p
	}
	r.mu.Unlock()
	j.checkpoint = func(p *Result) error {
		p.Protocol = r.opt.tag()
		r.mu.Lock()
		defer r.mu.Unlock()
		r.store.Put(*p)
		if err := r.store.Save(); err != nil {
			return err
		}
		r.report(name, "split", p)
		return nil
	}
	j.report = func(done, inflight float64) {
		r.mu.Lock()
		defer r.mu.Unlock()
		// The cost model is approximate: never let one set count for more
		// than its estimate.
		done = min(done, cost-counted)
		counted += done
		r.doneCost += done
		r.inflight[name] = min(inflight, cost-counted)
		r.report(name, "fit", nil)
	}
	r.mu.Lock()
	r.report(name, "start", nil)
	r.mu.Unlock()

	var res *Result
	set, err := Load(&e.Meta)
	if err == nil {
		res, err = j.evaluate(ctx, set)
	}
	set = nil
	if ctx.Err() != nil {
		return ctx.Err()
	}
	event := "done"
	switch {
	case errors.Is(err, ErrNoData):
		res = &Result{Name: name, Status: StatusSkipped, Reason: err.Error(), N: e.Meta.N1, D: e.Meta.D, Classes: e.Meta.Classes}
		event = "skipped"
	case err != nil:
		res = &Result{Name: name, Status: StatusFailed, Reason: err.Error(), N: e.Meta.N1, D: e.Meta.D, Classes: e.Meta.Classes}
		event = "failed"
	}
	res.Protocol = r.opt.tag()
	if e.Meta.N1 >= 4*LargeRows/3 {
		runtime.GC() // hand the n×n buffers back before the next set
	}
	if err := writeGrids(filepath.Join(r.opt.OutDir, SelectionDir), res); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res.grids = nil
	r.store.Put(*res)
	r.doneCost += cost - counted
	delete(r.inflight, name)
	r.done++
	if event == "done" {
		r.computed++
	}
	if err := r.store.Save(); err != nil {
		return err
	}
	r.report(name, event, res)
	return nil
}
