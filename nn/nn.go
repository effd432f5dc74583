package nn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/rfmkit/rfm/internal/linalg"
)

// Activation names a hidden layer's nonlinearity.
type Activation string

// The activations.
const (
	ReLU      Activation = "relu"
	LeakyReLU Activation = "leaky-relu" // slope Config.LeakySlope below 0
	Tanh      Activation = "tanh"
	Sine      Activation = "sine"
	// The thesis's memory experiments (chapter 2) add these.
	Cosid  Activation = "cosid"  // cos z − z
	SELU   Activation = "selu"   // λz (z > 0), λα(eᶻ − 1) (z ≤ 0), Klambauer et al.'s λ, α
	SinLin Activation = "sinlin" // z + sin(10z)/5
	Swish  Activation = "swish"  // z·σ(z)
	Power  Activation = "power"  // sign(z)·|z|^Config.Power (SI appendix C's φ(z) = zᵐ)
	Linear Activation = "linear" // z (a deep linear network)
)

// Activations lists every activation name New accepts.
func Activations() []Activation {
	return []Activation{ReLU, LeakyReLU, Tanh, Sine, Cosid, SELU, SinLin, Swish, Power, Linear}
}

// InitScheme names how New draws the weights.
type InitScheme string

// The initialization schemes.
const (
	// InitNormal (the zero value): N(0, gain/fan_in) weights (gain 2
	// before a ReLU), zero biases.
	InitNormal InitScheme = ""
	// InitUniform: weights and biases U[−a, a], a = Config.InitRange.
	InitUniform InitScheme = "uniform"
	// InitPyTorch: weights and biases U[−1/√fan_in, 1/√fan_in], the
	// default of PyTorch's linear layers (the thesis's "Default PyTorch").
	InitPyTorch InitScheme = "pytorch"
)

// Optimizer names a training rule.
type Optimizer string

// The optimizers.
const (
	SGD  Optimizer = "sgd"  // with Config.Momentum (heavy ball)
	Adam Optimizer = "adam" // Kingma and Ba, with bias correction
	// RMSprop divides the gradient by a running root mean square
	// (smoothing Config.Alpha, default 0.99; Config.Momentum applies).
	RMSprop Optimizer = "rmsprop"
)

// MaxDepth is the most hidden layers a network may have.
const MaxDepth = 32

// Config describes a fully connected network and how to train it.
type Config struct {
	// Widths of the hidden layers (1 to MaxDepth of them).
	Widths     []int
	Activation Activation
	LeakySlope float64 // LeakyReLU's slope for negative inputs (default 0.01)
	Bias       bool    // layers have biases (initialized to zero)
	// InitScale multiplies each layer's initial standard deviation
	// (sqrt(gain/fan_in), gain 2 for a layer a ReLU follows, 1 otherwise,
	// the output layer included); one value
	// per layer, hidden layers then the output layer. Missing or zero
	// entries are 1.
	InitScale []float64
	Optimizer Optimizer
	LR        float64 // learning rate
	Momentum  float64 // SGD
	Beta1     float64 // Adam (default 0.9)
	Beta2     float64 // Adam (default 0.999)
	Epsilon   float64 // Adam (default 1e-8)
	BatchSize int     // rows per step (0: all rows, full-batch)
	// WeightDecay adds WeightDecay·w to each weight's gradient (L2
	// regularization; biases are not decayed).
	WeightDecay float64
	Seed        uint64 // initialization and the order of the rows

	// Init chooses the initialization (InitNormal, the zero value, is
	// the original scheme); InitRange is InitUniform's a. InitScale
	// multiplies every scheme's weights.
	Init      InitScheme `json:",omitempty"`
	InitRange float64    `json:",omitempty"`
	// Power is the exponent m of the Power activation (m > 0).
	Power float64 `json:",omitempty"`
	// Alpha is RMSprop's smoothing constant (default 0.99).
	Alpha float64 `json:",omitempty"`
}

// DefaultConfig is two ReLU layers of 256 units with biases, trained by
// SGD with momentum 0.9, learning rate 0.05, batches of 128.
func DefaultConfig() Config {
	return Config{Widths: []int{256, 256}, Activation: ReLU, Bias: true, Optimizer: SGD, LR: 0.05, Momentum: 0.9, BatchSize: 128, Seed: 1}
}

