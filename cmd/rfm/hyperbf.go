package main

import (
	"github.com/rfmkit/rfm/hyperbf"
	"github.com/rfmkit/rfm/internal/cli"
)

func cmdHyperBF(e *env, args []string) error {
	var s hyperbf.Settings
	var asJSON bool
	var common commonFlags
	f := helpFlagSet("hyperbf", "rfm hyperbf --data FILE --test FILE --target COL | --data mnist|cifar10 [flags]")
	f.Section("Data")
	f.String(&s.Data, "data", "", "training table `FILE`, or mnist or cifar10 (the shared image sets)")
	f.String(&s.Test, "test", "", "test table `FILE` (same columns)")
	f.String(&s.Target, "target", "", "the target `COL` (classification: one-hot outputs)")
	f.String(&s.Scale, "scale", "standard", "numeric column scaling `S`: standard, none, minmax or robust")
	f.String(&s.MNISTDir, "mnist", "../shared/data/mnist", "--data mnist: the MNIST folder `DIR`")
	f.String(&s.CIFARDir, "cifar10", "../shared/data/cifar10", "--data cifar10: the CIFAR-10 folder `DIR`")
	f.String(&s.Pixels, "pixels", "unit", "--data mnist or cifar10: pixel scaling `S`: unit ([0, 1]), l2 (each image to norm 1), center or standard (per pixel, training statistics)")
	f.Float(&s.Validation, "validation", 0, "score on a seeded share `F` of the training rows instead of the test set (0: the test set)")
	f.Section("Network")
	f.Int(&s.Centers, "centers", 1000, "centres `M`, drawn from the training rows")
	f.Float(&s.Bandwidth, "bandwidth", 0, "L of exp(−s/L) (`L`; 0: the median squared distance between rows)")
	f.Int(&s.Rank, "rank", 0, "rows `R` of W (0: d, W = I; fewer: W starts as the top R principal directions)")
	f.Float(&s.LR, "lr", 1e-3, "Adam learning `RATE`")
	f.Bool(&s.RelativeLR, "relative-lr", false, "scale the steps of the coefficients, the centres and W by the RMS of their initial values")
	f.String(&s.Schedule, "lr-schedule", "constant", "learning-rate `S` over the epochs: constant, cosine or step (×0.1 at half, ×0.01 at three quarters)")
	f.Int(&s.Epochs, "epochs", 20, "passes over the training rows `N`")
	f.Int(&s.Batch, "batch", 256, "rows per step `N`")
	f.Int(&s.MeasureRows, "measure-rows", 1000, "training rows `N` on which WᵀW is compared with the AGOP each epoch (0: none)")
	f.Uint64(&s.Seed, "seed", 1, "random `SEED`")
	f.Bool(&s.Compare, "compare", false, "also fit Laplace, RFM and AGOP-HyperBF (RFM with the Gaussian kernel)")
	f.Int(&s.Rounds, "compare-rounds", 0, "AGOP updates `N` of the compared RFM and AGOP-HyperBF (0: the RFM default, 5)")
	f.Section("Output")
	f.Bool(&asJSON, "json", false, "print the result as JSON on stdout")
	f.Int(&common.threads, "threads", 0, "threads for the linear algebra (`N`; 0 = one per CPU, at most 256)")
	if _, err := f.Parse(args, e.stderr); err != nil {
		return err
	}
	if err := common.apply(); err != nil {
		return err
	}
	res, err := s.Run(e.ctx, cli.Logger(e.stderr, "hyperbf: ", false))
	if err != nil {
		return err
	}
	return cli.Print(e.stdout, asJSON, res)
}
