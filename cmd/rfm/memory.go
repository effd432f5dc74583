package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/memory"
	"github.com/rfmkit/rfm/mnist"
	"github.com/rfmkit/rfm/nn"
)

type memoryOptions struct {
	sweepWidths, sweepDepths                                                                                     string
	data, mnistDir, digits, mode, order, group, act, opt, init, ckpt, resume, out, randomKind, timeBudget        string
	features                                                                                                     listFlag
	arnoldi, rows, sequences, width, depth, batch, epochs, ckptEvery, powerIters, copies, random, maxSteps, grid int
	arrows                                                                                                       int
	lr, momentum, wd, alpha, initRange, power, lossTarget, noise, randomSigma, tol, matchTol, margin             float64
	bias, requireTarget, mask, dense                                                                             bool
	seed                                                                                                         uint64
	common                                                                                                       commonFlags
}

func cmdMemory(e *env, args []string) error {
	var o memoryOptions
	f := newFlagSet("memory", "rfm memory --data mnist|FILE [--mode autoencode|sequence] [--out DIR]",
		`Store examples in an over-parameterized network and check that they are
memories (thesis chapter 2, issue 40). An autoencoder is trained on x_i → x_i,
a sequence encoder on x_i → the next example of its sequence (the last back to
the first), to a loss target (1e-8) or a budget, with checkpoints. Then every
example is verified: its fixed-point error under f^L (L its cycle's length,
1 for an autoencoder) and the top eigenvalue modulus of the Jacobian of f^L
there, by power iteration on forward-mode Jacobian-vector products (the
geometric mean of the growth ‖Jv‖/‖v‖ over the second half of the iterations:
the spectral radius also for complex or negative top eigenvalues; exact
eigenvalues beside it for up to 50 dimensions). An example with top eigenvalue
below 1 is an attractor (a stable limit cycle for sequences). Recovery
iterates f^P (P the cycles' common period) from noisy copies, masked halves
and random points until ‖f^P(x) − x‖ < --tol, and counts the starts that reach
their example, another example, a spurious attractor (a limit that is no
example) or no limit. 2-D examples get the basins of attraction as a figure,
images a recovery strip.

Data: --data mnist takes MNIST training digits (the first unused image of each
class): --rows of them to autoencode, or for --mode sequence one sequence per
--digits pattern (repeated to --sequences). --data FILE reads a table: every
numeric column (or --features) is a value; --order (and --group for several
sequences) orders the rows of sequences.`,
		`rfm memory --data results/memory/points6.csv --width 512 --depth 30 --act cosid --out out/2d
rfm memory --data mnist --mode sequence --digits 0123456789,9876543210 --width 128 --depth 31 --act selu --out out/seq`)
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
	f.String(&o.data, "data", "", "`SOURCE`: mnist, or a table FILE")
	f.String(&o.mnistDir, "mnist", "../shared/data/mnist", "the MNIST folder `DIR`")
	f.Int(&o.rows, "rows", 10, "mnist, autoencode: the number of images `N` (classes in turn)")
	f.String(&o.digits, "digits", "0123456789", "mnist, sequence: the digit `PATTERNS` of the sequences, comma-separated")
	f.Int(&o.sequences, "sequences", 0, "mnist, sequence: `N` sequences, the patterns in turn (0: one per pattern)")
	f.String(&o.mode, "mode", "autoencode", "`MODE`: autoencode or sequence")
	f.String(&o.order, "order", "", "table, sequence: the order `COLUMN` (consecutive integers in each sequence)")
	f.String(&o.group, "group", "", "table, sequence: the `COLUMN` naming each row's sequence (none: one sequence)")
	f.List(&o.features, "features", "table: the value `COLUMNS` (default: every numeric column but --order)")
	f.Section("Network")
	f.Int(&o.width, "width", 512, "hidden layer `WIDTH`")
	f.Int(&o.depth, "depth", 30, "hidden layers `N` (1 to 32)")
	f.String(&o.act, "act", "cosid", "`ACTIVATION`: cosid, selu, leaky-relu, sinlin, swish, relu, tanh, sine, linear, power")
	f.Float(&o.power, "power", 0, "the power activation's exponent `M` (sign(z)|z|^M)")
	f.Bool(&o.bias, "bias", true, "layers have biases")
	f.String(&o.init, "init", "pytorch", "`INIT`: pytorch (U[±1/√fan_in]), uniform (U[±--init-range]) or normal")
	f.Float(&o.initRange, "init-range", 0.02, "uniform initialization's `A`")
	f.String(&o.opt, "opt", "adam", "`OPTIMIZER`: adam, rmsprop or sgd")
	f.Float(&o.lr, "lr", 1e-4, "learning `RATE`")
	f.Float(&o.momentum, "momentum", 0, "sgd and rmsprop momentum `M`")
	f.Float(&o.wd, "weight-decay", 0, "L2 weight decay `W`")
	f.Float(&o.alpha, "alpha", 0.99, "rmsprop's smoothing `A`")
	f.Int(&o.batch, "batch", 0, "rows per step `N` (0: all, full batch)")
	f.Uint64(&o.seed, "seed", 1, "random `SEED` (initialization, row order, starts)")
	f.Section("Training")
	f.Float(&o.lossTarget, "loss-target", 1e-8, "stop at this mean squared error `L` (0: none)")
	f.Int(&o.epochs, "epochs", 0, "stop after `N` epochs in all (0: no limit)")
	f.String(&o.timeBudget, "time", "", "stop after this wall `DURATION` of training (e.g. 15m)")
	f.String(&o.ckpt, "checkpoint", "", "checkpoint `FILE`, saved every --checkpoint-every epochs and at the end (default memory.ckpt in --out, else the current folder)")
	f.Int(&o.ckptEvery, "checkpoint-every", 1000, "epochs `N` between checkpoints (0: only at the end)")
	f.String(&o.resume, "resume", "", "continue training the checkpoint `FILE` (its network settings win)")
	f.Bool(&o.requireTarget, "require-target", false, "exit with an error when the loss target is not reached")
	f.Section("Verification and recovery")
	f.Int(&o.powerIters, "power-iters", 200, "power iterations `N` per example")
	f.Int(&o.arnoldi, "arnoldi", 30, "also `N` Arnoldi steps per example (the top Ritz value; 0: none)")
	f.Bool(&o.dense, "dense", true, "also the exact eigenvalues for up to 50 dimensions")
	f.Float(&o.noise, "noise", 0.1, "noisy copies: the noise's standard deviation `S` (0: none)")
	f.Int(&o.copies, "copies", 1, "corrupted copies `N` of each example, per corruption")
	f.Bool(&o.mask, "mask", true, "masked copies: the bottom half of an image (second half of the values) set to 0")
	f.Int(&o.random, "random", 100, "random starts `N`")
	f.String(&o.randomKind, "random-kind", "uniform", "`KIND` of random start: uniform (in the data's range) or gaussian")
	f.Float(&o.randomSigma, "random-sigma", 1, "gaussian random starts' standard deviation `S`")
	f.Float(&o.tol, "tol", 1e-8, "converged when ‖f^P(x) − x‖ < `T`")
	f.Int(&o.maxSteps, "max-steps", 1000, "at most `N` steps of f^P per start")
	f.Float(&o.matchTol, "match-tol", 0, "a limit within `D` of an example is that example; also the largest fixed-point error of a stored example (0: a tenth of the smallest distance between examples)")
	f.Int(&o.grid, "grid", 60, "2-D: basin grid points `N` per side (0: no basin figure)")
	f.Int(&o.arrows, "arrows", 20, "2-D: vector field arrows `N` per side")
	f.Float(&o.margin, "margin", 0.3, "2-D: the grid's margin `M` around the examples (a fraction of their span)")
	f.Section("Width × depth table")
	f.String(&o.sweepWidths, "sweep-widths", "", "train every `WIDTHS` × --sweep-depths cell in both modes on the same examples and write table.json and the heatmaps (comma-separated)")
	f.String(&o.sweepDepths, "sweep-depths", "", "the table's `DEPTHS` (comma-separated)")
	f.Section("Output")
	f.String(&o.out, "out", "", "write summary.json, basins.png or recovery.png and the checkpoint into `DIR`")
	o.common.register(f, true)
}

