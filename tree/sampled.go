package tree

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/linalg"
)

// A tree whose top is grown on a sample and whose leaves are fitted apart:
// the shape of a fit spread over machines (each leaf is an independent exact
// fit once the routing is known). GrowSample grows the routing nodes on a
// seeded sample of the table; every row of the table is then routed
// (Model.Route) and each leaf fitted on its rows (Model.FitLeaf), anywhere
// and in any order; SetLeaf puts the leaves back. FitSampled does the same
// steps on one machine: with the same sample and the same rows in the same
// order, the distributed fit gives the same model bit for bit.

// SampleLeafSlack: a leaf of a tree grown on a sample is fitted on up to
// this many times LeafSize rows before it is subsampled. The sample only
// estimates how many rows reach a node, so some leaves get a few more than
// LeafSize; with a sample of s rows standing for w rows each, a leaf's count
// is off by about LeafSize/√(LeafSize/w).
const SampleLeafSlack = 1.25

// GrowSample grows the routing nodes of a tree on a sample of a table of
// total rows (the sample is part of the table): a node is split while its
// sample rows stand for more than LeafSize rows of the table, at the median
// of their projections. The leaves are not fitted yet. The plan is that of
// a fit on total rows, except that the rows are not held in memory (the
// leaf budget is what one machine fitting one leaf needs).
func GrowSample(ctx context.Context, cfg rfm.Config, sample *rfm.Dataset, total int, progress func(Progress)) (*Model, *Plan, error) {
	if cfg.SoftRouting {
		return nil, nil, errors.New("tree: soft routing needs the whole table's held-out rows; it is not available on a sampled tree")
	}
	cfg, err := prepare(cfg, sample, "sample")
	if err != nil {
		return nil, nil, err
	}
	if total < sample.N {
		return nil, nil, fmt.Errorf("a sample of %d rows of a table of %d: the sample must have no more than the table's rows", sample.N, total)
	}
	plan, err := makePlan(cfg, total, sample.D, sample.NumOutputs(), uint64(sample.N)*uint64(sample.D)*16)
	if err != nil {
		return nil, nil, err
	}
	g, m, rows := start(cfg, plan, sample, total, progress)
	leafRows, err := g.grow(ctx, m, rows)
	if err != nil {
		return nil, nil, err
	}
	m.Leaves = make([]Leaf, len(leafRows))
	for i := range m.Leaves {
		m.Leaves[i] = Leaf{Class: -1}
	}
	if sample.N < total {
		m.Notes = append(m.Notes, fmt.Sprintf("routing grown on a seeded sample of %d of the %d rows", sample.N, total))
	}
	return m, &plan, nil
}

// FitLeaf fits leaf i on the rows routed to it (in a fixed order: the same
// rows in the same order give the same leaf), with at most
// SampleLeafSlack × LeafSize of them (a seeded subsample beyond). memory
// is the leaf fit's budget in bytes (0: the machine's); the same budget
// gives the same leaf.
func (m *Model) FitLeaf(ctx context.Context, i int, ds *rfm.Dataset, memory uint64) (Leaf, error) {
	lf, _, err := m.FitLeafTimed(ctx, i, ds, memory)
	return lf, err
}

