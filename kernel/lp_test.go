package kernel

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

// The lp-laplace value: p = q = 1 is the product of one-dimensional Laplace
// kernels, p = 2 the gen-laplace kernel, and the general form
// exp(−(Σ|v_i|^p)^(q/p)/L^q) by hand.
func TestLpValue(t *testing.T) {
	a, b := []float64{0.3, -1.2, 2}, []float64{1, 0.4, 1.5}
	prod := 1.0
	for i := range a {
		prod *= math.Exp(-math.Abs(a[i]-b[i]) / 2)
	}
	if got := (Spec{Kind: LpLaplace, Bandwidth: 2, Power: 1, Exponent: 1}).LpValue(a, b); math.Abs(got-prod) > 1e-15 {
		t.Fatalf("product Laplace %v, want %v", got, prod)
	}
	sq := 0.0
	for i := range a {
		sq += (a[i] - b[i]) * (a[i] - b[i])
	}
	gl := Spec{Kind: GenLaplace, Bandwidth: 1.7, Exponent: 1.3}.Value(sq)
	if got := (Spec{Kind: LpLaplace, Bandwidth: 1.7, Power: 2, Exponent: 1.3}).LpValue(a, b); math.Abs(got-gl) > 1e-15 {
		t.Fatalf("p = 2: %v, gen-laplace %v", got, gl)
	}
	s := 0.0
	for i := range a {
		s += math.Pow(math.Abs(a[i]-b[i]), 1.6)
	}
	want := math.Exp(-math.Pow(s, 0.7/1.6) / math.Pow(3, 0.7))
	if got := (Spec{Kind: LpLaplace, Bandwidth: 3, Power: 1.6, Exponent: 0.7}).LpValue(a, b); math.Abs(got-want) > 1e-15 {
		t.Fatalf("p = 1.6, q = 0.7: %v, want %v", got, want)
	}
	// The powers computed without Pow agree with it.
	for _, pq := range [][2]float64{{0.5, 0.5}, {1.5, 1.2}, {1.5, 1.5}} {
		s := 0.0
		for i := range a {
			s += math.Pow(math.Abs(a[i]-b[i]), pq[0])
		}
		want := math.Exp(-math.Pow(s, pq[1]/pq[0]) / math.Pow(2.5, pq[1]))
		if got := (Spec{Kind: LpLaplace, Bandwidth: 2.5, Power: pq[0], Exponent: pq[1]}).LpValue(a, b); math.Abs(got-want) > 1e-14*want {
			t.Fatalf("p = %v, q = %v: %v, want %v", pq[0], pq[1], got, want)
		}
	}
	for _, bad := range []Spec{{Kind: LpLaplace, Bandwidth: 1, Power: 0, Exponent: 1}, {Kind: LpLaplace, Bandwidth: 1, Power: 2.5, Exponent: 1},
		{Kind: LpLaplace, Bandwidth: 1, Power: 1, Exponent: 0}, {Kind: LpLaplace, Bandwidth: 0, Power: 1, Exponent: 1},
		{Kind: LpLaplace, Bandwidth: 1, Power: 1, Exponent: 1.5}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// Blocks of the pairwise kernel (Symmetric in both precisions, Cross,
// Apply and SymApply, with tiles that cut through the block) hold the
// pair-by-pair values.
func TestLpBlocks(t *testing.T) {
	smallTiles(t)
	r := rand.New(rand.NewPCG(7, 8))
	n, d, k := 150, 5, 2
	z := testutil.Randn(r, n*d)
	for _, s := range []Spec{{Kind: LpLaplace, Bandwidth: 2, Power: 1, Exponent: 1}, {Kind: LpLaplace, Bandwidth: 3, Power: 1.4, Exponent: 0.8}} {
		sym, full := symmetricVsCross(t, s, z, n, d, 1e-5)
		for i := 0; i < n; i++ {
			if sym[i*n+i] != 1 {
				t.Fatalf("%s diagonal %d = %v", s, i, sym[i*n+i])
			}
			for j := 0; j < n; j++ {
				want := s.LpValue(z[i*d:i*d+d], z[j*d:j*d+d])
				if math.Abs(full[i*n+j]-want) > 1e-15 {
					t.Fatalf("%s (%d,%d): %v, want %v", s, i, j, full[i*n+j], want)
				}
			}
		}
		alpha := testutil.Randn(r, n*k)
		checkSymApply(t, s, NewPoints(z, n, d), alpha, k, func(float64) float64 { return 1e-12 })
		got, err := Apply(context.Background(), s, NewPoints(z[:7*d], 7, d), NewPoints(z, n, d), alpha, k)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 7; i++ {
			for o := 0; o < k; o++ {
				want := 0.0
				for j := 0; j < n; j++ {
					want += full[i*n+j] * alpha[j*k+o]
				}
				if math.Abs(got[i*k+o]-want) > 1e-12 {
					t.Fatalf("%s Apply (%d,%d): %v, want %v", s, i, o, got[i*k+o], want)
				}
			}
		}
	}
}

// The gradients of the powers computed without Pow (p = ½, 3/2) equal the
// general formula's (reached with p a hair away, 1e-12, which moves the
// values by about that much).
func TestLpGradientFastPowers(t *testing.T) {
	d, n, c := 6, 15, 2
	r, b, alpha := testutil.RandFit(2, 9, n, d, c)
	a := testutil.Randn(r, d)
	pts := NewPoints(b, n, d)
	for _, pq := range [][2]float64{{0.5, 0.5}, {1.5, 0.8}, {1.5, 1.5}} {
		g1, g2 := make([]float64, c*d), make([]float64, c*d)
		q := NewPoints(a, 1, d)
		LpGradients(Spec{Kind: LpLaplace, Bandwidth: 2, Power: pq[0], Exponent: pq[1]}, q, pts, alpha, c, g1)
		LpGradients(Spec{Kind: LpLaplace, Bandwidth: 2, Power: pq[0] + 1e-12, Exponent: pq[1]}, q, pts, alpha, c, g2)
		for i := range g1 {
			if math.Abs(g1[i]-g2[i]) > 1e-9*(1+math.Abs(g2[i])) {
				t.Fatalf("p = %v, q = %v: gradient %d is %v, the general formula gives %v", pq[0], pq[1], i, g1[i], g2[i])
			}
		}
	}
}

// LpGradients over several centre tiles (1 100 centres: 512 + 512 + 76)
// equals the formula summed pair by pair, drops the pair where the query
// is a centre and the coordinates where it equals one, and gives a query
// the same bits alone as with others.
func TestLpGradientsTiles(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	n, d, c, nq := 1100, 5, 2, 4
	b := testutil.Randn(r, n*d)
	alpha := testutil.Randn(r, n*c)
	a := testutil.Randn(r, nq*d)
	copy(a[d:2*d], b[700*d:701*d]) // query 1 is centre 700
	a[2*d+3] = b[20*d+3]           // query 2 shares a coordinate with centre 20
	pts, qs := NewPoints(b, n, d), NewPoints(a, nq, d)
	for _, pq := range [][2]float64{{1, 1}, {0.5, 0.5}, {1.5, 0.8}, {2, 1}, {1.3, 0.7}} {
		s := Spec{Kind: LpLaplace, Bandwidth: 2, Power: pq[0], Exponent: pq[1]}
		g := make([]float64, nq*c*d)
		LpGradients(s, qs, pts, alpha, c, g)
		for i := range nq {
			ai := a[i*d : i*d+d]
			want := make([]float64, c*d)
			for j := range n {
				bj := b[j*d : j*d+d]
				sum := 0.0
				for t := range d {
					sum += math.Pow(math.Abs(ai[t]-bj[t]), pq[0])
				}
				if sum < lpTiny {
					continue
				}
				coef := -s.LpValue(ai, bj) * pq[1] * math.Pow(2, -pq[1]) * math.Pow(sum, pq[1]/pq[0]-1)
				for t := range d {
					v := ai[t] - bj[t]
					if math.Abs(v) < lpTiny {
						continue
					}
					w := coef * math.Copysign(math.Pow(math.Abs(v), pq[0]-1), v)
					for o := range c {
						want[o*d+t] += alpha[j*c+o] * w
					}
				}
			}
			got := g[i*c*d : (i+1)*c*d]
			for x := range want {
				if math.Abs(got[x]-want[x]) > 1e-11*(1+math.Abs(want[x])) {
					t.Fatalf("p=%v q=%v query %d entry %d: %v, want %v", pq[0], pq[1], i, x, got[x], want[x])
				}
			}
			alone := make([]float64, c*d)
			LpGradients(s, qs.Slice(i, i+1), pts, alpha, c, alone)
			for x := range alone {
				if alone[x] != got[x] {
					t.Fatalf("p=%v q=%v query %d entry %d: %v alone, %v with the others", pq[0], pq[1], i, x, alone[x], got[x])
				}
			}
		}
	}
}
