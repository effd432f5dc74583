package main

// The steps of a distributed tree fit, as plain functions: the Beam
// transforms (pipeline.go) call them on pieces of the data, and the
// single-machine twin (fitLocal) calls them on all of it, so that both give
// the same model.

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/csv"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/predictor"
	"github.com/rfmkit/rfm/tree"
)

// Shard is one input file, numbered in the sorted order of the expanded
// globs: a row is known by (shard, row within the shard).
type Shard struct {
	Index int
	Path  string
}

// RawRow is a row as text cells ("" for a missing cell), with its place
// and its sampling key.
type RawRow struct {
	Key   uint64
	Shard int
	Row   int
	Cells []string
}

// EncRow is an encoded row: its features, and its class or value.
type EncRow struct {
	Shard int
	Row   int
	X     []float64
	Y     float64
	Label int
}

// LeafResult is a fitted leaf: its RFM as model-file bytes (none for a
// constant leaf), its constant class, rows and note.
type LeafResult struct {
	Leaf  int
	Model []byte
	Class int
	N     int
	Note  string
	// FitMillis is the leaf fit's own time (not the wait for a slot).
	FitMillis int64
}

// Top is what every worker needs after the sample: the column pipeline
// and the target encoding (JSON, as in a model file) and the tree's routing
// (gob: its leaves are not fitted yet).
type Top struct {
	Pipeline []byte
	Target   []byte
	Tree     []byte
}

// FitSpec is what the user asked for.
type FitSpec struct {
	Target  string
	Task    string // dataset.TaskAuto, TaskClassification, TaskRegression
	Scaling string
	Ignore  []string
	Sample  int // rows of the sample (the pipeline statistics and the routing)
	Seed    uint64
	Memory  uint64 // bytes of one leaf fit (0: the worker's)
	Config  rfm.Config
}

