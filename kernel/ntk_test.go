package kernel

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

// unitPair returns x = (1, 0, 0) and a unit z with xᵀz = ρ.
func unitPair(rho float64) (x, z []float64) {
	return []float64{1, 0, 0}, []float64{rho, math.Sqrt(1 - rho*rho), 0}
}

// cross1 is K(x, z) for one pair through the blocked path.
func cross1(s Spec, x, z []float64) float64 {
	d := len(x)
	out := make([]float64, 1)
	Cross(s, NewPoints(x, 1, d), NewPoints(z, 1, d), out, 1)
	return out[0]
}

// SPEC §6 test vectors on unit vectors with xᵀz = ρ. The spec prints 7
// decimals (±5e-8); the pair goes through the GEMM and the element-wise
// pass, whose round-off is ~1e-15. Tolerance 1e-7.
func TestNTKSpecVectors(t *testing.T) {
	for _, tc := range []struct {
		depth     int
		rho, want float64
	}{
		{1, 1, 2}, {1, 0, 0.3183099}, {1, 0.5, 0.9423311},
		{2, 0, 0.6857086}, {2, 0.5, 1.3514796},
		{5, 0, 1.7921960}, {5, 0.5, 2.4628931},
	} {
		s := Spec{Kind: NTK, Depth: tc.depth}
		x, z := unitPair(tc.rho)
		if got := cross1(s, x, z); math.Abs(got-tc.want) > 1e-7 {
			t.Errorf("NTK depth %d, ρ = %v: K = %.9f, want %.7f", tc.depth, tc.rho, got, tc.want)
		}
		if got := s.DotValue(tc.rho, 1, 1); math.Abs(got-tc.want) > 1e-7 {
			t.Errorf("DotValue depth %d, ρ = %v: %.9f, want %.7f", tc.depth, tc.rho, got, tc.want)
		}
	}
	// K_L(1) = L + 1 and NNGP Σ_L(1) = 1: κ0(1) = κ1(1) = 1 exactly in
	// floating point (acos(1) = 0), so only the product N = 1 rounds: 1e-14.
	for L := 1; L <= MaxDepth; L++ {
		x, _ := unitPair(0)
		if got := cross1(Spec{Kind: NTK, Depth: L}, x, x); math.Abs(got-float64(L+1)) > 1e-14 {
			t.Errorf("NTK depth %d: K(1) = %v, want %d", L, got, L+1)
		}
		if got := cross1(Spec{Kind: NNGP, Depth: L}, x, x); math.Abs(got-1) > 1e-14 {
			t.Errorf("NNGP depth %d: K(1) = %v, want 1", L, got)
		}
	}
	// NNGP Σ_1(0) = κ0(0) = 1/π; Σ_2(0) = κ0(1/π) is the depth-2 NTK's
	// K(0) minus K_1(0)·κ1(1/π), checked through the identity K_2 = Σ_2 + K_1κ1.
	x, z := unitPair(0)
	if got := cross1(Spec{Kind: NNGP, Depth: 1}, x, z); math.Abs(got-1/math.Pi) > 1e-15 {
		t.Errorf("NNGP depth 1: Σ_1(0) = %v, want 1/π", got)
	}
	s2 := cross1(Spec{Kind: NNGP, Depth: 2}, x, z)
	k1 := 1 / math.Pi
	if want := 0.6857086 - k1*(math.Pi-math.Acos(k1))/math.Pi; math.Abs(s2-want) > 1e-7 {
		t.Errorf("NNGP depth 2: Σ_2(0) = %v, want %v", s2, want)
	}
}

