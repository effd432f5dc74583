package solve

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rfmkit/rfm/agop"
	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/kernel"
)

// smooth is a synthetic regression task: y = sin(2x₀) + x₁²/2 − x₀x₂ +
// noise·N(0,1) on standard normal inputs, d ≥ 3.
func smooth(n, d int, noise float64, seed uint64) (x, y []float64) {
	r := rand.New(rand.NewPCG(seed, 7))
	x = make([]float64, n*d)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	y = make([]float64, n)
	for i := range y {
		xi := x[i*d:]
		y[i] = math.Sin(2*xi[0]) + xi[1]*xi[1]/2 - xi[0]*xi[2] + noise*r.NormFloat64()
	}
	return x, y
}

// outputs lays out n rows of c targets row-major, row i filled by set.
func outputs(n, c int, set func(i int, yi []float64)) []float64 {
	y := make([]float64, n*c)
	for i := 0; i < n; i++ {
		set(i, y[i*c:(i+1)*c])
	}
	return y
}

func mse(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += (a[i] - b[i]) * (a[i] - b[i])
	}
	return s / float64(len(a))
}

// With every row a centre, K_nm = K_mm = K and the system is
// K(K + λnI)β = Ky: β is exact KRR's α with ridge λn. The preconditioner
// is then exact too (BᵀHB = I up to the jitter), so CG needs one or two
// iterations. Tolerance 1e-6 on predictions: the solve itself is good to
// ~1e-10 (Tol) times cond(BᵀHB) ≈ 1; what remains is that K_nm's
// diagonal comes from the distance expansion (K(x, x) off by ~1e-8, the
// Laplace kernel's √round-off) while the exact solver uses K(x, x) = 1,
// which moves the solution by ~1e-8·‖(K+λnI)⁻¹‖ ≤ 1e-8/λn = 2e-8.
func TestNystromAllCentresMatchesExact(t *testing.T) {
	n, d, c, nt := 300, 5, 2, 60
	z, y := problem(n, d, c, 21)
	zt, _ := problem(nt, d, 1, 22)
	x, q := kernel.NewPoints(z, n, d), kernel.NewPoints(zt, nt, d)
	for _, s := range []kernel.Spec{{Kind: kernel.Laplace, Bandwidth: 3}, {Kind: kernel.Gaussian, Bandwidth: 2}, {Kind: kernel.NTK, Depth: 1}} {
		for _, lev := range []bool{false, true} {
			const ridge = 0.5 // exact KRR's λn
			exact, err := KRR(context.Background(), nil, s, x, y, c, Options{Ridge: ridge})
			if err != nil {
				t.Fatal(err)
			}
			want, err := kernel.Apply(context.Background(), s, q, x, exact.Alpha, c)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Nystrom(context.Background(), s, x, y, c, NystromOptions{M: n, Ridge: ridge / float64(n), Tol: 1e-10, Leverage: lev})
			if err != nil {
				t.Fatal(err)
			}
			got, err := res.Predict(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			e := relErr(got, want)
			t.Logf("%s leverage=%v: %d iterations, residuals %.1e, jitter %.1e, prediction error %.2e", s, lev, res.Iterations, res.Residuals, res.Jitter, e)
			if e > 1e-6 {
				t.Errorf("%s: predictions differ from exact KRR by %.2e (relative)", s, e)
			}
			if !res.Converged || res.Iterations > 3 {
				t.Errorf("%s: %d iterations (converged %v): the preconditioner is not the inverse it should be at m = n", s, res.Iterations, res.Converged)
			}
			if len(res.Index) != n || res.Centers.N != n || len(res.Beta) != n*c {
				t.Errorf("%s: result shapes: %d indices, %d centres, %d coefficients", s, len(res.Index), res.Centers.N, len(res.Beta))
			}
		}
	}
}

// denseNystrom solves (K_nmᵀK_nm + λnK_mm)β = K_nmᵀy with gonum on the
// stored K_nm: the reference for CG at m ≪ n.
func denseNystrom(t *testing.T, s kernel.Spec, x, cen kernel.Points[float64], y []float64, c int, ridge float64) []float64 {
	t.Helper()
	n, m := x.N, cen.N
	knm := make([]float64, n*m)
	kernel.Cross(s, x, cen, knm, m)
	kmm := make([]float64, m*m)
	kernel.Cross(s, cen, cen, kmm, m)
	for i := 0; i < m; i++ {
		kmm[i*m+i] = 1
	}
	K := mat.NewDense(n, m, knm)
	var h mat.Dense
	h.Mul(K.T(), K)
	var km mat.Dense
	km.Scale(ridge*float64(n), mat.NewDense(m, m, kmm))
	h.Add(&h, &km)
	var rhs mat.Dense
	rhs.Mul(K.T(), mat.NewDense(n, c, y))
	var b mat.Dense
	if err := b.Solve(&h, &rhs); err != nil {
		t.Fatal(err)
	}
	return b.RawMatrix().Data
}

// At m ≪ n: the residual falls to Tol within a few iterations, the
// predictions equal those of the directly solved Nyström system, and the
// test error is close to exact KRR's on all n rows.
func TestNystromConverges(t *testing.T) {
	n, d, nt := 2000, 4, 500
	z, y := smooth(n, d, 0.1, 31)
	zt, yt := smooth(nt, d, 0, 32)
	x, q := kernel.NewPoints(z, n, d), kernel.NewPoints(zt, nt, d)
	// Gaussian: smooth target, fast spectral decay, so 500 centres are
	// enough to come close to exact KRR (the Laplace kernel needs more).
	s := kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 1.5}
	const ridge = 0.3 // exact KRR's λn
	exact, err := KRR(context.Background(), nil, s, x, y, 1, Options{Ridge: ridge})
	if err != nil {
		t.Fatal(err)
	}
	pe, err := kernel.Apply(context.Background(), s, q, x, exact.Alpha, 1)
	if err != nil {
		t.Fatal(err)
	}
	exactMSE := mse(pe, yt)
	for _, lev := range []bool{false, true} {
		var seen []float64
		opt := NystromOptions{M: 500, Ridge: ridge / float64(n), Tol: 1e-9, MaxIter: 200, Seed: 5, Leverage: lev,
			Progress: func(p NystromProgress) { seen = append(seen, p.Residual) }}
		res, err := Nystrom(context.Background(), s, x, y, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		r := res.Residuals
		if !res.Converged || r[len(r)-1] > 1e-9 || len(r) != res.Iterations || !slices.Equal(seen, r) {
			t.Fatalf("leverage=%v: converged %v after %d iterations, residuals %.1e (progress saw %d)", lev, res.Converged, res.Iterations, r, len(seen))
		}
		if r[0] < 1e3*r[len(r)-1] {
			t.Errorf("leverage=%v: residual only went from %.1e to %.1e", lev, r[0], r[len(r)-1])
		}
		got, err := res.Predict(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		beta := denseNystrom(t, s, x, res.Centers, y, 1, opt.Ridge)
		want, err := kernel.Apply(context.Background(), s, q, res.Centers, beta, 1)
		if err != nil {
			t.Fatal(err)
		}
		// Residual 1e-9 in the preconditioned system, times its condition
		// number (a few hundred here, judging by the ~35 iterations CG
		// needs), plus the dense LU's own error on K_nmᵀK_nm (condition
		// ~cond(K_nm)²): 1e-5. Measured: ~2e-6.
		if e := relErr(got, want); e > 1e-5 {
			t.Errorf("leverage=%v: predictions differ from the dense Nyström solve by %.2e", lev, e)
		}
		nysMSE := mse(got, yt)
		t.Logf("leverage=%v: %d iterations, residuals %.1e; test MSE %.4f (exact KRR on all %d rows: %.4f)", lev, res.Iterations, r, nysMSE, n, exactMSE)
		// m = n/4 centres of a smooth task: within 10% of exact (measured
		// 1%; 200 centres give 20–40% worse).
		if nysMSE > 1.1*exactMSE {
			t.Errorf("leverage=%v: test MSE %.4f, exact KRR %.4f", lev, nysMSE, exactMSE)
		}
	}
}

// Cancelling from the progress callback stops CG before the next
// iteration: exactly as many iterations as had been reported.
func TestNystromCancel(t *testing.T) {
	n, d := 2000, 3
	z, y := smooth(n, d, 0.1, 41)
	x := kernel.NewPoints(z, n, d)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	opt := NystromOptions{M: 100, Ridge: 1e-6, Tol: 1e-300, MaxIter: 1000, Progress: func(p NystromProgress) {
		calls++
		if p.Iter == 3 {
			cancel()
		}
	}}
	res, err := Nystrom(ctx, kernel.DefaultSpec(), x, y, 1, opt)
	if !errors.Is(err, context.Canceled) || res != nil {
		t.Fatalf("cancelled fit: result %v, error %v; want context.Canceled", res, err)
	}
	if calls != 3 {
		t.Errorf("%d iterations reported, want 3 (cancelled after the third)", calls)
	}
	calls = 0
	if _, err := Nystrom(ctx, kernel.DefaultSpec(), x, y, 1, opt); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("fit started on a cancelled context: error %v after %d iterations", err, calls)
	}
}

// The same seed gives the same centres and the same β, bit for bit;
// another seed other centres.
func TestNystromDeterministic(t *testing.T) {
	n, d := 1000, 3
	z, y := smooth(n, d, 0.1, 51)
	x := kernel.NewPoints(z, n, d)
	for _, lev := range []bool{false, true} {
		opt := NystromOptions{M: 80, Ridge: 1e-4, Seed: 9, Leverage: lev}
		a, err := Nystrom(context.Background(), kernel.DefaultSpec(), x, y, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Nystrom(context.Background(), kernel.DefaultSpec(), x, y, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Index, b.Index) || !slices.Equal(a.Beta, b.Beta) {
			t.Errorf("leverage=%v: two fits with one seed differ", lev)
		}
		if !slices.IsSorted(a.Index) || a.Index[0] < 0 || a.Index[len(a.Index)-1] >= n || len(slices.Compact(slices.Clone(a.Index))) != len(a.Index) {
			t.Errorf("leverage=%v: centres %v are not distinct ascending rows", lev, a.Index)
		}
		opt.Seed = 10
		c, err := Nystrom(context.Background(), kernel.DefaultSpec(), x, y, 1, opt)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Equal(a.Index, c.Index) {
			t.Errorf("leverage=%v: seeds 9 and 10 chose the same centres", lev)
		}
	}
}

// Leverage sampling favours rows the others do not represent: on a tight
// cluster with a few scattered rows, it picks scattered rows far more
// often than their 5% share, which is about what uniform sampling gets.
func TestNystromLeverageFavoursOutliers(t *testing.T) {
	n, d, out := 2000, 3, 100
	r := rand.New(rand.NewPCG(61, 62))
	z := make([]float64, n*d)
	for i := range z {
		sd := 0.05
		if i/d < out {
			sd = 3
		}
		z[i] = sd * r.NormFloat64()
	}
	x := kernel.NewPoints(z, n, d)
	s := kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 0.5}
	count := func(lev bool) int {
		idx, err := func() ([]int, error) {
			if lev {
				return leverageCentres(context.Background(), s, x, 100, 1e-4, 3)
			}
			return uniformCentres(n, 100, 3), nil
		}()
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, i := range idx {
			if i < out {
				k++
			}
		}
		return k
	}
	u, l := count(false), count(true)
	t.Logf("scattered rows among 100 centres: uniform %d, leverage %d (share %d%%)", u, l, 100*out/n)
	if l < 30 || l < 3*u {
		t.Errorf("leverage picked %d scattered rows, uniform %d", l, u)
	}
}

// The AGOP of the Nyström predictor, taken at training rows through
// agop.Options.EvalPoints, equals the mean outer product of gradients
// obtained by central differences of its predictions. h = 1e-5 on O(1)
// inputs: truncation O(h²) ≈ 1e-10, round-off ≈ 1e-16/1e-5: 1e-6 relative
// to the largest entry is ample. Gaussian kernel at any rows; Laplace at
// rows that are not centres (it is not differentiable at a centre).
func TestNystromAGOPFiniteDifferences(t *testing.T) {
	n, d, c := 400, 3, 2
	z, y0 := smooth(n, d, 0.1, 71)
	y := outputs(n, c, func(i int, yi []float64) { yi[0], yi[1] = y0[i], z[i*d+1] })
	for _, s := range []kernel.Spec{{Kind: kernel.Gaussian, Bandwidth: 2}, {Kind: kernel.Laplace, Bandwidth: 3}} {
		for _, fm := range []kernel.FeatureMatrix{kernel.IdentityMatrix(d), kernel.DiagonalMatrix([]float64{2, 0.5, 1})} {
			mp, err := kernel.NewFeatureMap(fm, nil)
			if err != nil {
				t.Fatal(err)
			}
			x := mp.Map(z, n)
			res, err := Nystrom(context.Background(), s, x, y, c, NystromOptions{M: 50, Ridge: 1e-4, Tol: 1e-10, MaxIter: 200})
			if err != nil {
				t.Fatal(err)
			}
			var eval []int
			for i := 0; i < n && len(eval) < 40; i++ {
				if _, centre := slices.BinarySearch(res.Index, i); !centre {
					eval = append(eval, i)
				}
			}
			// The model as agop sees it (the RFM loop builds the same):
			// its centres are the m Nyström centres.
			p := &agop.Predictor{Kernel: res.Kernel, Map: mp, Centers: res.Centers, Alpha: res.Beta, C: res.C}
			got, err := agop.Compute(context.Background(), p, eval, agop.Options{EvalPoints: x})
			if err != nil {
				t.Fatal(err)
			}
			want := make([]float64, d*d)
			const h = 1e-5
			for _, i := range eval {
				g := make([]float64, c*d)
				for k := 0; k < d; k++ {
					xp := slices.Clone(z[i*d : i*d+d])
					xm := slices.Clone(xp)
					xp[k] += h
					xm[k] -= h
					fp, err := res.Predict(context.Background(), mp.Map(xp, 1))
					if err != nil {
						t.Fatal(err)
					}
					fmn, err := res.Predict(context.Background(), mp.Map(xm, 1))
					if err != nil {
						t.Fatal(err)
					}
					for o := 0; o < c; o++ {
						g[o*d+k] = (fp[o] - fmn[o]) / (2 * h)
					}
				}
				for o := 0; o < c; o++ {
					for a := 0; a < d; a++ {
						for b := 0; b < d; b++ {
							want[a*d+b] += g[o*d+a] * g[o*d+b] / float64(len(eval))
						}
					}
				}
			}
			top := 0.0
			for _, v := range want {
				top = math.Max(top, math.Abs(v))
			}
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-6*top {
					t.Fatalf("%s, %s metric: AGOP entry %d = %v, finite differences %v", s, fm.Form, i, got[i], want[i])
				}
			}
		}
	}
}

