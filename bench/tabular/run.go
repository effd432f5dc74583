package tabular

import (
	"cmp"
	"context"
	"encoding/json"
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

// Options configure a run. DataDir and OutDir are required; the rest has
// defaults.
type Options struct {
	DataDir  string
	OutDir   string
	Protocol string // ProtocolPaper (default) or ProtocolTuned
	Size     string // SizeMedium (default) or SizeLarge
	// Tasks, if set, keeps the tasks whose ID ("group/name") or name is in
	// the list, or whose ID contains an entry ending in "/" (a group).
	Tasks []string
	// Jobs is how many tasks run at once (default 1); the Threads are
	// shared among them.
	Jobs    int
	Threads int // total linear-algebra threads (0: one per CPU)
	Float32 bool
	Seed    uint64 // splits and fits; 0 means 1
	// Trials and Budget bound ProtocolTuned's search per task (the budget
	// is shared evenly by the task's splits); 0 trials means 30, 0 budget
	// none.
	Trials int
	Budget time.Duration
	// Force recomputes tasks already in OutDir/results.json.
	Force bool
	// ReportOnly computes nothing: it writes the summaries of the tasks
	// already in results.json (with XGBoost's column when available).
	ReportOnly bool
	// XGBoost is a results file of scripts/xgboost_tabular.py to put
	// beside ours in the summaries ("" : OutDir/xgboost.json if present).
	XGBoost  string
	Progress func(Progress)

	fit func(ctx context.Context, cfg rfm.Config, train, valid *rfm.Dataset, progress func(rfm.Progress)) (*rfm.Model, error)
}

// Progress reports how a run advances (one call at a time).
type Progress struct {
	Done, Total int
	Task        string
	Event       string // "start", "fit", "done", "failed"
	Detail      string
	Elapsed     time.Duration
	Result      *Result // on "done" and "failed"
}

// The statuses of a result.
const (
	StatusOK     = "ok"
	StatusFailed = "failed"
)

// Result is one task's outcome.
type Result struct {
	Task     string `json:"task"` // group/name
	Group    string `json:"group"`
	Name     string `json:"name"`
	Status   string `json:"status"`
	Reason   string `json:"reason,omitempty"`
	Tag      string `json:"tag"`
	Rows     int    `json:"rows"`
	Features int    `json:"features"` // encoded width (one-hot included)
	Train    int    `json:"train"`
	Val      int    `json:"val"`
	Test     int    `json:"test"`
	Repeats  int    `json:"repeats"`
	// Score is the mean test score over the splits (accuracy % or R²),
	// ValScore the mean validation score of the choice.
	Score    float64      `json:"score"`
	ValScore float64      `json:"val_score"`
	Splits   []SplitScore `json:"splits"`
	// Grid holds the paper protocol's grid points with their scores.
	Grid    []GridPoint `json:"grid,omitempty"`
	Seconds float64     `json:"seconds"`
}

// ResultsName and the other files written into OutDir.
const (
	ResultsName     = "results.json"
	SummaryMDName   = "summary.md"
	SummaryJSONName = "summary.json"
	PlotName        = "rfm_vs_xgboost.png"
	SplitsDir       = "splits"
	XGBoostName     = "xgboost.json"
)

// resultsFile is results.json.
type resultsFile struct {
	Results []Result `json:"results"`
}

func (o *Options) defaults() error {
	if o.Protocol == "" {
		o.Protocol = ProtocolPaper
	}
	if !slices.Contains(Protocols(), o.Protocol) {
		return fmt.Errorf("unknown protocol %q (known: %s)", o.Protocol, strings.Join(Protocols(), ", "))
	}
	if o.Size == "" {
		o.Size = SizeMedium
	}
	if _, err := MaxTrain(o.Size); err != nil {
		return err
	}
	if o.Jobs == 0 {
		o.Jobs = 1
	}
	if o.Jobs < 0 || o.Threads < 0 || o.Trials < 0 || o.Budget < 0 {
		return fmt.Errorf("jobs %d, threads %d, trials %d and budget %v must not be negative", o.Jobs, o.Threads, o.Trials, o.Budget)
	}
	if o.Threads == 0 {
		o.Threads = runtime.NumCPU()
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Trials == 0 {
		o.Trials = 30
	}
	if o.DataDir == "" {
		return errors.New("no data directory given")
	}
	if o.OutDir == "" {
		return errors.New("no output directory given")
	}
	if o.fit == nil {
		o.fit = rfm.Fit
	}
	return nil
}

// Tag identifies the computation a result came from; results of another
// tag are not reused.
func (o *Options) Tag() string {
	t := fmt.Sprintf("%s/%s/seed=%d", o.Protocol, o.Size, o.Seed)
	if o.Protocol == ProtocolTuned {
		t += fmt.Sprintf("/trials=%d", o.Trials)
		if o.Budget > 0 {
			t += "/budget=" + o.Budget.String()
		}
	}
	if o.Float32 {
		t += "/float32"
	}
	return t
}

// Select returns the tasks of the size that the filter keeps. For the
// large size only tasks with more training rows than the medium cap count
// (rows is the task's row count, read by the caller).
func Select(all []Task, filter []string) ([]Task, error) {
	if len(filter) == 0 {
		return all, nil
	}
	var out []Task
	used := make([]bool, len(filter))
	for _, t := range all {
		for i, f := range filter {
			if f == t.ID() || f == t.Name || (strings.HasSuffix(f, "/") && strings.HasPrefix(t.ID(), f)) {
				out = append(out, t)
				used[i] = true
				break
			}
		}
	}
	for i, u := range used {
		if !u {
			return nil, fmt.Errorf("--tasks: %q matches no task (tasks are GROUP/NAME, NAME or GROUP/)", filter[i])
		}
	}
	return out, nil
}

// ReadResults reads results.json (nil, nil when it does not exist).
func ReadResults(path string) ([]Result, error) {
	data, err := benchstore.ReadFile(path)
	if data == nil || err != nil {
		return nil, err
	}
	var f resultsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f.Results, nil
}

// Report is what Run returns and summary.json holds.
type Report struct {
	Protocol string   `json:"protocol"`
	Size     string   `json:"size"`
	Tag      string   `json:"tag"`
	Results  []Result `json:"results"`
	Computed int      `json:"computed"`
	Reused   int      `json:"reused"`
	Failed   int      `json:"failed"`
	// Groups compare ours with the paper's columns, one per group.
	Groups         []GroupSummary `json:"groups"`
	XGBoost        string         `json:"xgboost_file,omitempty"`
	ElapsedSeconds float64        `json:"elapsed_seconds"`
	Jobs           int            `json:"jobs"`
	Threads        int            `json:"threads"`
	Files          []string       `json:"files"`
	Notes          []string       `json:"notes,omitempty"`
}

// Run runs the protocol on the selected tasks, writes results.json after
// every task (a rerun reuses the tasks already there with the same tag),
// the splits' indices, and the summaries.
func Run(ctx context.Context, opt Options) (*Report, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	start := time.Now()
	all, err := Discover(opt.DataDir)
	if err != nil {
		return nil, err
	}
	tasks, err := Select(all, opt.Tasks)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(opt.OutDir, SplitsDir), 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	path := filepath.Join(opt.OutDir, ResultsName)
	tag := opt.Tag()
	store := benchstore.New(path, func(r *Result) string { return r.Task }, func(path string, rs []Result) error {
		return benchstore.WriteJSON(path, resultsFile{Results: rs})
	})
	prev, err := ReadResults(path)
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	for _, r := range prev {
		if r.Tag != tag && !opt.Force {
			return nil, fmt.Errorf("%s holds results computed as %q, this run is %q: pass --force to recompute, or choose another output directory", path, r.Tag, tag)
		}
		if r.Tag == tag {
			store.Put(r)
		}
	}
	rep := &Report{Protocol: opt.Protocol, Size: opt.Size, Tag: tag, Jobs: opt.Jobs, Threads: opt.Threads}
	// Cheapest first: an interrupted or time-boxed run then holds as many
	// finished tasks as it can. The large size keeps only tasks with more
	// training rows than the medium cap.
	maxTrain, _ := MaxTrain(opt.Size)
	mediumCap, _ := MaxTrain(SizeMedium)
	costs := map[string]float64{}
	var todo, kept []Task
	for _, t := range tasks {
		n, err := CountRows(t.Path)
		if err != nil {
			return nil, err
		}
		tr, _, _, reps := SplitSizes(n, maxTrain)
		if opt.Size == SizeLarge && tr <= mediumCap {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: %d training rows, not more than the medium cap: not a large task", t.ID(), tr))
			continue
		}
		kept = append(kept, t)
		costs[t.ID()] = float64(reps) * float64(tr) * float64(tr) * float64(tr)
		if r, ok := store.Get(t.ID()); (ok && r.Status == StatusOK && !opt.Force) || opt.ReportOnly {
			if ok {
				rep.Reused++
			}
			continue
		}
		todo = append(todo, t)
	}
	tasks = kept
	slices.SortStableFunc(todo, func(a, b Task) int { return cmp.Compare(costs[a.ID()], costs[b.ID()]) })
	ru := &runner{opt: opt, store: store, start: start, total: len(todo)}
	if err := store.Save(); err != nil {
		return nil, err
	}
	prevThreads := linalg.Threads()
	jobs := max(1, min(opt.Jobs, len(todo)))
	linalg.SetThreads(max(1, opt.Threads/jobs))
	runErr := ru.schedule(ctx, todo, jobs)
	linalg.SetThreads(prevThreads)
	if err := store.Save(); err != nil {
		return nil, err
	}
	rep.Computed = ru.computed
	for _, t := range tasks {
		if r, ok := store.Get(t.ID()); ok {
			rep.Results = append(rep.Results, r)
			if r.Status == StatusFailed {
				rep.Failed++
			}
		}
	}
	rep.ElapsedSeconds = time.Since(start).Seconds()
	rep.Files = append(rep.Files, path)
	if runErr != nil {
		return rep, runErr
	}
	xgb := opt.XGBoost
	if xgb == "" {
		if _, err := os.Stat(filepath.Join(opt.OutDir, XGBoostName)); err == nil {
			xgb = filepath.Join(opt.OutDir, XGBoostName)
		}
	}
	return rep, Finish(rep, opt.OutDir, xgb)
}

type runner struct {
	opt   Options
	start time.Time

	mu       sync.Mutex // guards below and serializes Progress
	store    *benchstore.Store[Result]
	done     int
	total    int
	computed int
}

// report sends an event; the caller holds r.mu.
func (r *runner) report(task, event, detail string, res *Result) {
	if r.opt.Progress != nil {
		r.opt.Progress(Progress{Done: r.done, Total: r.total, Task: task, Event: event, Detail: detail, Elapsed: time.Since(r.start), Result: res})
	}
}

func (r *runner) schedule(ctx context.Context, todo []Task, jobs int) error {
	return workers.Run(ctx, todo, jobs, func(t Task) error { return r.one(ctx, t) })
}

// one computes a task; it returns an error only when the run must stop.
func (r *runner) one(ctx context.Context, t Task) error {
	r.mu.Lock()
	r.report(t.ID(), "start", "", nil)
	r.mu.Unlock()
	tell := func(detail string) {
		r.mu.Lock()
		r.report(t.ID(), "fit", detail, nil)
		r.mu.Unlock()
	}
	res, err := Evaluate(ctx, t, r.opt, filepath.Join(r.opt.OutDir, SplitsDir), tell)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	event := "done"
	if err != nil {
		res = &Result{Task: t.ID(), Group: t.Group, Name: t.Name, Status: StatusFailed, Reason: err.Error()}
		event = "failed"
	}
	res.Tag = r.opt.Tag()
	runtime.GC()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.store.Put(*res)
	r.done++
	if event == "done" {
		r.computed++
	}
	if err := r.store.Save(); err != nil {
		return err
	}
	r.report(t.ID(), event, "", res)
	return nil
}

// SplitsFile is the exported split indices of a task (splits/GROUP__NAME.json),
// for scripts that must score on the same rows.
type SplitsFile struct {
	Task     string  `json:"task"`
	Path     string  `json:"path"`
	Rows     int     `json:"rows"`
	Size     string  `json:"size"`
	MaxTrain int     `json:"max_train"`
	Seed     uint64  `json:"seed"`
	Target   string  `json:"target"`
	Classify bool    `json:"classification"`
	Splits   []Split `json:"splits"`
}

// SplitsPath is the file of a task's split indices under dir.
func SplitsPath(dir string, t Task) string {
	return filepath.Join(dir, t.Group+"__"+t.Name+".json")
}

// Evaluate runs the protocol of opt on one task and writes its split
// indices into splitsDir (when not ""). tell (nil allowed) hears of each
// finished fit or trial.
func Evaluate(ctx context.Context, t Task, opt Options, splitsDir string, tell func(string)) (*Result, error) {
	if err := opt.defaults(); err != nil {
		return nil, err
	}
	if tell == nil {
		tell = func(string) {}
	}
	start := time.Now()
	tab, err := Load(t)
	if err != nil {
		return nil, err
	}
	maxTrain, _ := MaxTrain(opt.Size)
	n := tab.Rows()
	if mediumCap, _ := MaxTrain(SizeMedium); opt.Size == SizeLarge && min(n*7/10, maxTrain) <= mediumCap {
		return nil, fmt.Errorf("%d rows: the training split (%d rows) is not larger than the medium cap, so the task is not in the large benchmark", n, n*7/10)
	}
	splits, err := Splits(n, maxTrain, opt.Seed)
	if err != nil {
		return nil, err
	}
	if splitsDir != "" {
		sf := SplitsFile{Task: t.ID(), Path: t.Path, Rows: n, Size: opt.Size, MaxTrain: maxTrain, Seed: opt.Seed, Target: tab.Target, Classify: t.Classification(), Splits: splits}
		data, err := json.Marshal(sf) // compact: thousands of indices
		if err != nil {
			return nil, err
		}
		if err := benchstore.WriteFile(SplitsPath(splitsDir, t), append(data, '\n')); err != nil {
			return nil, err
		}
	}
	f := &fitter{protocol: opt.Protocol, float32: opt.Float32, seed: opt.Seed, trials: opt.Trials, budget: opt.Budget, fit: opt.fit}
	res := &Result{Task: t.ID(), Group: t.Group, Name: t.Name, Status: StatusOK, Rows: n, Repeats: len(splits),
		Train: len(splits[0].Train), Val: len(splits[0].Val), Test: len(splits[0].Test)}
	grid := newPaperGrid()
	for k, s := range splits {
		t0 := time.Now()
		e, err := tab.Encode(s)
		if err != nil {
			return nil, fmt.Errorf("split %d: %w", k+1, err)
		}
		res.Features = e.Train.D
		switch opt.Protocol {
		case ProtocolPaper:
			if err := f.paperSplit(ctx, e, grid, t.Classification(), func(d string) { tell(fmt.Sprintf("split %d/%d %s", k+1, len(splits), d)) }); err != nil {
				return nil, fmt.Errorf("split %d: %w", k+1, err)
			}
		case ProtocolTuned:
			budget := time.Duration(0)
			if opt.Budget > 0 {
				budget = opt.Budget / time.Duration(len(splits))
			}
			sc, err := f.tunedSplit(ctx, e, k, budget, func(d string) { tell(fmt.Sprintf("split %d/%d %s", k+1, len(splits), d)) })
			if err != nil {
				return nil, fmt.Errorf("split %d: %w", k+1, err)
			}
			sc.Seconds = time.Since(t0).Seconds()
			res.Splits = append(res.Splits, *sc)
		}
	}
	if opt.Protocol == ProtocolPaper {
		res.Grid = grid
		b := bestPoint(grid)
		g := grid[b]
		for k := range splits {
			res.Splits = append(res.Splits, SplitScore{Val: g.Val[k], Test: g.Test[k], Choice: Choice{Ridge: g.Ridge, Normalize: g.Normalize, Round: g.Rounds[k]}})
		}
	}
	var vals, tests []float64
	for _, s := range res.Splits {
		vals, tests = append(vals, s.Val), append(tests, s.Test)
	}
	res.Score, res.ValScore = mean(tests), mean(vals)
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
