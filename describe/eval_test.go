package describe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rfmkit/rfm/metrics"
)

// EvalFigures draws a classifier's reliability diagram, and nothing for a
// regression.
func TestEvalFigures(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "figs")
	if figs, err := EvalFigures(dir, &metrics.Regression{}); err != nil || figs != nil {
		t.Fatalf("regression: %v, %v", figs, err)
	}
	labels := []int{0, 1, 1, 0, 1, 0}
	prob := []float64{0.9, 0.1, 0.2, 0.8, 0.4, 0.6, 0.7, 0.3, 0.3, 0.7, 0.6, 0.4}
	r, err := metrics.EvaluateClassification(labels, []int{0, 1, 1, 0, 1, 0}, prob, 2, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	figs, err := EvalFigures(dir, r)
	if err != nil || len(figs) != 1 {
		t.Fatalf("classification: %v, %v", figs, err)
	}
	if st, err := os.Stat(figs[0]); err != nil || st.Size() == 0 {
		t.Fatalf("figure %s: %v", figs[0], err)
	}
}
