package tree

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/agop"
	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/solve"
)

// Defaults.
const (
	DefaultLeafSize    = 10000
	DefaultSplitSample = 4000
	// TimedRows: above this many rows the default exact leaf shrinks as
	// DefaultLeafSize·√(TimedRows/n), at least MinTimedLeafSize, so that
	// the leaves' work (n·leaf² per round) stays that of TimedRows rows at
	// DefaultLeafSize a leaf (about 8 minutes for d = 20 on 2 cores).
	TimedRows        = 1000000
	MinTimedLeafSize = 4000
	// fullSplitLimit: above this many features the AGOP of a split is
	// diagonal (a d×d matrix per node would cost more than the split).
	fullSplitLimit = 2000
)

// check reports a tree setting of cfg out of range (the declaration checks
// the same through cfg.Validate; this names the tree's own constraints).
func check(cfg rfm.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.Solver != "" && cfg.Solver != rfm.SolverTree && cfg.Solver != rfm.SolverAuto {
		return fmt.Errorf("tree.Fit: the config asks for the %s solver", cfg.Solver)
	}
	return nil
}

// Node is a node of the tree. An internal node sends a row x left when
// x·Dir ≤ Threshold and right otherwise; a leaf has Leaf ≥ 0.
type Node struct {
	Depth     int       `json:"depth"`
	N         int       `json:"n"` // training rows that reached it
	Leaf      int       `json:"leaf"`
	Left      int       `json:"left,omitempty"`
	Right     int       `json:"right,omitempty"`
	Threshold float64   `json:"threshold,omitempty"`
	Dir       []float64 `json:"-"` // D entries; stored as the "dirs" array
	// Scale is the standard deviation of the node's training rows'
	// projections on Dir: soft routing's unit of distance to the threshold.
	Scale float64 `json:"scale,omitempty"`
}

// Leaf is a fitted leaf: an RFM, or (a classification leaf whose rows are
// all of one class) that constant class.
type Leaf struct {
	Model *rfm.Model `json:"-"`
	Class int        `json:"class"` // −1 unless constant
	N     int        `json:"n"`
	// Note says what was unusual about the leaf (subsampled, constant).
	Note string `json:"note,omitempty"`
}

// Model is a fitted tree of RFMs: routing nodes and leaf models. It
// predicts without the training data. Methods are safe for concurrent use.
// Config is every leaf's configuration and the tree's (LeafSize as the
// planner chose it, SplitRule, SplitSample).
//
// Its Header's Calibration (Config.Calibrate, classification) maps the
// tree's scores to probabilities; fitted on rows held out of the leaves
// (the soft-routing holdout when there is one).
type Model struct {
	rfm.Header
	N      int      `json:"n"`
	Nodes  []Node   `json:"nodes"`
	Leaves []Leaf   `json:"leaves"`
	Notes  []string `json:"notes,omitempty"`
	// Temperature of soft routing (0: hard). A row goes right at a node
	// with probability σ((x·Dir − Threshold)/(Temperature·Scale)), and its
	// prediction is the leaves' predictions weighted by the probability of
	// reaching them.
	Temperature float64 `json:"temperature,omitempty"`
}

// PredictChunkRows is how many rows a tree predicts at once (ChunkRows):
// it divides each chunk among its leaves, so a chunk of a few leaves'
// worth would leave each leaf a handful.
const PredictChunkRows = 2048 * 128

// ChunkRows is PredictChunkRows (rfm.Chunked).
func (m *Model) ChunkRows() int { return PredictChunkRows }

// Kind is "tree".
func (m *Model) Kind() string { return "tree" }

// NumLeaves is the number of leaves, constant ones included.
func (m *Model) NumLeaves() int { return len(m.Leaves) }

// SubModels are the leaves' RFMs, without the constant leaves
// (rfm.Composite).
func (m *Model) SubModels() []*rfm.Model {
	var out []*rfm.Model
	for _, lf := range m.Leaves {
		if lf.Model != nil {
			out = append(out, lf.Model)
		}
	}
	return out
}

// Progress reports how far a tree fit has come.
type Progress struct {
	Stage    string // "split", "leaf", "done"
	Node     int    // nodes split so far
	Leaves   int    // leaves finished
	Total    int    // leaves in all (known once the splits are done)
	Fraction float64
}

