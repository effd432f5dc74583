package synthset

import (
	"slices"
	"testing"

	"github.com/rfmkit/rfm/synth"
)

// Regression holds synth.Generate's rows and targets, with its sizes.
func TestRegression(t *testing.T) {
	ds := Regression(t, synth.Product, 7, 3, 2)
	s, err := synth.Generate(synth.Product, 7, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if ds.N != 7 || ds.D != 3 || ds.Outputs > 1 || ds.Labels != nil {
		t.Errorf("sizes n=%d d=%d outputs=%d labels %v", ds.N, ds.D, ds.Outputs, ds.Labels)
	}
	if !slices.Equal(ds.X, s.X) || !slices.Equal(ds.Y, s.Y) {
		t.Error("rows or targets differ from synth.Generate's")
	}
}
