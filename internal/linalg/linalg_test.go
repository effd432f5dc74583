package linalg

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

func naiveGemm(tA, tB bool, m, n, k int, a []float64, lda int, b []float64, ldb int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := 0.0
			for p := 0; p < k; p++ {
				ia, ib := i*lda+p, p*ldb+j
				if tA {
					ia = p*lda + i
				}
				if tB {
					ib = j*ldb + p
				}
				av, bv := a[ia], b[ib]
				s += av * bv
			}
			c[i*n+j] = s
		}
	}
	return c
}

func TestGemmMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		tA, tB  bool
		m, n, k int
	}{{false, false, 7, 5, 3}, {true, false, 4, 9, 6}, {false, true, 33, 17, 11}, {true, true, 65, 70, 40}} {
		a := testutil.Randn(r, tc.m*tc.k)
		b := testutil.Randn(r, tc.k*tc.n)
		lda, ldb := tc.k, tc.n
		if tc.tA {
			lda = tc.m
		}
		if tc.tB {
			ldb = tc.k
		}
		want := naiveGemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, a, lda, b, ldb)
		c := make([]float64, tc.m*tc.n)
		for i := range c {
			c[i] = 1
		}
		// C = 2·AB − 1·C: checks alpha and beta too.
		Gemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 2, a, lda, b, ldb, -1, c, tc.n)
		for i := range c {
			if d := math.Abs(c[i] - (2*want[i] - 1)); d > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("%+v: entry %d = %v, want %v", tc, i, c[i], 2*want[i]-1)
			}
		}
		// float32 path, looser tolerance (24-bit mantissa, k ≤ 40 terms).
		a32, b32, c32 := to32(a), to32(b), make([]float32, tc.m*tc.n)
		Gemm(tc.tA, tc.tB, tc.m, tc.n, tc.k, 1, a32, lda, b32, ldb, 0, c32, tc.n)
		for i := range c32 {
			if d := math.Abs(float64(c32[i]) - want[i]); d > 1e-4*(1+math.Abs(want[i])) {
				t.Fatalf("float32 %+v: entry %d = %v, want %v", tc, i, c32[i], want[i])
			}
		}
	}
}

func to32(x []float64) []float32 {
	y := make([]float32, len(x))
	for i, v := range x {
		y[i] = float32(v)
	}
	return y
}

// spd returns a well-conditioned n×n SPD matrix A = BBᵀ/k + I.
func spd(r *rand.Rand, n int) []float64 {
	k := n + 5
	b := testutil.Randn(r, n*k)
	a := naiveGemm(false, true, n, n, k, b, k, b, k)
	for i := range a {
		a[i] /= float64(k)
	}
	for i := 0; i < n; i++ {
		a[i*n+i]++
	}
	return a
}

func TestSyrkLower(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n, k := 300, 13 // more than one 256-row band in the pure-Go build
	a := testutil.Randn(r, n*k)
	want := naiveGemm(false, true, n, n, k, a, k, a, k)
	c := make([]float64, n*n)
	SyrkLower(n, k, 1, a, k, 0, c, n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			if d := math.Abs(c[i*n+j] - want[i*n+j]); d > 1e-12*(1+math.Abs(want[i*n+j])) {
				t.Fatalf("(%d,%d) = %v want %v", i, j, c[i*n+j], want[i*n+j])
			}
		}
	}
}

func TestSyrkLowerTrans(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	n, k := 300, 13 // more than one 256-row band in the pure-Go build
	a := testutil.Randn(r, k*n)
	want := naiveGemm(true, false, n, n, k, a, n, a, n)
	c := testutil.Randn(r, n*n) // beta = 1 accumulates onto it
	c0 := append([]float64(nil), c...)
	SyrkLowerTrans(n, k, 2, a, n, 1, c, n)
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			w := c0[i*n+j] + 2*want[i*n+j]
			if d := math.Abs(c[i*n+j] - w); d > 1e-12*(1+math.Abs(w)) {
				t.Fatalf("(%d,%d) = %v want %v", i, j, c[i*n+j], w)
			}
		}
	}
}

