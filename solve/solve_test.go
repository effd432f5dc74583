package solve

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/rfmkit/rfm/kernel"
)

func problem(n, d, c int, seed uint64) (z, y []float64) {
	r := rand.New(rand.NewPCG(seed, 1))
	z = make([]float64, n*d)
	for i := range z {
		z[i] = r.NormFloat64()
	}
	y = make([]float64, n*c)
	for i := range y {
		y[i] = r.NormFloat64()
	}
	return z, y
}

// reference solves (K + λI)α = Y with gonum's dense LU on the full matrix.
func reference(t *testing.T, s kernel.Spec, z []float64, n, d int, y []float64, c int, ridge float64) []float64 {
	t.Helper()
	k := make([]float64, n*n)
	kernel.Cross(s, kernel.NewPoints(z, n, d), kernel.NewPoints(z, n, d), k, n)
	for i := 0; i < n; i++ {
		k[i*n+i] = 1 + ridge
	}
	var x mat.Dense
	if err := x.Solve(mat.NewDense(n, n, k), mat.NewDense(n, c, append([]float64(nil), y...))); err != nil {
		t.Fatal(err)
	}
	return x.RawMatrix().Data
}

func relErr(a, b []float64) float64 {
	num, den := 0.0, 0.0
	for i := range a {
		num += (a[i] - b[i]) * (a[i] - b[i])
		den += b[i] * b[i]
	}
	return math.Sqrt(num / den)
}

