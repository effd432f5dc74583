package rfm

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/synth"
)

func TestSaveLoadPredictsBitIdentically(t *testing.T) {
	for _, diag := range []bool{false, true} {
		ds := regression(t, synth.LowRank, 300, 8, 4)
		cfg := DefaultConfig()
		cfg.Iters = 2
		cfg.Diag = diag
		m := mustFit(t, cfg, ds, nil)
		var buf bytes.Buffer
		extra := map[string]json.RawMessage{"pipeline": json.RawMessage(`{"x":1}`)}
		if err := m.Save(&buf, extra); err != nil {
			t.Fatal(err)
		}
		saved := buf.Bytes()
		m2, ex2, err := Load(bytes.NewReader(saved))
		if err != nil {
			t.Fatal(err)
		}
		if string(ex2["pipeline"]) != `{"x":1}` {
			t.Errorf("extra section came back as %s", ex2["pipeline"])
		}
		q, _ := synth.Generate(synth.LowRank, 50, 8, 5)
		p1, _ := m.Predict(context.Background(), q.X, q.N)
		p2, err := m2.Predict(context.Background(), q.X, q.N)
		if err != nil {
			t.Fatal(err)
		}
		for i := range p1 {
			if p1[i] != p2[i] {
				t.Fatalf("diag=%v: prediction %d differs after save/load: %v vs %v", diag, i, p1[i], p2[i])
			}
		}
		// Any flipped byte is detected (checked exhaustively for the
		// container in package modelfile; here a sample across the file).
		for pos := 0; pos < len(saved); pos += 1 + len(saved)/200 {
			bad := append([]byte(nil), saved...)
			bad[pos] ^= 0x40
			if _, _, err := Load(bytes.NewReader(bad)); err == nil {
				t.Fatalf("flipped byte %d not detected", pos)
			}
		}
	}
}

// A file whose checksums are right but whose content no fit could produce
// (written by hand, or by a buggy tool) is refused with a message that says
// what is wrong, instead of predicting NaN or crashing.
func TestFromFileRejectsImpossibleModels(t *testing.T) {
	ds := cyclicLabels(regression(t, synth.LowRank, 60, 8, 4), 3)
	cfg := DefaultConfig()
	cfg.Iters = 1
	m := mustFit(t, cfg, ds, nil)
	var good bytes.Buffer
	if err := m.Save(&good, nil); err != nil {
		t.Fatal(err)
	}
	saved := good.Bytes()
	for _, tc := range []struct {
		name, want string
		edit       func(f *modelfile.File, meta map[string]any)
	}{
		{"NaN coefficient", `array "alpha" holds NaN at index 5`, func(f *modelfile.File, _ map[string]any) {
			a, _ := f.Array("alpha")
			a.F64[5] = math.NaN()
		}},
		{"infinite centre", `array "centers" holds +Inf`, func(f *modelfile.File, _ map[string]any) {
			a, _ := f.Array("centers")
			a.F64[0] = math.Inf(1)
		}},
		{"best round out of range", "best round 99 of a 2-round history", func(_ *modelfile.File, meta map[string]any) {
			meta["model"].(map[string]any)["best_round"] = 99
		}},
		{"one class", "a classifier with 1 class(es)", func(f *modelfile.File, meta map[string]any) {
			meta["model"].(map[string]any)["outputs"] = 1
			a, _ := f.Array("alpha")
			a.F64 = a.F64[:len(a.F64)/3]
			a.Shape = []int{len(a.F64)}
		}},
		{"unknown task", `unknown task "ranking"`, func(_ *modelfile.File, meta map[string]any) {
			meta["model"].(map[string]any)["task"] = "ranking"
		}},
	} {
		f, err := modelfile.Read(bytes.NewReader(saved)) // a fresh copy per case
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]any
		if err := json.Unmarshal(f.Meta, &meta); err != nil {
			t.Fatal(err)
		}
		tc.edit(f, meta)
		if f.Meta, err = json.Marshal(meta); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := modelfile.Write(&buf, f); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		_, _, err = Load(&buf)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