// FitLeafTimed is FitLeaf, also returning the time the fit itself took:
// without the wait for a slot (at most as many leaf fits at once as
// threads), which a runner that starts many at once would otherwise count.
func (m *Model) FitLeafTimed(ctx context.Context, i int, ds *rfm.Dataset, memory uint64) (Leaf, time.Duration, error) {
	if i < 0 || i >= len(m.Leaves) {
		return Leaf{}, 0, fmt.Errorf("leaf %d of a tree of %d leaves", i, len(m.Leaves))
	}
	if ds == nil || ds.N == 0 {
		return Leaf{}, 0, fmt.Errorf("leaf %d: no rows", i)
	}
	if ds.D != m.D {
		return Leaf{}, 0, fmt.Errorf("leaf %d: rows of %d features for a tree of %d", i, ds.D, m.D)
	}
	g := &grower{cfg: m.Config, ds: ds, classes: m.Outputs, maxLeafRows: int(SampleLeafSlack * float64(m.Config.LeafSize))}
	rows := make([]int, ds.N)
	for r := range rows {
		rows[r] = r
	}
	cfg := leafConfig(m.Config)
	cfg.MemoryLimit = memory
	if err := leafGate.enter(ctx); err != nil {
		return Leaf{}, 0, err
	}
	defer leafGate.leave()
	start := time.Now()
	lf, err := g.fitLeaf(ctx, i, rows, cfg)
	took := time.Since(start)
	if err != nil {
		return lf, took, fmt.Errorf("leaf %d (%d rows): %w", i, ds.N, err)
	}
	return lf, took, nil
}

// leafGate bounds the FitLeaf calls running at once in this process to
// the thread count, each on one thread (the single-machine tree's way:
// small solves side by side beat one multi-threaded solve). A runner may
// call FitLeaf from many bundles at once (Prism runs a grouped stage's keys
// in parallel: 16 leaves of 6 250 rows at once on 2 cores took 49 s each,
// 176 s in all). Every leaf, alone or not, is fitted on one thread, so
// its result does not depend on how many run beside it.
var leafGate gate

type gate struct {
	once   sync.Once
	slots  chan struct{}
	mu     sync.Mutex
	active int
	prev   int
}

func (g *gate) enter(ctx context.Context) error {
	g.once.Do(func() { g.slots = make(chan struct{}, max(1, linalg.Threads())) })
	select {
	case g.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	g.mu.Lock()
	if g.active == 0 {
		g.prev = linalg.Threads()
		linalg.SetThreads(1)
	}
	g.active++
	g.mu.Unlock()
	return nil
}

func (g *gate) leave() {
	g.mu.Lock()
	g.active--
	if g.active == 0 {
		linalg.SetThreads(g.prev)
	}
	g.mu.Unlock()
	<-g.slots
}

// SetLeaf stores a fitted leaf.
func (m *Model) SetLeaf(i int, lf Leaf) error {
	if i < 0 || i >= len(m.Leaves) {
		return fmt.Errorf("leaf %d of a tree of %d leaves", i, len(m.Leaves))
	}
	if lf.Model == nil && lf.Class < 0 {
		return fmt.Errorf("leaf %d is not fitted", i)
	}
	m.Leaves[i] = lf
	return nil
}

// Unfitted returns the leaves not fitted yet.
func (m *Model) Unfitted() []int {
	var out []int
	for i, lf := range m.Leaves {
		if lf.Model == nil && lf.Class < 0 {
			out = append(out, i)
		}
	}
	return out
}

// FitSampled fits a tree on one machine the way a distributed fit does:
// the routing grown on the rows sample (indices into train), every row
// routed, each leaf fitted on its rows in table order with the given
// per-leaf memory budget. Leaves are fitted one after the other.
func FitSampled(ctx context.Context, cfg rfm.Config, train *rfm.Dataset, sample []int, memory uint64, progress func(Progress)) (*Model, error) {
	if train == nil {
		return nil, errors.New("training data is missing")
	}
	if err := train.Check("training"); err != nil {
		return nil, err
	}
	if !sort.IntsAreSorted(sample) {
		return nil, errors.New("tree: the sample's row indices must be in increasing order")
	}
	m, _, err := GrowSample(ctx, cfg, train.Subset(sample), train.N, progress)
	if err != nil {
		return nil, err
	}
	leafRows := make([][]int, len(m.Leaves))
	for r, l := range m.Route(train.X, train.N) {
		leafRows[l] = append(leafRows[l], r)
	}
	for i, rows := range leafRows {
		lf, err := m.FitLeaf(ctx, i, train.Subset(rows), memory)
		if err != nil {
			return nil, err
		}
		if err := m.SetLeaf(i, lf); err != nil {
			return nil, err
		}
	}
	return m, nil
}
