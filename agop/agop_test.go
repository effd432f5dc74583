package agop

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/kernel"
)

func predictor(t *testing.T, s kernel.Spec, kind kernel.Form, m []float64, x []float64, n, d int, alpha []float64, c int) *Predictor {
	t.Helper()
	mt, err := kernel.NewFeatureMap(kernel.FeatureMatrix{Form: kind, D: d, Values: m}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Predictor{Kernel: s, Map: mt, Centers: mt.Map(x, n), Alpha: alpha, C: c}
}

// identityPredictor is a Laplace predictor with M = I on n standard
// normal centres in d, with c standard normal coefficients per centre.
func identityPredictor(t *testing.T, r *rand.Rand, n, d, c int) *Predictor {
	t.Helper()
	x := testutil.Randn(r, n*d)
	return predictor(t, kernel.DefaultSpec(), kernel.Identity, nil, x, n, d, testutil.Randn(r, n*c), c)
}

// f evaluates the predictor at one raw point.
func (p *Predictor) f(x []float64) []float64 {
	out, _ := kernel.Apply(context.Background(), p.Kernel, p.Map.Map(x, 1), p.Centers, p.Alpha, p.C)
	return out
}

// Central finite differences of f must match the closed-form gradient.
// Step h = 1e-5 on O(1) data: truncation error O(h²) ≈ 1e-10 and round-off
// ≈ 1e-16/1e-5 = 1e-11, far inside the 1e-5 relative tolerance the issue asks.
func TestGradientFiniteDifferences(t *testing.T) {
	specs := []kernel.Spec{
		{Kind: kernel.Laplace, Bandwidth: 2},
		{Kind: kernel.GenLaplace, Bandwidth: 2, Exponent: 1.5},
		{Kind: kernel.Gaussian, Bandwidth: 1.5},
	}
	checkFDAway(t, 11, specs, func(r *rand.Rand, d int) []metricCase {
		return []metricCase{{kernel.Identity, nil}, {kernel.Diagonal, []float64{0.5, 2, 1.5, 0.1}}, {kernel.Full, testutil.RandPSD(r, d)}}
	})
}

// naiveAGOP sums the outer products of Gradients directly.
func naiveAGOP(t *testing.T, p *Predictor, x []float64, eval []int, diag, centered bool) []float64 {
	d, c := p.Centers.D, p.C
	xq := make([]float64, len(eval)*d)
	for i, idx := range eval {
		copy(xq[i*d:], x[idx*d:idx*d+d])
	}
	g, err := Gradients(context.Background(), p, xq, len(eval))
	if err != nil {
		t.Fatal(err)
	}
	m := float64(len(eval))
	if centered {
		for k := 0; k < c; k++ {
			mean := make([]float64, d)
			for i := range eval {
				for a := 0; a < d; a++ {
					mean[a] += g[(i*c+k)*d+a] / m
				}
			}
			for i := range eval {
				for a := 0; a < d; a++ {
					g[(i*c+k)*d+a] -= mean[a]
				}
			}
		}
	}
	out := make([]float64, d*d)
	for i := range eval {
		for k := 0; k < c; k++ {
			gi := g[(i*c+k)*d : (i*c+k)*d+d]
			for a := 0; a < d; a++ {
				for b := 0; b < d; b++ {
					out[a*d+b] += gi[a] * gi[b] / m
				}
			}
		}
	}
	if diag {
		dv := make([]float64, d)
		for a := 0; a < d; a++ {
			dv[a] = out[a*d+a]
		}
		return dv
	}
	return out
}

// The blocked AGOP (tiny blocks force many blocks and output groups) must
// equal the direct sum of outer products.
func TestComputeMatchesNaive(t *testing.T) {
	n, d, c := 57, 5, 3
	_, x, alpha := testutil.RandFit(13, 14, n, d, c)
	// Include an exact duplicate row: its self/duplicate terms must be dropped.
	copy(x[d:2*d], x[:d])
	eval := []int{0, 1, 3, 5, 8, 13, 21, 34, 55, 2, 4}
	for _, mk := range []kernel.Form{kernel.Identity, kernel.Diagonal, kernel.Full} {
		var m []float64
		switch mk {
		case kernel.Diagonal:
			m = []float64{1, 0.5, 2, 0.25, 1}
		case kernel.Full:
			m = make([]float64, d*d)
			for i := 0; i < d; i++ {
				m[i*d+i] = 1 + float64(i)/4
				if i > 0 {
					m[i*d+i-1], m[(i-1)*d+i] = 0.3, 0.3
				}
			}
		}
		p := predictor(t, kernel.DefaultSpec(), mk, m, x, n, d, alpha, c)
		for _, diag := range []bool{false, true} {
			if diag && mk == kernel.Full {
				continue
			}
			for _, centered := range []bool{false, true} {
				want := naiveAGOP(t, p, x, eval, diag, centered)
				// Direct with R stored whole, direct with R generated tile
				// by tile, and the Gram form.
				for _, way := range []struct {
					form  Form
					limit int
				}{{FormDirect, storeRBytes}, {FormDirect, 0}, {FormGram, storeRBytes}} {
					storeRBytes = way.limit
					got, err := Compute(context.Background(), p, eval, Options{Diag: diag, Centered: centered, BlockRows: 3, Form: way.form})
					storeRBytes = 64 << 20
					if err != nil {
						t.Fatal(err)
					}
					// The Gram form cancels terms of size ~|u|² against each
					// other: 1e-11 there, 1e-12 for the direct sums.
					tol := 1e-12
					if way.form == FormGram {
						tol = 1e-11
					}
					for i := range want {
						if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
							t.Fatalf("%s diag=%v centered=%v form=%d R stored=%v: entry %d = %v, want %v", mk, diag, centered, way.form, way.limit > 0, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

func TestComputeRejectsBadInput(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	p := predictor(t, kernel.DefaultSpec(), kernel.Identity, nil, testutil.Randn(r, 20), 10, 2, testutil.Randn(r, 10), 1)
	if _, err := Compute(context.Background(), p, nil, Options{}); err == nil {
		t.Error("empty eval set accepted")
	}
	if _, err := Compute(context.Background(), p, []int{10}, Options{}); err == nil {
		t.Error("out-of-range index accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Compute(ctx, p, []int{1}, Options{}); err == nil {
		t.Error("cancelled context ignored")
	}
}

// The float32 path agrees with float64 to single precision: inputs O(1),
// n = 300 terms per gradient, so 1e-4 relative to the largest entry.
func TestComputeFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	n, d, c := 300, 6, 2
	p := identityPredictor(t, r, n, d, c)
	if w := float32Worst(t, p, allRows(n)); w > 1e-4 {
		t.Fatalf("float32 differs from float64 by %.2e of the largest entry > 1e-4", w)
	}
}

// The generated right-hand side R = [α_0∘Z | … | α_{C−1}∘Z | α] matches
// the matrix formed entry by entry, for every row range and column range
// (kernel.Product asks for column chunks that cut through the blocks).
func TestRHSBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, d, c := 6, 3, 4
	p := &Predictor{Centers: kernel.NewPoints(testutil.Randn(r, n*d), n, d), Alpha: testutil.Randn(r, n*c), C: c}
	e := newEngine[float64](p, 1)
	w := c * (d + 1)
	full := make([]float64, n*w)
	for j := 0; j < n; j++ {
		for k := 0; k < c; k++ {
			for t := 0; t < d; t++ {
				full[j*w+k*d+t] = p.Alpha[j*c+k] * p.Centers.Z[j*d+t]
			}
			full[j*w+c*d+k] = p.Alpha[j*c+k]
		}
	}
	scratch := make([]float64, n*w)
	for c0 := 0; c0 < n; c0++ {
		for c1 := c0 + 1; c1 <= n; c1++ {
			for j0 := 0; j0 < w; j0++ {
				for j1 := j0 + 1; j1 <= w; j1++ {
					e.rhs(c0, c1, j0, j1, scratch)
					blk, ld := scratch, j1-j0
					for i := c0; i < c1; i++ {
						for j := j0; j < j1; j++ {
							if got := blk[(i-c0)*ld+j-j0]; got != full[i*w+j] {
								t.Fatalf("rows [%d,%d) cols [%d,%d): R[%d][%d] = %v, want %v", c0, c1, j0, j1, i, j, got, full[i*w+j])
							}
						}
					}
				}
			}
		}
	}
}

// With EvalPoints the indices select points that are not centres (a
// Nyström predictor's AGOP is taken at training rows): every form must
// equal the sum of outer products of Gradients at those raw points.
func TestComputeAtEvalPoints(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	n, d, c, ne := 23, 4, 2, 31
	x, xe := testutil.Randn(r, n*d), testutil.Randn(r, ne*d)
	m := []float64{1, 0.5, 2, 0.25}
	p := predictor(t, kernel.DefaultSpec(), kernel.Diagonal, m, x, n, d, testutil.Randn(r, n*c), c)
	at := p.Map.Map(xe, ne)
	// Indices beyond the centres' range too: they index xe, not x.
	eval := []int{0, 2, 3, 5, 7, 11, 13, 22, 23, 29, 30}
	for _, diag := range []bool{false, true} {
		for _, centered := range []bool{false, true} {
			want := naiveAGOP(t, p, xe, eval, diag, centered)
			for _, form := range []Form{FormDirect, FormGram} {
				got, err := Compute(context.Background(), p, eval, Options{Diag: diag, Centered: centered, BlockRows: 4, Form: form, EvalPoints: at})
				if err != nil {
					t.Fatal(err)
				}
				// As in TestComputeMatchesNaive.
				tol := 1e-12
				if form == FormGram {
					tol = 1e-11
				}
				for i := range want {
					if math.Abs(got[i]-want[i]) > tol*(1+math.Abs(want[i])) {
						t.Fatalf("diag=%v centered=%v form=%d: entry %d = %v, want %v", diag, centered, form, i, got[i], want[i])
					}
				}
			}
			// float32: single precision, as in TestComputeFloat32.
			got, err := Compute(context.Background(), p, eval, Options{Diag: diag, Centered: centered, Float32: true, Form: FormDirect, EvalPoints: at})
			if err != nil {
				t.Fatal(err)
			}
			if w := worstRel(got, want); w > 1e-4 {
				t.Fatalf("float32 diag=%v centered=%v: differs by %.2e of the largest entry > 1e-4", diag, centered, w)
			}
		}
	}
	if _, err := Compute(context.Background(), p, []int{ne}, Options{EvalPoints: at}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("index past the evaluation points: err = %v", err)
	}
	wrong := kernel.NewPoints(testutil.Randn(r, 3*(d+1)), 3, d+1)
	if _, err := Compute(context.Background(), p, []int{0}, Options{EvalPoints: wrong}); err == nil || !strings.Contains(err.Error(), "do not match") {
		t.Errorf("evaluation points with %d features: err = %v", d+1, err)
	}
}
