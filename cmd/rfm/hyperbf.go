package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/hyperbf"
)

func cmdHyperBF(e *env, args []string) error {
	var (
		data, test, target, scale string
		centers, epochs, batch    int
		measureRows               int
		lr, bandwidth             float64
		compare, asJSON           bool
		seed                      uint64
		common                    commonFlags
	)
	f := newFlagSet("hyperbf", "rfm hyperbf --data FILE --test FILE --target COL [flags]",
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
are printed beside GD-HyperBF's.`,
		`rfm hyperbf --data mnist_train.csv --test mnist_test.csv --target label --centers 2000 --epochs 20 --compare`)
	f.Section("Data")
	f.String(&data, "data", "", "training table `FILE`")
	f.String(&test, "test", "", "test table `FILE` (same columns)")
	f.String(&target, "target", "", "the target `COL` (classification: one-hot outputs)")
	f.String(&scale, "scale", "standard", "numeric column scaling `S`: standard, none, minmax or robust")
	f.Section("Network")
	f.Int(&centers, "centers", 1000, "centres `M`, drawn from the training rows")
	f.Float(&bandwidth, "bandwidth", 0, "L of exp(−s/L) (`L`; 0: the median squared distance between rows)")
	f.Float(&lr, "lr", 1e-3, "Adam learning `RATE`")
	f.Int(&epochs, "epochs", 20, "passes over the training rows `N`")
	f.Int(&batch, "batch", 256, "rows per step `N`")
	f.Int(&measureRows, "measure-rows", 1000, "training rows `N` on which WᵀW is compared with the AGOP each epoch (0: none)")
	f.Uint64(&seed, "seed", 1, "random `SEED`")
	f.Bool(&compare, "compare", false, "also fit Laplace, RFM and AGOP-HyperBF (RFM with the Gaussian kernel)")
	f.Section("Output")
	f.Bool(&asJSON, "json", false, "print the result as JSON on stdout")
	f.Int(&common.threads, "threads", 0, "threads for the linear algebra (`N`; 0 = one per CPU, at most 256)")
	if _, err := f.Parse(args, e.stderr); err != nil {
		return err
	}
	if err := common.apply(); err != nil {
		return err
	}
	switch {
	case data == "" || test == "" || target == "":
		return usagef("--data, --test and --target are required")
	case centers < 1:
		return usagef("--centers %d: must be at least 1", centers)
	case epochs < 0 || batch < 1:
		return usagef("--epochs must be ≥ 0 and --batch ≥ 1")
	case !(lr > 0) || math.IsInf(lr, 0) || !(bandwidth >= 0) || math.IsInf(bandwidth, 0):
		return usagef("--lr must be a finite number > 0 and --bandwidth a finite number ≥ 0")
	}
	sc := dataset.Scaling(scale)
	if err := sc.Check(); err != nil {
		return usagef("--scale: %v", err)
	}
	t, err := readTable(e.ctx, data, dataset.ReadOptions{})
	if err != nil {
		return err
	}
	tg, p, err := fitEncoding(t, data, target, "auto", sc)
	if err != nil {
		return err
	}
	tr, err := encodeRows(t, data, p, tg)
	if err != nil {
		return err
	}
	opt, err := rowReadOptions(p, tg, true, &readFlags{})
	if err != nil {
		return err
	}
	tt, err := readRows(e.ctx, test, opt, map[string]string{target: "target column"})
	if err != nil {
		return err
	}
	te, err := encodeRows(tt, test, p, tg)
	if err != nil {
		return err
	}
	if centers > tr.N {
		return usagef("--centers %d: the training table has %d rows", centers, tr.N)
	}
	cfg := hyperbf.Config{Centers: centers, Bandwidth: bandwidth, LR: lr, Epochs: epochs, BatchSize: batch, Seed: seed}
	res, err := hyperbf.Study(e.ctx, tr, te, hyperbf.StudyOptions{Config: cfg, MeasureRows: measureRows, Compare: compare,
		Progress: func(p hyperbf.StudyProgress) {
			if p.Fitting != "" {
				fmt.Fprintf(e.stderr, "hyperbf: fitting %s ...\n", p.Fitting)
			} else if !asJSON {
				r := p.Epoch
				fmt.Fprintf(e.stderr, "hyperbf: epoch %d: train loss %.4g, %s %.4g, ρ(WᵀW, AGOP) %.3f (%.0fs)\n", r.Epoch, r.TrainLoss, hyperbf.MetricName(tr), r.TestScore, r.MetricVsAGOP.Cosine, r.Seconds)
			}
		}})
	if err != nil {
		return err
	}
	res.Data, res.Test = data, test
	if asJSON {
		return writeJSON(e.stdout, res)
	}
	printHyperBF(e.stdout, res)
	return nil
}

func printHyperBF(w io.Writer, res *hyperbf.StudyResult) {
	metric := res.Metric
	fmt.Fprintf(w, "data     %s (%d rows), test %s; %d centres, L = %.4g\n\n", res.Data, res.Rows, res.Test, res.Centers, res.L)
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
