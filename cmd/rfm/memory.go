package main

import (
	"fmt"
	"time"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/memory"
)

// memoryOptions are memory.Options and the flags parsed into them.
type memoryOptions struct {
	memory.Options
	features   listFlag
	timeBudget string
	common     commonFlags
}

func cmdMemory(e *env, args []string) error {
	var o memoryOptions
	f := helpFlagSet("memory", "rfm memory --data mnist|FILE [--mode autoencode|sequence] [--out DIR]")
	o.register(f)
	if _, err := f.Parse(args, e.stderr); err != nil {
		return err
	}
	if err := o.common.apply(); err != nil {
		return err
	}
	return runMemory(e, &o)
}

// register declares the flags.
func (o *memoryOptions) register(f *flagSet) {
	f.Section("Data")
	f.String(&o.Data, "data", "", "`SOURCE`: mnist, or a table FILE")
	f.String(&o.MNISTDir, "mnist", "../shared/data/mnist", "the MNIST folder `DIR`")
	f.Int(&o.Rows, "rows", 10, "mnist, autoencode: the number of images `N` (classes in turn)")
	f.String(&o.Digits, "digits", "0123456789", "mnist, sequence: the digit `PATTERNS` of the sequences, comma-separated")
	f.Int(&o.Sequences, "sequences", 0, "mnist, sequence: `N` sequences, the patterns in turn (0: one per pattern)")
	f.String(&o.Mode, "mode", "autoencode", "`MODE`: autoencode or sequence")
	f.String(&o.Order, "order", "", "table, sequence: the order `COLUMN` (consecutive integers in each sequence)")
	f.String(&o.Group, "group", "", "table, sequence: the `COLUMN` naming each row's sequence (none: one sequence)")
	f.List(&o.features, "features", "table: the value `COLUMNS` (default: every numeric column but --order)")
	f.Section("Network")
	f.Int(&o.Width, "width", 512, "hidden layer `WIDTH`")
	f.Int(&o.Depth, "depth", 30, "hidden layers `N` (1 to 32)")
	f.String(&o.Act, "act", "cosid", "`ACTIVATION`: cosid, selu, leaky-relu, sinlin, swish, relu, tanh, sine, linear, power")
	f.Float(&o.Power, "power", 0, "the power activation's exponent `M` (sign(z)|z|^M)")
	f.Bool(&o.Bias, "bias", true, "layers have biases")
	f.String(&o.Init, "init", "pytorch", "`INIT`: pytorch (U[±1/√fan_in]), uniform (U[±--init-range]) or normal")
	f.Float(&o.InitRange, "init-range", 0.02, "uniform initialization's `A`")
	f.String(&o.Opt, "opt", "adam", "`OPTIMIZER`: adam, rmsprop or sgd")
	f.Float(&o.LR, "lr", 1e-4, "learning `RATE`")
	f.Float(&o.Momentum, "momentum", 0, "sgd and rmsprop momentum `M`")
	f.Float(&o.WeightDecay, "weight-decay", 0, "L2 weight decay `W`")
	f.Float(&o.Alpha, "alpha", 0.99, "rmsprop's smoothing `A`")
	f.Int(&o.Batch, "batch", 0, "rows per step `N` (0: all, full batch)")
	f.Uint64(&o.Seed, "seed", 1, "random `SEED` (initialization, row order, starts)")
	f.Section("Training")
	f.Float(&o.LossTarget, "loss-target", 1e-8, "stop at this mean squared error `L` (0: none)")
	f.Int(&o.Epochs, "epochs", 0, "stop after `N` epochs in all (0: no limit)")
	f.String(&o.timeBudget, "time", "", "stop after this wall `DURATION` of training (e.g. 15m)")
	f.String(&o.Checkpoint, "checkpoint", "", "checkpoint `FILE`, saved every --checkpoint-every epochs and at the end (default memory.ckpt in --out, else the current folder)")
	f.Int(&o.CheckpointEvery, "checkpoint-every", 1000, "epochs `N` between checkpoints (0: only at the end)")
	f.String(&o.Resume, "resume", "", "continue training the checkpoint `FILE` (its network settings win)")
	f.Bool(&o.RequireTarget, "require-target", false, "exit with an error when the loss target is not reached")
	f.Section("Verification and recovery")
	f.Int(&o.PowerIters, "power-iters", 200, "power iterations `N` per example")
	f.Int(&o.Arnoldi, "arnoldi", 30, "also `N` Arnoldi steps per example (the top Ritz value; 0: none)")
	f.Bool(&o.Dense, "dense", true, "also the exact eigenvalues for up to 50 dimensions")
	f.Float(&o.Noise, "noise", 0.1, "noisy copies: the noise's standard deviation `S` (0: none)")
	f.Int(&o.Copies, "copies", 1, "corrupted copies `N` of each example, per corruption")
	f.Bool(&o.Mask, "mask", true, "masked copies: the bottom half of an image (second half of the values) set to 0")
	f.Int(&o.Random, "random", 100, "random starts `N`")
	f.String(&o.RandomKind, "random-kind", "uniform", "`KIND` of random start: uniform (in the data's range) or gaussian")
	f.Float(&o.RandomSigma, "random-sigma", 1, "gaussian random starts' standard deviation `S`")
	f.Float(&o.Tol, "tol", 1e-8, "converged when ‖f^P(x) − x‖ < `T`")
	f.Int(&o.MaxSteps, "max-steps", 1000, "at most `N` steps of f^P per start")
	f.Float(&o.MatchTol, "match-tol", 0, "a limit within `D` of an example is that example; also the largest fixed-point error of a stored example (0: a tenth of the smallest distance between examples)")
	f.Int(&o.Grid, "grid", 60, "2-D: basin grid points `N` per side (0: no basin figure)")
	f.Int(&o.Arrows, "arrows", 20, "2-D: vector field arrows `N` per side")
	f.Float(&o.Margin, "margin", 0.3, "2-D: the grid's margin `M` around the examples (a fraction of their span)")
	f.Section("Width × depth table")
	f.String(&o.SweepWidths, "sweep-widths", "", "train every `WIDTHS` × --sweep-depths cell in both modes on the same examples and write table.json and the heatmaps (comma-separated)")
	f.String(&o.SweepDepths, "sweep-depths", "", "the table's `DEPTHS` (comma-separated)")
	f.Section("Output")
	f.String(&o.Out, "out", "", "write summary.json, basins.png or recovery.png and the checkpoint into `DIR`")
	o.common.register(f, true)
}

func runMemory(e *env, o *memoryOptions) error {
	o.Features = o.features
	if o.timeBudget != "" {
		var err error
		if o.Time, err = time.ParseDuration(o.timeBudget); err != nil || o.Time <= 0 {
			return usagef("--time %q: want a positive duration such as 15m", o.timeBudget)
		}
	}
	o.Log = cli.Logger(e.stderr, "memory: ", o.common.quiet)
	if o.Sweep() {
		cells, err := o.RunSweep(e.ctx)
		if err != nil || o.common.json {
			return jsonOr(e, err, cells)
		}
		for _, c := range cells {
			fmt.Fprintf(e.stdout, "%-10s width %4d depth %2d: stored %3d, loss %.3g (%s)\n", c.Mode, c.Width, c.Depth, c.Stored, c.Loss, c.Training.Stop)
		}
		return nil
	}
	res, data, err := o.Run(e.ctx)
	if err != nil || o.common.json {
		return jsonOr(e, err, res)
	}
	fmt.Fprint(e.stdout, res.Summary(data))
	return nil
}

// jsonOr returns err, or prints v as JSON.
func jsonOr(e *env, err error, v any) error {
	if err != nil {
		return err
	}
	return writeJSON(e.stdout, v)
}