// load reads the examples to store (MNIST digits or a table's rows).
func (o *memoryOptions) load(ctx context.Context) (*memory.Data, error) {
	if o.mode != "autoencode" && o.mode != "sequence" {
		return nil, usagef("--mode %q: want autoencode or sequence", o.mode)
	}
	seqMode := o.mode == "sequence"
	if o.data == "mnist" {
		classes, err := memory.MNISTClasses(seqMode, o.rows, o.digits, o.sequences)
		if err != nil {
			return nil, usagef("%v", err)
		}
		train, _, err := mnist.Load(o.mnistDir)
		if err != nil {
			return nil, err
		}
		return memory.FromMNIST(train, classes, seqMode)
	}
	t, err := readTable(ctx, o.data, dataset.ReadOptions{})
	if err != nil {
		return nil, err
	}
	if seqMode && o.order == "" {
		return nil, usagef("--mode sequence on a table needs --order COLUMN")
	}
	if !seqMode && (o.order != "" || o.group != "") && len(o.sweepWidths)+len(o.sweepDepths) == 0 {
		return nil, usagef("--order and --group are for --mode sequence")
	}
	set, err := memory.FromTable(t, memory.TableOptions{Features: o.features, Order: o.order, Group: o.group, Sequence: seqMode})
	if err != nil {
		return nil, err
	}
	return &memory.Data{Set: set, Name: o.data}, nil
}

