package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/cifar10"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/hyperbf"
	"github.com/rfmkit/rfm/mnist"
)

func cmdHyperBF(e *env, args []string) error {
	var (
		data, test, target, scale string
		mnistDir, cifarDir        string
		pixels, schedule          string
		centers, epochs, batch    int
		measureRows, rank, rounds int
		lr, bandwidth, validation float64
		compare, asJSON, relative bool
		seed                      uint64
		common                    commonFlags
	)
	f := newFlagSet("hyperbf", "rfm hyperbf --data FILE --test FILE --target COL | --data mnist|cifar10 [flags]",
		`Train a HyperBF network with a learned metric (Poggio and Girosi 1990; SPEC §7),
f(x) = Σ_α c_α exp(−‖x − t_α‖²_W / L), by gradient descent (Adam) on the
coefficients c, the centres t and W ("GD-HyperBF"), from centres at seeded
training rows, W = I and c by ridge least squares. Each epoch reports the
training loss, the test score and how the learned metric WᵀW aligns with the
AGOP of the function the network computes (the claim that the AGOP is a greedy
estimate of WᵀW under gradient descent), on --measure-rows training rows.

With --compare, the same data is also fitted by a Laplace kernel machine, an
RFM (Laplace, the defaults) and "AGOP-HyperBF": centres at every training row,
c solved, WᵀW set to the AGOP, that is an RFM with the Gaussian kernel of the
same bandwidth (exp(−s/L) = exp(−s/(2ℓ²)) with ℓ = √(L/2)); their test scores
are printed beside GD-HyperBF's.

--data mnist or cifar10 takes the shared image sets (the 10 000 MNIST training
digits and the official test set; the CIFAR-10 subset's 10 000 training and
5 000 test images), their pixels scaled by --pixels. --validation F scores on a
seeded, stratified share F of the training rows instead of the test set, to
choose settings without the test set.`,
		`rfm hyperbf --data mnist_train.csv --test mnist_test.csv --target label --centers 2000 --epochs 20 --compare
rfm hyperbf --data cifar10 --rank 256 --centers 2000 --validation 0.2`)
	f.Section("Data")
	f.String(&data, "data", "", "training table `FILE`, or mnist or cifar10 (the shared image sets)")
	f.String(&test, "test", "", "test table `FILE` (same columns)")
	f.String(&target, "target", "", "the target `COL` (classification: one-hot outputs)")
	f.String(&scale, "scale", "standard", "numeric column scaling `S`: standard, none, minmax or robust")
	f.String(&mnistDir, "mnist", "../shared/data/mnist", "--data mnist: the MNIST folder `DIR`")
	f.String(&cifarDir, "cifar10", "../shared/data/cifar10", "--data cifar10: the CIFAR-10 folder `DIR`")
	f.String(&pixels, "pixels", "unit", "--data mnist or cifar10: pixel scaling `S`: unit ([0, 1]), l2 (each image to norm 1), center or standard (per pixel, training statistics)")
	f.Float(&validation, "validation", 0, "score on a seeded share `F` of the training rows instead of the test set (0: the test set)")
	f.Section("Network")
	f.Int(&centers, "centers", 1000, "centres `M`, drawn from the training rows")
	f.Float(&bandwidth, "bandwidth", 0, "L of exp(−s/L) (`L`; 0: the median squared distance between rows)")
	f.Int(&rank, "rank", 0, "rows `R` of W (0: d, W = I; fewer: W starts as the top R principal directions)")
	f.Float(&lr, "lr", 1e-3, "Adam learning `RATE`")
	f.Bool(&relative, "relative-lr", false, "scale the steps of the coefficients, the centres and W by the RMS of their initial values")
	f.String(&schedule, "lr-schedule", "constant", "learning-rate `S` over the epochs: constant, cosine or step (×0.1 at half, ×0.01 at three quarters)")
	f.Int(&epochs, "epochs", 20, "passes over the training rows `N`")
	f.Int(&batch, "batch", 256, "rows per step `N`")
	f.Int(&measureRows, "measure-rows", 1000, "training rows `N` on which WᵀW is compared with the AGOP each epoch (0: none)")
	f.Uint64(&seed, "seed", 1, "random `SEED`")
	f.Bool(&compare, "compare", false, "also fit Laplace, RFM and AGOP-HyperBF (RFM with the Gaussian kernel)")
	f.Int(&rounds, "compare-rounds", 0, "AGOP updates `N` of the compared RFM and AGOP-HyperBF (0: the RFM default, 5)")
	f.Section("Output")
	f.Bool(&asJSON, "json", false, "print the result as JSON on stdout")
	f.Int(&common.threads, "threads", 0, "threads for the linear algebra (`N`; 0 = one per CPU, at most 256)")
	if _, err := f.Parse(args, e.stderr); err != nil {
		return err
	}
	if err := common.apply(); err != nil {
		return err
	}
	images := data == "mnist" || data == "cifar10"
	switch {
	case images && (test != "" || target != ""):
		return usagef("--data %s takes its own test set and labels; --test and --target are for tables", data)
	case !images && (data == "" || (test == "" && validation == 0) || target == ""):
		return usagef("--data, --test and --target are required")
	case centers < 1:
		return usagef("--centers %d: must be at least 1", centers)
	case rank < 0 || rounds < 0:
		return usagef("--rank %d and --compare-rounds %d must be ≥ 0", rank, rounds)
	case epochs < 0 || batch < 1:
		return usagef("--epochs must be ≥ 0 and --batch ≥ 1")
	case !(lr > 0) || math.IsInf(lr, 0) || !(bandwidth >= 0) || math.IsInf(bandwidth, 0):
		return usagef("--lr must be a finite number > 0 and --bandwidth a finite number ≥ 0")
	case !(validation >= 0 && validation < 1):
		return usagef("--validation %v: must be in [0, 1)", validation)
	case !slices.Contains(hyperbf.Schedules, schedule):
		return usagef("--lr-schedule %q: want one of %s", schedule, strings.Join(hyperbf.Schedules, ", "))
	case !slices.Contains(hyperbf.PixelScalings, pixels):
		return usagef("--pixels %q: want one of %s", pixels, strings.Join(hyperbf.PixelScalings, ", "))
	}
	var tr, te *rfm.Dataset
	var err error
	if images {
		tr, te, err = hyperbfImages(data, mnistDir, cifarDir, pixels)
		test = map[string]string{"mnist": mnistDir, "cifar10": cifarDir}[data] + " (test set)"
	} else {
		tr, te, err = hyperbfTables(e, data, test, target, scale, validation > 0)
	}
	if err != nil {
		return err
	}
	if validation > 0 {
		test = fmt.Sprintf("validation: %g of the training rows", validation)
	}
	if centers > tr.N {
		return usagef("--centers %d: the training table has %d rows", centers, tr.N)
	}
	cfg := hyperbf.Config{Centers: centers, Bandwidth: bandwidth, Rank: rank, LR: lr, RelativeLR: relative, Schedule: schedule, Epochs: epochs, BatchSize: batch, Seed: seed}
	res, err := hyperbf.Study(e.ctx, tr, te, hyperbf.StudyOptions{Config: cfg, MeasureRows: measureRows, Compare: compare, Rounds: rounds, Validation: validation,
		Progress: func(p hyperbf.StudyProgress) {
			if p.Fitting != "" {
				fmt.Fprintf(e.stderr, "hyperbf: fitting %s ...\n", p.Fitting)
			} else {
				r := p.Epoch
				fmt.Fprintf(e.stderr, "hyperbf: epoch %d: train loss %.4g, %s %.4g, ρ(WᵀW, AGOP) %.3f (%.0fs)\n", r.Epoch, r.TrainLoss, scoreName(tr, validation), r.TestScore, r.MetricVsAGOP.Cosine, r.Seconds)
			}
		}})
	if err != nil {
		return err
	}
	res.Data, res.Test = data, test
	if images {
		res.Pixels = pixels
	}
	if asJSON {
		return writeJSON(e.stdout, res)
	}
	printHyperBF(e.stdout, res)
	return nil
}

