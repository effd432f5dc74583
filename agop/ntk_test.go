package agop

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/kernel"
)

type metricCase struct {
	kind kernel.Form
	m    []float64
}

func ntkMetrics(r *rand.Rand, d int) []metricCase {
	full := testutil.RandPSD(r, d)
	diag := make([]float64, d)
	for i := range diag {
		diag[i] = 0.1 + 2*r.Float64()
	}
	return []metricCase{{kernel.Identity, nil}, {kernel.Diagonal, diag}, {kernel.Full, full}}
}

// fdWorst is the worst relative error (per point and output, relative to
// the largest gradient entry) between Gradients and central differences of
// f with step h; with richardson, the extrapolation 2·D(h/2) − D(h), which
// cancels a term linear in h.
func fdWorst(t *testing.T, p *Predictor, xq []float64, nq int, h float64, richardson bool) float64 {
	t.Helper()
	d, c := p.Centers.D, p.C
	grads, err := Gradients(context.Background(), p, xq, nq)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	for i := 0; i < nq; i++ {
		for k := 0; k < d; k++ {
			diff := func(h float64) []float64 {
				xp := append([]float64(nil), xq[i*d:i*d+d]...)
				xm := append([]float64(nil), xp...)
				xp[k] += h
				xm[k] -= h
				fp, fm := p.f(xp), p.f(xm)
				for o := range fp {
					fp[o] = (fp[o] - fm[o]) / (2 * h)
				}
				return fp
			}
			fds := diff(h)
			if richardson {
				half := diff(h / 2)
				for o := range fds {
					fds[o] = 2*half[o] - fds[o]
				}
			}
			for o := 0; o < c; o++ {
				fd := fds[o]
				got := grads[(i*c+o)*d+k]
				scale := 0.0
				for kk := 0; kk < d; kk++ {
					scale = math.Max(scale, math.Abs(grads[(i*c+o)*d+kk]))
				}
				worst = math.Max(worst, math.Abs(got-fd)/math.Max(scale, 1e-12))
			}
		}
	}
	return worst
}

// checkFD fails the test when, for a spec and metric, fdWorst with step h
// exceeds 1e-5. metrics is called once per spec (the NTK tests draw new
// metrics for each); where is said after the metric in the messages.
func checkFD(t *testing.T, specs []kernel.Spec, metrics func() []metricCase, x []float64, n, d int, alpha []float64, c int, xq []float64, nq int, h float64, richardson bool, where string) {
	t.Helper()
	for _, s := range specs {
		for _, mt := range metrics() {
			p := predictor(t, s, mt.kind, mt.m, x, n, d, alpha, c)
			if worst := fdWorst(t, p, xq, nq, h, richardson); worst > 1e-5 {
				t.Errorf("%s, %s metric%s: worst relative FD error %.2e > 1e-5", s, mt.kind, where, worst)
			} else {
				t.Logf("%s, %s metric%s: worst relative FD error %.2e", s, mt.kind, where, worst)
			}
		}
	}
}

// worstRel is the largest |got − want| relative to the largest |want|.
func worstRel(got, want []float64) float64 {
	scale, worst := 0.0, 0.0
	for _, v := range want {
		scale = math.Max(scale, math.Abs(v))
	}
	for i := range want {
		worst = math.Max(worst, math.Abs(got[i]-want[i])/scale)
	}
	return worst
}

