package memory

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/nn"
)

// matJVP is the JVPFunc of one fixed d×d matrix (row-major) at every row.
func matJVP(a []float64, d int) JVPFunc {
	return func(v []float64, rows int) []float64 {
		out := make([]float64, len(v))
		for r := 0; r < rows; r++ {
			for i := 0; i < d; i++ {
				s := 0.0
				for j := 0; j < d; j++ {
					s += a[i*d+j] * v[r*d+j]
				}
				out[r*d+i] = s
			}
		}
		return out
	}
}

// The power iteration's spectral radius agrees with gonum's dense
// nonsymmetric eigendecomposition for d ≤ 50: random matrices, matrices
// whose top eigenvalue is negative, and ones whose top eigenvalues are a
// complex pair (where the one-step ratio never settles). The tolerance,
// 2%, is what 400 products reach with these spectra (gap ≥ 20%).
func TestSpectralRadiusMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for trial, d := range []int{2, 3, 5, 10, 20, 35, 50} {
		for _, kind := range []string{"random", "negative", "complex"} {
			// a = Q·T·Q⁻¹ with T block diagonal: the top block by kind, the
			// rest eigenvalues in [−0.6, 0.6] times the top modulus 0.9.
			top := 0.9
			tm := make([]float64, d*d)
			k := 0
			switch kind {
			case "negative":
				tm[0] = -top
				k = 1
			case "complex":
				if d >= 2 {
					c, s := top*math.Cos(1.1), top*math.Sin(1.1)
					tm[0], tm[1], tm[d], tm[d+1] = c, -s, s, c
					k = 2
				}
			default:
				tm[0] = top
				k = 1
			}
			for i := k; i < d; i++ {
				tm[i*d+i] = top * (1.2*r.Float64() - 0.6)
			}
			q := make([]float64, d*d)
			for i := range q {
				q[i] = r.NormFloat64() / math.Sqrt(float64(d))
			}
			for i := 0; i < d; i++ {
				q[i*d+i] += 1
			}
			a := similar(t, q, tm, d)
			want, err := DenseRadius(a, d)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(want-top) > 1e-9 {
				t.Fatalf("d=%d %s: construction's radius %v, want %v", d, kind, want, top)
			}
			got, err := SpectralRadii(context.Background(), matJVP(a, d), 2, d, PowerOptions{Iterations: 400, Seed: uint64(trial)})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range got {
				if math.Abs(g-want) > 0.02*want {
					t.Errorf("d=%d %s: power iteration %v, dense %v", d, kind, g, want)
				}
			}
			// Arnoldi: exact with m = d, close with m = d/2 + 2.
			for _, m := range []int{d, d/2 + 2} {
				ritz, err := RitzRadii(context.Background(), matJVP(a, d), 2, d, m, uint64(trial))
				if err != nil {
					t.Fatal(err)
				}
				tol := 1e-8
				if m < d {
					tol = 0.05
				}
				for _, g := range ritz {
					if math.Abs(g-want) > tol*want {
						t.Errorf("d=%d %s: Arnoldi with %d steps %v, dense %v", d, kind, m, g, want)
					}
				}
			}
		}
	}
}

// similar returns q·t·q⁻¹ (via the dense inverse).
func similar(t *testing.T, q, tm []float64, d int) []float64 {
	t.Helper()
	inv, err := invert(q, d)
	if err != nil {
		t.Fatal(err)
	}
	return mul(mul(q, tm, d), inv, d)
}

