package nn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/synth"
)

// Back-propagated gradients equal central finite differences of the loss,
// for every activation, with and without biases, at depths 1 to 3. The
// tolerance (1e-6 relative to the largest gradient) is what central
// differences with h = 1e-6 reach in float64; a kink of a ReLU inside
// ±h would show as a larger miss (none with these seeds).
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	for _, act := range []Activation{ReLU, LeakyReLU, Tanh, Sine} {
		for depth := 1; depth <= 3; depth++ {
			for _, bias := range []bool{false, true} {
				cfg := DefaultConfig()
				cfg.Activation, cfg.Bias = act, bias
				cfg.Widths = []int{7, 5, 6}[:depth]
				cfg.Seed = uint64(depth)
				net, err := New(cfg, 4, 3)
				if err != nil {
					t.Fatal(err)
				}
				if bias { // non-zero biases, so that their gradients are tested too
					r := rand.New(rand.NewPCG(9, 9))
					for l := range net.Layers {
						for i := range net.Layers[l].B {
							net.Layers[l].B[i] = 0.3 * r.NormFloat64()
						}
					}
				}
				x, y := testutil.NormalRows(6, 4, 1, 5), testutil.NormalRows(6, 3, 2, 5)
				loss := func() float64 {
					l, _ := MSE(net.Predict(x, 6), y)
					return l
				}
				p := net.Forward(x, 6)
				_, dOut := MSE(p.Output(), y)
				g, _ := net.Backward(p, dOut)
				name := fmt.Sprintf("%s depth %d bias %v", act, depth, bias)
				check := func(what string, w, grad []float64) {
					scale := 0.0
					for _, v := range grad {
						scale = max(scale, math.Abs(v))
					}
					const h = 1e-6
					for i := range w {
						old := w[i]
						w[i] = old + h
						up := loss()
						w[i] = old - h
						down := loss()
						w[i] = old
						fd := (up - down) / (2 * h)
						if math.Abs(fd-grad[i]) > 1e-6*max(scale, 1e-3) {
							t.Fatalf("%s: %s[%d]: back-propagated %v, finite difference %v", name, what, i, grad[i], fd)
						}
					}
				}
				for l := range net.Layers {
					check(fmt.Sprintf("W%d", l), net.Layers[l].W, g.W[l])
					if bias {
						check(fmt.Sprintf("b%d", l), net.Layers[l].B, g.B[l])
					}
				}
			}
		}
	}
}

// forwardFrom runs rows of h, the input of layer l, through the rest.
func forwardFrom(n *Network, l int, h []float64, rows int) []float64 {
	sub := &Network{Layers: n.Layers[l:], Activation: n.Activation, LeakySlope: n.LeakySlope}
	return sub.Predict(h, rows)
}

// A layer's AGOP (WᵀKW) equals the average over inputs and outputs of the
// outer product of the output's gradient with respect to the layer's
// input, taken by finite differences (to 1e-6 relative).
func TestLayerAGOPMatchesFiniteDifferences(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Widths, cfg.Activation, cfg.Bias = []int{6, 5}, Tanh, true
	net, _ := New(cfg, 4, 2)
	init := net.Clone()
	tr, _ := NewTrainer(net, cfg)
	x, y := testutil.NormalRows(20, 4, 3, 5), testutil.NormalRows(20, 2, 4, 5)
	for i := 0; i < 5; i++ {
		tr.Step(x, y, 20)
	}
	feats, err := Features(net, init, x, 20)
	if err != nil {
		t.Fatal(err)
	}
	p := net.Forward(x, 20)
	for l := range net.Layers[:2] {
		din := net.Layers[l].In
		want := make([]float64, din*din)
		const h = 1e-6
		for i := 0; i < 20; i++ {
			row := append([]float64(nil), p.H[l][i*din:(i+1)*din]...)
			jac := make([][]float64, 2) // jac[o][j] = ∂f_o/∂h_j
			for o := range jac {
				jac[o] = make([]float64, din)
			}
			for j := 0; j < din; j++ {
				old := row[j]
				row[j] = old + h
				up := forwardFrom(net, l, row, 1)
				row[j] = old - h
				down := forwardFrom(net, l, row, 1)
				row[j] = old
				for o := range jac {
					jac[o][j] = (up[o] - down[o]) / (2 * h)
				}
			}
			for o := range jac {
				for a := 0; a < din; a++ {
					for b := 0; b < din; b++ {
						want[a*din+b] += jac[o][a] * jac[o][b] / 20
					}
				}
			}
		}
		got := feats[l].AGOP
		scale := 0.0
		for _, v := range want {
			scale = max(scale, math.Abs(v))
		}
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-6*scale {
				t.Fatalf("layer %d AGOP[%d] = %v, finite differences %v", l, i, got[i], want[i])
			}
		}
		if feats[l].CNFM == nil || Cosine(feats[l].NFM, gram(net.Layers[l].W, net.Layers[l].Out, din)) != 1 {
			t.Errorf("layer %d: feature matrices missing", l)
		}
	}
}