// WithDefaults returns c with its zero optional settings filled in:
// Adam's β₁ = 0.9, β₂ = 0.999, ε = 1e-8 and the leaky slope 0.01.
func (c Config) WithDefaults() Config {
	c.Beta1 = cmp.Or(c.Beta1, 0.9)
	c.Beta2 = cmp.Or(c.Beta2, 0.999)
	c.Epsilon = cmp.Or(c.Epsilon, 1e-8)
	c.LeakySlope = cmp.Or(c.LeakySlope, 0.01)
	c.Alpha = cmp.Or(c.Alpha, 0.99)
	return c
}

// Validate reports a setting out of range.
func (c *Config) Validate() error {
	if len(c.Widths) < 1 || len(c.Widths) > MaxDepth {
		return fmt.Errorf("nn: %d hidden layers; 1 to %d are supported", len(c.Widths), MaxDepth)
	}
	for i, w := range c.Widths {
		if w < 1 {
			return fmt.Errorf("nn: hidden layer %d has width %d", i+1, w)
		}
	}
	if !slices.Contains(Activations(), c.Activation) {
		names := make([]string, 0, len(Activations()))
		for _, a := range Activations() {
			names = append(names, string(a))
		}
		return fmt.Errorf("nn: unknown activation %q (known: %s)", c.Activation, strings.Join(names, ", "))
	}
	if c.Activation == Power && !(c.Power > 0 && c.Power < math.Inf(1)) {
		return fmt.Errorf("nn: the power activation needs an exponent > 0, not %v", c.Power)
	}
	switch c.Optimizer {
	case SGD, Adam, RMSprop:
	default:
		return fmt.Errorf("nn: unknown optimizer %q (known: sgd, adam, rmsprop)", c.Optimizer)
	}
	switch c.Init {
	case InitNormal, InitPyTorch:
	case InitUniform:
		if !(c.InitRange > 0) || math.IsInf(c.InitRange, 0) {
			return fmt.Errorf("nn: uniform initialization needs a range a > 0 for U[-a, a], not %v", c.InitRange)
		}
	default:
		return fmt.Errorf("nn: unknown initialization %q (known: normal, uniform, pytorch)", c.Init)
	}
	if !(c.Alpha >= 0 && c.Alpha < 1) {
		return fmt.Errorf("nn: RMSprop's alpha %v must be in [0, 1) (0: the default 0.99)", c.Alpha)
	}
	if !(c.LR > 0) || math.IsInf(c.LR, 0) {
		return fmt.Errorf("nn: learning rate %v must be a positive number", c.LR)
	}
	if !(c.Momentum >= 0 && c.Momentum < 1) {
		return fmt.Errorf("nn: momentum %v must be in [0, 1)", c.Momentum)
	}
	for _, b := range []struct {
		name string
		v    float64
	}{{"beta1", c.Beta1}, {"beta2", c.Beta2}} {
		if !(b.v >= 0 && b.v < 1) {
			return fmt.Errorf("nn: Adam's %s %v must be in [0, 1) (0: the default)", b.name, b.v)
		}
	}
	if !(c.Epsilon >= 0) || math.IsInf(c.Epsilon, 0) {
		return fmt.Errorf("nn: Adam's epsilon %v must be a finite number ≥ 0 (0: the default)", c.Epsilon)
	}
	if !(c.LeakySlope >= 0 && c.LeakySlope < 1) {
		return fmt.Errorf("nn: leaky slope %v must be in [0, 1) (0: the default 0.01)", c.LeakySlope)
	}
	if len(c.InitScale) > len(c.Widths)+1 {
		return fmt.Errorf("nn: %d initialization scales for %d layers", len(c.InitScale), len(c.Widths)+1)
	}
	for _, s := range c.InitScale {
		if s < 0 || math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("nn: initialization scale %v must be a finite number ≥ 0", s)
		}
	}
	if c.BatchSize < 0 {
		return fmt.Errorf("nn: batch size %d", c.BatchSize)
	}
	if c.WeightDecay < 0 || math.IsNaN(c.WeightDecay) || math.IsInf(c.WeightDecay, 0) {
		return fmt.Errorf("nn: weight decay %v must be a finite number ≥ 0", c.WeightDecay)
	}
	return nil
}

