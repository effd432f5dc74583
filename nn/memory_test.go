package nn

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

// The forward-mode Jacobian-vector products equal central finite
// differences of the network, for every activation and every depth from
// 1 to MaxDepth (the power activation, whose compositions over- or
// underflow when deep, to depth 4), with biases, several points at once.
func TestJVPMatchesFiniteDifferences(t *testing.T) {
	const in, out, rows, h = 3, 2, 3, 1e-6
	for _, act := range Activations() {
		maxDepth := MaxDepth
		if act == Power {
			maxDepth = 4
		}
		for depth := 1; depth <= maxDepth; depth++ {
			cfg := DefaultConfig()
			cfg.Activation, cfg.Power, cfg.Init, cfg.Seed = act, 1.5, InitPyTorch, uint64(depth)
			cfg.Widths = make([]int, depth)
			for i := range cfg.Widths {
				cfg.Widths[i] = 3 + i%3
			}
			net, err := New(cfg, in, out)
			if err != nil {
				t.Fatal(err)
			}
			x, v := testutil.NormalRows(rows, in, uint64(depth), 5), testutil.NormalRows(rows, in, 99, 5)
			fx, jv := net.JVP(x, v, rows)
			if got := net.Predict(x, rows); !slices.Equal(got, fx) {
				t.Fatalf("%s depth %d: JVP's outputs differ from Predict's", act, depth)
			}
			xp, xm := make([]float64, len(x)), make([]float64, len(x))
			for i := range x {
				xp[i], xm[i] = x[i]+h*v[i], x[i]-h*v[i]
			}
			fp, fm := net.Predict(xp, rows), net.Predict(xm, rows)
			scale := 0.0
			for _, g := range jv {
				scale = max(scale, math.Abs(g))
			}
			for i := range jv {
				fd := (fp[i] - fm[i]) / (2 * h)
				if math.IsNaN(jv[i]) || math.Abs(fd-jv[i]) > 1e-5*scale+1e-9 {
					t.Fatalf("%s depth %d: entry %d: JVP %v, finite difference %v", act, depth, i, jv[i], fd)
				}
			}
		}
	}
}

// A training interrupted by a checkpoint and resumed in a new trainer
// ends with the same weights, bit for bit, as one run straight through,
// for each optimizer, with mini-batches (so the row order's generator
// state matters).
func TestCheckpointResumeEqualsUninterrupted(t *testing.T) {
	x, y := testutil.NormalRows(20, 3, 1, 5), testutil.NormalRows(20, 2, 2, 5)
	for _, opt := range []Optimizer{SGD, Adam, RMSprop} {
		cfg := DefaultConfig()
		cfg.Widths, cfg.Activation, cfg.Optimizer, cfg.BatchSize, cfg.LR = []int{6, 5}, SELU, opt, 7, 1e-3
		cfg.Init, cfg.InitRange, cfg.WeightDecay = InitUniform, 0.3, 1e-4
		straight := func() *Network {
			net, _ := New(cfg, 3, 2)
			tr, _ := NewTrainer(net, cfg)
			if _, err := tr.Train(context.Background(), x, y, 20, Budget{Epochs: 12}, nil); err != nil {
				t.Fatal(err)
			}
			return net
		}()
		path := filepath.Join(t.TempDir(), "ck.gob")
		net, _ := New(cfg, 3, 2)
		tr, _ := NewTrainer(net, cfg)
		res, err := tr.Train(context.Background(), x, y, 20, Budget{Epochs: 5, Checkpoint: path}, nil)
		if err != nil || res.Stop != StopEpochs || res.Epochs != 5 {
			t.Fatalf("%s: first leg %+v, %v", opt, res, err)
		}
		tr.Epoch(context.Background(), x, y, 20) // work after the checkpoint is lost
		resumed, err := LoadCheckpoint(path)
		if err != nil {
			t.Fatal(err)
		}
		if resumed.Epochs() != 5 {
			t.Fatalf("%s: resumed at epoch %d", opt, resumed.Epochs())
		}
		if _, err := resumed.Train(context.Background(), x, y, 20, Budget{Epochs: 12}, nil); err != nil {
			t.Fatal(err)
		}
		for l := range straight.Layers {
			if !slices.Equal(straight.Layers[l].W, resumed.Net.Layers[l].W) || !slices.Equal(straight.Layers[l].B, resumed.Net.Layers[l].B) {
				t.Fatalf("%s: layer %d differs after resuming", opt, l)
			}
		}
	}
}