// Plan is what the planner chose for a fit.
type Plan struct {
	LeafSolver  rfm.Solver // exact or nystrom
	LeafSize    int
	SplitSample int // rows of a node sampled for its direction
	Parallel    int
	LeafBytes   uint64 // the planned memory of one leaf fit
	BudgetBytes uint64
	// Why, when the planner lowered the default leaf size, says why.
	Why string
}

// String says what the planner chose, for the command line.
func (p Plan) String() string {
	s := fmt.Sprintf("%s leaves of at most %d rows, %d trained at once (%s each, %s budget)",
		p.LeafSolver, p.LeafSize, p.Parallel, sysmem.Human(p.LeafBytes), sysmem.Human(p.BudgetBytes))
	if p.Why != "" {
		s += "; " + p.Why
	}
	return s
}

// defaultBudget is 90% of the available memory (rfm.MemoryAvailable), or
// 1 TiB when the system does not say.
func defaultBudget() uint64 {
	avail, ok := rfm.MemoryAvailable()
	if !ok {
		return 1 << 40
	}
	return avail / 10 * 9
}

// ErrTooLarge is returned (wrapped) when not even one leaf fits the
// budget: rfm.ErrTooLarge, so that one errors.Is test catches every
// memory refusal.
var ErrTooLarge = rfm.ErrTooLarge

// leafBytes is the memory plan (rfm.PlanFit) of a leaf's exact RFM fit on
// n rows of d features with c outputs, with the threads of one of par
// leaves in flight.
func leafBytes(n, d, c, par int, cfg rfm.Config) uint64 {
	cfg = leafConfig(cfg)
	s := rfm.FitShape{N: n, D: d, Outputs: c, Threads: max(1, linalg.Threads()/par), DataHeld: true}
	return rfm.PlanFit(s, cfg).Total()
}

// leafConfig is the configuration of a leaf fit: the leaf solver (exact
// unless cfg.LeafSolver says nystrom, which works in float64).
func leafConfig(cfg rfm.Config) rfm.Config {
	cfg.Solver = rfm.SolverExact
	// A leaf's probabilities are never used alone: the tree combines the
	// leaves' scores.
	cfg.Calibrate = ""
	if cfg.LeafSolver == rfm.SolverNystrom {
		cfg.Solver, cfg.Float32 = rfm.SolverNystrom, false
	}
	return cfg
}

// DefaultNystromLeafSize is the leaf size with Nyström leaves when none is
// asked: each leaf's solve costs O(n·m) per CG iteration, not O(n³).
const DefaultNystromLeafSize = 100000

// MakePlan picks the leaf size and the leaves in flight for n rows of d
// features and c outputs within the memory budget (cfg.Leaf.MemoryLimit,
// or 90% of the available memory), or refuses naming what does not fit.
func MakePlan(cfg rfm.Config, n, d, c int) (Plan, error) {
	// The rows themselves and the routing buffers are held for the whole fit.
	return makePlan(cfg, n, d, c, uint64(n)*uint64(d)*8*2)
}

// makePlan is MakePlan with fixed bytes held besides the leaves.
func makePlan(cfg rfm.Config, n, d, c int, fixed uint64) (Plan, error) {
	budget := cfg.MemoryLimit
	if budget == 0 {
		budget = defaultBudget()
	}
	p := Plan{LeafSolver: leafConfig(cfg).Solver, LeafSize: cfg.LeafSize, BudgetBytes: budget}
	if p.LeafSize == 0 {
		p.LeafSize = DefaultLeafSize
		if cfg.LeafSolver == rfm.SolverNystrom {
			p.LeafSize = DefaultNystromLeafSize
		} else if n > TimedRows {
			timed := int(float64(DefaultLeafSize)*math.Sqrt(float64(TimedRows)/float64(n))) / 100 * 100
			p.LeafSize = max(timed, MinTimedLeafSize)
			p.Why = fmt.Sprintf("leaves smaller than %d so that %d rows cost about what %d rows do at %d a leaf (--leaf-size overrides)", DefaultLeafSize, n, TimedRows, DefaultLeafSize)
		}
		for p.LeafSize > 1000 && leafBytes(p.LeafSize, d, c, 1, cfg)+fixed > budget {
			p.LeafSize = p.LeafSize * 3 / 4
			p.Why = ""
		}
	}
	p.LeafSize = min(p.LeafSize, max(n, 10))
	p.LeafBytes = leafBytes(p.LeafSize, d, c, 1, cfg)
	if p.LeafBytes+fixed > budget {
		hint := "lower --leaf-size, use --float32 or --diag"
		if cfg.LeafSolver == rfm.SolverNystrom {
			hint = "lower --leaf-size or --centers, or use --diag"
		}
		return p, fmt.Errorf("%w for the tree: a leaf of %d rows × %d features needs %s (and the %d training rows %s more), %s available; %s",
			ErrTooLarge, p.LeafSize, d, sysmem.Human(p.LeafBytes), n, sysmem.Human(fixed), sysmem.Human(budget), hint)
	}
	// As many leaves at once as threads, while they fit (each then has
	// fewer threads, so fewer per-thread blocks).
	p.Parallel = 1
	for par := linalg.Threads(); par > 1; par-- {
		if b := leafBytes(p.LeafSize, d, c, par, cfg); uint64(par)*b+fixed <= budget {
			p.Parallel, p.LeafBytes = par, b
			break
		}
	}
	// A split fits one kernel machine on its sample, alone.
	p.SplitSample = cfg.SplitSample
	if p.SplitSample == 0 {
		p.SplitSample = DefaultSplitSample
	}
	split := cfg
	split.LeafSolver = rfm.SolverExact // a split's kernel machine is exact
	for p.SplitSample > 10 && leafBytes(p.SplitSample, d, c, 1, split)+fixed > budget {
		p.SplitSample = p.SplitSample * 3 / 4
	}
	return p, nil
}