// Layer is one affine map: z = h·Wᵀ + b, W out×in (row-major).
type Layer struct {
	In, Out int
	W       []float64
	B       []float64 // nil without biases
}

// Network is a fully connected network: hidden layers with the activation,
// then a linear output layer.
type Network struct {
	Layers     []Layer
	Activation Activation
	LeakySlope float64
	Power      float64 // the Power activation's exponent
}

// New draws a network for in inputs and out outputs.
func New(cfg Config, in, out int) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if in < 1 || out < 1 {
		return nil, fmt.Errorf("nn: %d inputs and %d outputs", in, out)
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x11))
	net := &Network{Activation: cfg.Activation, LeakySlope: cfg.LeakySlope, Power: cfg.Power}
	if net.LeakySlope == 0 {
		net.LeakySlope = 0.01
	}
	sizes := append(append([]int{in}, cfg.Widths...), out)
	for l := 0; l+1 < len(sizes); l++ {
		fanIn, fanOut := sizes[l], sizes[l+1]
		gain := 1.0 // He initialization for the layers a ReLU follows
		if l+2 < len(sizes) && (cfg.Activation == ReLU || cfg.Activation == LeakyReLU) {
			gain = 2
		}
		scale := 1.0
		if l < len(cfg.InitScale) && cfg.InitScale[l] > 0 {
			scale = cfg.InitScale[l]
		}
		ly := Layer{In: fanIn, Out: fanOut, W: make([]float64, fanOut*fanIn)}
		if cfg.Bias {
			ly.B = make([]float64, fanOut)
		}
		switch cfg.Init {
		case InitUniform, InitPyTorch:
			a := cfg.InitRange
			if cfg.Init == InitPyTorch {
				a = 1 / math.Sqrt(float64(fanIn))
			}
			for i := range ly.W {
				ly.W[i] = scale * a * (2*r.Float64() - 1)
			}
			for i := range ly.B {
				ly.B[i] = scale * a * (2*r.Float64() - 1)
			}
		default:
			std := scale * math.Sqrt(gain/float64(fanIn))
			for i := range ly.W {
				ly.W[i] = std * r.NormFloat64()
			}
		}
		net.Layers = append(net.Layers, ly)
	}
	return net, nil
}

// In and Out are the network's input and output sizes.
func (n *Network) In() int  { return n.Layers[0].In }
func (n *Network) Out() int { return n.Layers[len(n.Layers)-1].Out }

// Clone returns a deep copy (for example the initialization, to measure
// how far training moved the weights).
func (n *Network) Clone() *Network {
	c := &Network{Activation: n.Activation, LeakySlope: n.LeakySlope, Power: n.Power}
	for _, l := range n.Layers {
		cl := Layer{In: l.In, Out: l.Out, W: append([]float64(nil), l.W...)}
		if l.B != nil {
			cl.B = append([]float64(nil), l.B...)
		}
		c.Layers = append(c.Layers, cl)
	}
	return c
}

func (n *Network) act(z float64) float64 {
	switch n.Activation {
	case ReLU:
		return max(z, 0)
	case LeakyReLU:
		if z < 0 {
			return n.LeakySlope * z
		}
		return z
	case Tanh:
		return math.Tanh(z)
	case Sine:
		return math.Sin(z)
	default:
		return n.actMore(z)
	}
}

// deriv is σ'(z).
func (n *Network) deriv(z float64) float64 {
	switch n.Activation {
	case ReLU:
		if z > 0 {
			return 1
		}
		return 0
	case LeakyReLU:
		if z < 0 {
			return n.LeakySlope
		}
		return 1
	case Tanh:
		t := math.Tanh(z)
		return 1 - t*t
	case Sine:
		return math.Cos(z)
	default:
		return n.derivMore(z)
	}
}

// Pass is one forward pass over rows: the input of each layer (H[0] is
// the batch) and its pre-activations Z.
type Pass struct {
	Rows int
	H    [][]float64 // H[l]: rows × Layers[l].In, the input of layer l
	Z    [][]float64 // Z[l]: rows × Layers[l].Out
}

// Output is the network's output, rows × Out.
func (p *Pass) Output() []float64 { return p.Z[len(p.Z)-1] }