func TestNystromBadInput(t *testing.T) {
	n, d := 50, 2
	z, y := problem(n, d, 1, 81)
	x := kernel.NewPoints(z, n, d)
	s := kernel.DefaultSpec()
	for _, tc := range []struct {
		name string
		spec kernel.Spec
		y    []float64
		opt  NystromOptions
		want string
	}{
		{"m > n", s, y, NystromOptions{M: n + 1}, "got m = 51"},
		{"m = 0", s, y, NystromOptions{}, "got m = 0"},
		{"negative ridge", s, y, NystromOptions{M: 10, Ridge: -1}, "ridge λ = -1"},
		{"NaN ridge", s, y, NystromOptions{M: 10, Ridge: math.NaN()}, "ridge λ = NaN"},
		{"negative MaxIter", s, y, NystromOptions{M: 10, MaxIter: -2}, "MaxIter = -2"},
		{"negative tolerance", s, y, NystromOptions{M: 10, Tol: -1}, "tolerance -1"},
		{"bad kernel", kernel.Spec{Kind: kernel.Laplace}, y, NystromOptions{M: 10}, "bandwidth"},
		{"NaN target", s, append(slices.Clone(y[:7]), append([]float64{math.NaN()}, y[8:]...)...), NystromOptions{M: 10}, "target 7 (row 7, output 0) is NaN"},
		{"short targets", s, y[:n-1], NystromOptions{M: 10}, "shapes do not match"},
		{"memory", s, y, NystromOptions{M: 40, MemoryLimit: 1000}, "m = 40 centres needs"},
	} {
		res, err := Nystrom(context.Background(), tc.spec, x, tc.y, 1, tc.opt)
		if err == nil || res != nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
		if tc.name == "memory" && !errors.Is(err, ErrTooLarge) {
			t.Errorf("memory refusal %v is not ErrTooLarge", err)
		}
	}
	res, err := Nystrom(context.Background(), s, x, y, 1, NystromOptions{M: 10})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := res.Predict(context.Background(), kernel.NewPoints(make([]float64, 3), 1, 3)); err == nil {
		t.Error("prediction on points with the wrong number of features accepted")
	}
}