// prepare checks a tree's configuration and its rows (named what in the
// messages), and sets the tree solver and the default split rule.
func prepare(cfg rfm.Config, ds *rfm.Dataset, what string) (rfm.Config, error) {
	if err := check(cfg); err != nil {
		return cfg, err
	}
	cfg.Solver = rfm.SolverTree
	if cfg.SplitRule == "" {
		cfg.SplitRule = rfm.SplitAGOP
	}
	if ds == nil {
		return cfg, fmt.Errorf("%s data is missing", what)
	}
	if err := ds.Check(what); err != nil {
		return cfg, err
	}
	if ds.N < 2 {
		return cfg, fmt.Errorf("%s data has %d row(s); at least 2 are needed", what, ds.N)
	}
	return cfg, nil
}

// start sets the plan's sizes into cfg and returns the grower over ds (its
// rows standing for total), the empty model and ds's row indices.
func start(cfg rfm.Config, plan Plan, ds *rfm.Dataset, total int, progress func(Progress)) (*grower, *Model, []int) {
	cfg.LeafSize, cfg.SplitSample = plan.LeafSize, plan.SplitSample
	task, c := ds.Task(), ds.NumOutputs()
	g := &grower{cfg: cfg, ds: ds, classes: c, progress: progress, weight: float64(total) / float64(ds.N)}
	if task == rfm.Classification {
		g.ds = withClasses(ds, c)
	}
	m := &Model{Header: rfm.Header{Config: cfg, Task: task, Outputs: c, D: ds.D}, N: total}
	rows := make([]int, ds.N)
	for i := range rows {
		rows[i] = i
	}
	return g, m, rows
}

// Fit grows the tree on train and fits its leaves with cfg (its solver
// must be tree, auto or unset). progress may be nil.
func Fit(ctx context.Context, cfg rfm.Config, train *rfm.Dataset, progress func(Progress)) (*Model, *Plan, error) {
	cfg, err := prepare(cfg, train, "training")
	if err != nil {
		return nil, nil, err
	}
	task, c := train.Task(), train.NumOutputs()
	plan, err := MakePlan(cfg, train.N, train.D, c)
	if err != nil {
		return nil, nil, err
	}
	g, m, rows := start(cfg, plan, train, train.N, progress)
	calibrate := task == rfm.Classification && cfg.Calibrate.Enabled()
	var held []int
	if cfg.SoftRouting || calibrate {
		if nv := min(train.N/10, 20000); nv >= 20 {
			rows, held = rfm.Holdout(train.N, g.ds.Labels, float64(nv)/float64(train.N), cfg.Seed+0x50f7)
		} else {
			m.Notes = append(m.Notes, fmt.Sprintf("%d rows are too few to hold some out: routing is hard and the probabilities are not calibrated", train.N))
		}
	}
	leafRows, err := g.grow(ctx, m, rows)
	if err != nil {
		return nil, nil, err
	}
	if err := g.fitLeaves(ctx, m, leafRows, plan); err != nil {
		return nil, nil, err
	}
	if held != nil && cfg.SoftRouting {
		if err := m.chooseTemperature(ctx, g.ds, held); err != nil {
			return nil, nil, fmt.Errorf("soft routing: %w", err)
		}
	}
	if held != nil && calibrate {
		val := g.ds.Subset(held)
		s, err := m.Predict(ctx, val.X, val.N)
		if err != nil {
			return nil, nil, fmt.Errorf("calibration: %w", err)
		}
		if m.Calibration, err = rfm.FitCalibration(cfg.Calibrate, s, val.Labels, c); err != nil {
			return nil, nil, err
		}
		m.Notes = append(m.Notes, fmt.Sprintf("probabilities calibrated (%s) on %d held-out rows: log-loss %.4g → %.4g", cfg.Calibrate, val.N, m.Calibration.LogLossBefore, m.Calibration.LogLossAfter))
	}
	g.report(Progress{Stage: "done", Node: len(m.Nodes), Leaves: len(m.Leaves), Total: len(m.Leaves), Fraction: 1})
	return m, &plan, nil
}

