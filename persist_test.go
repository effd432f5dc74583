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

// Two fits with the same seed must give the same file, byte for byte: the
// round timings differ between them and must stay out of the file.
func TestSameFitSameBytes(t *testing.T) {
	ds := regression(t, synth.LowRank, 120, 6, 3)
	cfg := DefaultConfig()
	cfg.Iters = 2
	var files [2][]byte
	for i := range files {
		m := mustFit(t, cfg, ds, nil)
		if m.History[0].FitSeconds <= 0 {
			t.Fatalf("fit %d: the in-memory model lost its timings: %+v", i, m.History[0])
		}
		// Make the timings differ for sure, whatever the clock's resolution.
		m.History[0].FitSeconds += float64(i + 1)
		m.History[0].AGOPSeconds += float64(i + 1)
		var buf bytes.Buffer
		if err := m.Save(&buf, nil); err != nil {
			t.Fatal(err)
		}
		files[i] = buf.Bytes()
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("two fits with the same seed gave different model files")
	}
	if bytes.Contains(files[0], []byte("_seconds")) {
		t.Error("the model file holds timings")
	}
}

// Files written before timings were left out still load.
func TestOldFileWithTimingsLoads(t *testing.T) {
	ds := regression(t, synth.LowRank, 60, 6, 3)
	cfg := DefaultConfig()
	cfg.Iters = 1
	m := mustFit(t, cfg, ds, nil)
	f, err := m.ToFile(nil)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(f.Meta), `"round":0,`, `"round":0,"fit_seconds":1.25,"agop_seconds":0.5,`, 1)
	if old == string(f.Meta) {
		t.Fatalf("test setup: no round 0 in %s", f.Meta)
	}
	f.Meta = []byte(old)
	m2, _, err := FromFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if m2.History[0].FitSeconds != 1.25 || m2.History[0].AGOPSeconds != 0.5 {
		t.Errorf("old timings read back as %+v", m2.History[0])
	}
}

// Classes of one or two rows: the stratified holdout rounds to no rows.
// The fit goes on without validation and says so in Note.
func TestEmptyHoldoutIsExplained(t *testing.T) {
	x := []float64{0, 0, 1, 0, 0, 1, 1, 1, 2, 2, 2, 3}
	tests := []struct {
		labels []int
		want   []string
	}{
		{[]int{0, 0, 1, 1, 2, 2}, []string{"stratified 20% holdout rounds to no rows", "the largest class has 2 rows", "fitted on all 6 rows and the last one kept"}},
		{[]int{0, 1, 0, 1}, []string{"4 training rows are too few for a 20% holdout"}},
	}
	for _, tt := range tests {
		n := len(tt.labels)
		cfg := DefaultConfig()
		cfg.Iters = 1
		m := mustFit(t, cfg, &Dataset{X: x[:2*n], N: n, D: 2, Labels: tt.labels}, nil)
		for _, w := range tt.want {
			if !strings.Contains(m.Note, w) {
				t.Errorf("%d rows: note %q lacks %q", n, m.Note, w)
			}
		}
	}
	// A holdout that works, or none asked for: no note.
	cfg := DefaultConfig()
	cfg.Iters = 1
	cfg.ValFraction = 0
	m, err := Fit(context.Background(), cfg, &Dataset{X: x, N: 6, D: 2, Labels: []int{0, 0, 1, 1, 2, 2}}, nil, nil)
	if err != nil || m.Note != "" {
		t.Errorf("no holdout asked: note %q, err %v", m.Note, err)
	}
}

// A file whose selected columns are empty or repeated is refused at load
// (it once loaded and failed at every prediction).
func TestFromFileRefusesBadSelection(t *testing.T) {
	s, err := synth.Generate(synth.LowRank, 60, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Iters = 0
	m, err := Fit(context.Background(), cfg, &Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]string{`[]`: "an empty list of selected columns", `[1,1,2,3,4,5]`: "column 1 is selected twice"} {
		f, err := m.ToFile(nil)
		if err != nil {
			t.Fatal(err)
		}
		meta := string(f.Meta)
		if !strings.Contains(meta, `"model":{`) {
			t.Fatalf("meta layout changed: %.80s", meta)
		}
		f.Meta = []byte(strings.Replace(meta, `"model":{`, `"model":{"selected":`+sel+`,`, 1))
		if _, _, err := FromFile(f); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("selected %s: %v", sel, err)
		}
	}
}