// λ = 0 is allowed: β then minimizes the training error ‖K_nmβ − y‖² over
// the centres' span, so no ridge can do better on the training rows.
func TestNystromZeroRidge(t *testing.T) {
	n, d := 600, 3
	z, y := smooth(n, d, 0.3, 91)
	x := kernel.NewPoints(z, n, d)
	s := kernel.Spec{Kind: kernel.Laplace, Bandwidth: 2}
	train := func(ridge float64) float64 {
		res, err := Nystrom(context.Background(), s, x, y, 1, NystromOptions{M: 40, Ridge: ridge, Tol: 1e-12, MaxIter: 500, Seed: 2})
		if err != nil {
			t.Fatal(err)
		}
		p, err := res.Predict(context.Background(), x)
		if err != nil {
			t.Fatal(err)
		}
		return mse(p, y)
	}
	e0, e1 := train(0), train(1e-3)
	t.Logf("training MSE: λ = 0 %.6f, λ = 1e-3 %.6f", e0, e1)
	if !(e0 <= e1*(1+1e-9)) {
		t.Errorf("training MSE with λ = 0 (%v) above that with λ = 1e-3 (%v)", e0, e1)
	}
}

// Keeping K_nm between CG iterations gives the same bits as recomputing
// it (the same kernel.Cross calls fill the stored block), with several
// outputs and a ridge; a memory limit too small for the block turns the
// cache off.
func TestNystromCachedKnm(t *testing.T) {
	n, d, c := 1500, 4, 3
	z, y1 := smooth(n, d, 0.1, 61)
	y := outputs(n, c, func(i int, yi []float64) { yi[0], yi[1], yi[2] = y1[i], -y1[i], y1[i]*y1[i] })
	x := kernel.NewPoints(z, n, d)
	opt := NystromOptions{M: 200, Ridge: 1e-4, Seed: 3, MaxIter: 30}
	cached, err := Nystrom(context.Background(), kernel.DefaultSpec(), x, y, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.NoCache = true
	plain, err := Nystrom(context.Background(), kernel.DefaultSpec(), x, y, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !cached.CachedKnm || plain.CachedKnm {
		t.Fatalf("cache used: %v with it allowed, %v with NoCache", cached.CachedKnm, plain.CachedKnm)
	}
	if cached.Iterations != plain.Iterations || !slices.Equal(cached.Beta, plain.Beta) {
		t.Errorf("cached K_nm changed the fit: %d vs %d iterations", cached.Iterations, plain.Iterations)
	}
	opt.NoCache = false
	opt.MemoryLimit = NystromBytes(n, 200, c, d, linalg.Workers((n+nysBand-1)/nysBand), false) + knmCacheBytes(n, 200)
	small, err := Nystrom(context.Background(), kernel.DefaultSpec(), x, y, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if small.CachedKnm || !slices.Equal(small.Beta, plain.Beta) {
		t.Errorf("a limit with room for the block once, not %d times: cache %v", knmCacheShare, small.CachedKnm)
	}
}

// With a Workspace, a second solve of the same size reuses the first's
// K_nm block and factors (the same memory), a solve on more rows replaces
// the block, a solve that stores none drops it, and the fits are those
// without a workspace; Release empties it.
func TestNystromWorkspaceReuse(t *testing.T) {
	n, d, c := 900, 3, 2
	z, y1 := smooth(n, d, 0.1, 17)
	y := outputs(n, c, func(i int, yi []float64) { yi[0], yi[1] = y1[i], -y1[i] })
	x := kernel.NewPoints(z, n, d)
	s := kernel.DefaultSpec()
	ws := &Workspace{}
	opt := NystromOptions{M: 150, Ridge: 1e-4, Seed: 3, MaxIter: 30}
	plain, err := Nystrom(context.Background(), s, x, y, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Workspace = ws
	var first *float64
	for run := 0; run < 2; run++ {
		res, err := Nystrom(context.Background(), s, x, y, c, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !res.CachedKnm || !slices.Equal(res.Beta, plain.Beta) {
			t.Fatalf("run %d: cached %v, the same β as without a workspace: %v", run, res.CachedKnm, slices.Equal(res.Beta, plain.Beta))
		}
		if len(ws.nys[slotKnm]) != n*150 || len(ws.nys[slotL]) != 150*150 || len(ws.nys[slotLA]) != 150*150 {
			t.Fatalf("run %d: the workspace holds %d, %d and %d values", run, len(ws.nys[slotKnm]), len(ws.nys[slotL]), len(ws.nys[slotLA]))
		}
		if run == 0 {
			first = &ws.nys[slotKnm][0]
		} else if &ws.nys[slotKnm][0] != first {
			t.Fatal("the second solve did not reuse the first's K_nm block")
		}
	}
	// At least these bytes: the first solve may have taken larger buffers
	// that an earlier solve left in the pools.
	if got, want := ws.nystromHeld(), uint64(8*(n*150+2*150*150)); got < want {
		t.Errorf("held %d bytes, want at least %d", got, want)
	}
	// More rows: a new block, large enough.
	n2 := n + 100
	z2, y2 := smooth(n2, d, 0.1, 18)
	yy := make([]float64, n2*c)
	for i := 0; i < n2; i++ {
		yy[i*c], yy[i*c+1] = y2[i], -y2[i]
	}
	x2 := kernel.NewPoints(z2, n2, d)
	if _, err := Nystrom(context.Background(), s, x2, yy, c, opt); err != nil {
		t.Fatal(err)
	}
	if len(ws.nys[slotKnm]) != n2*150 {
		t.Fatalf("after a solve on %d rows the workspace holds a block of %d values", n2, len(ws.nys[slotKnm]))
	}
	// No block stored (too few iterations to be worth it): none kept.
	opt.MaxIter = 5
	if res, err := Nystrom(context.Background(), s, x2, yy, c, opt); err != nil || res.CachedKnm {
		t.Fatalf("5 iterations: cached %v, err %v", res != nil && res.CachedKnm, err)
	}
	if ws.nys[slotKnm] != nil || ws.nys[slotL] == nil {
		t.Errorf("a solve without a stored block left one (%d values) or took the factors (%v)", len(ws.nys[slotKnm]), ws.nys[slotL] == nil)
	}
	ws.Release()
	if ws.nystromHeld() != 0 {
		t.Error("Release left buffers in the workspace")
	}
}

// NystromOptions.Float32 factors the preconditioner in float32 where K_mm's
// pivots allow it (Laplace: its spectrum decays slowly) and falls back to
// float64 where they do not (a smooth Gaussian: eigenvalues far below
// float32's resolution). Either way the system is the same, so CG
// converges to the same predictions; with the float32 factors it should
// need about as many iterations.
func TestNystromFloat32Factors(t *testing.T) {
	n, d, nt := 2000, 4, 300
	z, y := smooth(n, d, 0.1, 41)
	zt, _ := smooth(nt, d, 0, 42)
	x, q := kernel.NewPoints(z, n, d), kernel.NewPoints(zt, nt, d)
	for _, tc := range []struct {
		s      kernel.Spec
		ridge  float64 // exact KRR's λn
		single bool    // the float32 factors are expected to be used
	}{
		{kernel.Spec{Kind: kernel.Laplace, Bandwidth: 2}, 1e-4, true},
		{kernel.Spec{Kind: kernel.GenLaplace, Bandwidth: 2, Exponent: 1.5}, 1e-4, true},
		{kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 1.5}, 0.3, false},
	} {
		var preds [2][]float64
		var iters [2]int
		for i, single := range []bool{false, true} {
			opt := NystromOptions{M: 500, Ridge: tc.ridge / float64(n), Tol: 1e-8, MaxIter: 200, Seed: 7, Float32: single}
			res, err := Nystrom(context.Background(), tc.s, x, y, 1, opt)
			if err != nil {
				t.Fatal(err)
			}
			if want := single && tc.single; res.Float32Factors != want {
				t.Errorf("%v Float32=%v: float32 factors used %v, want %v (jitter %g)", tc.s, single, res.Float32Factors, want, res.Jitter)
			}
			if !res.Converged {
				t.Errorf("%v Float32=%v: not converged after %d iterations (residual %.1e)", tc.s, single, res.Iterations, res.Residuals[len(res.Residuals)-1])
			}
			if preds[i], err = res.Predict(context.Background(), q); err != nil {
				t.Fatal(err)
			}
			iters[i] = res.Iterations
		}
		t.Logf("%v: %d iterations with float64 factors, %d with Float32", tc.s, iters[0], iters[1])
		if iters[1] > iters[0]+iters[0]/4+2 {
			t.Errorf("%v: %d iterations with the float32 factors, %d with the float64 ones", tc.s, iters[1], iters[0])
		}
		if e := relErr(preds[1], preds[0]); e > 1e-5 {
			t.Errorf("%v: predictions differ by %.2e between the two preconditioners", tc.s, e)
		}
	}
}

// TestCGKeepsBestIterate: when round-off (here a non-symmetric operator,
// whose residual CG cannot keep decreasing) makes the residual climb
// again, cg returns each output's iterate of smallest residual, not the
// last; on a symmetric positive definite system the best is the last.
func TestCGKeepsBestIterate(t *testing.T) {
	const m = 30
	r := rand.New(rand.NewPCG(7, 8))
	for _, sym := range []bool{false, true} {
		a := make([]float64, m*m)
		for i := range m {
			for j := range m {
				a[i*m+j] = r.NormFloat64()
			}
		}
		// AᵀA/m + I/10, plus a skew-symmetric part without sym.
		s := make([]float64, m*m)
		for i := range m {
			for j := range m {
				for k := range m {
					s[i*m+j] += a[k*m+i] * a[k*m+j] / m
				}
			}
			s[i*m+i] += 0.1
		}
		if !sym {
			for i := range m {
				for j := range i {
					v := 0.03 * r.NormFloat64()
					s[i*m+j] += v
					s[j*m+i] -= v
				}
			}
		}
		a = s
		// The operator's by-product (fwd): G·p for a 40×m matrix G; cg
		// must return G·x for the iterate x it keeps.
		const nf = 40
		gm := testutil.Randn(r, nf*m)
		mulG := func(p, out []float64) {
			for i := range nf {
				out[i] = 0
				for j := range m {
					out[i] += gm[i*m+j] * p[j]
				}
			}
		}
		apply := func(p, out, fwd []float64) error {
			for i := range m {
				out[i] = 0
				for j := range m {
					out[i] += a[i*m+j] * p[j]
				}
			}
			if fwd != nil {
				mulG(p, fwd)
			}
			return nil
		}
		b := testutil.Randn(r, m)
		var res NystromResult
		fx := make([]float64, nf)
		x, err := cg(context.Background(), apply, b, m, 1, 25, 1e-14, &res, nil, fx)
		if err != nil {
			t.Fatal(err)
		}
		gx := make([]float64, nf)
		mulG(x, gx)
		for i := range gx {
			if math.Abs(gx[i]-fx[i]) > 1e-9*(1+math.Abs(gx[i])) {
				t.Fatalf("symmetric %v: by-product %d of the kept iterate %g, want %g", sym, i, fx[i], gx[i])
			}
		}
		ax := make([]float64, m)
		apply(x, ax, nil)
		var rn, bn float64
		for i := range b {
			rn += (b[i] - ax[i]) * (b[i] - ax[i])
			bn += b[i] * b[i]
		}
		got := math.Sqrt(rn / bn)
		lo := slices.Min(res.Residuals)
		last := res.Residuals[len(res.Residuals)-1]
		if math.Abs(got-lo) > 1e-9*max(lo, 1e-6) || res.Best[0] < 1 || res.Residuals[res.Best[0]-1] != lo {
			t.Errorf("symmetric %v: returned residual %g, best %g at iteration %d, history %v", sym, got, lo, res.Best[0], res.Residuals)
		}
		if sym && res.Best[0] != res.Iterations {
			t.Errorf("SPD: kept iteration %d of %d (history %v)", res.Best[0], res.Iterations, res.Residuals)
		}
		t.Logf("symmetric %v: residuals %.3g, kept iteration %d", sym, res.Residuals, res.Best[0])
		if !sym && !(lo < last/2) {
			t.Fatalf("the non-symmetric case does not make the residual climb (best %g, last %g): the test checks nothing", lo, last)
		}
	}
}

// A smooth Gaussian kernel's K_mm has negative eigenvalues as computed;
// CG must run on the system its preconditioner was made for (K_mm + δI)
// and converge. Before, its residual reached 1.6e-4 and climbed back to
// 0.46 by iteration 50 on this problem.
func TestNystromSmoothKernelConverges(t *testing.T) {
	n, c, m := 3000, 2, 1000
	pts, labels := klrProblem(n, 3, c, 21)
	y := make([]float64, n*c)
	for i, l := range labels {
		y[i*c+l] = 1
	}
	s := kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 3}
	res, err := Nystrom(context.Background(), s, pts, y, c, NystromOptions{M: m, Ridge: 1e-6, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	low := slices.Min(res.Residuals)
	t.Logf("%d iterations, smallest residual %.2g, last %.2g, jitter %.2g", res.Iterations, low, res.Residuals[len(res.Residuals)-1], res.Jitter)
	if !res.Converged || low > 1e-6 {
		t.Fatalf("CG did not converge: %d iterations, smallest relative residual %.2g, converged %v", res.Iterations, low, res.Converged)
	}
}

// The preconditioned operator Bᵀ(K_nmᵀK_nm + r(K_mm + δI))B against the
// same product with K_nm and K_mm formed densely, for float64 factors
// (where the penalty's part comes from the factors, (r/n)·LA⁻¹LA⁻ᵀ) and
// float32 ones (where K_mm is applied from the kernel, or from the rows of
// the stored K_nm when the block is kept), at both the
// Falkon ridge's r and the logistic head's; and the K_nm·B·p it keeps
// for CG's caller. (The two forms of the operator agree with each other as
// closely as with the dense product: about 2e-9 at r = 0.02, the
// preconditioner's Bᵀ magnifying the products' round-off.)
func TestNystromOperatorMatchesDense(t *testing.T) {
	n, d, m, c := 400, 3, 60, 2
	z, _ := smooth(n, d, 0.1, 71)
	x := kernel.NewPoints(z, n, d)
	s := kernel.DefaultSpec()
	rng := rand.New(rand.NewPCG(7, 8))
	p := testutil.Randn(rng, m*c)
	for _, single := range []bool{false, true} {
		for _, r := range []float64{1e-3, 2e-2} {
			for _, share := range []uint64{0, 1} { // K_nm formed each time, or stored (then K_mm from its rows)
				sys, err := newNystromSystem(context.Background(), s, x, c, NystromOptions{M: m, Ridge: r / float64(n), Seed: 5, Float32: single}, share)
				if err != nil {
					t.Fatal(err)
				}
				if sys.pre.single != single || (sys.op.cache != nil) != (share > 0) {
					t.Fatalf("float32 factors %v, asked %v; K_nm stored %v with share %d", sys.pre.single, single, sys.op.cache != nil, share)
				}
				got, fwd := make([]float64, m*c), make([]float64, n*c)
				if err := sys.operator(context.Background(), r)(p, got, fwd); err != nil {
					t.Fatal(err)
				}
				knm := make([]float64, n*m)
				kernel.Cross(s, x, sys.cen, knm, m)
				kmm := make([]float64, m*m)
				kernel.Cross(s, sys.cen, sys.cen, kmm, m)
				w := slices.Clone(p)
				sys.pre.applyB(w, n, c)
				var u, v, km mat.Dense
				K, W := mat.NewDense(n, m, knm), mat.NewDense(m, c, w)
				u.Mul(K, W)
				v.Mul(K.T(), &u)
				km.Mul(mat.NewDense(m, m, kmm), W)
				want := make([]float64, m*c)
				for i := range want {
					want[i] = v.RawMatrix().Data[i] + r*(km.RawMatrix().Data[i]+sys.pre.jitter*w[i])
				}
				sys.pre.applyBt(want, n, c)
				num, den := 0.0, 0.0
				for i := range want {
					num += (got[i] - want[i]) * (got[i] - want[i])
					den += want[i] * want[i]
				}
				if rel := math.Sqrt(num / den); !(rel < 1e-7) {
					t.Errorf("float32 factors %v, r = %g, share %d: operator off the dense product by %.3g (relative)", single, r, share, rel)
				}
				num, den = 0, 0
				for i, v := range u.RawMatrix().Data {
					num += (fwd[i] - v) * (fwd[i] - v)
					den += v * v
				}
				if rel := math.Sqrt(num / den); !(rel < 1e-12) {
					t.Errorf("float32 factors %v, r = %g: K_nm·B·p kept on the way off by %.3g (relative)", single, r, rel)
				}
				sys.release()
			}
		}
	}
}