func TestCholeskySolve(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 127, 129, 300, triFewMin + 300} {
		a := spd(r, n)
		orig := append([]float64(nil), a...)
		nrhs := 3
		x := testutil.Randn(r, n*nrhs)
		b := naiveGemm(false, false, n, nrhs, n, orig, n, x, nrhs)
		if bad := Cholesky(n, a, n); bad != -1 {
			t.Fatalf("n=%d: SPD matrix reported not positive definite at %d", n, bad)
		}
		CholSolve(n, nrhs, a, n, b, nrhs)
		// cond(A) is small (eigenvalues in [1, ~5]): 1e-10 leaves ample room.
		for i := range b {
			if d := math.Abs(b[i] - x[i]); d > 1e-10*(1+math.Abs(x[i])) {
				t.Fatalf("n=%d: x[%d] = %v want %v", n, i, b[i], x[i])
			}
		}
		a32 := to32(orig)
		if bad := Cholesky(n, a32, n); bad != -1 {
			t.Fatalf("float32 n=%d: not PD at %d", n, bad)
		}
		b32 := to32(naiveGemm(false, false, n, nrhs, n, orig, n, x, nrhs))
		CholSolve(n, nrhs, a32, n, b32, nrhs)
		for i := range b32 {
			if d := math.Abs(float64(b32[i]) - x[i]); d > 1e-3*(1+math.Abs(x[i])) {
				t.Fatalf("float32 n=%d: x[%d] = %v want %v", n, i, b32[i], x[i])
			}
		}
	}
}

// TriSolve must invert the lower factor and its transpose alone, reading
// nothing above the diagonal (filled with garbage here), with leading
// dimensions wider than n and nrhs, on both of its paths: triSolveFew (n ≥
// triFewMin, few columns, several blocks and a partial last one) and the
// backend's trsm; in float32 too.
func TestTriSolve(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, n := range []int{1, 5, 130, triFewMin + 2*triBlock + 7} {
		ld := n + 3
		l := testutil.Randn(r, n*ld)
		lower := make([]float64, n*n) // clean copy for the reference product
		for i := 0; i < n; i++ {
			for j := 0; j <= i; j++ {
				// Off-diagonal entries of size 1/n, diagonal ≥ 2: a
				// well-conditioned factor (random unit ones are not).
				v := l[i*ld+j] / float64(n)
				if i == j {
					v = 2 + math.Abs(v)
				}
				l[i*ld+j], lower[i*n+j] = v, v
			}
		}
		l32 := to32(l)
		for _, nrhs := range []int{1, 2, triFewCols + 1} {
			x := testutil.Randn(r, n*nrhs)
			ldb := nrhs + 1
			for _, trans := range []bool{false, true} {
				prod := naiveGemm(trans, false, n, nrhs, n, lower, n, x, nrhs)
				b := make([]float64, n*ldb)
				for i := 0; i < n; i++ {
					copy(b[i*ldb:], prod[i*nrhs:(i+1)*nrhs])
					b[i*ldb+nrhs] = 7 // outside B: must stay
				}
				b32 := to32(b)
				TriSolve(trans, n, nrhs, l, ld, b, ldb)
				TriSolve(trans, n, nrhs, l32, ld, b32, ldb)
				for i := 0; i < n; i++ {
					if b[i*ldb+nrhs] != 7 || b32[i*ldb+nrhs] != 7 {
						t.Fatalf("n=%d nrhs=%d trans=%v: row %d's padding overwritten", n, nrhs, trans, i)
					}
					for k := 0; k < nrhs; k++ {
						want := x[i*nrhs+k]
						// Well conditioned: substitution loses a few ulps;
						// 1e-9 is ample (1e-3 in float32).
						if d := math.Abs(b[i*ldb+k] - want); d > 1e-9*(1+math.Abs(want)) {
							t.Fatalf("n=%d nrhs=%d trans=%v: x[%d,%d] = %v want %v", n, nrhs, trans, i, k, b[i*ldb+k], want)
						}
						if d := math.Abs(float64(b32[i*ldb+k]) - want); d > 1e-3*(1+math.Abs(want)) {
							t.Fatalf("float32 n=%d nrhs=%d trans=%v: x[%d,%d] = %v want %v", n, nrhs, trans, i, k, b32[i*ldb+k], want)
						}
					}
				}
			}
		}
	}
}

