package complete

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestKappaReLUValues(t *testing.T) {
	// SPEC §6 test vectors (the NTK on unit vectors).
	cases := []struct {
		depth   int
		xi, val float64
	}{
		{1, 1, 2}, {1, 0, 0.3183099}, {1, 0.5, 0.9423311},
		{2, 0, 0.6857086}, {2, 0.5, 1.3514796},
		{5, 0, 1.7921960}, {5, 0.5, 2.4628931}, {5, 1, 6},
	}
	relu := Activation{Name: "relu"}
	for _, c := range cases {
		k, err := relu.Kappa(c.depth)
		if err != nil {
			t.Fatal(err)
		}
		if got := k(c.xi); math.Abs(got-c.val) > 1e-6 {
			t.Errorf("depth %d: κ(%v) = %.7f, want %.7f", c.depth, c.xi, got, c.val)
		}
	}
}

// The leaky family's own duals at slope 0 must reproduce package kernel's
// ReLU NTK (an independent formula), and the linear network gives
// κ_d(ξ) = (d + 1)ξ.
func TestKappaLeakyFamily(t *testing.T) {
	relu := Activation{Name: "relu"}
	leaky0 := Activation{Name: "leaky-relu", Slope: 0}
	lin, _ := ParseActivation("linear", 0)
	for d := 1; d <= 5; d++ {
		k, _ := relu.Kappa(d)
		kl, _ := lin.Kappa(d)
		for _, xi := range []float64{-1, -0.7, -0.2, 0, 0.3, 0.9, 1} {
			if got, want := leaky0.kappaDuals(d, xi), k(xi); math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
				t.Errorf("depth %d ξ %v: leaky duals at slope 0 give %v, kernel's ReLU NTK %v", d, xi, got, want)
			}
			if got, want := kl(xi), float64(d+1)*xi; math.Abs(got-want) > 1e-12 {
				t.Errorf("linear depth %d: κ(%v) = %v, want %v", d, xi, got, want)
			}
		}
	}
	// Normalization: φ̌(1) = 1, so κ_d(1) = d + 1 for every slope.
	for _, s := range []float64{-1, -0.3, 0.1, 0.5, 2} {
		a := Activation{Name: "leaky-relu", Slope: s}
		for d := 1; d <= 3; d++ {
			k, _ := a.Kappa(d)
			if got := k(1); math.Abs(got-float64(d+1)) > 1e-12 {
				t.Errorf("slope %v depth %d: κ(1) = %v, want %d", s, d, got, d+1)
			}
		}
	}
}

