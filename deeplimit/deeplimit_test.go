package deeplimit

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rfmkit/rfm/kernel"
)

var (
	dualMu    sync.Mutex
	dualCache = map[string]*Dual{}
)

// dualOf builds (once per test binary) the dual of a named activation.
func dualOf(t *testing.T, name string) *Dual {
	t.Helper()
	dualMu.Lock()
	defer dualMu.Unlock()
	if d, ok := dualCache[name]; ok {
		return d
	}
	act, err := ParseActivation(name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDual(act)
	if err != nil {
		t.Fatal(err)
	}
	dualCache[name] = d
	return d
}

// The duals against Monte Carlo estimates of E[φ(u)φ(v)] and E[φ′(u)φ′(v)]
// over correlated standard normals, within 5 standard errors.
func TestDualMonteCarlo(t *testing.T) {
	const n = 200_000
	for _, name := range []string{"relu", "leaky-relu", "tanh", "erf", "hardtanh", "hermite:2", "cor1:3", "cor2:2", "sigmoid"} {
		d := dualOf(t, name)
		r := rand.New(rand.NewPCG(7, 11))
		for _, rho := range []float64{-0.6, 0.1, 0.5, 0.9, 0.99} {
			s := math.Sqrt(1 - rho*rho)
			var sf, sf2, sd, sd2 float64
			for i := 0; i < n; i++ {
				u := r.NormFloat64()
				v := rho*u + s*r.NormFloat64()
				f := d.Scale * d.Scale * d.Act.F(u) * d.Act.F(v)
				g := d.Scale * d.Scale * d.Act.DF(u) * d.Act.DF(v)
				sf += f
				sf2 += f * f
				sd += g
				sd2 += g * g
			}
			mf, md := sf/n, sd/n
			sef := math.Sqrt((sf2/n - mf*mf) / n)
			sed := math.Sqrt((sd2/n - md*md) / n)
			v, dv := d.Eval(rho)
			if math.Abs(v-mf) > 5*sef+1e-12 {
				t.Errorf("%s: φ̌(%g) = %.6f, Monte Carlo %.6f ± %.6f", name, rho, v, mf, sef)
			}
			if math.Abs(dv-md) > 5*sed+1e-12 {
				t.Errorf("%s: φ̌′(%g) = %.6f, Monte Carlo %.6f ± %.6f", name, rho, dv, md, sed)
			}
		}
	}
}

// The Hermite series, the nested quadrature and the 2-D Gauss–Hermite rule
// agree: for smooth activations all three on [−1, 1]; for activations with
// kinks the Chebyshev table against the quadrature off its nodes, and the
// series against the quadrature for |ρ| ≤ 1/4 where it is used.
func TestDualCrossCheck(t *testing.T) {
	rhos := []float64{-0.97, -0.4, 0, 0.13, 0.25, 0.61, 0.9, 0.999, 1}
	for _, name := range []string{"erf", "sine", "cor2:2", "cor2:3", "cor1:2", "hermite:3", "swish"} {
		d := dualOf(t, name)
		if !d.Exact {
			t.Fatalf("%s: the Hermite series should be exact (tails %g, %g)", name, d.TailF, d.TailDF)
		}
		for _, rho := range rhos {
			v, dv := d.Series(rho)
			q, dq := d.Quad(rho)
			g, dg, err := d.GH(rho, 60)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(v-q) > 1e-10 || math.Abs(dv-dq) > 1e-9 || math.Abs(v-g) > 1e-9 || math.Abs(dv-dg) > 1e-8 {
				t.Errorf("%s ρ = %g: series %.12f %.12f, quadrature %.12f %.12f, Gauss–Hermite %.12f %.12f", name, rho, v, dv, q, dq, g, dg)
			}
		}
	}
	for _, name := range []string{"relu", "hardtanh"} {
		d := dualOf(t, name)
		if d.Exact {
			t.Fatalf("%s: a kinked activation's Hermite series cannot be exact", name)
		}
		for _, rho := range []float64{-0.83, 0.3, 0.47, 0.77, 0.95, 0.9999} {
			v, dv := d.Eval(rho)
			q, dq := d.Quad(rho)
			if math.Abs(v-q) > 1e-10 || math.Abs(dv-dq) > 1e-9 {
				t.Errorf("%s ρ = %g: table %.12f %.12f, quadrature %.12f %.12f", name, rho, v, dv, q, dq)
			}
		}
		for _, rho := range []float64{-0.25, -0.1, 0, 0.05, 0.2} {
			v, dv := d.Series(rho)
			q, dq := d.Quad(rho)
			if math.Abs(v-q) > 1e-10 || math.Abs(dv-dq) > 1e-9 {
				t.Errorf("%s ρ = %g: series %.12f %.12f, quadrature %.12f %.12f", name, rho, v, dv, q, dq)
			}
		}
	}
	// Closed forms: the sine's dual is sinh(a²ρ)/sinh(a²), the erf's
	// arcsin(2ρ/3)/arcsin(2/3).
	sine := dualOf(t, "sine:a2=2.5")
	erf := dualOf(t, "erf")
	for _, rho := range rhos {
		if v, _ := sine.Eval(rho); math.Abs(v-math.Sinh(2.5*rho)/math.Sinh(2.5)) > 1e-12 {
			t.Errorf("sine dual at %g: %.15f, closed form %.15f", rho, v, math.Sinh(2.5*rho)/math.Sinh(2.5))
		}
		if v, _ := erf.Eval(rho); math.Abs(v-math.Asin(2*rho/3)/math.Asin(2.0/3)) > 1e-12 {
			t.Errorf("erf dual at %g: %.15f, closed form %.15f", rho, v, math.Asin(2*rho/3)/math.Asin(2.0/3))
		}
	}
}

// The general NTK with the ReLU equals the closed form of package kernel
// (whose ReLU is normalized, √2·max(x, 0), as NewDual scales it) and SPEC
// §6's test vectors.
func TestReLUClosedForm(t *testing.T) {
	d := dualOf(t, "relu")
	if math.Abs(d.Scale-math.Sqrt2) > 1e-12 {
		t.Errorf("ReLU scale %.15f, want √2", d.Scale)
	}
	for L := 1; L <= kernel.MaxDepth; L++ {
		for _, z := range []float64{-1, -0.7, -0.2, 0, 0.3, 0.5, 0.8, 0.99, 0.99999, 1} {
			want := kernel.Spec{Kind: kernel.NTK, Depth: L}.DotValue(z, 1, 1)
			if got := d.NTKPlain(z, L); math.Abs(got-want) > 1e-11*max(1, want) {
				t.Errorf("depth %d z = %g: %.15f, closed form %.15f", L, z, got, want)
			}
		}
	}
	spec := []struct {
		L       int
		z, want float64
	}{{1, 1, 2}, {1, 0, 0.3183099}, {1, 0.5, 0.9423311}, {2, 0, 0.6857086}, {2, 0.5, 1.3514796},
		{5, 0, 1.7921960}, {5, 0.5, 2.4628931}, {5, 1, 6}}
	for _, c := range spec {
		if got := d.NTKPlain(c.z, c.L); math.Abs(got-c.want) > 6e-8 {
			t.Errorf("SPEC §6: depth %d K(%g) = %.8f, want %.7f", c.L, c.z, got, c.want)
		}
	}
}

// The log-form recursion against the plain one where both are finite, its
// normalization (Theorem 7's), and finiteness far beyond.
func TestNormalizedRecursion(t *testing.T) {
	for _, name := range []string{"relu", "cor2:2", "erf", "hermite:2", "cor1:3", "sigmoid"} {
		d := dualOf(t, name)
		for _, L := range []int{1, 2, 7, 30, 120} {
			for _, z := range []float64{0, 0.2, 0.6, 0.95, 1} {
				plain := d.NTKPlain(z, L)
				v, err := d.NTK(z, L)
				if err != nil {
					t.Fatal(err)
				}
				if plain == 0 || plain < 1e-300 || math.IsInf(plain, 0) {
					continue
				}
				if v.Deep || math.Abs(math.Exp(v.V)-plain) > 1e-10*plain {
					t.Errorf("%s L = %d z = %g: log form %v, plain %.15g", name, L, z, v, plain)
				}
				if d.Case == CaseSingular {
					nv, _ := d.Normalized(z, L)
					want := math.Log(plain) - float64(L)*math.Log(d.A1*d.A1) - math.Log(float64(L)+1)
					if math.Abs(nv-want) > 1e-9*max(1, math.Abs(want)) {
						t.Errorf("%s L = %d z = %g: normalized %.12f, want %.12f", name, L, z, nv, want)
					}
				}
			}
		}
	}
	// Far beyond the plain recursion's range: K_L(1)/(A′^{2L}(L+1)) overflows
	// float64 at L = 10 000 for cor2:2 (B′/A′² = 7.3), the log form does not,
	// and the normalized kernel at z < 1 has converged (Theorem 7).
	d := dualOf(t, "cor2:2")
	if p := d.NTKPlain(1, 10000); !math.IsInf(p, 1) {
		t.Fatalf("plain K_10000(1) = %g: expected overflow", p)
	}
	// The convergence is O(1/L) (SI appendix B, eq. C.8): doubling L must
	// shrink the change.
	for _, z := range []float64{0.3, 0.9, 0.999} {
		a, _ := d.Normalized(z, 2500)
		b, _ := d.Normalized(z, 5000)
		c, _ := d.Normalized(z, 10000)
		if math.IsNaN(c) || math.IsInf(c, 0) || !(math.Abs(c-b) <= 0.6*math.Abs(b-a)) || math.Abs(c-b) > 0.2 {
			t.Errorf("cor2:2 z = %g: normalized log K at L = 2500, 5000, 10000: %g, %g, %g", z, a, b, c)
		}
	}
	// Theorem 7's limit ψ: the normalized kernel approaches it as O(1/L).
	for _, z := range []float64{0.3, 0.9, 0.999} {
		lim, err := d.Limit(z)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := d.Normalized(z, 4000)
		b, _ := d.Normalized(z, 40000)
		if !(math.Abs(b-lim) < 0.2*math.Abs(a-lim)+1e-9) || math.Abs(b-lim) > 0.05 {
			t.Errorf("cor2:2 z = %g: ψ = %g, normalized at L = 4000, 40000: %g, %g", z, lim, a, b)
		}
	}
	if v, _ := d.Limit(1); !math.IsInf(v, 1) {
		t.Errorf("ψ(1) = %g, want +Inf", v)
	}
	if _, err := dualOf(t, "relu").Limit(0.5); err == nil {
		t.Error("ψ of the ReLU (majority case): no error")
	}
	// The 1-NN case goes deep (K below e^{−1e10}) and keeps the order of
	// the cosines.
	h := dualOf(t, "hermite:2")
	prev := Val{V: math.Inf(-1)}
	for _, z := range []float64{0.2, 0.5, 0.9, 0.99, 0.999999} {
		v, _ := h.NTK(z, 10000)
		if !v.Deep || !prev.Less(v) || math.IsNaN(v.V) {
			t.Errorf("hermite:2 at L = 10000, z = %g: %v after %v", z, v, prev)
		}
		prev = v
	}
	if v, _ := h.NTK(1, 10000); v.Deep || !prev.Less(v) {
		t.Errorf("hermite:2 K_10000(1) = %v", v)
	}
}

// A, A′, B′ and α of the corollaries' activations are the thesis's.
func TestCorollaryConstants(t *testing.T) {
	for dim := 1; dim <= 6; dim++ {
		d := dualOf(t, "cor1:"+string(rune('0'+dim)))
		wantA2, wantB := math.Pow(2, -float64(dim)/2), 2.0
		if dim == 1 {
			wantA2, wantB = 0.5, 4
		}
		if d.A != 0 || math.Abs(d.A1*d.A1-wantA2) > 1e-10 || math.Abs(d.B1-wantB) > 1e-10 || math.Abs(d.Alpha-float64(dim)) > 1e-9 || d.Case != CaseSingular {
			t.Errorf("cor1:%d: A = %g, A′² = %g (want %g), B′ = %g (want %g), α = %g, case %v", dim, d.A, d.A1*d.A1, wantA2, d.B1, wantB, d.Alpha, d.Case)
		}
	}
	// Corollary 2: a² ≈ 2.676 for d = 2 (thesis). The thesis also states
	// a² ≈ 6.135 for d = 3, but its equation gives 4.395 there; 6.135 is
	// the root for d = 4 (the value SI appendix I uses for data on S⁴).
	for _, c := range []struct{ d, a2 float64 }{{2, 2.676}, {3, 4.395}, {4, 6.135}, {8, 13.826}} {
		a2, err := Corollary2A2(c.d)
		if err != nil || math.Abs(a2-c.a2) > 1e-3 {
			t.Errorf("Corollary 2, d = %g: a² = %.5f, want %.3f (%v)", c.d, a2, c.a2, err)
		}
	}
	for dim := 2; dim <= 4; dim++ {
		d := dualOf(t, "cor2:"+string(rune('0'+dim)))
		a2, _ := Corollary2A2(float64(dim))
		if d.A != 0 || math.Abs(d.A1*d.A1-a2/math.Sinh(a2)) > 1e-10 || math.Abs(d.B1-a2/math.Tanh(a2)) > 1e-9 || math.Abs(d.Alpha-float64(dim)) > 1e-8 {
			t.Errorf("cor2:%d: A = %g, A′² = %g (want %g), B′ = %g (want %g), α = %g", dim, d.A, d.A1*d.A1, a2/math.Sinh(a2), d.B1, a2/math.Tanh(a2), d.Alpha)
		}
	}
	// Figure C-2 of the thesis lists −log(A′²)/log(B′) = α/2.
	for _, c := range []struct {
		name string
		half float64
	}{{"sine", 0.593}, {"erf", 0.444}, {"tanh", 0.440}, {"hardtanh", 0.364}} {
		if d := dualOf(t, c.name); math.Abs(d.Alpha/2-c.half) > 1.5e-3 {
			t.Errorf("%s: α/2 = %.4f, thesis %.3f", c.name, d.Alpha/2, c.half)
		}
	}
	for _, c := range []struct {
		name string
		want Case
	}{{"relu", CaseMajority}, {"sigmoid", CaseMajority}, {"cosid", CaseMajority}, {"swish", CaseMajority},
		{"hermite:2", CaseNearest}, {"hermite:4", CaseNearest}, {"tanh", CaseSingular}, {"cor2:2", CaseSingular}} {
		if d := dualOf(t, c.name); d.Case != c.want {
			t.Errorf("%s: case %v, want %v", c.name, d.Case, c.want)
		}
	}
}

func pts(rows ...[]float64) Points {
	p := Points{N: len(rows), D: len(rows[0])}
	for _, r := range rows {
		p.X = append(p.X, r...)
	}
	return p
}

func unit(a, b float64) []float64 {
	n := math.Hypot(a, b)
	return []float64{a / n, b / n}
}

func TestReferenceClassifiers(t *testing.T) {
	train := pts(unit(1, 0.05), unit(1, 0.1), unit(0.05, 1), unit(1, 1), unit(0.3, 1))
	y := []float64{1, 1, -1, -1, -1}
	test := pts(unit(1, 0.07), unit(0.1, 1), unit(1, 1), unit(0.8, 1))
	if got := MajorityVote(y, 4); got[0] != -1 || got[3] != -1 {
		t.Errorf("majority vote %v, want all −1", got)
	}
	if got, want := NearestNeighbor(train, y, test), []float64{1, -1, -1, -1}; !slices.Equal(got, want) {
		t.Errorf("1-NN %v, want %v", got, want)
	}
	// Order 2: the two +1 points next to the first test row dominate; a
	// test row equal to a training row takes its label.
	if got, want := SingularSmoother(train, y, test, 2), []float64{1, -1, -1, -1}; !slices.Equal(got, want) {
		t.Errorf("singular smoother %v, want %v", got, want)
	}
	// Order → 0: every point weighs the same, the majority vote.
	if got := SingularSmoother(train, y, test, 1e-9); got[0] != -1 {
		t.Errorf("singular smoother of order 0 at row 0: %v, want the majority −1", got[0])
	}
	if a := Agreement([]float64{1, -1, 1, 1}, []float64{1, 1, 1, -1}); a != 0.5 {
		t.Errorf("agreement %g", a)
	}
}

// The table's interpolation against the exact recursion.
func TestTable(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		name string
		L    int
	}{{"cor2:2", 40}, {"hermite:2", 6}, {"relu", 20}, {"erf", 300}} {
		d := dualOf(t, c.name)
		tabs, err := d.Tables(context.Background(), []int{c.L}, nil)
		if err != nil {
			t.Fatal(err)
		}
		tab := tabs[c.L]
		for i := 0; i < 300; i++ {
			z := r.Float64()
			if i%2 == 1 {
				z = 1 - math.Pow(10, -1-9*r.Float64())
			}
			want, _ := d.NTK(z, c.L)
			got := tab.At(2 * (1 - z))
			tol := 1e-7 * max(1, math.Abs(want.V))
			if 1-z < 1e-8 {
				// ρ near 1 is resolved to 1e-16 absolutely, in the table's
				// grid as in the recursion: relative 1e-16/(1 − z) each.
				tol = 1e-5
			}
			if want.Deep || got.Deep || math.Abs(got.V-want.V) > tol {
				t.Fatalf("%s L = %d z = %.15f: table %v, recursion %v", c.name, c.L, z, got, want)
			}
		}
	}
}

