package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/mnist"
	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/plot"
)

// phenomenonPoint is one measurement of a model along training.
type phenomenonPoint struct {
	Model     string  `json:"model"` // "network" or "rfm"
	Time      int     `json:"time"`  // epoch (network) or round (rfm)
	TrainAcc  float64 `json:"train_accuracy"`
	TestAcc   float64 `json:"test_accuracy"`
	TestAcc2  float64 `json:"control_accuracy,omitempty"` // halves: test with the simple half scrambled
	FocusMass float64 `json:"focus_mass"`                 // share of diag(M) or diag(W₁ᵀW₁) on the marker / simple half
}

type phenomenaJSON struct {
	Kind    string            `json:"kind"`
	Train   int               `json:"train_rows"`
	Test    int               `json:"test_rows"`
	Inputs  int               `json:"inputs"`
	Focus   string            `json:"focus"`
	Points  []phenomenonPoint `json:"points"`
	Summary map[string]any    `json:"summary"`
}

// phenomenonData is a two-class image set with the pixels that the
// phenomenon is about (the marker, the simple half).
type phenomenonData struct {
	trX, teX, ctlX []float64 // ctlX: the test images with a left half of a random class (halves)
	trY, teY       []int
	d, h, w        int
	focus          []bool
	focusName      string
}

