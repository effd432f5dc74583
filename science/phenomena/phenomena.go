package phenomena

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/internal/experiment"
	"github.com/rfmkit/rfm/mnist"
	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/plot"
)

// The kinds of phenomenon.
const (
	Marker = "marker"
	Halves = "halves"
)

// Options say which phenomenon to reproduce and how long to train.
type Options struct {
	Kind        string  // Marker or Halves
	N           int     // training images (≥ 20)
	Epochs      int     // network training epochs (≥ 1)
	Rounds      int     // RFM rounds, each measured (≥ 1)
	LR          float64 // the network's SGD learning rate (> 0)
	WeightDecay float64 // the network's L2 weight decay
	Strength    float64 // Marker: the brightness of its two pixels (a digit stroke is 1)
	Seed        uint64
	// Progress, if set, is called with each point as it is measured.
	Progress func(Point)
}

// Point is one measurement of a model along training.
type Point struct {
	Model     string  `json:"model"` // "network" or "rfm"
	Time      int     `json:"time"`  // epoch (network) or round (rfm)
	TrainAcc  float64 `json:"train_accuracy"`
	TestAcc   float64 `json:"test_accuracy"`
	TestAcc2  float64 `json:"control_accuracy,omitempty"` // halves: test with the simple half scrambled
	FocusMass float64 `json:"focus_mass"`                 // share of diag(M) or diag(W₁ᵀW₁) on the marker / simple half
}

// Result is what Run measured. The diagonals and the image size are for
// the figures and are not part of the JSON.
type Result struct {
	Kind    string         `json:"kind"`
	Train   int            `json:"train_rows"`
	Test    int            `json:"test_rows"`
	Inputs  int            `json:"inputs"`
	Focus   string         `json:"focus"`
	Points  []Point        `json:"points"`
	Summary map[string]any `json:"summary"`

	NetworkDiag, RFMDiag []float64 `json:"-"` // the last diagonals of W̄₁ᵀW̄₁ and M
	Height, Width        int       `json:"-"` // of the images
}

// Check reports options Run cannot use.
func (o Options) Check() error {
	if o.Kind != Marker && o.Kind != Halves {
		return fmt.Errorf("phenomena: kind %q: want marker or halves", o.Kind)
	}
	if o.N < 20 || o.Epochs < 1 || o.Rounds < 1 || !(o.LR > 0) {
		return fmt.Errorf("phenomena: N ≥ 20, Epochs ≥ 1, Rounds ≥ 1 and LR > 0 are needed")
	}
	cfg := o.NetworkConfig()
	return cfg.Validate()
}

// NetworkConfig is the network trained: 2 × 256 ReLU layers with biases,
// first-layer initialization scaled by 0.1, SGD on one-hot targets.
func (o Options) NetworkConfig() nn.Config {
	cfg := nn.DefaultConfig()
	cfg.LR, cfg.Seed, cfg.Bias, cfg.InitScale, cfg.WeightDecay = o.LR, o.Seed, true, []float64{0.1, 1, 1}, o.WeightDecay
	return cfg
}

// Run builds the phenomenon's data from the digit sets, trains the network
// and fits the RFMs, and returns the measurements.
func Run(ctx context.Context, train, test *mnist.Set, o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	var pd *data
	if o.Kind == Marker {
		pd = markerData(train, test, o.N, o.Strength, o.Seed)
	} else {
		var err error
		if pd, err = halvesData(train, test, o.N, o.Seed); err != nil {
			return nil, err
		}
	}
	res := &Result{Kind: o.Kind, Train: len(pd.trY), Test: len(pd.teY), Inputs: pd.d, Focus: pd.focusName, Summary: map[string]any{}, Height: pd.h, Width: pd.w}
	log := func(p Point) {
		res.Points = append(res.Points, p)
		if o.Progress != nil {
			o.Progress(p)
		}
	}
	var err error
	if res.NetworkDiag, err = runNetwork(ctx, pd, o, log); err != nil {
		return nil, err
	}
	if res.RFMDiag, err = runRFM(ctx, pd, o.Rounds, o.Seed, log); err != nil {
		return nil, err
	}
	res.summarize()
	return res, nil
}

// data is a two-class image set with the pixels that the phenomenon is
// about (the marker, the simple half).
type data struct {
	trX, teX, ctlX []float64 // ctlX: the test images with a left half of a random class (halves)
	trY, teY       []int
	d, h, w        int
	focus          []bool
	focusName      string
}