// K(s·x, t·z) = s·t·K(x, z) for s, t > 0; zero rows give 0, not NaN.
// The cosine is scale-free up to round-off (1e-16), so the check is to
// 1e-13 relative.
func TestNTKHomogeneityAndZero(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	d := 6
	for _, s := range []Spec{{Kind: NTK, Depth: 1}, {Kind: NTK, Depth: 3}, {Kind: NNGP, Depth: 4}} {
		for trial := 0; trial < 20; trial++ {
			x, z := testutil.Randn(r, d), testutil.Randn(r, d)
			a, b := math.Exp(2*r.NormFloat64()), math.Exp(2*r.NormFloat64())
			xs, zs := make([]float64, d), make([]float64, d)
			for i := range x {
				xs[i], zs[i] = a*x[i], b*z[i]
			}
			k, ks := cross1(s, x, z), cross1(s, xs, zs)
			if math.Abs(ks-a*b*k) > 1e-13*math.Abs(a*b)*(1+math.Abs(k)) {
				t.Fatalf("%s: K(%g·x, %g·z) = %v, want %v", s, a, b, ks, a*b*k)
			}
		}
		zero := make([]float64, d)
		x := testutil.Randn(r, d)
		for _, pair := range [][2][]float64{{zero, x}, {x, zero}, {zero, zero}} {
			if k := cross1(s, pair[0], pair[1]); k != 0 {
				t.Errorf("%s: K with a zero vector = %v, want 0", s, k)
			}
			p, q := Norms(pair[0], 1, d), Norms(pair[1], 1, d)
			ga, gb := s.DotGrad(0, p[0], q[0])
			if ga != 0 || gb != 0 {
				t.Errorf("%s: gradient coefficients with a zero vector = (%v, %v), want 0", s, ga, gb)
			}
		}
		// A zero row in a symmetric training block: zero row and diagonal.
		n := 4
		zz := append(testutil.Randn(r, 2*d), append(make([]float64, d), testutil.Randn(r, d)...)...)
		out := make([]float64, n*n)
		if err := Symmetric(context.Background(), s, NewPoints(zz, n, d), out, n); err != nil {
			t.Fatal(err)
		}
		for j := 0; j <= 2; j++ {
			if out[2*n+j] != 0 {
				t.Errorf("%s: symmetric block (2,%d) = %v with a zero row, want 0", s, j, out[2*n+j])
			}
		}
		if out[3*n+2] != 0 {
			t.Errorf("%s: symmetric block (3,2) = %v with a zero row, want 0", s, out[3*n+2])
		}
	}
}

// DotGrad must be the partial derivatives of DotValue: A = ∂K/∂g,
// B = 2∂K/∂p. Central differences with step h = 1e-6·scale: truncation
// O(h²)·K‴ and round-off 1e-16/1e-6 both far below the 1e-7 relative
// tolerance, at cosines kept ≥ 0.05 away from the cones at ±1.
func TestNTKDotGradMatchesPartials(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, s := range []Spec{{Kind: NTK, Depth: 1}, {Kind: NTK, Depth: 2}, {Kind: NTK, Depth: 5}, {Kind: NNGP, Depth: 3}, DefaultSpec(), {Kind: Gaussian, Bandwidth: 2}} {
		for trial := 0; trial < 50; trial++ {
			p, q := math.Exp(r.NormFloat64()), math.Exp(r.NormFloat64())
			c := 0.95 * (2*r.Float64() - 1)
			g := c * math.Sqrt(p*q)
			a, b := s.DotGrad(g, p, q)
			hg, hp := 1e-6*math.Sqrt(p*q), 1e-6*p
			fa := (s.DotValue(g+hg, p, q) - s.DotValue(g-hg, p, q)) / (2 * hg)
			fb := 2 * (s.DotValue(g, p+hp, q) - s.DotValue(g, p-hp, q)) / (2 * hp)
			scale := math.Abs(a) + math.Abs(b)*math.Sqrt(p/q) + 1e-300
			if math.Abs(a-fa) > 1e-7*scale || math.Abs(b-fb)*math.Sqrt(p/q) > 1e-7*scale {
				t.Fatalf("%s at g=%v p=%v q=%v: (A, B) = (%v, %v), finite differences (%v, %v)", s, g, p, q, a, b, fa, fb)
			}
			// Euler: K is homogeneous of degree 1 in a (NTK/NNGP), so
			// aᵀ∇_a K = A·g + B·p = K. Round-off only: 1e-12.
			if !s.Radial() {
				if k := s.DotValue(g, p, q); math.Abs(a*g+b*p-k) > 1e-12*(math.Abs(k)+scale*math.Sqrt(p*q)) {
					t.Fatalf("%s: A·g + B·p = %v, want K = %v", s, a*g+b*p, k)
				}
			}
		}
	}
}

