package kernel

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

// SPEC §2 test vector: x=(1,0), z=(0,0), M=I, L=10.
func TestSpecVector(t *testing.T) {
	s := DefaultSpec()
	x := []float64{1, 0}
	z := []float64{0, 0}
	out := make([]float64, 1)
	Cross(s, NewPoints(x, 1, 2), NewPoints(z, 1, 2), out, 1)
	if math.Abs(out[0]-0.9048374) > 5e-8 {
		t.Fatalf("K = %.9f, want 0.9048374", out[0])
	}
	// ∇_z K(x, z) = a·M(x − z) with a the gradient coefficient.
	CrossCoef(s, NewPoints(z, 1, 2), NewPoints(x, 1, 2), out, 1)
	grad := []float64{out[0] * (x[0] - z[0]), out[0] * (x[1] - z[1])}
	if math.Abs(grad[0]-0.0904837) > 5e-8 || grad[1] != 0 {
		t.Fatalf("∇_z K = %v, want (0.0904837, 0)", grad)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Kind: Laplace, Bandwidth: 0}, "bandwidth"},
		{Spec{Kind: Laplace, Bandwidth: -1}, "bandwidth"},
		{Spec{Kind: Laplace, Bandwidth: math.Inf(1)}, "bandwidth"},
		{Spec{Kind: Gaussian, Bandwidth: math.NaN()}, "bandwidth"},
		{Spec{Kind: GenLaplace, Bandwidth: 1, Exponent: 0}, "exponent"},
		{Spec{Kind: GenLaplace, Bandwidth: 1, Exponent: 2.5}, "exponent"},
		{Spec{Kind: "poly", Bandwidth: 1}, "unknown kernel"},
	} {
		err := tc.s.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.s, err, tc.want)
		}
	}
	for _, s := range []Spec{DefaultSpec(), {Kind: GenLaplace, Bandwidth: 2, Exponent: 2}, {Kind: Gaussian, Bandwidth: 0.5}} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: unexpected error %v", s, err)
		}
	}
}

// The kernel through the feature map must equal exp(−C·((x−z)ᵀM(x−z))^P)
// computed directly, for every metric kind and kernel.
func TestMahalanobisMatchesDirect(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d, na, nb := 5, 7, 9
	xa, xb := testutil.Randn(r, na*d), testutil.Randn(r, nb*d)
	full := testutil.RandPSD(r, d)
	specs := []Spec{DefaultSpec(), {Kind: GenLaplace, Bandwidth: 3, Exponent: 1.5}, {Kind: Gaussian, Bandwidth: 2}}
	// A shift must not change radial kernels.
	shift := []float64{0.3, -1, 2, 0, 0.1}
	checkMahalanobis(t, specs, xa, xb, na, nb, d, full, shift, func(s Spec, m, u, v []float64) (float64, float64) {
		diff := make([]float64, d)
		for k := range diff {
			diff[k] = u[k] - v[k]
		}
		// Round-off of the expansion and of M^{1/2}: 1e-10.
		return s.Value(quadForm(m, d, diff, diff)), 1e-10
	})
}

// checkMahalanobis maps xa and xb through a feature map of each form
// (identity, a fixed diagonal with a zero, full) with the given shift, and
// checks Cross for every spec against want(s, M, u, v), which gives the
// value from the dense d×d M and the raw rows u and v, and its tolerance.
func checkMahalanobis(t *testing.T, specs []Spec, xa, xb []float64, na, nb, d int, full, shift []float64, want func(s Spec, m, u, v []float64) (float64, float64)) {
	t.Helper()
	diag := []float64{0.5, 2, 0, 1, 3}
	for _, tc := range []struct {
		kind Form
		m    []float64
	}{{Identity, nil}, {Diagonal, diag}, {Full, full}} {
		mt, err := NewFeatureMap(FeatureMatrix{Form: tc.kind, D: d, Values: tc.m}, nil)
		if err != nil {
			t.Fatal(err)
		}
		mt.Shift = shift
		dense := make([]float64, d*d)
		for i := 0; i < d; i++ {
			switch tc.kind {
			case Identity:
				dense[i*d+i] = 1
			case Diagonal:
				dense[i*d+i] = diag[i]
			case Full:
				copy(dense[i*d:i*d+d], full[i*d:i*d+d])
			}
		}
		za, zb := mt.Map(xa, na), mt.Map(xb, nb)
		for _, s := range specs {
			out := make([]float64, na*nb)
			Cross(s, za, zb, out, nb)
			for i := 0; i < na; i++ {
				for j := 0; j < nb; j++ {
					w, tol := want(s, dense, xa[i*d:i*d+d], xb[j*d:j*d+d])
					if math.Abs(out[i*nb+j]-w) > tol {
						t.Fatalf("%s %s (%d,%d): %v want %v", tc.kind, s, i, j, out[i*nb+j], w)
					}
				}
			}
		}
	}
}

// quadForm is uᵀMv for a dense d×d M.
func quadForm(m []float64, d int, u, v []float64) float64 {
	q := 0.0
	for a := 0; a < d; a++ {
		for b := 0; b < d; b++ {
			q += u[a] * m[a*d+b] * v[b]
		}
	}
	return q
}