func withClasses(ds *rfm.Dataset, c int) *rfm.Dataset {
	cp := *ds
	cp.Classes = c
	return &cp
}

type grower struct {
	cfg      rfm.Config
	ds       *rfm.Dataset
	classes  int
	progress func(Progress)
	mu       sync.Mutex
	// weight is how many rows of the table each row of ds stands for (1,
	// or total/sample for a tree grown on a sample): a node is a leaf when
	// its rows stand for at most LeafSize.
	weight float64
	// maxLeafRows caps the rows a leaf is fitted on (0: LeafSize); more are
	// subsampled.
	maxLeafRows int
}

func (g *grower) report(p Progress) {
	if g.progress != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.progress(p)
	}
}

// grow builds the nodes breadth first and returns the rows of each leaf
// (leaves numbered in the order they are made).
func (g *grower) grow(ctx context.Context, m *Model, rows []int) ([][]int, error) {
	type item struct {
		node int
		rows []int
	}
	m.Nodes = append(m.Nodes, Node{Depth: 0, N: len(rows), Leaf: -1})
	queue := []item{{0, rows}}
	var leafRows [][]int
	// Splitting costs about one fit on SplitSample rows per node; the
	// leaves most of the rest. Progress during the splits moves up to 10%.
	w := max(g.weight, 1)
	expected := max(1, int(2*float64(len(rows))*w)/g.cfg.LeafSize)
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		nd := &m.Nodes[it.node]
		if float64(len(it.rows))*w <= float64(g.cfg.LeafSize) {
			nd.Leaf = len(leafRows)
			leafRows = append(leafRows, it.rows)
			continue
		}
		left, right, dir, thr, scale, err := g.split(ctx, it.node, it.rows)
		if err != nil {
			return nil, fmt.Errorf("split node %d (%d rows): %w", it.node, len(it.rows), err)
		}
		if left == nil {
			// No direction separates the rows (they project alike on every
			// one tried): a leaf, trained on a seeded sample of LeafSize rows.
			nd.Leaf = len(leafRows)
			m.Notes = append(m.Notes, fmt.Sprintf("node %d: %d rows could not be split (identical projections); its leaf is trained on a sample of %d", it.node, len(it.rows), g.cfg.LeafSize))
			leafRows = append(leafRows, it.rows)
			continue
		}
		depth := nd.Depth
		nd.Dir, nd.Threshold, nd.Scale = dir, thr, scale
		nd.Left = len(m.Nodes)
		nd.Right = nd.Left + 1
		m.Nodes = append(m.Nodes, Node{Depth: depth + 1, N: len(left), Leaf: -1}, Node{Depth: depth + 1, N: len(right), Leaf: -1})
		queue = append(queue, item{m.Nodes[it.node].Left, left}, item{m.Nodes[it.node].Right, right})
		g.report(Progress{Stage: "split", Node: len(m.Nodes), Fraction: 0.1 * min(1, float64(len(m.Nodes))/float64(expected))})
	}
	return leafRows, nil
}