// The same seed trains the same network, bit for bit; training lowers the
// loss with both optimizers.
func TestTrainingIsSeededAndLearns(t *testing.T) {
	s, err := synth.Generate(synth.Chain, 256, 8, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Optimizer{SGD, Adam} {
		run := func() (*Network, float64, float64) {
			cfg := DefaultConfig()
			cfg.Widths, cfg.Optimizer, cfg.BatchSize = []int{64, 64}, opt, 32
			cfg.LR = map[Optimizer]float64{SGD: 0.01, Adam: 1e-3}[opt]
			net, _ := New(cfg, 8, 1)
			tr, _ := NewTrainer(net, cfg)
			first, _ := tr.Epoch(context.Background(), s.X, s.Y, s.N)
			last := first
			for e := 0; e < 40; e++ {
				last, _ = tr.Epoch(context.Background(), s.X, s.Y, s.N)
			}
			return net, first, last
		}
		a, first, last := run()
		b, _, _ := run()
		for l := range a.Layers {
			for i, v := range a.Layers[l].W {
				if v != b.Layers[l].W[i] {
					t.Fatalf("%s: two runs with one seed differ at layer %d weight %d", opt, l, i)
				}
			}
		}
		if !(last < first/3) {
			t.Errorf("%s: loss %v after 40 epochs, %v after the first", opt, last, first)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Widths = nil }, "0 hidden layers"},
		{func(c *Config) { c.Widths = make([]int, 33) }, "33 hidden layers"},
		{func(c *Config) { c.Activation = "gelu" }, `unknown activation "gelu"`},
		{func(c *Config) { c.Optimizer = "lbfgs" }, `unknown optimizer "lbfgs"`},
		{func(c *Config) { c.LR = 0 }, "learning rate 0"},
		{func(c *Config) { c.Momentum = 1 }, "momentum 1"},
		{func(c *Config) { c.InitScale = []float64{1, 1, 1, 1} }, "4 initialization scales for 3 layers"},
	} {
		cfg := DefaultConfig()
		c.mod(&cfg)
		if _, err := New(cfg, 3, 1); err == nil || !contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// Weight decay adds wd·w to each weight's gradient (and not to biases):
// with a zero loss gradient one SGD step scales the weights by 1 − lr·wd.
func TestWeightDecay(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Widths, cfg.Momentum, cfg.LR, cfg.WeightDecay, cfg.Bias = []int{4}, 0, 0.1, 0.5, true
	net, _ := New(cfg, 3, 1)
	for l := range net.Layers {
		for i := range net.Layers[l].B {
			net.Layers[l].B[i] = 0.25
		}
	}
	before := net.Clone()
	tr, _ := NewTrainer(net, cfg)
	// x = 0 and y = the network's output at 0: the loss gradient is zero.
	x := make([]float64, 3)
	y := net.Predict(x, 1)
	tr.Step(x, y, 1)
	for l := range net.Layers {
		for i, w := range net.Layers[l].W {
			if want := before.Layers[l].W[i] * (1 - 0.1*0.5); math.Abs(w-want) > 1e-15 {
				t.Fatalf("layer %d weight %d: %v, want %v", l, i, w, want)
			}
		}
		for i, b := range net.Layers[l].B {
			if b != 0.25 {
				t.Fatalf("layer %d bias %d decayed to %v", l, i, b)
			}
		}
	}
	bad := DefaultConfig()
	bad.WeightDecay = -1
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "weight decay -1") {
		t.Errorf("negative decay: %v", err)
	}
}

// The top-eigenvector overlap of matrices with a repeated top eigenvalue
// compares eigenspaces: diag(1, 1, 0) against itself rotated within its
// top plane overlaps fully; against diag(1, 0, 0), too (the plane holds
// e₀); against diag(0, 0, 1), not at all.
func TestCompareRepeatedTopEigenvalue(t *testing.T) {
	c, s := math.Cos(0.7), math.Sin(0.7)
	// R·diag(1,1,0)·Rᵀ for a rotation R in the (0,1) plane is diag(1,1,0)
	// again; rotate in the (1,2) plane instead to tilt it, then compare.
	a := []float64{1, 0, 0, 0, 1, 0, 0, 0, 0}
	rot := []float64{1, 0, 0, 0, c, -s, 0, s, c}
	b := make([]float64, 9)
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				for l := 0; l < 3; l++ {
					b[i*3+j] += rot[i*3+k] * a[k*3+l] * rot[j*3+l]
				}
			}
		}
	}
	for _, tc := range []struct {
		b    []float64
		want float64
	}{{a, 1}, {b, 1}, {[]float64{1, 0, 0, 0, 0, 0, 0, 0, 0}, 1}, {[]float64{0, 0, 0, 0, 0, 0, 0, 0, 1}, 0}} {
		got, err := Compare(a, tc.b, 3)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.TopEig-tc.want) > 1e-9 {
			t.Errorf("top-eig overlap with %v: %v, want %v", tc.b, got.TopEig, tc.want)
		}
	}
}