// At c = ±1 (a point's own term, duplicates, multiples) the tangential
// derivative is the symmetric subgradient 0 and the radial one is exact:
// A = 0, B = √(q/p)·F(±1). Finite, no NaN.
func TestNTKGradAtCone(t *testing.T) {
	for _, s := range []Spec{{Kind: NTK, Depth: 1}, {Kind: NTK, Depth: 4}, {Kind: NNGP, Depth: 2}} {
		p, q := 2.0, 8.0
		n := math.Sqrt(p * q)
		for _, sign := range []float64{1, -1} {
			for _, g := range []float64{sign * n, sign * n * (1 + 1e-16), sign * n * (1 - 3e-16)} {
				a, b := s.DotGrad(g, p, q)
				// F(±1) on unit vectors, where the cosine is exact (with
				// p, q here √p√q rounds, and F moves by √ulp ≈ 1e-8).
				want := math.Sqrt(q/p) * s.DotValue(sign, 1, 1)
				if a != 0 || math.Abs(b-want) > 1e-14*math.Abs(want)+1e-300 {
					t.Errorf("%s at c = %v: (A, B) = (%v, %v), want (0, %v)", s, g/n, a, b, want)
				}
			}
		}
		// Just outside the threshold the coefficients are large but finite.
		a, b := s.DotGrad(n*(1-2e-12), p, q)
		if math.IsNaN(a) || math.IsInf(a, 0) || math.IsNaN(b) || math.IsInf(b, 0) {
			t.Errorf("%s near c = 1: (A, B) = (%v, %v)", s, a, b)
		}
	}
}

// The Mahalanobis form K(M^{1/2}x, M^{1/2}z) through the feature map
// depends only on xᵀMz, xᵀMx and zᵀMz: compare with DotValue of those,
// computed directly from M. Round-off of M^{1/2} and of the GEMM: 1e-10.
func TestNTKMahalanobisMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	d, na, nb := 5, 6, 7
	xa, xb := testutil.Randn(r, na*d), testutil.Randn(r, nb*d)
	full := testutil.RandPSD(r, d)
	specs := []Spec{{Kind: NTK, Depth: 2}, {Kind: NNGP, Depth: 3}}
	checkMahalanobis(t, specs, xa, xb, na, nb, d, full, nil, func(s Spec, m, u, v []float64) (float64, float64) {
		w := s.DotValue(quadForm(m, d, u, v), quadForm(m, d, u, u), quadForm(m, d, v, v))
		return w, 1e-10 * (1 + math.Abs(w))
	})
}

func TestNTKSymmetricMatchesCross(t *testing.T) {
	smallTiles(t)
	r := rand.New(rand.NewPCG(11, 12))
	n, d := 200, 4
	z := testutil.Randn(r, n*d)
	norms := Norms(z, n, d)
	for _, s := range []Spec{{Kind: NTK, Depth: 3}, {Kind: NNGP, Depth: 2}} {
		// float32 storage: inner products to ~1e-7 relative, K smooth in
		// them: 1e-5 relative to the diagonal scale ‖z‖² ≈ d.
		sym, full := symmetricVsCross(t, s, z, n, d, 1e-5*float64(d)*s.SelfValue())
		for i := 0; i < n; i++ {
			// Exact diagonal: (Depth+1)‖z‖² (NTK), ‖z‖² (NNGP). The one
			// computed from the GEMM has a cosine off 1 by an ulp or two,
			// and F(c) moves like √(1−c) there (the cone): √1e-16 → 1e-7
			// relative. That is why Symmetric sets the diagonal exactly.
			want := s.SelfValue() * norms[i]
			if sym[i*n+i] != want || math.Abs(full[i*n+i]-want) > 1e-7*want {
				t.Fatalf("%s diagonal %d = %v (cross %v), want %v", s, i, sym[i*n+i], full[i*n+i], want)
			}
		}
	}
}