// hyperbfTables reads the training table, fits the encoding on it and
// encodes the test table with it (none with a validation share).
func hyperbfTables(e *env, data, test, target, scale string, validation bool) (tr, te *rfm.Dataset, err error) {
	sc := dataset.Scaling(scale)
	if err := sc.Check(); err != nil {
		return nil, nil, usagef("--scale: %v", err)
	}
	t, err := readTable(e.ctx, data, dataset.ReadOptions{})
	if err != nil {
		return nil, nil, err
	}
	tg, p, err := fitEncoding(t, data, target, "auto", sc)
	if err != nil {
		return nil, nil, err
	}
	if tr, err = encodeRows(t, data, p, tg); err != nil || validation {
		return tr, nil, err
	}
	opt, err := rowReadOptions(p, tg, true, &readFlags{})
	if err != nil {
		return nil, nil, err
	}
	tt, err := readRows(e.ctx, test, opt, map[string]string{target: "target column"})
	if err != nil {
		return nil, nil, err
	}
	te, err = encodeRows(tt, test, p, tg)
	return tr, te, err
}

// hyperbfImages loads the shared MNIST or CIFAR-10 images as training and
// test sets, the pixels scaled with the training statistics.
func hyperbfImages(source, mnistDir, cifarDir, pixels string) (tr, te *rfm.Dataset, err error) {
	if source == "mnist" {
		a, b, err := mnist.Load(mnistDir)
		if err != nil {
			return nil, nil, err
		}
		tr = &rfm.Dataset{X: a.X, N: a.N, D: a.D, Labels: a.Y, Classes: mnist.NumClasses}
		te = &rfm.Dataset{X: b.X, N: b.N, D: b.D, Labels: b.Y, Classes: mnist.NumClasses}
	} else {
		a, b, err := cifar10.Load(cifarDir)
		if err != nil {
			return nil, nil, err
		}
		tr = &rfm.Dataset{X: a.X, N: a.N, D: a.D, Labels: a.Y, Classes: cifar10.NumClasses}
		te = &rfm.Dataset{X: b.X, N: b.N, D: b.D, Labels: b.Y, Classes: cifar10.NumClasses}
	}
	return tr, te, hyperbf.ScalePixels(pixels, tr, te)
}