// Train stops at the loss target and says so; an unreachable target ends
// with the epoch budget, not an error; a damaged checkpoint is refused.
func TestTrainBudgetsAndBadCheckpoint(t *testing.T) {
	x := testutil.NormalRows(4, 2, 3, 5)
	cfg := DefaultConfig()
	cfg.Widths, cfg.Activation, cfg.Optimizer, cfg.LR, cfg.BatchSize = []int{32, 32}, Cosid, Adam, 1e-2, 0
	net, _ := New(cfg, 2, 2)
	tr, _ := NewTrainer(net, cfg)
	res, err := tr.Train(context.Background(), x, x, 4, Budget{Epochs: 5000, LossTarget: 1e-6}, nil)
	if err != nil || !res.Reached || res.Stop != StopTarget || !(res.Loss <= 1e-6) {
		t.Fatalf("target: %+v %v", res, err)
	}
	res, err = tr.Train(context.Background(), x, x, 4, Budget{Epochs: res.Epochs + 3, LossTarget: 1e-300}, nil)
	if err != nil || res.Reached || res.Stop != StopEpochs {
		t.Fatalf("unreachable target: %+v %v", res, err)
	}
	// A budget already spent runs no epoch and reports the current loss.
	res, err = tr.Train(context.Background(), x, x, 4, Budget{Epochs: 1}, nil)
	if err != nil || res.Stop != StopEpochs || math.IsNaN(res.Loss) || res.Loss != net.Loss(x, x, 4) {
		t.Fatalf("spent budget: %+v %v", res, err)
	}
	if _, err := tr.Train(context.Background(), x, x, 4, Budget{}, nil); err == nil {
		t.Error("an empty budget was accepted")
	}
	bad := filepath.Join(t.TempDir(), "bad")
	writeFile(t, bad, "not a checkpoint")
	if _, err := LoadCheckpoint(bad); err == nil || !strings.Contains(err.Error(), "not a checkpoint file") {
		t.Errorf("damaged checkpoint: %v", err)
	}
}

// Uniform initialization stays inside [−a, a] and fills it; PyTorch's
// uses a = 1/√fan_in per layer, biases included.
func TestUniformInitialization(t *testing.T) {
	for _, c := range []struct {
		init InitScheme
		a    func(fanIn int) float64
	}{{InitUniform, func(int) float64 { return 0.05 }}, {InitPyTorch, func(f int) float64 { return 1 / math.Sqrt(float64(f)) }}} {
		cfg := DefaultConfig()
		cfg.Widths, cfg.Init, cfg.InitRange = []int{400, 300}, c.init, 0.05
		net, err := New(cfg, 50, 10)
		if err != nil {
			t.Fatal(err)
		}
		for l, ly := range net.Layers {
			a, top := c.a(ly.In), 0.0
			for _, w := range append(append([]float64(nil), ly.W...), ly.B...) {
				if math.Abs(w) > a {
					t.Fatalf("%s layer %d: weight %v outside ±%v", c.init, l, w, a)
				}
				top = max(top, math.Abs(w))
			}
			if top < 0.95*a {
				t.Errorf("%s layer %d: largest weight %v, range ±%v", c.init, l, top, a)
			}
		}
	}
	bad := DefaultConfig()
	bad.Init = InitUniform
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "range a > 0") {
		t.Errorf("uniform without a range: %v", err)
	}
	bad = DefaultConfig()
	bad.Activation = "gelu"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "cosid") {
		t.Errorf("unknown activation's message does not list the known ones: %v", err)
	}
}

// RMSprop's update with a constant gradient g: after one step from zero
// moments, v = (1−α)g², and w moves by lr·g/(√v + ε).
func TestRMSpropStep(t *testing.T) {
	w, g := []float64{1, -2}, []float64{0.5, -3}
	m, v := make([]float64, 2), make([]float64, 2)
	rmspropStep(w, g, m, v, 0.1, 0.9, 0, 1e-8)
	for i, w0 := range []float64{1, -2} {
		want := w0 - 0.1*g[i]/(math.Sqrt(0.1*g[i]*g[i])+1e-8)
		if math.Abs(w[i]-want) > 1e-15 {
			t.Errorf("weight %d: %v, want %v", i, w[i], want)
		}
	}
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
