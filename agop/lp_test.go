package agop

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/kernel"
)

var lpSpecs = []kernel.Spec{
	{Kind: kernel.LpLaplace, Bandwidth: 2, Power: 1, Exponent: 1}, // product Laplace
	{Kind: kernel.LpLaplace, Bandwidth: 2, Power: 0.7, Exponent: 0.5},
	{Kind: kernel.LpLaplace, Bandwidth: 1.5, Power: 1.5, Exponent: 0.8},
	{Kind: kernel.LpLaplace, Bandwidth: 2, Power: 2, Exponent: 1},
	{Kind: kernel.LpLaplace, Bandwidth: 3, Power: 2, Exponent: 1.5},
}

// The lp-laplace gradients (coordinate by coordinate) match central
// differences of f away from the centres and the coordinate kinks, under
// identity, diagonal and full metrics.
func TestLpGradientFiniteDifferences(t *testing.T) {
	checkFDAway(t, 31, lpSpecs, func(r *rand.Rand, d int) []metricCase {
		return []metricCase{{kernel.Identity, nil}, {kernel.Diagonal, []float64{0.5, 2, 1.5, 0.1}}, {kernel.Full, testutil.RandPSD(r, d)}}
	})
}

// With p = 2 the lp-laplace kernel is gen-laplace: same gradients, same AGOP
// (up to the round-off of the two ways of forming distances).
func TestLpWithPowerTwoIsGenLaplace(t *testing.T) {
	n, d, c := 60, 5, 2
	r, x, alpha := testutil.RandFit(41, 42, n, d, c)
	m := testutil.RandPSD(r, d)
	lp := predictor(t, kernel.Spec{Kind: kernel.LpLaplace, Bandwidth: 2, Power: 2, Exponent: 1.3}, kernel.Full, m, x, n, d, alpha, c)
	gl := predictor(t, kernel.Spec{Kind: kernel.GenLaplace, Bandwidth: 2, Exponent: 1.3}, kernel.Full, m, x, n, d, alpha, c)
	eval := allRows(n)
	a, err := Compute(context.Background(), lp, eval, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Compute(context.Background(), gl, eval, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := worstRel(a, b); w > 1e-9 {
		t.Fatalf("lp-laplace p=2 and gen-laplace AGOPs differ by %.2e", w)
	}
}

// Compute (blocked, both precisions, centred or not, diagonal or full)
// equals the sum of outer products of Gradients for lp-laplace, duplicate
// rows included (their terms are dropped); float32 stays within 1e-4.
func TestLpComputeMatchesNaive(t *testing.T) {
	n, d, c := 50, 4, 3
	r, x, alpha := testutil.RandFit(43, 44, n, d, c)
	copy(x[d:2*d], x[:d])
	eval := []int{0, 1, 2, 7, 11, 19, 23, 42, 49}
	for _, s := range lpSpecs {
		for _, mc := range []metricCase{{kernel.Identity, nil}, {kernel.Diagonal, []float64{1, 0.5, 2, 0.3}}, {kernel.Full, testutil.RandPSD(r, d)}} {
			p := predictor(t, s, mc.kind, mc.m, x, n, d, alpha, c)
			for _, diag := range []bool{false, true} {
				if diag && mc.kind == kernel.Full {
					continue
				}
				for _, centered := range []bool{false, true} {
					want := naiveAGOP(t, p, x, eval, diag, centered)
					for _, form := range []Form{FormAuto, FormGram} {
						got, err := Compute(context.Background(), p, eval, Options{Diag: diag, Centered: centered, BlockRows: 4, Form: form})
						if err != nil {
							t.Fatal(err)
						}
						if w := worstRel(got, want); w > 1e-12 {
							t.Fatalf("%s %s diag=%v centered=%v: %.2e from the naive sum", s, mc.kind, diag, centered, w)
						}
					}
					got32, err := Compute(context.Background(), p, eval, Options{Diag: diag, Centered: centered, Float32: true})
					if err != nil {
						t.Fatal(err)
					}
					if w := worstRel(got32, want); w > 1e-4 || math.IsNaN(w) {
						t.Fatalf("%s %s float32: %.2e from float64", s, mc.kind, w)
					}
				}
			}
		}
	}
}