// markerData: random digits, label 1 for 10% of them, marked by two
// pixels of brightness v at row 1, columns 1–2 (always blank in MNIST): a
// difference of v·√2 in a space where two digits differ by about 10.
func markerData(train, test *mnist.Set, n int, v float64, seed uint64) *data {
	r := rand.New(rand.NewPCG(seed, 0x3a))
	d := train.D
	pd := &data{d: d, h: train.H, w: train.W, focus: make([]bool, d), focusName: "the marker"}
	marker := []int{1*train.W + 1, 1*train.W + 2}
	for _, p := range marker {
		pd.focus[p] = true
	}
	draw := func(s *mnist.Set, count int) ([]float64, []int) {
		x := make([]float64, 0, count*d)
		y := make([]int, count)
		for i := 0; i < count; i++ {
			img := append([]float64(nil), s.Image(r.IntN(s.N))...)
			if r.Float64() < 0.1 {
				y[i] = 1
				for _, p := range marker {
					img[p] = v
				}
			}
			x = append(x, img...)
		}
		return x, y
	}
	pd.trX, pd.trY = draw(train, n)
	pd.teX, pd.teY = draw(test, 2000)
	return pd
}

// halvesData: 28×56 images, left a 0 (label 0) or a 1 (label 1), right a 3
// or a 5; the control test set scrambles the left half (a random 0 or 1).
func halvesData(train, test *mnist.Set, n int, seed uint64) (*data, error) {
	r := rand.New(rand.NewPCG(seed, 0x4b))
	h, w := train.H, train.W
	pd := &data{d: h * 2 * w, h: h, w: 2 * w, focus: make([]bool, h*2*w), focusName: "the left (simple) half"}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			pd.focus[y*2*w+x] = true
		}
	}
	byClass := func(s *mnist.Set) map[int][]int {
		m := map[int][]int{}
		for i, c := range s.Y {
			m[c] = append(m[c], i)
		}
		return m
	}
	pick := func(idx map[int][]int, c int) int { return idx[c][r.IntN(len(idx[c]))] }
	compose := func(s *mnist.Set, ia, ib int) []float64 {
		a, b := s.Image(ia), s.Image(ib)
		img := make([]float64, h*2*w)
		for y := 0; y < h; y++ {
			copy(img[y*2*w:y*2*w+w], a[y*w:(y+1)*w])
			copy(img[y*2*w+w:(y+1)*2*w], b[y*w:(y+1)*w])
		}
		return img
	}
	simple, hard := [2]int{0, 1}, [2]int{3, 5}
	trIdx, teIdx := byClass(train), byClass(test)
	for _, idx := range []map[int][]int{trIdx, teIdx} {
		for _, c := range []int{0, 1, 3, 5} {
			if len(idx[c]) == 0 {
				return nil, fmt.Errorf("phenomena: halves needs digits 0, 1, 3 and 5 in the training and test sets; there is no %d", c)
			}
		}
	}
	for i := 0; i < n; i++ {
		c := r.IntN(2)
		pd.trX = append(pd.trX, compose(train, pick(trIdx, simple[c]), pick(trIdx, hard[c]))...)
		pd.trY = append(pd.trY, c)
	}
	// The control image of a test image keeps its right half and takes a
	// left half of a random class: a paired comparison (half of the
	// control images still agree, so a model of the left half alone
	// scores 50%).
	for i := 0; i < 2000; i++ {
		c := r.IntN(2)
		right := pick(teIdx, hard[c])
		pd.teX = append(pd.teX, compose(test, pick(teIdx, simple[c]), right)...)
		pd.ctlX = append(pd.ctlX, compose(test, pick(teIdx, simple[r.IntN(2)]), right)...)
		pd.teY = append(pd.teY, c)
	}
	return pd, nil
}

func focusMass(diag []float64, focus []bool) float64 {
	var in, all float64
	for i, v := range diag {
		all += v
		if focus[i] {
			in += v
		}
	}
	if all == 0 {
		return 0
	}
	return in / all
}