// Forward runs rows of x (rows × In) through the network.
func (n *Network) Forward(x []float64, rows int) *Pass {
	p := &Pass{Rows: rows, H: make([][]float64, len(n.Layers)), Z: make([][]float64, len(n.Layers))}
	h := x[:rows*n.In()]
	for l := range n.Layers {
		ly := &n.Layers[l]
		p.H[l] = h
		z := make([]float64, rows*ly.Out)
		if ly.B != nil {
			for i := 0; i < rows; i++ {
				copy(z[i*ly.Out:(i+1)*ly.Out], ly.B)
			}
		}
		beta := 0.0
		if ly.B != nil {
			beta = 1
		}
		linalg.Gemm(false, true, rows, ly.Out, ly.In, 1, h, ly.In, ly.W, ly.In, beta, z, ly.Out)
		p.Z[l] = z
		if l+1 < len(n.Layers) {
			next := make([]float64, len(z))
			for i, v := range z {
				next[i] = n.act(v)
			}
			h = next
		}
	}
	return p
}

// Predict returns the outputs for rows of x.
func (n *Network) Predict(x []float64, rows int) []float64 { return n.Forward(x, rows).Output() }

// Grads are the gradients of a loss with respect to every weight and bias,
// shaped as the network's layers.
type Grads struct {
	W, B [][]float64
}

// Backward back-propagates dOut (rows × Out, the loss's gradient with
// respect to the outputs) through the pass. It returns the weight
// gradients and, per layer, the gradient with respect to its
// pre-activations (rows × Out of the layer), which the feature measures
// use.
func (n *Network) Backward(p *Pass, dOut []float64) (*Grads, [][]float64) {
	deltas := n.Deltas(p, dOut)
	L := len(n.Layers)
	g := &Grads{W: make([][]float64, L), B: make([][]float64, L)}
	for l := range n.Layers {
		ly := &n.Layers[l]
		delta := deltas[l]
		g.W[l] = make([]float64, ly.Out*ly.In)
		linalg.Gemm(true, false, ly.Out, ly.In, p.Rows, 1, delta, ly.Out, p.H[l], ly.In, 0, g.W[l], ly.In)
		if ly.B != nil {
			gb := make([]float64, ly.Out)
			for i := 0; i < p.Rows; i++ {
				for j, v := range delta[i*ly.Out : (i+1)*ly.Out] {
					gb[j] += v
				}
			}
			g.B[l] = gb
		}
	}
	return g, deltas
}

// Deltas back-propagates dOut and returns, per layer, the gradient with
// respect to its pre-activations (rows × Out of the layer).
func (n *Network) Deltas(p *Pass, dOut []float64) [][]float64 {
	L := len(n.Layers)
	deltas := make([][]float64, L)
	delta := dOut
	for l := L - 1; l >= 0; l-- {
		ly := &n.Layers[l]
		deltas[l] = delta
		if l == 0 {
			break
		}
		prev := make([]float64, p.Rows*ly.In)
		linalg.Gemm(false, false, p.Rows, ly.In, ly.Out, 1, delta, ly.Out, ly.W, ly.In, 0, prev, ly.In)
		zp := p.Z[l-1]
		for i := range prev {
			prev[i] *= n.deriv(zp[i])
		}
		delta = prev
	}
	return deltas
}

// MSE is the mean over rows and outputs of the squared error of out
// against y, and its gradient with respect to out.
func MSE(out, y []float64) (loss float64, grad []float64) {
	grad = make([]float64, len(out))
	for i, v := range out {
		d := v - y[i]
		loss += d * d
		grad[i] = 2 * d / float64(len(out))
	}
	return loss / float64(len(out)), grad
}

// Trainer trains a network by mini-batches.
type Trainer struct {
	Net  *Network
	cfg  Config
	src  *rand.PCG // rng's state, saved by checkpoints
	rng  *rand.Rand
	m, v Grads // momentum / Adam moments
	step int
	// epoch counts the epochs made (Epoch and Train), saved by checkpoints.
	epoch int
}

// NewTrainer prepares training of net with cfg's optimizer.
func NewTrainer(net *Network, cfg Config) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	src := rand.NewPCG(cfg.Seed, 0x22)
	t := &Trainer{Net: net, cfg: cfg, src: src, rng: rand.New(src)}
	zeros := func() Grads {
		g := Grads{W: make([][]float64, len(net.Layers)), B: make([][]float64, len(net.Layers))}
		for l, ly := range net.Layers {
			g.W[l] = make([]float64, len(ly.W))
			if ly.B != nil {
				g.B[l] = make([]float64, len(ly.B))
			}
		}
		return g
	}
	t.m, t.v = zeros(), zeros()
	return t, nil
}

