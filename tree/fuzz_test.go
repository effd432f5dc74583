package tree

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/rfmkit/rfm/modelfile"
)

// FuzzTreeMeta: whatever the tree document says (nodes that loop or name
// missing leaves, bad sizes, leaf models that do not match), FromFile
// returns an error or a tree whose routing ends and whose predictions are
// finite; it never panics or loops. The document is mutated behind a
// valid container (the checksum would stop mutated bytes at the door).
func FuzzTreeMeta(f *testing.F) {
	// A small tree (a few leaves of plain kernel machines) keeps the seed
	// document short: the fuzzer minimizes every new input it finds, and
	// that is slow on a long one.
	cfg := small()
	cfg.LeafSize, cfg.Iters = 40, 0
	ds := classes(&testing.T{}, 100, 21)
	tm, _, err := Fit(context.Background(), cfg, ds, nil)
	if err != nil {
		f.Fatal(err)
	}
	file, err := tm.ToFile(nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(file.Meta))
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(file.Meta, &meta); err != nil {
		f.Fatal(err)
	}
	f.Add(`{"tree":` + string(meta["tree"]) + `,"leaf_models":[]}`)
	x := ds.X[:5*ds.D]
	f.Fuzz(func(t *testing.T, doc string) {
		g := &modelfile.File{Kind: FileKind, Meta: json.RawMessage(doc), Arrays: file.Arrays}
		if !json.Valid(g.Meta) {
			return
		}
		m, _, err := FromFile(g)
		if err != nil || m.D != ds.D {
			return
		}
		out, err := m.Predict(context.Background(), x, 5)
		if err != nil {
			return
		}
		for i, v := range out {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("output %d is %v", i, v)
			}
		}
	})
}