// config is the network of --width × --depth.
func (o *memoryOptions) config(width, depth int) (nn.Config, error) {
	if width < 1 || depth < 1 || depth > nn.MaxDepth {
		return nn.Config{}, usagef("--width %d, --depth %d: a width ≥ 1 and 1 to %d hidden layers", width, depth, nn.MaxDepth)
	}
	init := nn.InitScheme(o.init)
	if o.init == "normal" {
		init = nn.InitNormal
	}
	cfg := nn.Config{Activation: nn.Activation(o.act), Power: o.power, Bias: o.bias, Init: init, InitRange: o.initRange,
		Optimizer: nn.Optimizer(o.opt), LR: o.lr, Momentum: o.momentum, WeightDecay: o.wd, Alpha: o.alpha, BatchSize: o.batch, Seed: o.seed}
	for i := 0; i < depth; i++ {
		cfg.Widths = append(cfg.Widths, width)
	}
	if err := cfg.Validate(); err != nil {
		return nn.Config{}, usagef("%v", strings.TrimPrefix(err.Error(), "nn: "))
	}
	return cfg, nil
}

func runMemory(e *env, o *memoryOptions) error {
	if o.data == "" {
		return usagef("--data is required: mnist or a table")
	}
	cfg, err := o.config(o.width, o.depth)
	if err != nil {
		return err
	}
	var budget time.Duration
	if o.timeBudget != "" {
		if budget, err = time.ParseDuration(o.timeBudget); err != nil || budget <= 0 {
			return usagef("--time %q: want a positive duration such as 15m", o.timeBudget)
		}
	}
	if o.epochs < 0 || o.ckptEvery < 0 || !(o.lossTarget >= 0) || o.powerIters < 2 || o.arnoldi < 0 || o.copies < 1 || o.random < 0 || o.maxSteps < 1 || !(o.tol > 0) || !(o.matchTol >= 0) || !(o.noise >= 0) || o.grid < 0 || o.grid == 1 {
		return usagef("--epochs, --checkpoint-every, --loss-target, --random, --noise, --match-tol ≥ 0; --power-iters ≥ 2; --copies, --max-steps ≥ 1; --tol > 0; --grid 0 or ≥ 2")
	}
	if o.epochs == 0 && budget == 0 && o.lossTarget == 0 {
		return usagef("training needs a stop: --loss-target, --epochs or --time")
	}
	if o.randomKind != "uniform" && o.randomKind != "gaussian" {
		return usagef("--random-kind %q: want uniform or gaussian", o.randomKind)
	}
	x := &memory.Experiment{Mode: o.mode, Network: cfg, Resume: o.resume, RequireTarget: o.requireTarget,
		Budget:     nn.Budget{Epochs: o.epochs, Time: budget, LossTarget: o.lossTarget, Checkpoint: o.ckpt, CheckpointEvery: o.ckptEvery},
		PowerIters: o.powerIters, Arnoldi: o.arnoldi, Dense: o.dense, Seed: o.seed, MatchTol: o.matchTol,
		Recoveries: o.recoveries(), Tol: o.tol, MaxSteps: o.maxSteps, Grid: o.grid, Arrows: o.arrows, Margin: o.margin, Out: o.out,
		Log: func(format string, args ...any) {
			if !o.common.quiet {
				fmt.Fprintf(e.stderr, "memory: "+format+"\n", args...)
			}
		}}
	if len(o.sweepWidths) > 0 || len(o.sweepDepths) > 0 {
		return runMemorySweep(e, o, x)
	}
	data, err := o.load(e.ctx)
	if err != nil {
		return err
	}
	res, err := x.Run(e.ctx, data)
	if err != nil {
		return err
	}
	if o.common.json {
		return writeJSON(e.stdout, res)
	}
	fmt.Fprintf(e.stdout, "stored %d of %d examples, %d of %d cycles stable; loss %.3g after %d epochs\n", res.Stored, data.Set.N, res.CyclesOK, len(data.Set.Cycles), res.Loss, res.Training.Epochs)
	fmt.Fprintf(e.stdout, "largest top eigenvalue %.4g\n", res.TopRadius())
	return nil
}

