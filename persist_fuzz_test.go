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
	s := regression(f, synth.LowRank, 40, 6, 1)
	for _, ds := range []*Dataset{s, cyclicLabels(s, 2)} {
		for _, diag := range []bool{false, true} {
			cfg := DefaultConfig()
			cfg.Iters, cfg.Diag = 1, diag
			m := mustFit(f, cfg, ds, nil)
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
