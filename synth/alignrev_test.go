package synth

import (
	"context"
	"math"
	"strings"
	"testing"
)

// gramOf returns RᵀR for rows×d R (row-major).
func gramOf(x []float64, rows, d int) []float64 {
	g := make([]float64, d*d)
	for r := 0; r < rows; r++ {
		row := x[r*d : (r+1)*d]
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				g[i*d+j] += row[i] * row[j]
			}
		}
	}
	return g
}

func matmul(a, b []float64, d int) []float64 {
	c := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for k := 0; k < d; k++ {
			for j := 0; j < d; j++ {
				c[i*d+j] += a[i*d+k] * b[k*d+j]
			}
		}
	}
	return c
}

// TestReversingInverseSquare checks X₂ᵀX₂ = (X₁ᵀX₁)⁻² without noise when
// both subsets have at least d rows (X₁ᵀX₁ invertible, all directions
// paired): X₁ᵀX₁·X₂ᵀX₂·X₁ᵀX₁ = I.
func TestReversingInverseSquare(t *testing.T) {
	o := ReversingOptions{N: 40, D: 8, Balance: 0.5, Eps1: 0.5, Eps2: 0, Seed: 3}
	r, err := AlignmentReversingData(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.N1 != 20 || r.Paired != 8 || r.N != 40 || r.D != 8 || len(r.X) != 320 || len(r.Y) != 40 {
		t.Fatalf("shapes: n1 %d paired %d n %d d %d len X %d Y %d", r.N1, r.Paired, r.N, r.D, len(r.X), len(r.Y))
	}
	g1 := gramOf(r.X[:20*8], 20, 8)
	g2 := gramOf(r.X[20*8:], 20, 8)
	p := matmul(matmul(g1, g2, 8), g1, 8)
	for i := 0; i < 8; i++ {
		for j := 0; j < 8; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(p[i*8+j]-want) > 1e-8 {
				t.Fatalf("X₁ᵀX₁·X₂ᵀX₂·X₁ᵀX₁[%d,%d] = %g, want %g", i, j, p[i*8+j], want)
			}
		}
	}
	// With the paper's noise ε₂ = 0.01 the property holds approximately:
	// the product stays near I relative to its size.
	o.Eps2 = 0.01
	r2, err := AlignmentReversingData(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	g2 = gramOf(r2.X[20*8:], 20, 8)
	inv2 := gramOf(r.X[20*8:], 20, 8) // the noiseless (X₁ᵀX₁)⁻² of the same draw
	var diff, norm float64
	for i := range g2 {
		diff += (g2[i] - inv2[i]) * (g2[i] - inv2[i])
		norm += inv2[i] * inv2[i]
	}
	t.Logf("relative Frobenius change of X₂ᵀX₂ from the noise: %.3g", math.Sqrt(diff/norm))
	if math.Sqrt(diff/norm) < 1e-6 {
		t.Fatalf("ε₂ = 0.01 left X₂ᵀX₂ unchanged")
	}
}

// TestReversingPartial checks the rank-deficient case (γn < d): X₂ᵀX₂ is
// the pseudo-inverse square on the range of X₁ᵀX₁, so
// X₁ᵀX₁·X₂ᵀX₂·X₁ᵀX₁ is the projector onto that range (trace n₁).
func TestReversingPartial(t *testing.T) {
	o := ReversingOptions{N: 16, D: 12, Balance: 0.25, Eps1: 0.5, Eps2: 0, Seed: 5}
	r, err := AlignmentReversingData(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.N1 != 4 || r.Paired != 4 {
		t.Fatalf("n1 %d paired %d, want 4 and 4", r.N1, r.Paired)
	}
	d := 12
	g1 := gramOf(r.X[:4*d], 4, d)
	p := matmul(matmul(g1, gramOf(r.X[4*d:], 12, d), d), g1, d)
	pp := matmul(p, p, d)
	var tr float64
	for i := 0; i < d; i++ {
		tr += p[i*d+i]
	}
	if math.Abs(tr-4) > 1e-6 {
		t.Fatalf("trace of X₁ᵀX₁·X₂ᵀX₂·X₁ᵀX₁ = %g, want 4 (a rank-4 projector)", tr)
	}
	for i := range p {
		if math.Abs(pp[i]-p[i]) > 1e-6 {
			t.Fatalf("X₁ᵀX₁·X₂ᵀX₂·X₁ᵀX₁ is not a projector at %d: %g vs %g", i, pp[i], p[i])
		}
	}
}

func TestReversingLabelsAndSeed(t *testing.T) {
	o := ReversingOptions{N: 30, D: 5, Balance: 0.3, Eps1: 0.5, Eps2: 0.01, Seed: 7}
	a, err := AlignmentReversingData(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	for i, y := range a.Y {
		want := ReversingLabelShift
		if i < 9 {
			want = 1 + ReversingLabelShift
		}
		if y != want {
			t.Fatalf("y[%d] = %g, want %g", i, y, want)
		}
	}
	b, _ := AlignmentReversingData(context.Background(), o)
	for i := range a.X {
		if a.X[i] != b.X[i] {
			t.Fatalf("same seed, different X at %d", i)
		}
	}
	o.Seed = 8
	c, _ := AlignmentReversingData(context.Background(), o)
	same := 0
	for i := range a.X {
		if a.X[i] == c.X[i] {
			same++
		}
	}
	if same == len(a.X) {
		t.Fatal("another seed drew the same X")
	}
	// X₁'s rows share a common component (covariance 11ᵀ + ε₁I): the
	// entries of one row are strongly correlated.
	o = DefaultReversing(0.5)
	o.N, o.D = 200, 50
	r, err := AlignmentReversingData(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	g := gramOf(r.X[:100*50], 100, 50)
	var diag, off float64
	for i := 0; i < 50; i++ {
		for j := 0; j < 50; j++ {
			if i == j {
				diag += g[i*50+j]
			} else {
				off += g[i*50+j]
			}
		}
	}
	diag, off = diag/50/100, off/(50*49)/100
	if math.Abs(diag-1.5) > 0.4 || math.Abs(off-1) > 0.4 {
		t.Fatalf("X₁ covariance: diagonal %.3f (want ≈ 1.5), off-diagonal %.3f (want ≈ 1)", diag, off)
	}
}

func TestReversingBadInput(t *testing.T) {
	good := ReversingOptions{N: 20, D: 4, Balance: 0.5, Eps1: 0.5, Eps2: 0.01}
	for _, c := range []struct {
		edit func(*ReversingOptions)
		want string
	}{
		{func(o *ReversingOptions) { o.Balance = 0 }, "(0, 1]"},
		{func(o *ReversingOptions) { o.Balance = 1.5 }, "(0, 1]"},
		{func(o *ReversingOptions) { o.Balance = math.NaN() }, "(0, 1]"},
		{func(o *ReversingOptions) { o.Balance = 0.01 }, "no row of the first subset"},
		{func(o *ReversingOptions) { o.N = 1 }, "n ≥ 2"},
		{func(o *ReversingOptions) { o.D = 0 }, "d ≥ 1"},
		{func(o *ReversingOptions) { o.N, o.D = 1<<15, 1<<14 }, "too large"},
		{func(o *ReversingOptions) { o.Eps1 = 0 }, "ε₁"},
		{func(o *ReversingOptions) { o.Eps2 = -1 }, "ε₂"},
	} {
		o := good
		c.edit(&o)
		_, err := AlignmentReversingData(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", o, err, c.want)
		}
	}
	// γ = 1: no second subset, still valid.
	o := good
	o.Balance = 1
	r, err := AlignmentReversingData(context.Background(), o)
	if err != nil || r.N1 != 20 || r.Paired != 0 {
		t.Fatalf("γ = 1: %v, n1 %v", err, r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := AlignmentReversingData(ctx, good); err == nil {
		t.Fatal("a cancelled context did not stop the draw")
	}
}