// Proposition 8 (SI appendix D): with the one-hot prior and the depth-1
// ReLU NTK, the prediction of a missing cell is a constant multiple of the
// row's observed mean, c = ℓ/(ℓ + 2π − 1) for ℓ observed cells. Checked on
// rows with different ℓ, scattered cells and an entirely missing column,
// against the solve itself.
func TestOneHotIsScaledRowMean(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	m, n := 6, 9
	y := NewMatrix(m, n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			y.Values[i*n+j] = r.NormFloat64() + 3
			y.Observed[i*n+j] = j != 4 && r.Float64() < 0.7 // column 4 entirely missing
		}
		y.Observed[i*n] = true
	}
	res, err := Complete(context.Background(), y, OneHot(n), Options{Depth: 1})
	if err != nil {
		t.Fatal(err)
	}
	means, _ := rowMeans(y)
	for i := 0; i < m; i++ {
		ell := 0
		for j := 0; j < n; j++ {
			if y.Observed[i*n+j] {
				ell++
			}
		}
		c, _ := OneHotConstant(ell, 1, Activation{}, 0)
		if want := float64(ell) / (float64(ell) + 2*math.Pi - 1); math.Abs(c-want) > 1e-14 {
			t.Fatalf("OneHotConstant(%d) = %v, want ℓ/(ℓ+2π−1) = %v", ell, c, want)
		}
		for j := 0; j < n; j++ {
			if y.Observed[i*n+j] {
				if got := res.Y.Values[i*n+j]; got != y.Values[i*n+j] {
					t.Errorf("observed cell (%d,%d) changed: %v → %v", i, j, y.Values[i*n+j], got)
				}
				continue
			}
			if got, want := res.Y.Values[i*n+j], c*means[i]; math.Abs(got-want) > 1e-12*math.Abs(want) {
				t.Errorf("row %d (ℓ = %d), column %d: %v, want %v × mean %v = %v", i, ell, j, got, c, means[i], want)
			}
		}
	}
	// Deeper networks and a ridge: the same structure with their constant.
	for _, d := range []int{2, 4} {
		res, err := Complete(context.Background(), y, OneHot(n), Options{Depth: d, Ridge: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < m; i++ {
			ell := 0
			for j := 0; j < n; j++ {
				if y.Observed[i*n+j] {
					ell++
				}
			}
			c, _ := OneHotConstant(ell, d, Activation{}, 0.3)
			if got, want := res.Y.Values[i*n+4], c*means[i]; math.Abs(got-want) > 1e-12*math.Abs(want) {
				t.Errorf("depth %d ridge 0.3 row %d: %v, want %v", d, i, got, want)
			}
		}
	}
}

// randomProblem: a low-rank matrix with scattered missing cells, two
// entirely missing columns and a few rows sharing patterns, and a metadata
// prior.
func randomProblem(seed uint64, m, n, p int, missing float64) (*Matrix, *Prior) {
	r := rand.New(rand.NewPCG(seed, 9))
	y := NewMatrix(m, n)
	e := make([]float64, n*p)
	for k := range e {
		e[k] = r.NormFloat64()
	}
	for i := 0; i < m; i++ {
		w := make([]float64, p)
		for k := range w {
			w[k] = r.NormFloat64()
		}
		for j := 0; j < n; j++ {
			var v float64
			for k := 0; k < p; k++ {
				v += w[k] * e[j*p+k]
			}
			y.Values[i*n+j] = v + 0.1*r.NormFloat64()
			y.Observed[i*n+j] = j > 1 && r.Float64() >= missing
		}
		y.Observed[i*n+2] = true
	}
	for i := 1; i < m; i += 3 { // pattern shared with the previous row
		copy(y.Observed[i*n:(i+1)*n], y.Observed[(i-1)*n:i*n])
	}
	pr, _ := FromFeatures(n, p, e)
	return y, pr
}

// The grouped, shared and mixed solves equal the naive per-row solve.
func TestStrategiesAgree(t *testing.T) {
	for _, missing := range []float64{0.05, 0.3, 0.7} {
		y, pr := randomProblem(7, 40, 30, 12, missing)
		for _, act := range []Activation{{Name: "relu"}, {Name: "leaky-relu", Slope: 0.2}} {
			for _, depth := range []int{1, 3} {
				opt := Options{Depth: depth, Activation: act, Ridge: 1e-3, Strategy: StrategyNaive, Refit: true}
				ref, err := Complete(context.Background(), y, pr, opt)
				if err != nil {
					t.Fatal(err)
				}
				if ref.Groups != y.Rows {
					t.Fatalf("naive solved %d groups for %d rows", ref.Groups, y.Rows)
				}
				for _, st := range []string{StrategyDirect, StrategySchur, StrategyAuto} {
					opt.Strategy = st
					got, err := Complete(context.Background(), y, pr, opt)
					if err != nil {
						t.Fatal(err)
					}
					if got.Groups >= y.Rows {
						t.Errorf("%s: %d groups for %d rows: shared patterns were not grouped", st, got.Groups, y.Rows)
					}
					if st == StrategySchur && got.Schur+got.Fallback != got.Groups {
						t.Errorf("schur: %d Schur + %d fallback groups of %d", got.Schur, got.Fallback, got.Groups)
					}
					var worst float64
					for k := range ref.Y.Values {
						worst = max(worst, math.Abs(got.Y.Values[k]-ref.Y.Values[k])/(1+math.Abs(ref.Y.Values[k])))
					}
					if worst > 1e-8 {
						t.Errorf("missing %v %s depth %d %s: differs from the per-row solve by %.3g", missing, act, depth, st, worst)
					}
				}
			}
		}
	}
}

// Ridgeless completion interpolates the observed cells: refitting them
// returns them.
func TestRefitInterpolates(t *testing.T) {
	y, pr := randomProblem(11, 12, 20, 25, 0.3)
	res, err := Complete(context.Background(), y, pr, Options{Depth: 2, Refit: true})
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range y.Observed {
		if o && math.Abs(res.Y.Values[k]-y.Values[k]) > 1e-7*(1+math.Abs(y.Values[k])) {
			t.Fatalf("cell %d refitted to %v, observed %v", k, res.Y.Values[k], y.Values[k])
		}
	}
}

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	y, pr := randomProblem(1, 5, 6, 3, 0.3)
	check := func(name string, err error, want ...string) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", name)
			return
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q does not say %q", name, err, w)
			}
		}
	}
	empty := y.Clone()
	clear(empty.Observed)
	_, err := Complete(ctx, empty, pr, Options{})
	check("nothing observed", err, "no entry", "observed")
	full := y.Clone()
	for k := range full.Observed {
		full.Observed[k] = true
	}
	_, err = Complete(ctx, full, pr, Options{})
	if !errors.Is(err, ErrNothingToComplete) {
		t.Errorf("everything observed: %v", err)
	}
	nan := y.Clone()
	nan.ColIDs = []string{"a", "b", "c", "d", "e", "f"}
	nan.Values[2*6+2] = math.NaN()
	_, err = Complete(ctx, nan, pr, Options{})
	check("NaN", err, "row 3", `column "c"`, "NaN")
	inf := y.Clone()
	inf.Values[2] = math.Inf(1)
	_, err = Complete(ctx, inf, pr, Options{})
	check("Inf", err, "+Inf")
	_, err = Complete(ctx, y, OneHot(5), Options{})
	check("prior size", err, "5 columns", "6")
	_, err = Complete(ctx, y, pr, Options{Depth: 9})
	check("depth", err, "depth 9")
	_, err = Complete(ctx, y, pr, Options{Ridge: -1})
	check("ridge", err, "ridge -1")
	_, err = Complete(ctx, y, pr, Options{Strategy: "magic"})
	check("strategy", err, `"magic"`)
	_, err = ParseActivation("gelu", 0)
	check("activation", err, `"gelu"`, "relu")
	_, err = ParsePriors("onehot,nearest")
	check("prior", err, `"nearest"`, "observed")
	row := y.Clone()
	for j := 0; j < 6; j++ {
		row.Observed[3*6+j] = false
	}
	_, err = Complete(ctx, row, pr, Options{})
	check("empty row", err, "row 4", "no observed entry")
	dup := &Prior{N: 6, P: 3, E: append([]float64(nil), pr.E...)}
	copy(dup.E[3:6], dup.E[0:3]) // columns 1 and 2 parallel
	allObs := y.Clone()
	for i := 0; i < 5; i++ {
		allObs.Observed[i*6], allObs.Observed[i*6+1] = true, true
	}
	_, err = Complete(ctx, allObs, dup, Options{})
	if !errors.Is(err, ErrNotPD) {
		t.Errorf("parallel prior columns: %v", err)
	} else {
		check("parallel prior columns", err, "--ridge")
	}
	zero := &Prior{N: 6, P: 3, E: append([]float64(nil), pr.E...)}
	clear(zero.E[6:9])
	_, err = Complete(ctx, y, zero, Options{})
	check("zero embedding", err, "column 3", "zero vector")
	_, err = Complete(ctx, y, pr, Options{MemoryLimit: 100})
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("memory limit: %v", err)
	} else {
		check("memory limit", err, "needs", "column kernel")
	}
}