// recoveries lists the recovery runs the flags ask for.
func (o *memoryOptions) recoveries() []memory.Recovery {
	var runs []memory.Recovery
	if o.noise > 0 {
		runs = append(runs, memory.Recovery{Name: "noise", Kind: memory.Noise, Count: o.copies, Sigma: o.noise})
	}
	if o.mask {
		runs = append(runs, memory.Recovery{Name: "mask", Kind: memory.Mask, Count: o.copies})
	}
	if o.random > 0 {
		k := memory.Random
		if o.randomKind == "gaussian" {
			k = memory.Gaussian
		}
		runs = append(runs, memory.Recovery{Name: "random-" + o.randomKind, Kind: k, Count: o.random, Sigma: o.randomSigma})
	}
	return runs
}

// runMemorySweep trains and verifies every (width, depth) cell in both
// modes on the same examples (memory.Experiment.Sweep).
func runMemorySweep(e *env, o *memoryOptions, x *memory.Experiment) error {
	if o.out == "" {
		return usagef("--sweep-widths/--sweep-depths need --out DIR for the table")
	}
	if o.resume != "" {
		return usagef("--resume continues one network, not a sweep")
	}
	widths, err := cli.ParseInts("sweep-widths", splitList(o.sweepWidths), []int{o.width}, 1, 0)
	if err != nil {
		return err
	}
	depths, err := cli.ParseInts("sweep-depths", splitList(o.sweepDepths), []int{o.depth}, 1, 0)
	if err != nil {
		return err
	}
	for _, d := range depths {
		if _, err := o.config(widths[0], d); err != nil {
			return err
		}
	}
	n := 0
	if data, err := o.load(e.ctx); err == nil {
		n = data.Set.N
	}
	cells, err := x.Sweep(e.ctx, widths, depths, n, func(mode string) (*memory.Data, error) {
		c := *o
		c.mode = mode
		if mode == "sequence" && o.data == "mnist" && o.sequences == 0 {
			// the same images as --rows autoencoded: the --digits pattern
			// (one image of each class) repeated
			c.sequences = max(1, o.rows/len(strings.ReplaceAll(o.digits, ",", "")))
		}
		return c.load(e.ctx)
	})
	if err != nil {
		return err
	}
	if o.common.json {
		return writeJSON(e.stdout, cells)
	}
	for _, c := range cells {
		fmt.Fprintf(e.stdout, "%-10s width %4d depth %2d: stored %3d, loss %.3g (%s)\n", c.Mode, c.Width, c.Depth, c.Stored, c.Loss, c.Training.Stop)
	}
	return nil
}

// splitList splits a comma-separated flag value ("" is no items).
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