// rowKey is the sampling key of a row: a seeded hash of its place, so the
// sample (the Sample rows of smallest key) does not depend on how the rows
// are split into bundles.
func rowKey(seed uint64, shard, row int) uint64 {
	z := seed*0x9e3779b97f4a7c15 ^ uint64(shard)*0xbf58476d1ce4e5b9 ^ uint64(row)*0x94d049bb133111eb
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// lessRaw orders rows by key, then place (keys of distinct places collide
// only by chance).
func lessRaw(a, b RawRow) bool {
	if a.Key != b.Key {
		return a.Key < b.Key
	}
	return cmpPlace(a.Shard, a.Row, b.Shard, b.Row) < 0
}

// cmpRaw is lessRaw as a comparison.
func cmpRaw(a, b RawRow) int {
	if lessRaw(a, b) {
		return -1
	}
	if lessRaw(b, a) {
		return 1
	}
	return 0
}

func cmpPlace(s1, r1, s2, r2 int) int {
	if c := cmp.Compare(s1, s2); c != 0 {
		return c
	}
	return cmp.Compare(r1, r2)
}

// textOptions reads every column as text (a sample's cells are parsed
// again, together, as 'rfm fit' parses a file).
func textOptions(header []string) dataset.ReadOptions {
	return dataset.ReadOptions{Categorical: slices.Clone(header)}
}

// readHeader returns the column names of a shard.
func readHeader(ctx context.Context, path string) ([]string, error) {
	var names []string
	err := readChunks(ctx, path, dataset.ReadOptions{}, func(t *dataset.Table) error {
		names = t.Names()
		return errStop
	})
	if err != nil && err != errStop {
		return nil, err
	}
	if names == nil {
		return nil, fmt.Errorf("%s: no header", path)
	}
	return names, nil
}

var errStop = fmt.Errorf("stop")

// sampleShard reads a shard as text and returns its k rows of smallest key
// (sorted by key) and its row count. Every shard must have the header.
func sampleShard(ctx context.Context, sh Shard, header []string, seed uint64, k int) ([]RawRow, int, error) {
	h := &rawHeap{} // the k smallest so far, largest on top
	n := 0
	err := readChunks(ctx, sh.Path, textOptions(header), func(t *dataset.Table) error {
		if !slices.Equal(t.Names(), header) {
			return fmt.Errorf("%s: columns %s differ from the first file's %s", sh.Path, strings.Join(t.Names(), ","), strings.Join(header, ","))
		}
		cols := make([]*dataset.Column, len(header))
		for j, name := range header {
			cols[j], _ = t.Column(name)
		}
		for i := 0; i < t.NRows(); i++ {
			r := RawRow{Key: rowKey(seed, sh.Index, n+i), Shard: sh.Index, Row: n + i}
			if h.Len() == k && !lessRaw(r, (*h)[0]) {
				continue
			}
			r.Cells = make([]string, len(cols))
			for j, c := range cols {
				if !c.IsMissing(i) {
					r.Cells[j] = c.Str[i]
				}
			}
			heap.Push(h, r)
			if h.Len() > k {
				heap.Pop(h)
			}
		}
		n += t.NRows()
		return nil
	})
	keep := []RawRow(*h)
	slices.SortFunc(keep, cmpRaw)
	return keep, n, err
}

// rawHeap is a max-heap of rows by (key, place).
type rawHeap []RawRow

func (h rawHeap) Len() int           { return len(h) }
func (h rawHeap) Less(i, j int) bool { return lessRaw(h[j], h[i]) }
func (h rawHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rawHeap) Push(x any)        { *h = append(*h, x.(RawRow)) }
func (h *rawHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// topFromSample fits the target encoding and the column pipeline on the
// sample's rows (in table order, parsed as 'rfm fit' parses a file) and
// grows the routing on them for a table of total rows.
func topFromSample(ctx context.Context, spec FitSpec, header []string, sample []RawRow, total int) (*Top, error) {
	rows := slices.Clone(sample)
	slices.SortFunc(rows, func(a, b RawRow) int { return cmpPlace(a.Shard, a.Row, b.Shard, b.Row) })
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(header)
	for _, r := range rows {
		w.Write(r.Cells)
	}
	w.Flush()
	t, err := dataset.Read(&b, "sample.csv", dataset.ReadOptions{Ignore: spec.Ignore})
	if err != nil {
		return nil, fmt.Errorf("the sample: %w", err)
	}
	scaling := dataset.Scaling(cmp.Or(spec.Scaling, string(dataset.ScaleStandard)))
	tg, p, err := predictor.FitEncoding(t, spec.Target, cmp.Or(spec.Task, dataset.TaskAuto), scaling)
	if err != nil {
		return nil, err
	}
	ds, err := predictor.Encode(t, p, tg)
	if err != nil {
		return nil, err
	}
	m, _, err := tree.GrowSample(ctx, spec.Config, ds, total, nil)
	if err != nil {
		return nil, err
	}
	top := &Top{}
	if top.Pipeline, err = json.Marshal(p); err != nil {
		return nil, err
	}
	if top.Target, err = json.Marshal(tg); err != nil {
		return nil, err
	}
	var g bytes.Buffer
	if err := gob.NewEncoder(&g).Encode(m); err != nil {
		return nil, fmt.Errorf("encode the routing: %w", err)
	}
	top.Tree = g.Bytes()
	return top, nil
}

// decoded is a Top ready to use.
type decoded struct {
	pipeline *dataset.Pipeline
	target   *dataset.Target
	tree     *tree.Model
}

func (top *Top) decode() (*decoded, error) {
	d := &decoded{pipeline: &dataset.Pipeline{}, target: &dataset.Target{}, tree: &tree.Model{}}
	if err := json.Unmarshal(top.Pipeline, d.pipeline); err != nil {
		return nil, fmt.Errorf("decode the pipeline: %w", err)
	}
	if err := json.Unmarshal(top.Target, d.target); err != nil {
		return nil, fmt.Errorf("decode the target: %w", err)
	}
	if err := gob.NewDecoder(bytes.NewReader(top.Tree)).Decode(d.tree); err != nil {
		return nil, fmt.Errorf("decode the routing: %w", err)
	}
	return d, nil
}

// readOptions reads the training rows as the model's inputs and target.
func (d *decoded) readOptions() dataset.ReadOptions {
	opt := d.pipeline.ReadOptions()
	if d.target.IsClassification() {
		opt.Categorical = append(opt.Categorical, d.target.Name)
	} else {
		opt.Numeric = append(opt.Numeric, d.target.Name)
	}
	return opt
}

// encodeShard reads a shard, encodes its rows and routes each to its
// leaf: fn gets every row with its leaf, in shard order.
func (d *decoded) encodeShard(ctx context.Context, sh Shard, fn func(leaf int, r EncRow)) (int, error) {
	n := 0
	err := readChunks(ctx, sh.Path, d.readOptions(), func(t *dataset.Table) error {
		ds, err := predictor.Encode(t, d.pipeline, d.target)
		if err != nil {
			return fmt.Errorf("%s: %w", sh.Path, err)
		}
		leaves := d.tree.Route(ds.X, ds.N)
		for i, l := range leaves {
			r := EncRow{Shard: sh.Index, Row: n + i, X: ds.X[i*ds.D : i*ds.D+ds.D], Label: -1}
			if ds.Labels != nil {
				r.Label = ds.Labels[i]
			} else {
				r.Y = ds.Y[i]
			}
			fn(l, r)
		}
		n += ds.N
		return nil
	})
	return n, err
}

// fitLeaf fits a leaf on its rows, in table order whatever order they came
// in.
func (d *decoded) fitLeaf(ctx context.Context, leaf int, rows []EncRow, memory uint64) (*LeafResult, error) {
	slices.SortFunc(rows, func(a, b EncRow) int { return cmpPlace(a.Shard, a.Row, b.Shard, b.Row) })
	m := d.tree
	ds := &rfm.Dataset{N: len(rows), D: m.D, X: make([]float64, 0, len(rows)*m.D)}
	for _, r := range rows {
		ds.X = append(ds.X, r.X...)
		if d.target.IsClassification() {
			ds.Labels = append(ds.Labels, r.Label)
		} else {
			ds.Y = append(ds.Y, r.Y)
		}
	}
	if ds.Labels != nil {
		ds.Classes = m.Outputs
	} else {
		ds.Outputs = 1
	}
	lf, took, err := m.FitLeafTimed(ctx, leaf, ds, memory)
	if err != nil {
		return nil, err
	}
	res := &LeafResult{Leaf: leaf, Class: lf.Class, N: lf.N, Note: lf.Note, FitMillis: took.Milliseconds()}
	if lf.Model != nil {
		var b bytes.Buffer
		if err := lf.Model.Save(&b, nil); err != nil {
			return nil, err
		}
		res.Model = b.Bytes()
	}
	return res, nil
}

// assemble puts the fitted leaves into the routing: the whole tree.
func (d *decoded) assemble(leaves []LeafResult) (*tree.Model, error) {
	m := d.tree
	for _, r := range leaves {
		lf := tree.Leaf{Class: r.Class, N: r.N, Note: r.Note}
		if r.Model != nil {
			lm, _, err := rfm.Load(bytes.NewReader(r.Model))
			if err != nil {
				return nil, fmt.Errorf("leaf %d: %w", r.Leaf, err)
			}
			lf.Model = lm
		}
		if err := m.SetLeaf(r.Leaf, lf); err != nil {
			return nil, err
		}
	}
	if u := m.Unfitted(); len(u) > 0 {
		return nil, fmt.Errorf("%d leaves have no rows or no fit (first: leaf %d)", len(u), u[0])
	}
	if err := m.Check(); err != nil {
		return nil, err
	}
	return m, nil
}