// GradCoef of a radial kernel is (Coef, −Coef); CrossGradCoef of an NTK
// matches DotGrad entry by entry (to round-off of the GEMM, 1e-12).
func TestGradCoefBlocks(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	na, nb, d := 5, 9, 3
	a, b := testutil.Randn(r, na*d), testutil.Randn(r, nb*d)
	pa, pb := Norms(a, na, d), Norms(b, nb, d)
	for _, s := range []Spec{DefaultSpec(), {Kind: NTK, Depth: 2}, {Kind: NNGP, Depth: 1}} {
		outA, outB := make([]float64, na*nb), make([]float64, na*nb)
		CrossGradCoef(s, NewPoints(a, na, d), NewPoints(b, nb, d), outA, outB, nb)
		coef := make([]float64, na*nb)
		CrossCoef(s, NewPoints(a, na, d), NewPoints(b, nb, d), coef, nb)
		for i := 0; i < na; i++ {
			for j := 0; j < nb; j++ {
				g := 0.0
				for k := 0; k < d; k++ {
					g += a[i*d+k] * b[j*d+k]
				}
				wa, wb := s.DotGrad(g, pa[i], pb[j])
				ga, gb := outA[i*nb+j], outB[i*nb+j]
				if math.Abs(ga-wa) > 1e-12*(1+math.Abs(wa)) || math.Abs(gb-wb) > 1e-12*(1+math.Abs(wb)) || coef[i*nb+j] != ga {
					t.Fatalf("%s (%d,%d): (A, B) = (%v, %v), coef %v; want (%v, %v)", s, i, j, ga, gb, coef[i*nb+j], wa, wb)
				}
			}
		}
	}
}

func TestNTKValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Kind: NTK}, "depth 0"},
		{Spec{Kind: NTK, Depth: 6, Bandwidth: 1}, "depth 6"},
		{Spec{Kind: NNGP, Depth: -1}, "depth -1"},
	} {
		err := tc.s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.s, err, tc.want)
		}
	}
	// The bandwidth is not used: any value, including none, is accepted.
	for _, s := range []Spec{{Kind: NTK, Depth: 1}, {Kind: NNGP, Depth: 5, Bandwidth: 10}, {Kind: NTK, Depth: 3, Bandwidth: -1}} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: unexpected error %v", s, err)
		}
	}
	if got := (Spec{Kind: NTK, Depth: 2, Bandwidth: 10}).String(); got != "ntk(depth=2)" {
		t.Errorf("String() = %q", got)
	}
	if (Spec{Kind: NTK, Depth: 2}).Radial() || (Spec{Kind: NNGP, Depth: 2}).Radial() || !DefaultSpec().Radial() {
		t.Error("Radial() wrong")
	}
}

// SymApply (the float32 refinement residual) uses the exact NTK diagonal
// (Depth+1)‖z‖², not the radial 1. Apply's computed diagonal is off by
// ~1e-7 relative (the cone, see TestNTKSymmetricMatchesCross): with
// ‖z‖² ≈ 3, |α| ≤ 4 and 1300 terms of size ≤ 12, 1e-6·(1+|want|).
func TestNTKSymApplyMatchesApply(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	n, d, k := 1300, 3, 2 // two 1024-row tiles, the second ragged
	z, alpha := testutil.Randn(r, n*d), testutil.Randn(r, n*k)
	for _, s := range []Spec{{Kind: NTK, Depth: 3}, {Kind: NNGP, Depth: 1}} {
		checkSymApply(t, s, NewPoints(z, n, d), alpha, k, func(w float64) float64 { return 1e-6 * (1 + math.Abs(w)) })
	}
}