func TestCholeskyReportsIndefinite(t *testing.T) {
	n := 200
	a := spd(rand.New(rand.NewPCG(7, 8)), n)
	a[150*n+150] = -5 // breaks positive definiteness at or before row 150
	bad := Cholesky(n, a, n)
	if bad < 0 || bad > 150 {
		t.Fatalf("Cholesky returned %d, want a failing pivot in [0,150]", bad)
	}
}

func TestRadialMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	na, nb, d := 37, 53, 6
	xa, xb := testutil.Randn(r, na*d), testutil.Randn(r, nb*d)
	copy(xb[:d], xa[:d]) // an exact duplicate: s = 0 must give K = 1 and coef = 0
	norm := func(x []float64, n int) []float64 {
		out := make([]float64, n)
		for i := 0; i < n; i++ {
			for p := 0; p < d; p++ {
				out[i] += x[i*d+p] * x[i*d+p]
			}
		}
		return out
	}
	nA, nB := norm(xa, na), norm(xb, nb)
	gram := naiveGemm(false, true, na, nb, d, xa, d, xb, d)
	for _, op := range []RadialOp{{C: 0.1, P: 0.5, Tiny: 1e-20}, {C: 0.3, P: 1, Tiny: 1e-20}, {C: 0.05, P: 0.75, Tiny: 1e-20}} {
		for _, coef := range []bool{false, true} {
			g := append([]float64(nil), gram...)
			blk := Block[float64]{G: g, Rows: na, Cols: nb, LD: nb, NA: nA, NB: nB}
			if coef {
				RadialCoef(blk, op)
			} else {
				RadialEval(blk, op)
			}
			for i := 0; i < na; i++ {
				for j := 0; j < nb; j++ {
					var dist2 float64
					for p := 0; p < d; p++ {
						v := xa[i*d+p] - xb[j*d+p]
						dist2 += v * v
					}
					phi := math.Exp(-op.C * math.Pow(dist2, op.P))
					want := phi
					if coef {
						want = 0
						if dist2 > 1e-12 {
							want = 2 * op.C * op.P * math.Pow(dist2, op.P-1) * phi
						}
					}
					// The GEMM expansion loses about eps·(|a|²+|b|²) in s;
					// 1e-12 relative leaves room for that and a few ulp of exp/log.
					if dd := math.Abs(g[i*nb+j] - want); dd > 1e-12*(1+math.Abs(want)) && !(i == 0 && j == 0 && coef) {
						t.Fatalf("op %+v coef=%v (%d,%d): got %v want %v", op, coef, i, j, g[i*nb+j], want)
					}
				}
			}
			if coef && g[0] != 0 {
				t.Fatalf("op %+v: coefficient at a duplicate point = %v, want 0", op, g[0])
			}
			if !coef && math.Abs(g[0]-1) > 1e-12 {
				t.Fatalf("op %+v: kernel at a duplicate point = %v, want 1", op, g[0])
			}
		}
	}
}

func TestRadialLowerTriangleOnly(t *testing.T) {
	n := 9
	g := make([]float64, n*n)
	for i := range g {
		g[i] = -7 // sentinel
	}
	norms := make([]float64, n)
	blk := Block[float64]{G: g[3*n:], Rows: 4, Cols: n, LD: n, NA: norms[3:], NB: norms, Lower: true, Row0: 3}
	RadialEval(blk, RadialOp{C: 1, P: 0.5})
	for i := 3; i < 7; i++ {
		for j := 0; j < n; j++ {
			v := g[i*n+j]
			if j <= i && v == -7 {
				t.Fatalf("(%d,%d) not computed", i, j)
			}
			if j > i && v != -7 {
				t.Fatalf("(%d,%d) above the diagonal was written", i, j)
			}
		}
	}
}