// smallTiles sets small, unaligned tiles for the rest of the test: many
// tiles, some straddling the diagonal.
func smallTiles(t *testing.T) {
	r, c := blockRows, blockCols
	t.Cleanup(func() { blockRows, blockCols = r, c })
	blockRows, blockCols = 37, 53
}

// symmetricVsCross checks that Symmetric agrees with Cross below the
// diagonal (same arithmetic: 1e-13) and that Symmetric in float32 storage
// is within tol32 of Cross; it returns both float64 matrices for the
// caller's checks of the diagonal.
func symmetricVsCross(t *testing.T, s Spec, z []float64, n, d int, tol32 float64) (sym, full []float64) {
	t.Helper()
	sym = make([]float64, n*n)
	if err := Symmetric(context.Background(), s, NewPoints(z, n, d), sym, n); err != nil {
		t.Fatal(err)
	}
	full = make([]float64, n*n)
	Cross(s, NewPoints(z, n, d), NewPoints(z, n, d), full, n)
	for i := 0; i < n; i++ {
		for j := 0; j < i; j++ {
			if math.Abs(sym[i*n+j]-full[i*n+j]) > 1e-13 {
				t.Fatalf("%s (%d,%d): %v vs %v", s, i, j, sym[i*n+j], full[i*n+j])
			}
		}
	}
	z32 := make([]float32, n*d)
	for i, v := range z {
		z32[i] = float32(v)
	}
	sym32 := make([]float32, n*n)
	if err := Symmetric(context.Background(), s, NewPoints(z32, n, d), sym32, n); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			if math.Abs(float64(sym32[i*n+j])-full[i*n+j]) > tol32 {
				t.Fatalf("%s float32 (%d,%d): %v vs %v", s, i, j, sym32[i*n+j], full[i*n+j])
			}
		}
	}
	return sym, full
}

func TestSymmetricMatchesCross(t *testing.T) {
	smallTiles(t)
	r := rand.New(rand.NewPCG(3, 4))
	n, d := 300, 4
	// float32: expansion error ~1e-7·‖z‖² in s, through sqrt near 0: 1e-3.
	sym, _ := symmetricVsCross(t, DefaultSpec(), testutil.Randn(r, n*d), n, d, 1e-3)
	for i := 0; i < n; i++ {
		if sym[i*n+i] != 1 {
			t.Fatalf("diagonal %d = %v, want exactly 1", i, sym[i*n+i])
		}
	}
}

func TestNewFeatureMapRejectsBadInput(t *testing.T) {
	if _, err := NewFeatureMap(FeatureMatrix{Form: Full, D: 2, Values: []float64{1, 0, 0}}, nil); err == nil {
		t.Error("wrong length accepted")
	}
	if _, err := NewFeatureMap(FeatureMatrix{Form: Diagonal, D: 2, Values: []float64{1, math.NaN()}}, nil); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := NewFeatureMap(FeatureMatrix{Form: "weird", D: 2, Values: nil}, nil); err == nil {
		t.Error("unknown kind accepted")
	}
}

func TestSymApplyMatchesApply(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	n, d, k := 2500, 3, 2 // more than two 1024-row tiles, ragged last tile
	z, alpha := testutil.Randn(r, n*d), testutil.Randn(r, n*k)
	// SymApply uses the exact diagonal K(x,x) = 1; Apply's expansion
	// leaves s ≈ eps·‖z‖² there, so r ≈ 1e-8 and K ≈ 1 − 1e-9: with
	// |α| ≤ 4 and sums of 2500 terms, 1e-7 absolute.
	checkSymApply(t, DefaultSpec(), NewPoints(z, n, d), alpha, k, func(float64) float64 { return 1e-7 })
}

// checkSymApply compares SymApply with Apply of the points to themselves,
// entry by entry within tol(Apply's value).
func checkSymApply(t *testing.T, s Spec, z Points[float64], alpha []float64, k int, tol func(want float64) float64) {
	t.Helper()
	want, err := Apply(context.Background(), s, z, z, alpha, k)
	if err != nil {
		t.Fatal(err)
	}
	got, err := SymApply(context.Background(), s, z, alpha, k)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > tol(want[i]) {
			t.Fatalf("%s entry %d: %v vs %v", s, i, got[i], want[i])
		}
	}
}

// An indefinite M (round-off can make a PSD AGOP slightly so) is mapped
// through its PSD part: M = [[1,2],[2,1]] has eigenvalues 3 and −1, so
// S = M^{1/2} keeps √3 on v = (1,1)/√2 and drops the other direction.
func TestSqrtClampsNegativeEigenvalues(t *testing.T) {
	mt, err := NewFeatureMap(FeatureMatrix{Form: Full, D: 2, Values: []float64{1, 2, 2, 1}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := math.Sqrt(3) / 2
	for i, v := range mt.Root() {
		if math.Abs(v-want) > 1e-14 {
			t.Fatalf("S[%d] = %v, want %v (S = √3/2·11ᵀ)", i, v, want)
		}
	}
	z := mt.Map([]float64{1, -1, 2, 0}, 2).Z
	if math.Abs(z[0]) > 1e-14 || math.Abs(z[1]) > 1e-14 {
		t.Fatalf("the clamped direction (1,−1) maps to %v, want 0", z[:2])
	}
}
