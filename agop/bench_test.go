package agop

import (
	"context"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/kernel"
)

// BenchmarkLpGradients: the gradients an AGOP round takes from an exact
// lp-laplace fit, 3 000 centres (and as many query points) on 40
// features, two outputs, for the powers the search draws.
func BenchmarkLpGradients(b *testing.B) {
	n, d, c := 3000, 40, 2
	r := rand.New(rand.NewPCG(5, 6))
	x := testutil.Randn(r, n*d)
	mt, err := kernel.NewFeatureMap(kernel.FeatureMatrix{Form: kernel.Identity, D: d}, nil)
	if err != nil {
		b.Fatal(err)
	}
	alpha := testutil.Randn(r, n*c)
	for _, p := range []float64{1, 1.5, 0.5} {
		b.Run("p="+strconv.FormatFloat(p, 'g', -1, 64), func(b *testing.B) {
			s := kernel.Spec{Kind: kernel.LpLaplace, Bandwidth: 6, Power: p, Exponent: min(p, 0.8)}
			pr := &Predictor{Kernel: s, Map: mt, Centers: mt.Map(x, n), Alpha: alpha, C: c}
			for b.Loop() {
				if _, err := Gradients(context.Background(), pr, x, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