func TestExpRangeAndUnderflow(t *testing.T) {
	// One row of inner products chosen so that s covers [0, 2e6]: exp(−sqrt(s))
	// reaches far below the flush threshold; relative error must stay ≤ 4e-15.
	n := 4000
	g := make([]float64, n)
	nb := make([]float64, n)
	for j := range nb {
		nb[j] = float64(j) * float64(j) * 0.125
	}
	RadialEval(Block[float64]{G: g, Rows: 1, Cols: n, LD: n, NA: []float64{0}, NB: nb}, RadialOp{C: 1, P: 0.5})
	for j, v := range g {
		want := math.Exp(-math.Sqrt(nb[j]))
		if want < 1e-300 {
			if v > 1e-300 || v < 0 {
				t.Fatalf("j=%d: underflow region gave %v", j, v)
			}
			continue
		}
		if math.Abs(v-want) > 4e-15*want {
			t.Fatalf("j=%d: exp(-%v) = %v want %v (rel %v)", j, math.Sqrt(nb[j]), v, want, math.Abs(v-want)/want)
		}
	}
}

// EigSym reads the lower triangle only, leaves it untouched, and returns
// ascending eigenvalues with orthonormal eigenvector columns: A·V = V·Λ to
// 1e-12 relative to ‖A‖ (backward-stable solvers; d ≤ 60).
func TestEigSym(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, d := range []int{1, 2, 7, 60} {
		b := testutil.Randn(r, d*d)
		a := make([]float64, d*d) // symmetric, upper triangle garbage
		for i := 0; i < d; i++ {
			for j := 0; j <= i; j++ {
				a[i*d+j] = b[i*d+j] + b[j*d+i]
			}
			for j := i + 1; j < d; j++ {
				a[i*d+j] = 1e6
			}
		}
		keep := append([]float64(nil), a...)
		vals, vecs, ok := EigSym(d, a)
		if !ok {
			t.Fatalf("d=%d: did not converge", d)
		}
		for i := range a {
			if a[i] != keep[i] {
				t.Fatalf("d=%d: input modified at %d", d, i)
			}
		}
		sym := func(i, j int) float64 {
			if j > i {
				i, j = j, i
			}
			return a[i*d+j]
		}
		norm := 0.0
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				norm = math.Max(norm, math.Abs(sym(i, j)))
			}
		}
		for k := 0; k < d; k++ {
			if k > 0 && vals[k] < vals[k-1] {
				t.Fatalf("d=%d: eigenvalues not ascending: %v", d, vals)
			}
			for i := 0; i < d; i++ {
				av := 0.0
				for j := 0; j < d; j++ {
					av += sym(i, j) * vecs[j*d+k]
				}
				if e := math.Abs(av - vals[k]*vecs[i*d+k]); e > 1e-12*float64(d)*norm {
					t.Fatalf("d=%d: (A·v_%d)_%d off by %g", d, k, i, e)
				}
			}
			for l := 0; l <= k; l++ {
				dot := 0.0
				for i := 0; i < d; i++ {
					dot += vecs[i*d+k] * vecs[i*d+l]
				}
				want := 0.0
				if k == l {
					want = 1
				}
				if math.Abs(dot-want) > 1e-12 {
					t.Fatalf("d=%d: v_%d·v_%d = %v, want %v", d, k, l, dot, want)
				}
			}
		}
	}
}

