package rfm

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/rfmkit/rfm/synth"
)

// FuzzLoad: whatever the bytes, Load returns an error or a model that
// predicts finite numbers, and never panics. The seeds are real models
// (full and diagonal M, regression and classification), so the mutations
// reach the metadata and array checks behind the container's checksums.
func FuzzLoad(f *testing.F) {
	s, err := synth.Generate(synth.LowRank, 40, 6, 1)
	if err != nil {
		f.Fatal(err)
	}
	labels := make([]int, s.N)
	for i := range labels {
		labels[i] = i % 2
	}
	for _, ds := range []*Dataset{{X: s.X, N: s.N, D: s.D, Y: s.Y}, {X: s.X, N: s.N, D: s.D, Labels: labels}} {
		for _, diag := range []bool{false, true} {
			cfg := DefaultConfig()
			cfg.Iters, cfg.Diag = 1, diag
			m, err := Fit(context.Background(), cfg, ds, nil, nil)
			if err != nil {
				f.Fatal(err)
			}
			var buf bytes.Buffer
			if err := m.Save(&buf, nil); err != nil {
				f.Fatal(err)
			}
			f.Add(buf.Bytes())
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, _, err := Load(bytes.NewReader(data))
		if err != nil || m.D > s.D {
			return
		}
		out, err := m.Predict(context.Background(), s.X[:3*m.D], 3)
		if err != nil {
			return
		}
		for i, v := range out {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("a loaded model predicts %v (output %d)", v, i)
			}
		}
	})
}