// scoreName is what the epochs' scores are on.
func scoreName(tr *rfm.Dataset, validation float64) string {
	if validation > 0 {
		return strings.Replace(hyperbf.MetricName(tr), "test", "validation", 1)
	}
	return hyperbf.MetricName(tr)
}

func printHyperBF(w io.Writer, res *hyperbf.StudyResult) {
	metric := res.Metric
	fmt.Fprintf(w, "data     %s (%d rows), scored on %s (%d rows); %d centres, W of %d rows, L = %.4g\n\n", res.Data, res.Rows, res.Test, res.ScoredRows, res.Centers, res.Rank, res.L)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "epoch\ttrain MSE\t%s\tρ(WᵀW, AGOP)\ttop-eig\tseconds\t\n", metric)
	for _, r := range res.Epochs {
		loss := "-"
		if r.Epoch > 0 {
			loss = fmt.Sprintf("%.4g", r.TrainLoss)
		}
		fmt.Fprintf(tw, "%d\t%s\t%.4g\t%.3f\t%.3f\t%.0f\t\n", r.Epoch, loss, r.TestScore, r.MetricVsAGOP.Cosine, r.MetricVsAGOP.TopEig, r.Seconds)
	}
	tw.Flush()
	if res.Compare != nil {
		fmt.Fprintln(w)
		for _, name := range hyperbf.CompareOrder {
			note := ""
			if r, ok := res.Rounds[name]; ok && name != "Laplace" {
				note = fmt.Sprintf("  (M after %d AGOP updates, chosen on a holdout)", r)
			}
			fmt.Fprintf(w, "%-13s %s %.4g%s\n", name, strings.TrimSuffix(metric, " %"), res.Compare[name], note)
		}
	}
}