// split finds a direction and a threshold for a node, and the standard
// deviation of the rows' projections on it. It returns nil halves when no
// direction tried separates the rows.
func (g *grower) split(ctx context.Context, node int, rows []int) (left, right []int, dir []float64, thr, scale float64, err error) {
	ds := g.ds
	d := ds.D
	rng := rand.New(rand.NewPCG(g.cfg.Seed, uint64(node)+0x7ee))
	sample := g.sample(rows, rng)
	var dirs [][]float64
	switch g.cfg.SplitRule {
	case rfm.SplitAGOP:
		dirs, err = g.agopDirections(ctx, sample, node)
		if err != nil {
			return nil, nil, nil, 0, 0, err
		}
	case rfm.SplitPCA:
		dirs, err = pcaDirections(ds, sample)
		if err != nil {
			return nil, nil, nil, 0, 0, err
		}
	}
	// A random direction is the rule itself for SplitRandom and the last
	// resort of the others.
	dirs = append(dirs, randomDirection(d, rng))
	proj := make([]float64, len(rows))
	for _, v := range dirs {
		project(ds, rows, v, proj)
		l, r, t, ok := balancedCut(rows, proj)
		if ok {
			return l, r, v, t, stddev(proj), nil
		}
	}
	return nil, nil, nil, 0, 0, nil
}

func stddev(v []float64) float64 {
	mean := 0.0
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(v)))
}

// sample draws at most SplitSample of the rows, and at most a quarter of
// them (but 1 000 at least) for the small nodes near the leaves, stratified
// by class.
func (g *grower) sample(rows []int, rng *rand.Rand) []int {
	s := min(g.cfg.SplitSample, max(1000, len(rows)/4))
	if len(rows) <= s {
		return rows
	}
	if g.ds.Labels == nil {
		idx := rng.Perm(len(rows))[:s]
		sort.Ints(idx)
		out := make([]int, s)
		for i, j := range idx {
			out[i] = rows[j]
		}
		return out
	}
	labels := make([]int, len(rows))
	for i, r := range rows {
		labels[i] = g.ds.Labels[r]
	}
	_, pick := rfm.Holdout(len(rows), labels, float64(s)/float64(len(rows)), rng.Uint64())
	out := make([]int, len(pick))
	for i, j := range pick {
		out[i] = rows[j]
	}
	return out
}

// agopDirections fits a plain kernel machine (M = I) on the sample and
// returns the top eigenvectors of the AGOP of its predictor over the
// sample, best first: the directions its prediction varies most along.
// (One exact solve and one AGOP: an RFM's later rounds are not needed.)
func (g *grower) agopDirections(ctx context.Context, sample []int, node int) ([][]float64, error) {
	cfg := g.cfg
	ds := g.ds.Subset(sample)
	n, d, c := ds.N, ds.D, ds.NumOutputs()
	y := make([]float64, n*c)
	if ds.Labels != nil {
		if single(ds.Labels) {
			return nil, nil // nothing to learn: the random direction is the fallback
		}
		c = g.classes
		y = make([]float64, n*c)
		for i, l := range ds.Labels {
			y[i*c+l] = 1
		}
	} else {
		copy(y, ds.Y)
	}
	x := ds.X
	if cfg.NormalizeRows {
		x = rfm.NormalizedRows(x, n, d)
	}
	var shift []float64
	if cfg.Kernel.Radial() {
		shift = rfm.ColumnMeans(x, n, d)
	}
	fm, err := kernel.NewFeatureMap(kernel.IdentityMatrix(d), shift)
	if err != nil {
		return nil, err
	}
	limit := cfg.MemoryLimit
	if limit == 0 {
		limit = defaultBudget()
	}
	limit -= min(limit, uint64(g.ds.N)*uint64(g.ds.D)*16)
	z := fm.Map(x, n)
	res, err := solve.KRR(ctx, nil, cfg.Kernel, z, y, c, solve.Options{Ridge: cfg.Ridge, Float32: cfg.Float32, Refine: cfg.Refine, MemoryLimit: limit})
	if err != nil {
		return nil, err
	}
	diag := cfg.Diag || d > fullSplitLimit
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	p := &agop.Predictor{Kernel: cfg.Kernel, Map: fm, Centers: z, Alpha: res.Alpha, C: c}
	a, err := agop.Compute(ctx, p, all, agop.Options{Diag: diag, Float32: cfg.Float32 && !res.Float64})
	if err != nil {
		return nil, err
	}
	for _, v := range a {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, nil
		}
	}
	if diag {
		return topDirections(kernel.DiagonalMatrix(a))
	}
	return topDirections(kernel.FullMatrix(d, a))
}

func single(labels []int) bool {
	for _, l := range labels {
		if l != labels[0] {
			return false
		}
	}
	return true
}