func TestCancel(t *testing.T) {
	y, pr := randomProblem(2, 30, 40, 5, 0.3)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Complete(ctx, y, pr, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
	var last float64
	var stages []string
	_, err := Complete(context.Background(), y, pr, Options{Progress: func(s string, f float64) {
		if f < last {
			t.Errorf("progress went back: %v after %v", f, last)
		}
		last = f
		if len(stages) == 0 || stages[len(stages)-1] != s {
			stages = append(stages, s)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if last != 1 || stages[len(stages)-1] != "done" {
		t.Errorf("progress ended at %v in %v", last, stages)
	}
	// Cancelled from inside, once the first pattern is solved: every
	// strategy stops with the context's error.
	for _, st := range []string{StrategyDirect, StrategySchur, StrategyNaive} {
		ctx, cancel := context.WithCancel(context.Background())
		_, err := Complete(ctx, y, pr, Options{Strategy: st, Ridge: 1e-3, Progress: func(s string, f float64) {
			if s == "solve" || s == "factorize" && f > 0 {
				cancel()
			}
		}})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: cancelled during the solve: %v", st, err)
		}
	}
}

// The completion against the kernel regression of Theorem 5 written out in
// full, as in the example of SI appendix A: one system over all observed
// cells (row-major), K((i,j),(i',j')) = κ(z_jᵀz_j') if i = i' else 0,
// solved as a whole; the prediction of (i, j) is k((i,j))ᵀK⁻¹y. No
// grouping, no per-row split.
func TestAgainstFullKernelSystem(t *testing.T) {
	y, pr := randomProblem(21, 7, 9, 4, 0.35)
	kappa, _ := Activation{}.Kappa(2)
	z := &Prior{N: pr.N, P: pr.P, E: append([]float64(nil), pr.E...)}
	if err := z.Normalize(nil); err != nil {
		t.Fatal(err)
	}
	kern := func(a, b int) float64 { // cells a, b (row-major)
		if a/y.Cols != b/y.Cols {
			return 0
		}
		ja, jb := a%y.Cols, b%y.Cols
		var d float64
		for q := 0; q < z.P; q++ {
			d += z.E[ja*z.P+q] * z.E[jb*z.P+q]
		}
		return kappa(d)
	}
	var obs []int
	for k, o := range y.Observed {
		if o {
			obs = append(obs, k)
		}
	}
	s := len(obs)
	a := make([]float64, s*s)
	for p, c := range obs {
		for q, d := range obs {
			a[p*s+q] = kern(c, d)
		}
	}
	// Solve with Gaussian elimination (partial pivoting), independent of
	// the Cholesky used by Complete.
	rhs := make([]float64, s)
	for p, c := range obs {
		rhs[p] = y.Values[c]
	}
	alpha := gaussSolve(a, rhs, s)
	res, err := Complete(context.Background(), y, pr, Options{Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	for k, o := range y.Observed {
		if o {
			continue
		}
		var want float64
		for p, c := range obs {
			want += kern(k, c) * alpha[p]
		}
		if got := res.Y.Values[k]; math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
			t.Errorf("cell (%d,%d): %v, the full system gives %v", k/y.Cols, k%y.Cols, got, want)
		}
	}
}

func gaussSolve(a, b []float64, n int) []float64 {
	a = append([]float64(nil), a...)
	b = append([]float64(nil), b...)
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r*n+c]) > math.Abs(a[p*n+c]) {
				p = r
			}
		}
		for k := 0; k < n; k++ {
			a[c*n+k], a[p*n+k] = a[p*n+k], a[c*n+k]
		}
		b[c], b[p] = b[p], b[c]
		for r := c + 1; r < n; r++ {
			f := a[r*n+c] / a[c*n+c]
			for k := c; k < n; k++ {
				a[r*n+k] -= f * a[c*n+k]
			}
			b[r] -= f * b[c]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for k := r + 1; k < n; k++ {
			s -= a[r*n+k] * x[k]
		}
		x[r] = s / a[r*n+r]
	}
	return x
}

// Two nearly parallel prior columns never observed in the same row: the
// union's kernel G[U,U] is singular to working precision, every pattern's
// G[S,S] is not. The Schur strategy must notice and fall back to direct
// solves, matching the per-row solve.
func TestSchurFallsBack(t *testing.T) {
	y, pr := randomProblem(8, 12, 10, 16, 0.2)
	copy(pr.E[1*16:2*16], pr.E[0:16])
	pr.E[1*16] += 1e-9
	for i := 0; i < y.Rows; i++ {
		y.Observed[i*y.Cols+0] = i%2 == 0
		y.Observed[i*y.Cols+1] = i%2 == 1
	}
	ref, err := Complete(context.Background(), y, pr, Options{Strategy: StrategyNaive})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Complete(context.Background(), y, pr, Options{Strategy: StrategySchur})
	if err != nil {
		t.Fatal(err)
	}
	if got.Fallback == 0 || got.Schur != 0 {
		t.Errorf("%d Schur groups, %d fell back: the singular union went unnoticed", got.Schur, got.Fallback)
	}
	for k := range ref.Y.Values {
		if d := math.Abs(got.Y.Values[k] - ref.Y.Values[k]); d > 1e-8*(1+math.Abs(ref.Y.Values[k])) {
			t.Fatalf("cell %d: %v, per-row solve %v", k, got.Y.Values[k], ref.Y.Values[k])
		}
	}
}
