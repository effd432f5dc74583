package nfa

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/nn"
)

func randSym(d int, r *rand.Rand, shift float64) []float64 {
	// XᵀX + shift·I of a random d×d X: symmetric positive semidefinite.
	g := make([]float64, d*d)
	x := make([]float64, d*d)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				g[i*d+j] += x[k*d+i] * x[k*d+j]
			}
		}
		g[i*d+i] += shift
	}
	return g
}

func mul(a, b []float64, d int) []float64 {
	c := make([]float64, d*d)
	linalg.Gemm(false, false, d, d, d, 1, a, d, b, d, 0, c, d)
	return c
}

// TestPredictedScalar: with A = αI, B = βI the centred parts vanish and
// the prediction is tr(R³)/√(tr(R²)tr(R⁴)) whatever α, β.
func TestPredictedScalar(t *testing.T) {
	d := 3
	a, b := make([]float64, 9), make([]float64, 9)
	for i := 0; i < d; i++ {
		a[i*d+i], b[i*d+i] = 2, 5
	}
	got, err := PredictedCNFA(a, b, d, RMoments{1, 2, 5, 16})
	if err != nil {
		t.Fatal(err)
	}
	if want := 5 / math.Sqrt(32); math.Abs(got-want) > 1e-12 {
		t.Fatalf("predicted %v, want 5/√32 = %v", got, want)
	}
}

// TestPredictedIdentityR: with R = I (every moment 1) the free formula is
// exact: ρ(A, CBC) with C² = A, i.e. tr(A²B)/√(tr(A²)·tr(ABAB)) for
// A = C². This pins every term of equations 20, 22 and 28 (the last one
// as corrected).
func TestPredictedIdentityR(t *testing.T) {
	d := 5
	r := rand.New(rand.NewPCG(1, 2))
	c := randSym(d, r, 0)
	b := randSym(d, r, 1)
	a := mul(c, c, d)
	got, err := PredictedCNFA(a, b, d, RMoments{1, 1, 1, 1})
	if err != nil {
		t.Fatal(err)
	}
	cbc := mul(mul(c, b, d), c, d)
	want := nn.Cosine(a, cbc)
	if math.Abs(got-want) > 1e-10 {
		t.Fatalf("predicted %v, exact %v", got, want)
	}
}

// TestObservedMatchesAlgebra: the network's gradient-flow measurement
// equals ρ(CRC, CRBRC) with R = Wᵀdiag(a²)W (the paper's eq. 4).
func TestObservedMatchesAlgebra(t *testing.T) {
	d, k := 4, 6
	r := rand.New(rand.NewPCG(3, 4))
	c := randSym(d, r, 0)
	b := randSym(d, r, 0.5)
	q := newQuadNet(k, d, 9)
	rr := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			for s := 0; s < k; s++ {
				rr[i*d+j] += q.g[s*d+i] * q.g[s*d+j]
			}
		}
	}
	crc := mul(mul(c, rr, d), c, d)
	crbrc := mul(mul(mul(mul(c, rr, d), b, d), rr, d), c, d)
	want := nn.Cosine(crc, crbrc)
	if got := q.observed(c, b); math.Abs(got-want) > 1e-10 {
		t.Fatalf("observed %v, want %v", got, want)
	}
	m := q.moments()
	var tr1, tr2 float64
	for i := 0; i < d; i++ {
		tr1 += rr[i*d+i]
	}
	r2 := mul(rr, rr, d)
	for i := 0; i < d; i++ {
		tr2 += r2[i*d+i]
	}
	if math.Abs(m[0]-tr1/float64(d)) > 1e-12 || math.Abs(m[1]-tr2/float64(d)) > 1e-12 {
		t.Fatalf("moments %v, want tr(R)/d %v and tr(R²)/d %v", m, tr1/4, tr2/4)
	}
}

// TestReversingSmall runs a tiny sweep: the shapes of the result, the
// seeding and that predictions and observations are correlations.
func TestReversingSmall(t *testing.T) {
	o := ReversingOptions{N: 48, D: 24, Width: 24, Balances: []float64{0.25, 1}, DataSeeds: 2, NetSeeds: 3, Eps1: 0.5, Eps2: 0.01, Seed: 1}
	var seen int
	o.Progress = func(ReversingPoint) { seen++ }
	res, err := AlignmentReversing(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Points) != 4 || len(res.Summary) != 2 || seen != 4 {
		t.Fatalf("%d points, %d summaries, %d progress calls", len(res.Points), len(res.Summary), seen)
	}
	for _, p := range res.Points {
		t.Logf("γ %.2f seed %d: predicted %.3f observed %.3f ± %.3f", p.Balance, p.DataSeed, p.Predicted, p.Observed, p.ObsStd)
		if !(p.Predicted > 0 && p.Predicted <= 1+1e-9 && p.Observed > 0 && p.Observed <= 1+1e-9) {
			t.Fatalf("point %+v: correlations out of (0, 1]", p)
		}
	}
	again, err := AlignmentReversing(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if again.Points[3] != res.Points[3] {
		t.Fatalf("same seeds, different results: %+v vs %+v", again.Points[3], res.Points[3])
	}
	dir := t.TempDir()
	if err := WriteReversing(context.Background(), dir, res); err != nil {
		t.Fatal(err)
	}
}

func TestReversingBadInput(t *testing.T) {
	good := ReversingOptions{N: 20, D: 4, Width: 4, Balances: []float64{0.5}, DataSeeds: 1, NetSeeds: 1, Eps1: 0.5, Eps2: 0.01}
	for _, c := range []struct {
		edit func(*ReversingOptions)
		want string
	}{
		{func(o *ReversingOptions) { o.Balances = nil }, "no balance"},
		{func(o *ReversingOptions) { o.Balances = []float64{0.5, 1.2} }, "(0, 1]"},
		{func(o *ReversingOptions) { o.NetSeeds = 0 }, "network seed"},
		{func(o *ReversingOptions) { o.Width = 0 }, "width"},
		{func(o *ReversingOptions) { o.N = 1 }, "n ≥ 2"},
	} {
		o := good
		c.edit(&o)
		_, err := AlignmentReversing(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one mentioning %q", err, c.want)
		}
	}
	if _, err := PredictedCNFA(make([]float64, 4), make([]float64, 9), 2, RMoments{1, 1, 1, 1}); err == nil {
		t.Error("mismatched matrices accepted")
	}
}