// float32Worst is worstRel of p's AGOP over eval computed in float32
// against the same in float64.
func float32Worst(t *testing.T, p *Predictor, eval []int) float64 {
	t.Helper()
	want, err := Compute(context.Background(), p, eval, Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Compute(context.Background(), p, eval, Options{Float32: true})
	if err != nil {
		t.Fatal(err)
	}
	return worstRel(got, want)
}

// allRows is the evaluation set of every row 0..n-1.
func allRows(n int) []int {
	eval := make([]int, n)
	for i := range eval {
		eval[i] = i
	}
	return eval
}

// Central finite differences of f match the closed-form NTK / NNGP
// gradient at points away from the centres. K is smooth there; step
// h = 1e-5 on O(1) data: truncation O(h²)·f‴ ≈ 1e-10, round-off
// 1e-16·|f|/1e-5 ≈ 1e-10, far inside the 1e-5 relative tolerance.
func TestNTKGradientFiniteDifferences(t *testing.T) {
	specs := []kernel.Spec{{Kind: kernel.NTK, Depth: 1}, {Kind: kernel.NTK, Depth: 3}, {Kind: kernel.NNGP, Depth: 2}}
	checkFDAway(t, 21, specs, ntkMetrics)
}

// checkFDAway runs checkFD with step 1e-5 at six random points away from
// 40 random centres (d = 4, two outputs), drawn from PCG(seed, seed+1);
// metrics is drawn anew for each spec.
func checkFDAway(t *testing.T, seed uint64, specs []kernel.Spec, metrics func(r *rand.Rand, d int) []metricCase) {
	t.Helper()
	n, d, c, nq := 40, 4, 2, 6
	r, x, alpha := testutil.RandFit(seed, seed+1, n, d, c)
	xq := testutil.Randn(r, nq*d)
	checkFD(t, specs, func() []metricCase { return metrics(r, d) }, x, n, d, alpha, c, xq, nq, 1e-5, false, "")
}

// At a training centre the point's own term sits on the cone of K
// (c = 1): the gradient uses the symmetric subgradient (no tangential
// part), which is what central differences give too, because the |θ|
// ridge is even in the step, up to an asymmetry linear in h (the angle
// grows slightly faster on one side). Plain differences cannot be both
// small-step and accurate here: θ ≈ h/‖z‖ is recovered from a cosine
// 1 − θ²/2 whose rounding (1e-16) costs 1e-16/θ in θ. So the linear term
// is removed by Richardson extrapolation from h = 1e-4 and 5e-5, leaving
// O(h²)·f‴ (observed ≤ 2e-6 relative) and round-off 1e-16/(θ·h) ≈ 4e-8:
// tolerance 1e-5.
func TestNTKGradientAtCentres(t *testing.T) {
	n, d, c := 30, 4, 2
	r, x, alpha := testutil.RandFit(23, 24, n, d, c)
	nq := 5
	xq := append([]float64(nil), x[:nq*d]...) // the first five centres
	specs := []kernel.Spec{{Kind: kernel.NTK, Depth: 1}, {Kind: kernel.NTK, Depth: 3}}
	checkFD(t, specs, func() []metricCase { return ntkMetrics(r, d) }, x, n, d, alpha, c, xq, nq, 1e-4, true, ", at centres")
}

// The blocked AGOP with the second coefficient block equals the direct sum
// of outer products, for NTK and NNGP, with an exact duplicate, a positive
// multiple, a negative multiple and a zero row among the centres (cone
// terms at c = ±1 and the zero-norm rule). Same-order sums: 1e-12.
func TestNTKComputeMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	n, d, c := 57, 5, 3
	x := testutil.Randn(r, n*d)
	copy(x[d:2*d], x[:d]) // duplicate of row 0
	for k := 0; k < d; k++ {
		x[2*d+k] = 2.5 * x[k]  // positive multiple of row 0
		x[3*d+k] = -0.5 * x[k] // negative multiple of row 0
		x[4*d+k] = 0           // zero row
	}
	alpha := testutil.Randn(r, n*c)
	eval := []int{0, 1, 2, 3, 4, 5, 8, 13, 21, 34, 55}
	for _, s := range []kernel.Spec{{Kind: kernel.NTK, Depth: 2}, {Kind: kernel.NNGP, Depth: 3}} {
		for _, mt := range ntkMetrics(r, d) {
			p := predictor(t, s, mt.kind, mt.m, x, n, d, alpha, c)
			for _, diag := range []bool{false, true} {
				if diag && mt.kind == kernel.Full {
					continue
				}
				for _, centered := range []bool{false, true} {
					got, err := Compute(context.Background(), p, eval, Options{Diag: diag, Centered: centered, BlockRows: 3})
					if err != nil {
						t.Fatal(err)
					}
					want := naiveAGOP(t, p, x, eval, diag, centered)
					for i := range want {
						if math.IsNaN(got[i]) || math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
							t.Fatalf("%s %s diag=%v centered=%v: entry %d = %v, want %v", s, mt.kind, diag, centered, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// A naive reference independent of the engine: ∇f_k(x) = S·Σ_j α_jk
// (A_j z_j + B_j z) with (A_j, B_j) from the scalar DotGrad, for one point.
func TestNTKGradientsMatchScalarFormula(t *testing.T) {
	n, d, c := 20, 3, 2
	r, x, alpha := testutil.RandFit(27, 28, n, d, c)
	xq := testutil.Randn(r, d)
	s := kernel.Spec{Kind: kernel.NTK, Depth: 4}
	mt := ntkMetrics(r, d)[2]
	p := predictor(t, s, mt.kind, mt.m, x, n, d, alpha, c)
	got, err := Gradients(context.Background(), p, xq, 1)
	if err != nil {
		t.Fatal(err)
	}
	zp := p.Map.Map(xq, 1)
	z, pz := zp.Z, zp.Norms[0]
	gz := make([]float64, c*d)
	for j := 0; j < n; j++ {
		zj := p.Centers.Row(j)
		g := 0.0
		for k := range zj {
			g += z[k] * zj[k]
		}
		a, b := s.DotGrad(g, pz, p.Centers.Norms[j])
		for o := 0; o < c; o++ {
			for k := 0; k < d; k++ {
				gz[o*d+k] += alpha[j*c+o] * (a*zj[k] + b*z[k])
			}
		}
	}
	sq := p.Map.Root()
	for o := 0; o < c; o++ {
		for k := 0; k < d; k++ {
			want := 0.0
			for l := 0; l < d; l++ {
				want += sq[k*d+l] * gz[o*d+l]
			}
			// Different summation orders of the same O(1) terms: 1e-12.
			if math.Abs(got[o*d+k]-want) > 1e-12*(1+math.Abs(want)) {
				t.Fatalf("output %d coordinate %d: %v, want %v", o, k, got[o*d+k], want)
			}
		}
	}
}

func TestNTKRejectsShiftedMetric(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	p := predictor(t, kernel.Spec{Kind: kernel.NTK, Depth: 2}, kernel.Identity, nil, testutil.Randn(r, 20), 10, 2, testutil.Randn(r, 10), 1)
	p.Map.Shift = []float64{0, 0} // zero shift is harmless
	if _, err := Compute(context.Background(), p, []int{1, 2}, Options{}); err != nil {
		t.Errorf("zero shift rejected: %v", err)
	}
	p.Map.Shift = []float64{0.5, 0}
	if _, err := Compute(context.Background(), p, []int{1, 2}, Options{}); err == nil {
		t.Error("shifted metric accepted for a non-translation-invariant kernel")
	}
	p.Map = nil
	if _, err := Gradients(context.Background(), p, []float64{1, 1}, 1); err == nil {
		t.Error("predictor without a metric accepted")
	}
}

// The float32 AGOP of an NTK predictor agrees with float64. Every
// evaluation point has its own term on the cone, where float32 cosines
// (error ~1e-7) must still be recognized as c = 1 (kernel's float32 cone
// threshold); if not, the self terms alone cost ~1e-5. Inputs O(1),
// n = 300, single-precision sums: tolerance 1e-6 relative to the largest
// entry (observed below 1e-7).
func TestNTKComputeFloat32(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	n, d, c := 300, 6, 2
	x := testutil.Randn(r, n*d)
	copy(x[d:2*d], x[:d]) // a duplicate
	eval := allRows(n)
	for _, s := range []kernel.Spec{{Kind: kernel.NTK, Depth: 1}, {Kind: kernel.NTK, Depth: 5}, {Kind: kernel.NNGP, Depth: 2}} {
		for _, mt := range ntkMetrics(r, d) {
			p := predictor(t, s, mt.kind, mt.m, x, n, d, testutil.Randn(r, n*c), c)
			worst := float32Worst(t, p, eval)
			t.Logf("%s %s: float32 vs float64 worst relative difference %.2e", s, mt.kind, worst)
			if worst > 1e-6 {
				t.Errorf("%s %s: float32 AGOP differs by %.2e relative > 1e-6", s, mt.kind, worst)
			}
		}
	}
}