// topDirections returns up to two leading eigenvectors of M (a coordinate
// axis for a diagonal M).
func topDirections(mt kernel.FeatureMatrix) ([][]float64, error) {
	d := mt.D
	if mt.Form == kernel.Diagonal {
		order := make([]int, d)
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return mt.Values[order[a]] > mt.Values[order[b]] })
		var out [][]float64
		for _, j := range order[:min(2, d)] {
			v := make([]float64, d)
			v[j] = 1
			out = append(out, v)
		}
		return out, nil
	}
	vals, vecs, err := kernel.EigSym(d, mt.Dense())
	if err != nil {
		return nil, err
	}
	_ = vals
	var out [][]float64
	for k := d - 1; k >= max(0, d-2); k-- {
		v := make([]float64, d)
		for i := 0; i < d; i++ {
			v[i] = vecs[i*d+k]
		}
		out = append(out, kernel.Oriented(v))
	}
	return out, nil
}

// pcaDirections returns the top principal directions of the sample.
func pcaDirections(ds *rfm.Dataset, sample []int) ([][]float64, error) {
	d, n := ds.D, len(sample)
	xc := ds.Subset(sample).X
	mean := rfm.ColumnMeans(xc, n, d)
	for i := 0; i < n; i++ {
		for j := range mean {
			xc[i*d+j] -= mean[j]
		}
	}
	if d > fullSplitLimit {
		// The coordinate of largest variance.
		vr := make([]float64, d)
		for i, v := range xc {
			vr[i%d] += v * v
		}
		return topDirections(kernel.DiagonalMatrix(vr))
	}
	cov := make([]float64, d*d)
	linalg.Gemm(true, false, d, d, n, 1, xc, d, xc, d, 0, cov, d)
	return topDirections(kernel.FullMatrix(d, cov))
}

func randomDirection(d int, rng *rand.Rand) []float64 {
	v := make([]float64, d)
	s := 0.0
	for i := range v {
		v[i] = rng.NormFloat64()
		s += v[i] * v[i]
	}
	s = math.Sqrt(s)
	for i := range v {
		v[i] /= s
	}
	return v
}

// project writes x_r·v for the given rows.
func project(ds *rfm.Dataset, rows []int, v []float64, out []float64) {
	d := ds.D
	for i, r := range rows {
		out[i] = dot(ds.X[r*d:r*d+d], v)
	}
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// balancedCut sorts the rows by projection and cuts where the projection
// changes, as close to the middle as ties allow: the threshold lies
// strictly between the two sides, so routing by x·v ≤ t puts every
// training row on the side it was trained on, and both sides are non-empty
// (no loop on ties). ok is false when the rows project alike or the best
// cut leaves less than an eighth on one side.
func balancedCut(rows []int, proj []float64) (left, right []int, thr float64, ok bool) {
	n := len(rows)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return proj[order[a]] < proj[order[b]] })
	best := -1
	for off := 0; off < n/2; off++ {
		for _, k := range []int{n/2 - off, n/2 + off} {
			if k > 0 && k < n && proj[order[k-1]] < proj[order[k]] {
				best = k
				break
			}
		}
		if best >= 0 {
			break
		}
	}
	if best < 0 || min(best, n-best) < max(1, n/8) {
		return nil, nil, 0, false
	}
	lo, hi := proj[order[best-1]], proj[order[best]]
	thr = lo + (hi-lo)/2
	if !(thr >= lo && thr < hi) { // round-off between two adjacent floats
		thr = lo
	}
	for _, i := range order[:best] {
		left = append(left, rows[i])
	}
	for _, i := range order[best:] {
		right = append(right, rows[i])
	}
	sort.Ints(left)
	sort.Ints(right)
	return left, right, thr, true
}