func cmdPhenomena(e *env, args []string) error {
	var (
		kind, dir, out    string
		n, epochs, rounds int
		lr, strength, wd  float64
		seed              uint64
		asJSON            bool
		common            commonFlags
	)
	f := newFlagSet("phenomena", "rfm phenomena --kind marker|halves [--mnist DIR] [--out DIR]",
		`Reproduce feature-learning phenomena on MNIST with a network and an RFM side by
side (issue 13), both on the raw pixels in [0, 1]:

  marker   grokking-like: a small imbalanced two-class set (10% positives) of
           random digits whose label only a faint two-pixel marker in the
           corner (--marker) gives away. The network fits the training rows long before it finds
           the marker; the RFM's round 0 (the plain kernel) predicts the
           majority class. Both jump in test accuracy once their feature
           matrix concentrates on the marker.
  halves   simplicity bias: 28×56 images whose left half is a 0 or a 1 (simple)
           and whose right half is a 3 or a 5 (harder), both predictive. The
           feature matrices put their weight on the simple half, and scrambling
           it (the control accuracy) costs far more than the right half is
           worth.

Reported along training (epochs of the network, rounds of the RFM): training
and test accuracy and the share of the diagonal of the feature matrix (W̄₁ᵀW̄₁,
the RFM's M) on the marker or the simple half. Figures into --out.`,
		`rfm phenomena --kind marker --out out/marker
rfm phenomena --kind halves --out out/halves`)
	f.String(&kind, "kind", "", "`KIND`: marker or halves")
	f.String(&dir, "mnist", "../shared/data/mnist", "the MNIST folder `DIR`")
	f.Int(&n, "n", 1000, "training images `N`")
	f.Int(&epochs, "epochs", 300, "network training epochs `N`")
	f.Int(&rounds, "rounds", 5, "RFM rounds `N` (each measured)")
	f.Float(&lr, "lr", 0.05, "the network's SGD learning `RATE`")
	f.Float(&wd, "weight-decay", 0.001, "the network's L2 weight decay `W`")
	f.Float(&strength, "marker", 0.2, "marker: the brightness `V` of its two pixels (a digit stroke is 1)")
	f.Uint64(&seed, "seed", 1, "random `SEED`")
	f.String(&out, "out", "", "write phenomena.json and figures into `DIR`")
	f.Bool(&asJSON, "json", false, "print the result as JSON on stdout")
	f.Int(&common.threads, "threads", 0, "threads for the linear algebra (`N`; 0 = one per CPU, at most 256)")
	if _, err := f.Parse(args, e.stderr); err != nil {
		return err
	}
	if err := common.apply(); err != nil {
		return err
	}
	if kind != "marker" && kind != "halves" {
		return usagef("--kind %q: want marker or halves", kind)
	}
	if n < 20 || epochs < 1 || rounds < 1 || !(lr > 0) {
		return usagef("--n ≥ 20, --epochs ≥ 1, --rounds ≥ 1 and --lr > 0 are needed")
	}
	train, test, err := mnist.Load(dir)
	if err != nil {
		return err
	}
	var pd *phenomenonData
	if kind == "marker" {
		pd = markerData(train, test, n, strength, seed)
	} else {
		pd = halvesData(train, test, n, seed)
	}
	if out != "" {
		if err := os.MkdirAll(out, 0o755); err != nil {
			return fmt.Errorf("--out %s: %w", out, err)
		}
	}
	res := &phenomenaJSON{Kind: kind, Train: len(pd.trY), Test: len(pd.teY), Inputs: pd.d, Focus: pd.focusName, Summary: map[string]any{}}
	log := func(p phenomenonPoint) {
		res.Points = append(res.Points, p)
		if !asJSON {
			fmt.Fprintf(e.stderr, "phenomena: %s %d: train %.1f%%, test %.1f%%, focus mass %.3f\n", p.Model, p.Time, p.TrainAcc, p.TestAcc, p.FocusMass)
		}
	}
	netDiag, err := runPhenomenonNetwork(e.ctx, pd, epochs, lr, wd, seed, log)
	if err != nil {
		return err
	}
	rfmDiag, err := runPhenomenonRFM(e.ctx, pd, rounds, seed, log)
	if err != nil {
		return err
	}
	summarizePhenomenon(res)
	if out != "" {
		if err := phenomenonFigures(out, res, pd, netDiag, rfmDiag); err != nil {
			return err
		}
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(filepath.Join(out, "phenomena.json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printPhenomenon(e.stdout, res)
	return nil
}

// markerData: random digits, label 1 for 10% of them, marked by two
// pixels of brightness v at row 1, columns 1–2 (always blank in MNIST): a
// difference of v·√2 in a space where two digits differ by about 10.
func markerData(train, test *mnist.Set, n int, v float64, seed uint64) *phenomenonData {
	r := rand.New(rand.NewPCG(seed, 0x3a))
	d := train.D
	pd := &phenomenonData{d: d, h: train.H, w: train.W, focus: make([]bool, d), focusName: "the marker"}
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
func halvesData(train, test *mnist.Set, n int, seed uint64) *phenomenonData {
	r := rand.New(rand.NewPCG(seed, 0x4b))
	h, w := train.H, train.W
	pd := &phenomenonData{d: h * 2 * w, h: h, w: 2 * w, focus: make([]bool, h*2*w), focusName: "the left (simple) half"}
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
	return pd
}

// accuracyPct is the accuracy in percent of the argmax of n×k scores
// against labels (n = len(labels)).
func accuracyPct(scores []float64, labels []int, k int) float64 {
	a, err := metrics.Accuracy(labels, rfm.Argmax(scores, len(labels), k))
	if err != nil {
		return 0
	}
	return 100 * a
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

// runPhenomenonNetwork trains 2 × 256 ReLU layers (first-layer init 0.1)
// by SGD on one-hot targets and measures at log-spaced epochs; it returns
// the final diagonal of W̄₁ᵀW̄₁.
func runPhenomenonNetwork(ctx context.Context, pd *phenomenonData, epochs int, lr, wd float64, seed uint64, log func(phenomenonPoint)) ([]float64, error) {
	cfg := nn.DefaultConfig()
	cfg.LR, cfg.Seed, cfg.Bias, cfg.InitScale, cfg.WeightDecay = lr, seed, true, []float64{0.1, 1, 1}, wd
	if err := cfg.Validate(); err != nil {
		return nil, usagef("%s", strings.TrimPrefix(err.Error(), "nn: "))
	}
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
	record := logEpochs(epochs, 12)
	var diag []float64
	for ep := 1; ep <= epochs; ep++ {
		if _, err := tr.Epoch(ctx, pd.trX, y, n); err != nil {
			return nil, err
		}
		if !record[ep] {
			continue
		}
		trOut := net.Predict(pd.trX, n)
		if loss, _ := nn.MSE(trOut, y); math.IsNaN(loss) || math.IsInf(loss, 0) || loss > 1e6 {
			return nil, fmt.Errorf("the network's training diverged by epoch %d (training MSE %v); lower --lr (now %g)", ep, loss, lr)
		}
		l := &net.Layers[0]
		diag = make([]float64, pd.d)
		for o := 0; o < l.Out; o++ {
			for j := 0; j < l.In; j++ {
				v := l.W[o*l.In+j] - init.Layers[0].W[o*l.In+j]
				diag[j] += v * v
			}
		}
		p := phenomenonPoint{Model: "network", Time: ep, TrainAcc: accuracyPct(trOut, pd.trY, 2),
			TestAcc: accuracyPct(net.Predict(pd.teX, len(pd.teY)), pd.teY, 2), FocusMass: focusMass(diag, pd.focus)}
		if pd.ctlX != nil {
			p.TestAcc2 = accuracyPct(net.Predict(pd.ctlX, len(pd.teY)), pd.teY, 2)
		}
		log(p)
	}
	return diag, nil
}

// runPhenomenonRFM fits RFMs of 0..rounds AGOP updates (all training rows,
// the last round kept) and measures each; it returns the last diag(M).
func runPhenomenonRFM(ctx context.Context, pd *phenomenonData, rounds int, seed uint64, log func(phenomenonPoint)) ([]float64, error) {
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
			return accuracyPct(s, pd.teY[:k], 2)
		}
		trs, _ := m.Predict(ctx, pd.trX, n)
		p := phenomenonPoint{Model: "rfm", Time: t, TrainAcc: accuracyPct(trs, pd.trY, 2), TestAcc: score(pd.teX, len(pd.teY)), FocusMass: focusMass(diag, pd.focus)}
		if pd.ctlX != nil {
			p.TestAcc2 = score(pd.ctlX, len(pd.teY))
		}
		log(p)
	}
	return diag, nil
}

func summarizePhenomenon(res *phenomenaJSON) {
	for _, model := range []string{"network", "rfm"} {
		var first, last *phenomenonPoint
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
			if res.Kind == "halves" {
				sum["last_control_accuracy"] = last.TestAcc2
			}
			res.Summary[model] = sum
		}
	}
}

func phenomenonFigures(dir string, res *phenomenaJSON, pd *phenomenonData, netDiag, rfmDiag []float64) error {
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
	if err := plot.Image(filepath.Join(dir, "network_diag.png"), netDiag, pd.h, pd.w, 1, "diagonal of W̄₁ᵀW̄₁ (network)"); err != nil {
		return err
	}
	return plot.Image(filepath.Join(dir, "rfm_diag.png"), rfmDiag, pd.h, pd.w, 1, "diagonal of M (RFM)")
}

func printPhenomenon(w io.Writer, res *phenomenaJSON) {
	fmt.Fprintf(w, "%s: %d training, %d test images of %d pixels; focus: %s\n\n", res.Kind, res.Train, res.Test, res.Inputs, res.Focus)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tepoch/round\ttrain acc %\ttest acc %\tcontrol acc %\tfocus mass\t")
	for _, p := range res.Points {
		ctl := "-"
		if res.Kind == "halves" {
			ctl = fmt.Sprintf("%.1f", p.TestAcc2)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f\t%s\t%.3f\t\n", p.Model, p.Time, p.TrainAcc, p.TestAcc, ctl, p.FocusMass)
	}
	tw.Flush()
}
