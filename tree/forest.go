package tree

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/modelfile"
)

// MaxTrees bounds the trees of a forest (and of its file).
const MaxTrees = 32

// ForestFileKind is the modelfile kind of a forest.
const ForestFileKind = "rfm.Forest"

// Forest is a few trees of RFMs grown with other seeds (their split
// samples, random directions and leaves' holdouts differ), whose raw
// outputs are averaged: a row near a split of one tree is, in another,
// inside a leaf that holds its neighbours on both sides. Its Header is the
// first tree's, but for Calibration: the mean of calibrated trees has no
// calibration of its own unless it is one tree.
type Forest struct {
	rfm.Header
	Trees []*Model `json:"-"`
	Note  string   `json:"note,omitempty"`
}

// Kind is "forest".
func (f *Forest) Kind() string { return "forest" }

// ChunkRows is PredictChunkRows (rfm.Chunked).
func (f *Forest) ChunkRows() int { return PredictChunkRows }

// SubModels are every tree's leaf RFMs (rfm.Composite).
func (f *Forest) SubModels() []*rfm.Model {
	var out []*rfm.Model
	for _, t := range f.Trees {
		out = append(out, t.SubModels()...)
	}
	return out
}

// ForestSeed is the seed of tree i of a forest of configuration seed s:
// tree 0 is the tree of s itself, so a forest of one is that tree.
func ForestSeed(s uint64, i int) uint64 { return s + uint64(i)*0x9e3779b97f4a7c15 }

// NewForest makes a forest of fitted trees of the same task and shape.
func NewForest(trees []*Model) (*Forest, error) {
	if len(trees) == 0 || len(trees) > MaxTrees {
		return nil, fmt.Errorf("tree: a forest of %d trees (want 1 to %d)", len(trees), MaxTrees)
	}
	f := &Forest{Header: trees[0].Header, Trees: trees}
	if len(trees) > 1 {
		f.Calibration = nil
		if trees[0].Calibration != nil {
			f.Note = "the trees' calibrations are not applied to their mean: probabilities are the mean scores, clipped"
		}
	}
	return f, f.Check()
}

// FitForest grows k trees of cfg on train, tree i with seed
// ForestSeed(cfg.Seed, i), one after another (each uses the threads and
// memory a tree fit plans for). progress may be nil.
func FitForest(ctx context.Context, cfg rfm.Config, train *rfm.Dataset, k int, progress func(Progress)) (*Forest, error) {
	if k < 1 || k > MaxTrees {
		return nil, fmt.Errorf("tree: a forest of %d trees (want 1 to %d)", k, MaxTrees)
	}
	trees := make([]*Model, k)
	for i := range k {
		c := cfg
		c.Seed = ForestSeed(cfg.Seed, i)
		var p func(Progress)
		if progress != nil {
			p = func(pr Progress) {
				pr.Fraction = (float64(i) + pr.Fraction) / float64(k)
				progress(pr)
			}
		}
		m, _, err := Fit(ctx, c, train, p)
		if err != nil {
			return nil, fmt.Errorf("tree %d of the forest: %w", i+1, err)
		}
		trees[i] = m
	}
	return NewForest(trees)
}

// Check verifies every tree and that they agree on the task and shape.
func (f *Forest) Check() error {
	if len(f.Trees) == 0 || len(f.Trees) > MaxTrees {
		return fmt.Errorf("tree: a forest of %d trees (want 1 to %d)", len(f.Trees), MaxTrees)
	}
	for i, t := range f.Trees {
		if t == nil {
			return fmt.Errorf("forest: tree %d is missing", i)
		}
		if t.Task != f.Task || t.D != f.D || t.Outputs != f.Outputs {
			return fmt.Errorf("forest: tree %d is a %s model of %d features and %d outputs; the forest has %s, %d and %d", i, t.Task, t.D, t.Outputs, f.Task, f.D, f.Outputs)
		}
		if err := t.Check(); err != nil {
			return fmt.Errorf("forest: tree %d: %w", i, err)
		}
	}
	return nil
}

// Predict returns the mean of the trees' raw outputs (one tree's outputs
// themselves, bit for bit).
func (f *Forest) Predict(ctx context.Context, x []float64, n int) ([]float64, error) {
	return rfm.MeanOutputs(len(f.Trees), "tree", func(i int) ([]float64, error) { return f.Trees[i].Predict(ctx, x, n) })
}

// PredictClass returns the argmax class of each row (classification).
func (f *Forest) PredictClass(ctx context.Context, x []float64, n int) ([]int, error) {
	return rfm.ClassOf(ctx, f.Task, f.Outputs, f.Predict, x, n)
}

// PredictProba returns n×classes probabilities as rfm.Model does.
func (f *Forest) PredictProba(ctx context.Context, x []float64, n int) ([]float64, error) {
	return rfm.ProbaOf(ctx, f.Task, f.Outputs, f.Calibration, f.Predict, x, n)
}

// forestNesting is how a forest is stored: its own fields under "forest"
// and each tree's document under "tree_models" (the tree's arrays stored
// with the prefix "tree<i>/").
var forestNesting = modelfile.Nesting{Kind: ForestFileKind, What: "a forest model", Own: "forest", Parts: "tree_models", Base: "tree", PartKind: FileKind, MaxParts: MaxTrees}

func init() {
	modelfile.RegisterKind(ForestFileKind, func(f *modelfile.File) (modelfile.Model, map[string]json.RawMessage, error) {
		return ForestFromFile(f)
	})
}

// ToFile packs the forest (and the caller's extra JSON sections) into a
// modelfile container.
func (f *Forest) ToFile(extra map[string]json.RawMessage) (*modelfile.File, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	out := &modelfile.File{}
	if f.Calibration != nil {
		out.FormatVersion = modelfile.VersionScaledOrCalibrated
	}
	return modelfile.PackNested(forestNesting, out, f, f.Trees, extra)
}

// ForestFromFile unpacks a forest and the caller's extra sections,
// checking that every tree loads and agrees with the others.
func ForestFromFile(f *modelfile.File) (*Forest, map[string]json.RawMessage, error) {
	meta, err := modelfile.DecodeNested[Forest](f, forestNesting)
	if err != nil {
		return nil, nil, err
	}
	trees, _, err := modelfile.UnpackParts(forestNesting, f, meta.Parts, false, FromFile)
	if err != nil {
		return nil, nil, fmt.Errorf("forest file: %w", err)
	}
	for i, t := range trees {
		if t == nil {
			return nil, nil, fmt.Errorf("forest file: tree %d is missing", i)
		}
	}
	fr := &Forest{Header: trees[0].Header, Trees: trees, Note: meta.Own.Note}
	fr.Calibration = meta.Own.Calibration
	if err := fr.Check(); err != nil {
		return nil, nil, fmt.Errorf("forest file: %w", err)
	}
	if err := fr.Calibration.Check(fr.Task, fr.Outputs); err != nil {
		return nil, nil, fmt.Errorf("forest metadata: %w", err)
	}
	return fr, meta.Extra, nil
}