// fitLeaves trains the leaves, plan.Parallel at a time, in leaf order.
func (g *grower) fitLeaves(ctx context.Context, m *Model, leafRows [][]int, plan Plan) error {
	m.Leaves = make([]Leaf, len(leafRows))
	leafCfg := leafConfig(g.cfg)
	leafCfg.MemoryLimit = (plan.BudgetBytes - uint64(g.ds.N)*uint64(g.ds.D)*16) / uint64(plan.Parallel)
	par := min(plan.Parallel, len(leafRows))
	if par > 1 {
		// Threads are shared among the leaves in flight.
		prev := linalg.Threads()
		linalg.SetThreads(max(1, prev/par))
		defer linalg.SetThreads(prev)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		next     int
		done     int
		firstErr error
		mu       sync.Mutex
		total    = len(leafRows)
	)
	work := func() {
		defer wg.Done()
		for {
			mu.Lock()
			if next >= total || firstErr != nil {
				mu.Unlock()
				return
			}
			i := next
			next++
			mu.Unlock()
			lf, err := g.fitLeaf(ctx, i, leafRows[i], leafCfg)
			mu.Lock()
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("leaf %d (%d rows): %w", i, len(leafRows[i]), err)
				cancel()
			}
			m.Leaves[i] = lf
			done++
			d := done
			mu.Unlock()
			g.report(Progress{Stage: "leaf", Node: len(m.Nodes), Leaves: d, Total: total, Fraction: 0.1 + 0.9*float64(d)/float64(total)})
		}
	}
	for w := 0; w < par; w++ {
		wg.Add(1)
		go work()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	runtime.GC() // the leaves' n×n buffers are garbage now
	return nil
}

// fitLeaf fits one leaf's RFM on its rows (a seeded sample of LeafSize
// when there are more: a node no direction could split).
func (g *grower) fitLeaf(ctx context.Context, i int, rows []int, cfg rfm.Config) (Leaf, error) {
	lf := Leaf{Class: -1, N: len(rows)}
	limit := g.cfg.LeafSize
	if g.maxLeafRows > 0 {
		limit = g.maxLeafRows
	}
	if len(rows) > limit {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)+0x1eaf))
		idx := rng.Perm(len(rows))[:limit]
		sort.Ints(idx)
		sub := make([]int, len(idx))
		for k, j := range idx {
			sub[k] = rows[j]
		}
		lf.Note = fmt.Sprintf("trained on a sample of %d of its %d rows", len(sub), len(rows))
		rows = sub
	}
	ds := g.ds.Subset(rows)
	if ds.Labels != nil {
		ds.Classes = g.classes
		if single(ds.Labels) {
			lf.Class = ds.Labels[0]
			lf.Note = fmt.Sprintf("every row is of class %d: predicts it", lf.Class)
			return lf, nil
		}
	}
	if ds.N < 2 {
		return lf, fmt.Errorf("a leaf needs at least 2 rows")
	}
	mdl, err := rfm.Fit(ctx, cfg, ds, nil, nil)
	// A leaf is a small corner of the data: duplicated rows there can make
	// its system too ill-conditioned for float32, or for the ridge. One
	// leaf must not sink the whole tree: retry in float64, then with a
	// ridge 100 times larger, and say so.
	for _, retry := range []struct {
		why   string
		apply func(*rfm.Config)
	}{
		{"refitted in float64", func(c *rfm.Config) { c.Float32 = false }},
		{"refitted with ridge ×100", func(c *rfm.Config) { c.Ridge = max(100*c.Ridge, 1e-3) }},
	} {
		if err == nil || ctx.Err() != nil || !(errors.Is(err, solve.ErrNotPD) || errors.Is(err, solve.ErrNonFinite)) {
			break
		}
		first := err
		retry.apply(&cfg)
		if mdl, err = rfm.Fit(ctx, cfg, ds, nil, nil); err == nil {
			lf.Note = strings.TrimPrefix(lf.Note+"; ", "; ") + retry.why + " (" + first.Error() + ")"
		}
	}
	if err != nil {
		return lf, err
	}
	lf.Model = mdl
	return lf, nil
}

// ValScore scores the tree on the rows of ds (validation rows, with their
// labels or targets): its accuracy (classification) or the MSE of its
// outputs against the targets, in the units the tree was fitted on
// (regression).
func (m *Model) ValScore(ctx context.Context, ds *rfm.Dataset) (float64, error) {
	s, err := m.Predict(ctx, ds.X, ds.N)
	if err != nil {
		return 0, err
	}
	if m.Task == rfm.Classification {
		return metrics.Accuracy(ds.Labels, metrics.ArgmaxRows(s, ds.N, m.Outputs))
	}
	return metrics.MSE(ds.Y, s)
}

// Depth is the largest depth of a leaf.
func (m *Model) Depth() int {
	d := 0
	for _, n := range m.Nodes {
		d = max(d, n.Depth)
	}
	return d
}