// runNetwork trains the network by SGD on one-hot targets and measures at
// log-spaced epochs; it returns the final diagonal of W̄₁ᵀW̄₁.
func runNetwork(ctx context.Context, pd *data, o Options, log func(Point)) ([]float64, error) {
	cfg := o.NetworkConfig()
	net, err := nn.New(cfg, pd.d, 2)
	if err != nil {
		return nil, err
	}
	init := net.Clone()
	tr, _ := nn.NewTrainer(net, cfg)
	y := make([]float64, 2*len(pd.trY))
	for i, c := range pd.trY {
		y[2*i+c] = 1
	}
	n := len(pd.trY)
	record := experiment.LogEpochs(o.Epochs, 12)
	var diag []float64
	for ep := 1; ep <= o.Epochs; ep++ {
		if _, err := tr.Epoch(ctx, pd.trX, y, n); err != nil {
			return nil, err
		}
		if !record[ep] {
			continue
		}
		trOut := net.Predict(pd.trX, n)
		if loss, _ := nn.MSE(trOut, y); math.IsNaN(loss) || math.IsInf(loss, 0) || loss > 1e6 {
			return nil, fmt.Errorf("the network's training diverged by epoch %d (training MSE %v); lower --lr (now %g)", ep, loss, o.LR)
		}
		l := &net.Layers[0]
		diag = make([]float64, pd.d)
		for k := 0; k < l.Out; k++ {
			for j := 0; j < l.In; j++ {
				v := l.W[k*l.In+j] - init.Layers[0].W[k*l.In+j]
				diag[j] += v * v
			}
		}
		p := Point{Model: "network", Time: ep, TrainAcc: experiment.AccuracyPct(trOut, pd.trY, 2),
			TestAcc: experiment.AccuracyPct(net.Predict(pd.teX, len(pd.teY)), pd.teY, 2), FocusMass: focusMass(diag, pd.focus)}
		if pd.ctlX != nil {
			p.TestAcc2 = experiment.AccuracyPct(net.Predict(pd.ctlX, len(pd.teY)), pd.teY, 2)
		}
		log(p)
	}
	return diag, nil
}

// runRFM fits RFMs of 0..rounds AGOP updates (all training rows, the last
// round kept) and measures each; it returns the last diag(M).
func runRFM(ctx context.Context, pd *data, rounds int, seed uint64, log func(Point)) ([]float64, error) {
	n := len(pd.trY)
	var diag []float64
	for t := 0; t <= rounds; t++ {
		cfg := rfm.DefaultConfig()
		cfg.Iters, cfg.ValFraction, cfg.Seed = t, 0, seed
		m, err := rfm.Fit(ctx, cfg, &rfm.Dataset{X: pd.trX, N: n, D: pd.d, Labels: pd.trY, Classes: 2}, nil, nil)
		if err != nil {
			return nil, err
		}
		diag = m.FeatureDiagonal()
		score := func(x []float64, k int) float64 {
			s, err := m.Predict(ctx, x, k)
			if err != nil {
				return 0
			}
			return experiment.AccuracyPct(s, pd.teY[:k], 2)
		}
		trs, _ := m.Predict(ctx, pd.trX, n)
		p := Point{Model: "rfm", Time: t, TrainAcc: experiment.AccuracyPct(trs, pd.trY, 2), TestAcc: score(pd.teX, len(pd.teY)), FocusMass: focusMass(diag, pd.focus)}
		if pd.ctlX != nil {
			p.TestAcc2 = score(pd.ctlX, len(pd.teY))
		}
		log(p)
	}
	return diag, nil
}

func (res *Result) summarize() {
	for _, model := range []string{"network", "rfm"} {
		var first, last *Point
		for i := range res.Points {
			p := &res.Points[i]
			if p.Model != model {
				continue
			}
			if first == nil {
				first = p
			}
			last = p
		}
		if first != nil {
			sum := map[string]float64{"first_test_accuracy": first.TestAcc, "last_test_accuracy": last.TestAcc,
				"first_focus_mass": first.FocusMass, "last_focus_mass": last.FocusMass}
			if res.Kind == Halves {
				sum["last_control_accuracy"] = last.TestAcc2
			}
			res.Summary[model] = sum
		}
	}
}

// WriteFiles draws the accuracy curves and the diagonals into dir (which
// must exist) and writes phenomena.json.
func WriteFiles(ctx context.Context, dir string, res *Result) error {
	for _, model := range []string{"network", "rfm"} {
		var xs []float64
		series := map[string][]float64{}
		for _, p := range res.Points {
			if p.Model != model {
				continue
			}
			xs = append(xs, float64(p.Time))
			series["train accuracy"] = append(series["train accuracy"], p.TrainAcc)
			series["test accuracy"] = append(series["test accuracy"], p.TestAcc)
			series["focus mass × 100"] = append(series["focus mass × 100"], 100*p.FocusMass)
		}
		xl := "epoch"
		if model == "rfm" {
			xl = "round"
		}
		if len(xs) > 1 {
			if err := plot.Curve(filepath.Join(dir, model+"_accuracy.png"), xs, series, xl, "%", fmt.Sprintf("%s (%s): accuracy and weight on %s", res.Kind, model, res.Focus)); err != nil {
				return err
			}
		}
	}
	if err := plot.Image(filepath.Join(dir, "network_diag.png"), res.NetworkDiag, res.Height, res.Width, 1, "diagonal of W̄₁ᵀW̄₁ (network)"); err != nil {
		return err
	}
	if err := plot.Image(filepath.Join(dir, "rfm_diag.png"), res.RFMDiag, res.Height, res.Width, 1, "diagonal of M (RFM)"); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(ctx, filepath.Join(dir, "phenomena.json"), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}
