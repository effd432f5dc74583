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
	s, _ := synth.Generate(synth.LowRank, 120, 6, 3)
	cfg := DefaultConfig()
	cfg.Iters = 2
	var files [2][]byte
	for i := range files {
		m, err := Fit(context.Background(), cfg, &Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
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
	s, _ := synth.Generate(synth.LowRank, 60, 6, 3)
	cfg := DefaultConfig()
	cfg.Iters = 1
	m, err := Fit(context.Background(), cfg, &Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
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