// Route returns the leaf of each of the n rows of x (n×D).
func (m *Model) Route(x []float64, n int) []int {
	out := make([]int, n)
	d := m.D
	for i := 0; i < n; i++ {
		row := x[i*d : i*d+d]
		k := 0
		for m.Nodes[k].Leaf < 0 {
			nd := &m.Nodes[k]
			if dot(row, nd.Dir) <= nd.Threshold {
				k = nd.Left
			} else {
				k = nd.Right
			}
		}
		out[i] = m.Nodes[k].Leaf
	}
	return out
}

// Predict returns the raw outputs for n rows of x (n×D), each from the
// leaf its row is routed to: class scores or regression targets.
func (m *Model) Predict(ctx context.Context, x []float64, n int) ([]float64, error) {
	if n < 0 || len(x) != n*m.D {
		return nil, fmt.Errorf("predict: got %d values for %d rows of %d features", len(x), n, m.D)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &rfm.InputError{Err: fmt.Errorf("predict: row %d, feature %d is %v", i/m.D, i%m.D, v)}
		}
	}
	if m.Temperature > 0 {
		return m.predictSoft(ctx, x, n, m.Temperature)
	}
	return m.predictHard(ctx, x, n)
}

// Check prepares every leaf's model for predicting and reports an
// inconsistent one (see rfm.Model.Check).
func (m *Model) Check() error {
	for l := range m.Leaves {
		if lm := m.Leaves[l].Model; lm != nil {
			if err := lm.Check(); err != nil {
				return fmt.Errorf("leaf %d: %w", l, err)
			}
		}
	}
	return nil
}

// predictHard predicts each row with its leaf.
func (m *Model) predictHard(ctx context.Context, x []float64, n int) ([]float64, error) {
	groups := make([][]weighted, len(m.Leaves))
	for i, l := range m.Route(x, n) {
		groups[l] = append(groups[l], weighted{i, 1})
	}
	return m.predictGroups(ctx, x, n, groups)
}

// weighted is a row and the weight of one leaf's prediction in it.
type weighted struct {
	row int
	w   float64
}

// predictGroups predicts the rows of groups[l] with leaf l and adds each
// prediction, times its weight, to its row's output. A weight of 1 (the
// row's only leaf: hard routing, or a row far from every threshold) copies
// the leaf's prediction, so such rows get the leaf's bits exactly (a −0
// included).
func (m *Model) predictGroups(ctx context.Context, x []float64, n int, groups [][]weighted) ([]float64, error) {
	c, d := m.Outputs, m.D
	out := make([]float64, n*c)
	for l, es := range groups {
		if len(es) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lf := &m.Leaves[l]
		if lf.Model == nil {
			for _, e := range es {
				out[e.row*c+lf.Class] += e.w
			}
			continue
		}
		sub := make([]float64, len(es)*d)
		for k, e := range es {
			copy(sub[k*d:], x[e.row*d:e.row*d+d])
		}
		s, err := lf.Model.Predict(ctx, sub, len(es))
		if err != nil {
			return nil, fmt.Errorf("leaf %d: %w", l, err)
		}
		for k, e := range es {
			if e.w == 1 {
				copy(out[e.row*c:e.row*c+c], s[k*c:k*c+c])
				continue
			}
			for j := 0; j < c; j++ {
				out[e.row*c+j] += e.w * s[k*c+j]
			}
		}
	}
	return out, nil
}

// PredictClass returns the argmax class of each row (classification).
func (m *Model) PredictClass(ctx context.Context, x []float64, n int) ([]int, error) {
	return rfm.ClassOf(ctx, m.Task, m.Outputs, m.Predict, x, n)
}

// PredictProba returns n×classes probabilities as rfm.Model does: scores
// clipped to [rfm.ProbEps, 1−rfm.ProbEps] and renormalized.
func (m *Model) PredictProba(ctx context.Context, x []float64, n int) ([]float64, error) {
	return rfm.ProbaOf(ctx, m.Task, m.Outputs, m.Calibration, m.Predict, x, n)
}

// FeatureDiagonal is the global feature ranking: diag(M) of every leaf
// (over all D inputs) weighted by its share of the training rows.
func (m *Model) FeatureDiagonal() []float64 {
	out := make([]float64, m.D)
	total := 0
	for _, lf := range m.Leaves {
		if lf.Model == nil {
			continue
		}
		total += lf.N
		for j, v := range lf.Model.FeatureDiagonal() {
			out[j] += float64(lf.N) * v
		}
	}
	if total > 0 {
		for j := range out {
			out[j] /= float64(total)
		}
	}
	return out
}