func TestKRRMatchesDenseSolve(t *testing.T) {
	n, d, c := 400, 5, 3
	z, y := problem(n, d, c, 1)
	s := kernel.DefaultSpec()
	want := reference(t, s, z, n, d, y, c, 0.1)
	res, err := KRR(context.Background(), nil, s, kernel.NewPoints(z, n, d), y, c, Options{Ridge: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	// cond(K + 0.1 I) ≤ (n+0.1)/0.1 ≈ 4e3: 1e-10 relative is generous.
	if e := relErr(res.Alpha, want); e > 1e-10 {
		t.Errorf("float64: relative error %.2e", e)
	}
	if res.Jitter != 0 {
		t.Errorf("jitter %v on a well-posed system", res.Jitter)
	}
	// float32 storage: ~cond·eps32 ≈ 2e-4 before refinement; one float64
	// refinement step squares that factor.
	raw, err := KRR(context.Background(), nil, s, kernel.NewPoints(z, n, d), y, c, Options{Ridge: 0.1, Float32: true})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := KRR(context.Background(), nil, s, kernel.NewPoints(z, n, d), y, c, Options{Ridge: 0.1, Float32: true, Refine: 2})
	if err != nil {
		t.Fatal(err)
	}
	e0, e2 := relErr(raw.Alpha, want), relErr(ref.Alpha, want)
	t.Logf("float32 relative error: %.2e unrefined, %.2e after 2 refinement steps", e0, e2)
	if e0 > 1e-2 {
		t.Errorf("float32 unrefined error %.2e", e0)
	}
	if e2 > 1e-7 || e2 > e0/10 {
		t.Errorf("refinement did not help: %.2e → %.2e", e0, e2)
	}
}

func TestWorkspaceReuse(t *testing.T) {
	var ws Workspace
	s := kernel.DefaultSpec()
	for _, n := range []int{300, 200, 300} {
		z, y := problem(n, 3, 1, uint64(n))
		a, err := KRR(context.Background(), &ws, s, kernel.NewPoints(z, n, 3), y, 1, Options{Ridge: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		b, err := KRR(context.Background(), nil, s, kernel.NewPoints(z, n, 3), y, 1, Options{Ridge: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		for i := range a.Alpha {
			if a.Alpha[i] != b.Alpha[i] {
				t.Fatalf("n=%d: reused workspace changed the result", n)
			}
		}
	}
}

// A buffer handed back by Release and taken again is not cleared: a dirty
// one (NaN everywhere) must give the same α, bit for bit, in both
// precisions. (sync.Pool returns what the same goroutine just put unless a
// collection intervenes, so the dirty buffer is what the fit gets.)
func TestPooledBufferIsNotRead(t *testing.T) {
	n := 150
	z, y := problem(n, 4, 2, 9)
	for _, f32 := range []bool{false, true} {
		opt := Options{Ridge: 1e-3, Float32: f32, Refine: 1}
		want, err := KRR(context.Background(), &Workspace{}, kernel.DefaultSpec(), kernel.NewPoints(z, n, 4), y, 2, opt)
		if err != nil {
			t.Fatal(err)
		}
		dirty := Workspace{f64: make([]float64, n*n+7), f32: make([]float32, n*n+7)}
		for i := range dirty.f64 {
			dirty.f64[i] = math.NaN()
			dirty.f32[i] = float32(math.NaN())
		}
		dirty.Release()
		got, err := KRR(context.Background(), nil, kernel.DefaultSpec(), kernel.NewPoints(z, n, 4), y, 2, opt)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.Alpha {
			if got.Alpha[i] != want.Alpha[i] {
				t.Fatalf("float32=%v: α[%d] = %v with a pooled dirty buffer, %v with a fresh one", f32, i, got.Alpha[i], want.Alpha[i])
			}
		}
	}
}

func TestPlanRefusesTooLarge(t *testing.T) {
	z, y := problem(100, 2, 1, 3)
	_, err := KRR(context.Background(), nil, kernel.DefaultSpec(), kernel.NewPoints(z, 100, 2), y, 1, Options{Ridge: 1, MemoryLimit: 1000})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "n = 100") || !strings.Contains(err.Error(), "float32") {
		t.Fatalf("error %v, want ErrTooLarge naming n and suggesting float32", err)
	}
}

func TestDuplicatesWithZeroRidgeGetJitter(t *testing.T) {
	n, d := 50, 2
	z, y := problem(n, d, 1, 4)
	copy(z[2:4], z[0:2]) // rows 0 and 1 identical
	res, err := KRR(context.Background(), nil, kernel.DefaultSpec(), kernel.NewPoints(z, n, d), y, 1, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !(res.Jitter > 0) {
		t.Fatalf("jitter %v, want > 0", res.Jitter)
	}
	for _, v := range res.Alpha {
		if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e12 {
			t.Fatalf("alpha %v not finite and moderate", v)
		}
	}
}

func TestBadArguments(t *testing.T) {
	z, y := problem(10, 2, 1, 5)
	s := kernel.DefaultSpec()
	if _, err := KRR(context.Background(), nil, s, kernel.NewPoints(z, 10, 2), y, 1, Options{Ridge: -1}); err == nil {
		t.Error("negative ridge accepted")
	}
	if _, err := KRR(context.Background(), nil, s, kernel.Points[float64]{Z: z[:5], N: 10, D: 2, Norms: make([]float64, 10)}, y, 1, Options{}); err == nil {
		t.Error("short z accepted")
	}
	if _, err := KRR(context.Background(), nil, kernel.Spec{Kind: "x", Bandwidth: 1}, kernel.NewPoints(z, 10, 2), y, 1, Options{}); err == nil {
		t.Error("bad kernel accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := KRR(ctx, nil, s, kernel.NewPoints(z, 10, 2), y, 1, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// Rows far from the origin make the float32 squared distances
// ‖a‖² + ‖b‖² − 2a·b lose all their digits: that kernel matrix is not
// positive definite even with the largest jitter. The solve is redone in
// float64 when that matrix fits, and refused with ErrNotPD when not.
func TestFloat32FallsBackToFloat64(t *testing.T) {
	n, d := 200, 5
	z, y := problem(n, d, 1, 6)
	for i := range z {
		z[i] += 3e4
	}
	s := kernel.Spec{Kind: kernel.Laplace, Bandwidth: 1}
	want, err := KRR(context.Background(), nil, s, kernel.NewPoints(z, n, d), y, 1, Options{Ridge: 1e-3})
	if err != nil || want.Float64 {
		t.Fatalf("float64: %v (fallback flag %v)", err, want.Float64)
	}
	got, err := KRR(context.Background(), nil, s, kernel.NewPoints(z, n, d), y, 1, Options{Ridge: 1e-3, Float32: true, Refine: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !got.Float64 {
		t.Fatal("float32 solve of a matrix that lost definiteness did not fall back (or did not lose it: make the offset larger)")
	}
	for i := range want.Alpha {
		if math.Abs(got.Alpha[i]-want.Alpha[i]) > 1e-9*(1+math.Abs(want.Alpha[i])) {
			t.Fatalf("alpha[%d] = %v, float64 solve gives %v", i, got.Alpha[i], want.Alpha[i])
		}
	}
	limit := MatrixBytes(n, true) + 1000 // room for float32 only
	_, err = KRR(context.Background(), nil, s, kernel.NewPoints(z, n, d), y, 1, Options{Ridge: 1e-3, Float32: true, MemoryLimit: limit})
	if !errors.Is(err, ErrNotPD) || !strings.Contains(err.Error(), "increase the ridge") {
		t.Fatalf("without room for float64: %v, want ErrNotPD with a hint", err)
	}
}

// A workspace that takes a buffer again after Release must not share it
// with another workspace that takes one from the pool: when the pool kept a
// pointer to the workspace's own field, the second take handed out the
// first workspace's live buffer, and two leaves of a tree fitting side by
// side overwrote each other's kernel matrix (seen as a same-seed refit
// that differed under load).
func TestReleasedBufferIsNotShared(t *testing.T) {
	const n = 64
	for i := range 20 {
		var a, b, c Workspace
		square(&a, &a.f64, &pool64, n)
		square(&b, &b.f64, &pool64, n)
		// Both orders: which one the pool hands back first is its business.
		if i%2 == 0 {
			a.Release()
			b.Release()
		} else {
			b.Release()
			a.Release()
		}
		pa := square(&a, &a.f64, &pool64, n)
		pc := square(&c, &c.f64, &pool64, n)
		if &pa[0] == &pc[0] {
			t.Fatal("two workspaces hold the same n×n buffer")
		}
		a.Release()
		c.Release()
	}
}

// TestFloat32RefinementChecked: a refined float32 solve either meets
// RefineTol in the float64 residual or is redone in float64, so its fitted
// values are the float64 solve's. A Gaussian of L = 20 on 8 unit-variance
// features with λ = 1e-5 is beyond float32 (its factorization needs a
// jitter ten times the ridge, and was once returned so, 143% off); a
// Laplace kernel stays in float32. When
// float64 does not fit in memory the float32 solution is returned with its
// residual.
func TestFloat32RefinementChecked(t *testing.T) {
	n, d, c := 600, 8, 1
	z, y := problem(n, d, c, 3)
	pts := kernel.NewPoints(z, n, d)
	fitted := func(s kernel.Spec, alpha []float64) []float64 {
		ka, err := kernel.SymApply(context.Background(), s, pts, alpha, c)
		if err != nil {
			t.Fatal(err)
		}
		return ka
	}
	for _, tc := range []struct {
		s       kernel.Spec
		ridge   float64
		float64 bool
	}{
		{kernel.Spec{Kind: kernel.Laplace, Bandwidth: 10}, 1e-5, false},
		{kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 20}, 1e-5, true},
	} {
		want, err := KRR(context.Background(), nil, tc.s, pts, y, c, Options{Ridge: tc.ridge})
		if err != nil {
			t.Fatal(err)
		}
		got, err := KRR(context.Background(), nil, tc.s, pts, y, c, Options{Ridge: tc.ridge, Float32: true, Refine: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got.Float64 != tc.float64 || got.Residual != 0 {
			t.Errorf("%s: redone in float64 %v (want %v), residual %g", tc.s.Kind, got.Float64, tc.float64, got.Residual)
		}
		if e := relErr(fitted(tc.s, got.Alpha), fitted(tc.s, want.Alpha)); e > 1e-4 {
			t.Errorf("%s: fitted values differ from float64's by %.2e", tc.s.Kind, e)
		}
	}
	// Room for the float32 matrix only: the stalled solution, and how far.
	s := kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 20}
	limit := MatrixBytes(n, true) + MatrixBytes(n, false)/4
	got, err := KRR(context.Background(), nil, s, pts, y, c, Options{Ridge: 1e-5, Float32: true, Refine: 1, MemoryLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	if got.Float64 || !(got.Residual > RefineTol) {
		t.Errorf("float64 out of memory: redone in float64 %v, residual %g (want > %g)", got.Float64, got.Residual, RefineTol)
	}
}