// The power iteration on a trained network's Jacobian (through the
// forward-mode products of f^p, p = 1 and 3) agrees with the dense
// Jacobian's eigenvalues, and DenseJacobian agrees with finite
// differences of f^p.
func TestNetworkJacobianRadius(t *testing.T) {
	cfg := nn.Config{Widths: []int{16, 16, 16}, Activation: nn.Cosid, Optimizer: nn.Adam, LR: 1e-3, Bias: true, Init: nn.InitPyTorch, Seed: 2}
	net, err := nn.New(cfg, 6, 6)
	if err != nil {
		t.Fatal(err)
	}
	x := []float64{0.3, -0.2, 0.5, 0.1, -0.4, 0.2}
	for _, p := range []int{1, 3} {
		jac := DenseJacobian(net, x, p)
		const h = 1e-6
		for j := 0; j < 6; j++ {
			xp, xm := append([]float64(nil), x...), append([]float64(nil), x...)
			xp[j] += h
			xm[j] -= h
			fp, fm := Apply(net, xp, 1, p), Apply(net, xm, 1, p)
			for i := 0; i < 6; i++ {
				if fd := (fp[i] - fm[i]) / (2 * h); math.Abs(fd-jac[i*6+j]) > 1e-6*(1+math.Abs(fd)) {
					t.Fatalf("p=%d: J[%d][%d] = %v, finite difference %v", p, i, j, jac[i*6+j], fd)
				}
			}
		}
		want, err := DenseRadius(jac, 6)
		if err != nil {
			t.Fatal(err)
		}
		got, err := SpectralRadii(context.Background(), IterateJVP(net, x, p), 1, 6, PowerOptions{Iterations: 2000, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got[0]-want) > 0.03*want {
			t.Errorf("p=%d: power iteration %v, dense %v", p, got[0], want)
		}
	}
}

// SI appendix C of the thesis: a network f(z) = W_L+1 φ(…φ(W₁z)) with L
// hidden layers of width 1, φ(z) = zᵐ, initialized with W₁ = b·xᵀ and
// W_L+1 = x·a (‖x‖ = 1) and trained by gradient descent on the single
// example x, has top Jacobian eigenvalue m^L at x. Checked exactly
// (1e-6) for attractors (m = 1/2) and for repellers (m = 2), by the
// trainer, the forward-mode products and the power iteration together.
func TestSingleExampleTopEigenvalue(t *testing.T) {
	x := []float64{0.5, -0.5, 0.5, 0.5} // unit norm
	for _, c := range []struct {
		m float64
		L int
	}{{0.5, 1}, {0.5, 3}, {2, 2}, {1.5, 4}} {
		cfg := nn.Config{Widths: make([]int, c.L), Activation: nn.Power, Power: c.m, Optimizer: nn.SGD, LR: 0.02, Seed: 1}
		for i := range cfg.Widths {
			cfg.Widths[i] = 1
		}
		net, err := nn.New(cfg, 4, 4)
		if err != nil {
			t.Fatal(err)
		}
		for l := range net.Layers {
			ly := &net.Layers[l]
			switch {
			case l == 0:
				for j := range ly.W {
					ly.W[j] = 1.1 * x[j] // b = 1.1
				}
			case l == len(net.Layers)-1:
				for j := range ly.W {
					ly.W[j] = 0.7 * x[j] // a = 0.7
				}
			default:
				ly.W[0] = 0.9
			}
		}
		tr, _ := nn.NewTrainer(net, cfg)
		res, err := tr.Train(context.Background(), x, x, 1, nn.Budget{Epochs: 200000, LossTarget: 1e-26}, nil)
		if err != nil || !res.Reached {
			t.Fatalf("m=%v L=%d: training %+v %v", c.m, c.L, res, err)
		}
		want := math.Pow(c.m, float64(c.L))
		s, _ := NewSet([][]float64{x}, nil)
		ex, err := Verify(context.Background(), net, s, VerifyOptions{Power: PowerOptions{Iterations: 50, Seed: 1}, Tol: 1e-9, Dense: true})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(ex[0].Radius-want) > 1e-6*want || math.Abs(*ex[0].Dense-want) > 1e-6*want {
			t.Errorf("m=%v L=%d: top eigenvalue %v (dense %v), want m^L = %v", c.m, c.L, ex[0].Radius, *ex[0].Dense, want)
		}
		if ex[0].Stored != (want < 1) {
			t.Errorf("m=%v L=%d: stored = %v with eigenvalue %v", c.m, c.L, ex[0].Stored, want)
		}
	}
}

// A small autoencoder trained on three 2-D points stores them: verified,
// recovered from noisy copies, and its basin grid assigns the grid
// points around each example to it.
func TestAutoencoderStoresAndRecovers(t *testing.T) {
	s, err := NewSet([][]float64{{0.5, 0.5}, {-0.5, 0.3}, {0.1, -0.6}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nn.Config{Widths: []int{64, 64, 64, 64}, Activation: nn.Cosid, Optimizer: nn.Adam, LR: 1e-3, Bias: true, Init: nn.InitPyTorch, Seed: 1}
	tr, res, err := Train(context.Background(), s, cfg, nn.Budget{Epochs: 20000, LossTarget: 1e-10}, nil)
	if err != nil || !res.Reached {
		t.Fatalf("training: %+v %v", res, err)
	}
	ex, err := Verify(context.Background(), tr.Net, s, VerifyOptions{Tol: 1e-3, Dense: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ex {
		if math.Abs(e.Radius-*e.Dense) > 0.02*max(*e.Dense, 0.01) {
			t.Errorf("example %d: power iteration %v, dense %v", e.Index, e.Radius, *e.Dense)
		}
	}
	stored := 0
	for _, e := range ex {
		if e.Stored {
			stored++
		}
	}
	if stored == 0 {
		t.Fatalf("no example stored: %+v", ex)
	}
	starts, src, err := Starts(s, Noise, 3, 0.01, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	lim, steps, conv, err := Iterate(context.Background(), tr.Net, starts, len(src), IterateOptions{Period: 1, MaxSteps: 5000})
	if err != nil {
		t.Fatal(err)
	}
	out, sum := Classify(s, lim, steps, conv, src, MatchTol(s))
	for _, o := range out {
		if ex[o.Source].Stored && ex[o.Source].Radius < 0.9 && (!o.Converged || o.Limit != o.Source) {
			t.Errorf("a noisy copy of attractor %d (eigenvalue %v) ended at %+v", o.Source, ex[o.Source].Radius, o)
		}
	}
	if sum.Starts != 9 || sum.Recovered+sum.Other+sum.Spurious+sum.NotConverged != 9 {
		t.Errorf("summary does not add up: %+v", sum)
	}
	b, err := BasinGrid(context.Background(), tr.Net, s, 12, 0.3, IterateOptions{Period: 1, MaxSteps: 2000}, MatchTol(s))
	if err != nil {
		t.Fatal(err)
	}
	per, _, _ := b.Counts(3)
	for i, e := range ex {
		if e.Stored && e.Radius < 0.9 && per[i] == 0 {
			t.Errorf("attractor %d has no grid point in its basin", i)
		}
	}
	path := filepath.Join(t.TempDir(), "basins.png")
	if err := BasinFigure(context.Background(), path, tr.Net, s, b, 8); err != nil {
		t.Fatal(err)
	}
}

// A sequence encoder on two 2-cycles maps each point to the next: the
// set's targets, period and cycle bookkeeping.
func TestSetsAndBadInput(t *testing.T) {
	rows := [][]float64{{1, 0}, {0, 1}, {-1, 0}, {0, -1}}
	s, err := NewSet(rows, [][]int{{0, 2}, {3, 1}})
	if err != nil {
		t.Fatal(err)
	}
	y := s.Targets()
	if y[0] != -1 || y[2*2] != 1 || y[3*2+1] != 1 || y[1*2+1] != -1 {
		t.Errorf("targets %v", y)
	}
	if p, _ := s.Period(); p != 2 || !s.Sequential() {
		t.Errorf("period %d", p)
	}
	for _, c := range []struct {
		rows   [][]float64
		cycles [][]int
		want   string
	}{
		{[][]float64{{1, 2}, {3}}, nil, "example 2 has 1 values, example 1 has 2"},
		{rows, [][]int{{0, 1}, {1, 2, 3}}, "example 2 is in cycle 1 and again in cycle 2"},
		{rows, [][]int{{0, 1, 2}}, "example 4 is in no cycle"},
		{[][]float64{{math.NaN()}}, nil, "is NaN"},
	} {
		if _, err := NewSet(c.rows, c.cycles); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.rows, err, c.want)
		}
	}
	cyc, err := CyclesFromOrder([]float64{3, 1, 2, 0, 1}, []string{"a", "a", "a", "b", "b"})
	if err != nil || len(cyc) != 2 || cyc[0][0] != 1 || cyc[0][2] != 0 || cyc[1][0] != 3 {
		t.Errorf("cycles %v, %v", cyc, err)
	}
	for _, c := range []struct {
		order []float64
		want  string
	}{
		{[]float64{0, 1, 3}, "a gap in the sequence"},
		{[]float64{0, 1, 1}, "an order value repeats"},
		{[]float64{0, 0.5}, "not an integer"},
	} {
		if _, err := CyclesFromOrder(c.order, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.order, err, c.want)
		}
	}
	if _, _, err := Starts(s, "blur", 1, 0.1, 0, 1); err == nil || !strings.Contains(err.Error(), "unknown corruption") {
		t.Errorf("unknown corruption: %v", err)
	}
}