// Steps is the number of updates made so far.
func (t *Trainer) Steps() int { return t.step }

// Step makes one update on rows of x (rows × In) with targets y (rows ×
// Out) and returns the batch's loss before the update.
func (t *Trainer) Step(x, y []float64, rows int) float64 {
	p := t.Net.Forward(x, rows)
	loss, dOut := MSE(p.Output(), y[:rows*t.Net.Out()])
	g, _ := t.Net.Backward(p, dOut)
	t.apply(g)
	return loss
}

func (t *Trainer) apply(g *Grads) {
	t.step++
	c := t.cfg
	update := func(w, grad, m, v []float64) {
		switch c.Optimizer {
		case SGD:
			for i := range w {
				m[i] = c.Momentum*m[i] + grad[i]
				w[i] -= c.LR * m[i]
			}
		case Adam:
			AdamStep(w, grad, m, v, c.LR, c.Beta1, c.Beta2, c.Epsilon, t.step)
		case RMSprop:
			rmspropStep(w, grad, m, v, c.LR, c.Alpha, c.Momentum, c.Epsilon)
		}
	}
	for l := range t.Net.Layers {
		ly := &t.Net.Layers[l]
		if c.WeightDecay > 0 {
			for i, w := range ly.W {
				g.W[l][i] += c.WeightDecay * w
			}
		}
		update(ly.W, g.W[l], t.m.W[l], t.v.W[l])
		if ly.B != nil {
			update(ly.B, g.B[l], t.m.B[l], t.v.B[l])
		}
	}
}

// Epoch makes one pass over n rows in a seeded random order, in batches
// of BatchSize, and returns the mean batch loss. It stops between batches
// when ctx is done.
func (t *Trainer) Epoch(ctx context.Context, x, y []float64, n int) (float64, error) {
	if n < 1 {
		return 0, errors.New("nn: no training rows")
	}
	d, k := t.Net.In(), t.Net.Out()
	if len(x) != n*d || len(y) != n*k {
		return 0, fmt.Errorf("nn: %d inputs and %d targets are not %d rows of %d and %d", len(x), len(y), n, d, k)
	}
	loss, err := Batches(ctx, t.rng.Perm(n), x, y, d, k, t.cfg.BatchSize, t.Step)
	if err == nil {
		t.epoch++
	}
	return loss, err
}

// AdamStep is one Adam update (Kingma and Ba, with bias correction) of the
// parameters w with gradient grad and moments m, v, at step ≥ 1.
func AdamStep(w, grad, m, v []float64, lr, beta1, beta2, eps float64, step int) {
	b1t := 1 - math.Pow(beta1, float64(step))
	b2t := 1 - math.Pow(beta2, float64(step))
	parallelRange(len(w), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			m[i] = beta1*m[i] + (1-beta1)*grad[i]
			v[i] = beta2*v[i] + (1-beta2)*grad[i]*grad[i]
			w[i] -= lr * (m[i] / b1t) / (math.Sqrt(v[i]/b2t) + eps)
		}
	})
}

// Batches runs step on the rows of x (d inputs) and y (k targets) in the
// given order, bs rows at a time (bs ≤ 0: all at once), copied into one
// reused batch buffer, and returns the mean of step's losses. It stops
// between batches when ctx is done.
func Batches(ctx context.Context, order []int, x, y []float64, d, k, bs int, step func(bx, by []float64, rows int) float64) (float64, error) {
	n := len(order)
	if bs <= 0 || bs > n {
		bs = n
	}
	bx, by := make([]float64, bs*d), make([]float64, bs*k)
	total, batches := 0.0, 0
	for b0 := 0; b0 < n; b0 += bs {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		rows := min(bs, n-b0)
		for i := 0; i < rows; i++ {
			r := order[b0+i]
			copy(bx[i*d:(i+1)*d], x[r*d:(r+1)*d])
			copy(by[i*k:(i+1)*k], y[r*k:(r+1)*k])
		}
		total += step(bx[:rows*d], by[:rows*k], rows)
		batches++
	}
	return total / float64(batches), nil
}
