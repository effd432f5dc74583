package tree

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/modelfile"
)

// FileKind is the modelfile kind of a tree model. Builds that predate trees
// read the container and refuse the kind with a clear message.
const FileKind = "rfm.Tree"

// nesting is how a tree is stored: its document holds the nodes
// (directions stored as the "dirs" array, one row per internal node in node
// order) and the leaves under "tree", and each RFM leaf's own model
// document under "leaf_models" (its arrays are stored with the prefix
// "leaf<i>/").
var nesting = modelfile.Nesting{Kind: FileKind, What: "a tree model", Own: "tree", Parts: "leaf_models", Base: "leaf", PartKind: rfm.FileKind}

// fileTree is how a Model is written: the shallower Calibration keeps it
// last, where files have always had it (the Header's other fields lead).
type fileTree struct {
	*Model
	Calibration *rfm.Calibration `json:"calibration,omitempty"`
}

func init() {
	modelfile.Register(FileKind, FromFile)
}

// maxOutputs bounds the classes of a tree file: a tree whose leaves are all
// constant has no leaf model to check the count against, and predictions
// allocate rows × outputs.
const maxOutputs = 1 << 16

// ToFile packs the tree (and the caller's extra JSON sections) into a
// modelfile container.
func (m *Model) ToFile(extra map[string]json.RawMessage) (*modelfile.File, error) {
	f := &modelfile.File{}
	if m.Calibration != nil {
		f.FormatVersion = modelfile.VersionScaledOrCalibrated
	}
	var dirs []float64
	internal := 0
	for _, nd := range m.Nodes {
		if nd.Leaf < 0 {
			dirs = append(dirs, nd.Dir...)
			internal++
		}
	}
	if internal > 0 {
		f.Arrays = append(f.Arrays, modelfile.Array{Name: "dirs", Shape: []int{internal, m.D}, F64: dirs})
	}
	leaves := make([]*rfm.Model, len(m.Leaves))
	for i, lf := range m.Leaves {
		leaves[i] = lf.Model
	}
	return modelfile.PackNested(nesting, f, fileTree{m, m.Calibration}, leaves, extra)
}

// FromFile unpacks a tree and the caller's extra sections, checking that
// the nodes form a tree over the leaves and every leaf model loads.
func FromFile(f *modelfile.File) (*Model, map[string]json.RawMessage, error) {
	meta, err := modelfile.DecodeNested[Model](f, nesting)
	if err != nil {
		return nil, nil, err
	}
	m := meta.Own
	if m.D < 1 || m.Outputs < 1 || len(m.Nodes) == 0 || len(m.Leaves) == 0 || len(meta.Parts) != len(m.Leaves) {
		return nil, nil, fmt.Errorf("tree metadata: bad sizes d=%d outputs=%d nodes=%d leaves=%d (%d leaf models)", m.D, m.Outputs, len(m.Nodes), len(m.Leaves), len(meta.Parts))
	}
	if m.Outputs > maxOutputs {
		return nil, nil, fmt.Errorf("tree metadata: %d outputs (at most %d)", m.Outputs, maxOutputs)
	}
	if m.Task != rfm.Classification && m.Task != rfm.Regression {
		return nil, nil, fmt.Errorf("tree metadata: unknown task %q", m.Task)
	}
	if err := checkShape(m); err != nil {
		return nil, nil, fmt.Errorf("tree metadata: %w", err)
	}
	if err := m.Calibration.Check(m.Task, m.Outputs); err != nil {
		return nil, nil, fmt.Errorf("tree metadata: %w", err)
	}
	if t := m.Temperature; !(t >= 0) || math.IsInf(t, 0) {
		return nil, nil, fmt.Errorf("tree metadata: routing temperature %v (want a finite number ≥ 0)", t)
	}
	for i, nd := range m.Nodes {
		if !(nd.Scale >= 0) || math.IsInf(nd.Scale, 0) {
			return nil, nil, fmt.Errorf("tree metadata: node %d has scale %v (want a finite number ≥ 0)", i, nd.Scale)
		}
	}
	internal := 0
	for _, nd := range m.Nodes {
		if nd.Leaf < 0 {
			internal++
		}
	}
	if internal > 0 {
		a, ok := f.Array("dirs")
		if !ok || a.F64 == nil || len(a.F64) != internal*m.D {
			return nil, nil, fmt.Errorf("tree file: the \"dirs\" array must hold %d×%d float64 values", internal, m.D)
		}
		k := 0
		for i := range m.Nodes {
			if m.Nodes[i].Leaf >= 0 {
				continue
			}
			dir := a.F64[k*m.D : (k+1)*m.D]
			for _, v := range dir {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return nil, nil, fmt.Errorf("tree file: node %d has a non-finite direction", i)
				}
			}
			if t := m.Nodes[i].Threshold; math.IsNaN(t) || math.IsInf(t, 0) {
				return nil, nil, fmt.Errorf("tree file: node %d has threshold %v", i, t)
			}
			m.Nodes[i].Dir = dir
			k++
		}
	}
	// Each leaf's model, from its arrays (by prefix).
	leaves, _, err := modelfile.UnpackParts(nesting, f, meta.Parts, true, rfm.FromFile)
	if err != nil {
		return nil, nil, fmt.Errorf("tree file: %w", err)
	}
	for i, lm := range leaves {
		lf := &m.Leaves[i]
		if lm == nil {
			if m.Task != rfm.Classification || lf.Class < 0 || lf.Class >= m.Outputs {
				return nil, nil, fmt.Errorf("tree file: leaf %d has neither a model nor a class", i)
			}
			continue
		}
		if lm.D != m.D || lm.Outputs != m.Outputs || lm.Task != m.Task {
			return nil, nil, fmt.Errorf("tree file: leaf %d is a %s model of %d features and %d outputs; the tree has %d and %d", i, lm.Task, lm.D, lm.Outputs, m.D, m.Outputs)
		}
		lf.Model, lf.Class = lm, -1
	}
	return m, meta.Extra, nil
}

// checkShape verifies that the nodes form a binary tree rooted at 0 whose
// leaves are each leaf index exactly once, so that routing terminates.
func checkShape(m *Model) error {
	seen := make([]bool, len(m.Nodes))
	leafSeen := make([]bool, len(m.Leaves))
	stack := []int{0}
	for len(stack) > 0 {
		k := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if k < 0 || k >= len(m.Nodes) || seen[k] {
			return fmt.Errorf("node %d is out of range or reached twice", k)
		}
		seen[k] = true
		nd := m.Nodes[k]
		if nd.Leaf >= 0 {
			if nd.Leaf >= len(m.Leaves) || leafSeen[nd.Leaf] {
				return fmt.Errorf("node %d names leaf %d, out of range or named twice", k, nd.Leaf)
			}
			leafSeen[nd.Leaf] = true
			continue
		}
		stack = append(stack, nd.Left, nd.Right)
	}
	for i, ok := range leafSeen {
		if !ok {
			return fmt.Errorf("leaf %d is not reachable", i)
		}
	}
	for k, ok := range seen {
		if !ok {
			return fmt.Errorf("node %d is not reachable", k)
		}
	}
	return nil
}

// Load reads a tree written by Save.
func Load(r io.Reader) (*Model, map[string]json.RawMessage, error) {
	f, err := modelfile.Read(r)
	if err != nil {
		return nil, nil, err
	}
	return FromFile(f)
}