// ExpNegPow agrees with math.Exp(−c·s^p) to a few ulps of the exponent for the exponent
// cases the lp-laplace kernel takes (½ and 1 without a power, others with
// one), from s = 0 (exactly 1) into the underflow region (0, not garbage).
func TestExpNegPow(t *testing.T) {
	for _, p := range []float64{1, 0.5, 0.8 / 1.4, 1.5, 2} {
		for _, c := range []float64{0.25, 3} {
			x := make([]float64, 3000)
			for j := range x {
				x[j] = float64(j) * float64(j) * 1e-3
			}
			x[1] = 1e-310 // subnormal sum: treated as 0 by the power case
			in := append([]float64(nil), x...)
			ExpNegPow(x, c, p)
			if x[0] != 1 {
				t.Fatalf("p=%v c=%v: exp(0) = %v", p, c, x[0])
			}
			for j := 2; j < len(x); j++ {
				arg := c * math.Pow(in[j], p)
				want := math.Exp(-arg)
				if want < 1e-300 {
					if x[j] < 0 || x[j] > 1e-300 {
						t.Fatalf("p=%v c=%v s=%v: underflow gave %v", p, c, in[j], x[j])
					}
					continue
				}
				// A relative error e of s^p moves the value by arg·e.
				if math.Abs(x[j]-want) > 4e-15*(1+arg)*want {
					t.Fatalf("p=%v c=%v s=%v: %v, want %v (rel %.2g)", p, c, in[j], x[j], want, math.Abs(x[j]-want)/want)
				}
			}
		}
	}
}

// LpSums and LpSumsPhi match the coordinate-ordered sum of LpTerm for
// points stored transposed with a stride, in both precisions, for the
// powers with their own code and one through a power function; equal
// coordinates add 0; LpSumsPhi's factors match LpPhiOf (0 at equal
// coordinates).
func TestLpSums(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	d, n, ld := 7, 37, 41
	a := testutil.Randn(r, d)
	bt := testutil.Randn(r, d*ld)
	bt[2*ld+5] = a[2] // a zero difference
	a32, bt32 := make([]float32, d), make([]float32, d*ld)
	for i, v := range a {
		a32[i] = float32(v)
	}
	for i, v := range bt {
		bt32[i] = float32(v)
	}
	for _, p := range []float64{1, 2, 0.5, 1.5, 1.3} {
		got, got32 := make([]float64, n+1), make([]float64, n+1)
		got[n], got32[n] = -1, -1 // past n: untouched
		LpSums(a, bt, ld, n, p, got)
		LpSums(a32, bt32, ld, n, p, got32)
		for j := 0; j < n; j++ {
			var want, want32 float64
			for k := 0; k < d; k++ {
				want += LpTerm(a[k]-bt[k*ld+j], p)
				want32 += LpTerm(float64(a32[k])-float64(bt32[k*ld+j]), p)
			}
			if math.Abs(got[j]-want) > 1e-14*want || math.Abs(got32[j]-want32) > 1e-14*want32 {
				t.Fatalf("p=%v j=%d: %v and %v (float32), want %v and %v", p, j, got[j], got32[j], want, want32)
			}
		}
		if got[n] != -1 || got32[n] != -1 {
			t.Fatalf("p=%v: wrote past n", p)
		}
		sums, phi := make([]float64, n), make([]float64, d*n)
		LpSumsPhi(a, bt, ld, n, p, 1e-10, sums, phi)
		for j := 0; j < n; j++ {
			if math.Abs(sums[j]-got[j]) > 1e-14*got[j] {
				t.Fatalf("p=%v j=%d: LpSumsPhi sum %v, LpSums %v", p, j, sums[j], got[j])
			}
			for k := 0; k < d; k++ {
				want := LpPhiOf(a[k]-bt[k*ld+j], p, 1e-10)
				if math.Abs(phi[k*n+j]-want) > 1e-14*math.Abs(want) {
					t.Fatalf("p=%v j=%d t=%d: factor %v, want %v", p, j, k, phi[k*n+j], want)
				}
			}
		}
		if phi[2*n+5] != 0 {
			t.Fatalf("p=%v: factor at an equal coordinate %v", p, phi[2*n+5])
		}
	}
}