// Small runs of the machine reach the thesis's limits: the 1-NN case
// agrees with 1-NN at depth 100, and the singular case's machine becomes
// its kernel smoother (identity train matrix) at depth 1000.
func TestMachineLimits(t *testing.T) {
	train, y, err := Task2D.Sample(80, 5)
	if err != nil {
		t.Fatal(err)
	}
	test, yTest, _ := Task2D.Sample(60, 6)
	rows, err := Sweep(context.Background(), dualOf(t, "hermite:2"), []int{100}, train, y, test, yTest, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Nearest != 1 || !rows[0].Identity {
		t.Errorf("hermite:2 at L = 100: %+v, want 1-NN agreement 1 with an identity train matrix", rows[0])
	}
	rows, err = Sweep(context.Background(), dualOf(t, "cor2:2"), []int{1, 1000}, train, y, test, yTest, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Identity || !rows[1].Identity {
		t.Errorf("cor2:2: identity at L = 1 %v, at L = 1000 %v", rows[0].Identity, rows[1].Identity)
	}
}

func TestBadInput(t *testing.T) {
	for _, name := range []string{"nope", "hermite:0", "hermite:x", "sine:a2=-1", "cor2:1", "relu:3", "leaky-relu:NaN"} {
		if _, err := ParseActivation(name); err == nil {
			t.Errorf("activation %q: no error", name)
		}
	}
	if _, err := ParseActivation("nope"); err == nil || !strings.Contains(err.Error(), "relu") {
		t.Errorf("unknown activation: %v (should list the known names)", err)
	}
	lin, err := NewDual(Activation{Name: "linear", F: func(x float64) float64 { return 2 * x }, DF: func(float64) float64 { return 2 }})
	if err == nil || !strings.Contains(err.Error(), "linear") {
		t.Errorf("linear activation: %v, %v", lin, err)
	}
	if _, err := NewDual(Activation{Name: "wrong", F: math.Tanh, DF: math.Cos}); err == nil || !strings.Contains(err.Error(), "derivative") {
		t.Errorf("a DF that is not F′: %v", err)
	}
	d := dualOf(t, "erf")
	for _, L := range []int{0, -3, MaxDepth + 1} {
		if _, err := d.NTK(0.5, L); err == nil {
			t.Errorf("depth %d: no error", L)
		}
		if _, err := d.Tables(context.Background(), []int{L}, nil); err == nil {
			t.Errorf("table of depth %d: no error", L)
		}
	}
	if _, err := d.NTK(-0.1, 3); err == nil {
		t.Error("cosine −0.1: no error")
	}
	if _, err := dualOf(t, "relu").Normalized(0.5, 3); err == nil {
		t.Error("Theorem 7 normalization of the ReLU: no error")
	}
	p := pts([]float64{1, 2}, []float64{math.NaN(), 1}, []float64{3, 0})
	if _, err := FitMinMax(p); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("NaN row: %v", err)
	}
	q := pts([]float64{1, 2}, []float64{0, 0}, []float64{3, 1})
	mm, err := FitMinMax(q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ProjectOrthant(q, mm); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("a row at every minimum: %v", err)
	}
	proj, err := ProjectOrthant(pts([]float64{1, 2}, []float64{0, 5}, []float64{3, 1}), MinMax{Min: []float64{0, 0}, Range: []float64{3, 5}})
	if err != nil || CheckOrthant(proj) != nil {
		t.Errorf("projection: %v %v", err, CheckOrthant(proj))
	}
	if err := CheckOrthant(pts([]float64{-0.6, 0.8})); err == nil {
		t.Error("a negative coordinate passed CheckOrthant")
	}
	if err := CheckOrthant(pts([]float64{math.NaN(), 1})); err == nil {
		t.Error("NaN passed CheckOrthant")
	}
	tabs, _ := d.Tables(context.Background(), []int{2}, nil)
	train := pts(unit(1, 0.2), unit(0.2, 1))
	if _, _, err := Machine(context.Background(), tabs[2], train, []float64{1, 0}, train); err == nil {
		t.Error("label 0: no error")
	}
	if _, _, err := Machine(context.Background(), tabs[2], train, []float64{1, -1}, pts([]float64{0.6, -0.8})); err == nil {
		t.Error("a test row off the orthant: no error")
	}
	if _, err := Corollary2A2(1); err == nil {
		t.Error("Corollary 2 for d = 1: no error")
	}
}
