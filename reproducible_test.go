package rfm

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/synth"
)

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
