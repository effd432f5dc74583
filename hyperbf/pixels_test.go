package hyperbf

import (
	"math"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
)

// Each pixel scaling does what it says, with the training rows'
// statistics applied to the other sets.
func TestScalePixels(t *testing.T) {
	mk := func(x ...float64) *rfm.Dataset { return &rfm.Dataset{X: x, N: len(x) / 2, D: 2} }
	close := func(got *rfm.Dataset, want ...float64) {
		t.Helper()
		for i, w := range want {
			if math.Abs(got.X[i]-w) > 1e-12 {
				t.Fatalf("%v, want %v", got.X, want)
			}
		}
	}
	tr, te := mk(0, 1, 1, 1, 0.5, 1), mk(0.75, 0, 0, 0)
	if err := ScalePixels(PixelsUnit, tr, te); err != nil {
		t.Fatal(err)
	}
	close(tr, 0, 1, 1, 1, 0.5, 1)
	if err := ScalePixels(PixelsL2, tr, te); err != nil {
		t.Fatal(err)
	}
	close(tr, 0, 1, 1/math.Sqrt2, 1/math.Sqrt2, 0.5/math.Sqrt(1.25), 1/math.Sqrt(1.25))
	close(te, 1, 0, 0, 0) // an all-zero image stays zero

	tr, te = mk(0, 1, 2, 1, 4, 1), mk(2, 3)
	if err := ScalePixels(PixelsCenter, tr, te); err != nil {
		t.Fatal(err)
	}
	close(tr, -2, 0, 0, 0, 2, 0)
	close(te, 0, 2)
	tr, te = mk(0, 1, 2, 1, 4, 1), mk(2, 3)
	if err := ScalePixels(PixelsStandard, tr, te); err != nil {
		t.Fatal(err)
	}
	sd := math.Sqrt(8.0 / 3)
	close(tr, -2/sd, 0, 0, 0, 2/sd, 0) // the constant pixel is only centred
	close(te, 0, 2)
	if err := ScalePixels("gamma", tr); err == nil || !strings.Contains(err.Error(), `"gamma"`) {
		t.Errorf("unknown scaling: %v", err)
	}
	if err := ScalePixels(PixelsUnit, tr, &rfm.Dataset{X: []float64{1}, N: 1, D: 1}); err == nil {
		t.Error("a set of another width was accepted")
	}
}
