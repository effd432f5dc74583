package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/memory"
	"github.com/rfmkit/rfm/mnist"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/plot"
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

// memoryJSON is the command's result (summary.json).
type memoryJSON struct {
	Data     string                    `json:"data"`
	Mode     string                    `json:"mode"`
	Examples int                       `json:"examples"`
	Dim      int                       `json:"dim"`
	Cycles   [][]int                   `json:"cycles,omitempty"`
	Labels   []string                  `json:"labels,omitempty"`
	Network  nn.Config                 `json:"network"`
	Training nn.TrainResult            `json:"training"`
	Resumed  string                    `json:"resumed_from,omitempty"`
	Ckpt     string                    `json:"checkpoint"`
	Loss     float64                   `json:"final_loss"`
	Verified []memory.Example          `json:"verified"`
	Stored   int                       `json:"stored"`
	CyclesOK int                       `json:"stable_cycles"`
	MatchTol float64                   `json:"match_tolerance"`
	Recovery map[string]memory.Summary `json:"recovery"`
	Basins   *basinCounts              `json:"basins,omitempty"`
	Seconds  map[string]float64        `json:"seconds"`
}

type basinCounts struct {
	Grid         int   `json:"grid"`
	PerExample   []int `json:"per_example"`
	Spurious     int   `json:"spurious"`
	NotConverged int   `json:"not_converged"`
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
		classes, err := o.mnistClasses(seqMode)
		if err != nil {
			return nil, err
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

// mnistClasses is the digit classes of the MNIST examples: --rows classes
// in turn to autoencode, or one list per sequence from --digits.
func (o *memoryOptions) mnistClasses(seqMode bool) ([][]int, error) {
	if !seqMode {
		if o.rows < 1 {
			return nil, usagef("--rows %d: at least 1", o.rows)
		}
		var c []int
		for k := 0; k < o.rows; k++ {
			c = append(c, k%mnist.NumClasses)
		}
		return [][]int{c}, nil
	}
	pats := strings.Split(o.digits, ",")
	n := o.sequences
	if n == 0 {
		n = len(pats)
	}
	if n < 1 {
		return nil, usagef("--sequences %d: at least 1", n)
	}
	var classes [][]int
	for s := 0; s < n; s++ {
		pat := strings.TrimSpace(pats[s%len(pats)])
		if pat == "" {
			return nil, usagef("--digits %q: an empty pattern", o.digits)
		}
		var cyc []int
		for _, ch := range pat {
			if ch < '0' || ch > '9' {
				return nil, usagef("--digits %q: %q is not a digit", o.digits, ch)
			}
			cyc = append(cyc, int(ch-'0'))
		}
		classes = append(classes, cyc)
	}
	return classes, nil
}

func (o *memoryOptions) config() (nn.Config, error) {
	if o.width < 1 || o.depth < 1 || o.depth > nn.MaxDepth {
		return nn.Config{}, usagef("--width %d, --depth %d: a width ≥ 1 and 1 to %d hidden layers", o.width, o.depth, nn.MaxDepth)
	}
	init := nn.InitScheme(o.init)
	if o.init == "normal" {
		init = nn.InitNormal
	}
	cfg := nn.Config{Activation: nn.Activation(o.act), Power: o.power, Bias: o.bias, Init: init, InitRange: o.initRange,
		Optimizer: nn.Optimizer(o.opt), LR: o.lr, Momentum: o.momentum, WeightDecay: o.wd, Alpha: o.alpha, BatchSize: o.batch, Seed: o.seed}
	for i := 0; i < o.depth; i++ {
		cfg.Widths = append(cfg.Widths, o.width)
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
	cfg, err := o.config()
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
	if len(o.sweepWidths) > 0 || len(o.sweepDepths) > 0 {
		return runMemorySweep(e, o, budget)
	}
	data, err := o.load(e.ctx)
	if err != nil {
		return err
	}
	s := data.Set
	res, net, period, err := trainVerify(e, o, data, cfg, budget)
	if err != nil {
		return err
	}
	logf := memoryLog(e, o)
	mt := res.MatchTol
	start := time.Now()
	it := memory.IterateOptions{Period: period, Tol: o.tol, MaxSteps: o.maxSteps}
	strips := map[string]*memory.Recovered{}
	for ri, r := range o.recoveries() {
		rec, err := memory.Recover(e.ctx, net, s, r, data.Height, o.seed+uint64(ri), it, mt)
		if err != nil {
			return err
		}
		sum := rec.Summary
		res.Recovery[r.Name] = sum
		logf("recovery from %s: %d of %d starts recovered, %d to another example, %d spurious (%d distinct), %d not converged; %d examples and %d cycles reached",
			r.Name, sum.Recovered, sum.Starts, sum.Other, sum.Spurious, sum.DistinctSpurious, sum.NotConverged, sum.Examples, sum.Cycles)
		strips[r.Name] = rec
	}
	res.Seconds["recovery"] = time.Since(start).Seconds()
	if o.out != "" {
		start = time.Now()
		if err := memoryFigures(e.ctx, o, data, net, res, strips, it, mt); err != nil {
			return err
		}
		res.Seconds["figures"] = time.Since(start).Seconds()
		if err := modelfile.WriteAtomicContext(e.ctx, filepath.Join(o.out, "summary.json"), func(w io.Writer) error {
			return writeJSON(w, res)
		}); err != nil {
			return err
		}
	}
	if o.common.json {
		return writeJSON(e.stdout, res)
	}
	fmt.Fprintf(e.stdout, "stored %d of %d examples, %d of %d cycles stable; loss %.3g after %d epochs\n", res.Stored, s.N, res.CyclesOK, len(s.Cycles), res.Loss, res.Training.Epochs)
	top := 0.0
	for _, ex := range res.Verified {
		top = max(top, ex.Radius)
	}
	fmt.Fprintf(e.stdout, "largest top eigenvalue %.4g\n", top)
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

// memoryFigures draws basins.png (2-D) or recovery.png (images).
func memoryFigures(ctx context.Context, o *memoryOptions, data *memory.Data, net *nn.Network, res *memoryJSON, strips map[string]*memory.Recovered, it memory.IterateOptions, mt float64) error {
	s := data.Set
	if s.D == 2 && o.grid > 0 {
		b, err := memory.BasinGrid(ctx, net, s, o.grid, o.margin, it, mt)
		if err != nil {
			return err
		}
		per, sp, nc := b.Counts(s.N)
		res.Basins = &basinCounts{Grid: o.grid, PerExample: per, Spurious: sp, NotConverged: nc}
		return memory.BasinFigure(ctx, filepath.Join(o.out, "basins.png"), net, s, b, o.arrows)
	}
	if data.Height == 0 || s.D%data.Height != 0 {
		return nil
	}
	h, w := data.Height, s.D/data.Height
	var imgs [][]float64
	var titles []string
	if s.Sequential() {
		// From random starts: the start, then one cycle from its limit.
		r, ok := strips["random-"+o.randomKind]
		if !ok {
			return nil
		}
		for _, k := range memory.StripStarts(s, r.Limits, 2) {
			imgs = append(imgs, r.Starts[k*s.D:(k+1)*s.D])
			titles = append(titles, "start")
			x := r.Limits[k*s.D : (k+1)*s.D]
			for step := 0; step < 9; step++ {
				imgs = append(imgs, x)
				titles = append(titles, fmt.Sprintf("limit+%d", step))
				x = net.Predict(x, 1)
			}
		}
	} else {
		for _, name := range []string{"noise", "mask"} {
			r, ok := strips[name]
			if !ok {
				continue
			}
			for k := 0; k < 5 && (k+1)*s.D <= len(r.Starts); k++ {
				src := r.Sources[k]
				imgs = append(imgs, s.Example(src), r.Starts[k*s.D:(k+1)*s.D], r.Limits[k*s.D:(k+1)*s.D])
				titles = append(titles, "example "+strconv.Itoa(src+1), name, "limit")
				if len(imgs)+3 > plot.MaxGridImages {
					break
				}
			}
		}
	}
	if len(imgs) == 0 {
		return nil
	}
	for i := range imgs { // clamp diverged values so the figure stays drawable
		c := make([]float64, len(imgs[i]))
		for j, v := range imgs[i] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				v = 0
			}
			c[j] = v
		}
		imgs[i] = c
	}
	return plot.ImageGrid(filepath.Join(o.out, "recovery.png"), imgs, h, w, titles, "recovery by iteration")
}

// trainVerify trains (or resumes) a network on the data and verifies
// every example; it returns the result so far, the network and the
// common period of the cycles.
func trainVerify(e *env, o *memoryOptions, data *memory.Data, cfg nn.Config, budget time.Duration) (*memoryJSON, *nn.Network, int, error) {
	s := data.Set
	period, err := s.Period()
	if err != nil {
		return nil, nil, 0, err
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return nil, nil, 0, fmt.Errorf("--out %s: %w", o.out, err)
		}
	}
	if o.ckpt == "" {
		o.ckpt = filepath.Join(o.out, "memory.ckpt")
	}
	res := &memoryJSON{Data: data.Name, Mode: o.mode, Examples: s.N, Dim: s.D, Labels: data.Labels, Ckpt: o.ckpt, Seconds: map[string]float64{}, Recovery: map[string]memory.Summary{}}
	if s.Sequential() {
		res.Cycles = s.Cycles
	}
	logf := memoryLog(e, o)
	logf("%d examples of %d values, %d cycle(s), period %d", s.N, s.D, len(s.Cycles), period)
	b := nn.Budget{Epochs: o.epochs, Time: budget, LossTarget: o.lossTarget, Checkpoint: o.ckpt, CheckpointEvery: o.ckptEvery}
	last := time.Now()
	progress := func(ep int, loss float64) {
		if time.Since(last) >= 10*time.Second {
			last = time.Now()
			logf("epoch %d: loss %.3g", ep, loss)
		}
	}
	start := time.Now()
	var tr *nn.Trainer
	var tres nn.TrainResult
	if o.resume != "" {
		tr, tres, err = memory.Resume(e.ctx, s, o.resume, b, progress)
		res.Resumed = o.resume
	} else {
		tr, tres, err = memory.Train(e.ctx, s, cfg, b, progress)
	}
	if err != nil {
		return nil, nil, 0, err
	}
	res.Seconds["training"] = time.Since(start).Seconds()
	res.Network, res.Training = tr.Config(), tres
	res.Loss = tr.Net.Loss(s.X, s.Targets(), s.N)
	if tres.Stop == nn.StopCancelled {
		return nil, nil, 0, fmt.Errorf("training interrupted at epoch %d; the last checkpoint is %s (continue with --resume)", tres.Epochs, o.ckpt)
	}
	logf("training: %s after %d epochs (%.0f s), loss %.3g; checkpoint %s", tres.Stop, tres.Epochs, tres.Seconds, res.Loss, o.ckpt)
	if o.lossTarget > 0 && !tres.Reached {
		msg := fmt.Sprintf("loss target %g not reached: loss %.3g after %d epochs (%s); the checkpoint %s continues it (--resume)", o.lossTarget, res.Loss, tres.Epochs, tres.Stop, o.ckpt)
		if o.requireTarget {
			return nil, nil, 0, errors.New(msg)
		}
		logf("warning: %s", msg)
	}
	mt := o.matchTol
	if mt == 0 {
		mt = memory.MatchTol(s)
	}
	res.MatchTol = mt
	start = time.Now()
	res.Verified, err = memory.Verify(e.ctx, tr.Net, s, memory.VerifyOptions{Power: memory.PowerOptions{Iterations: o.powerIters, Seed: o.seed}, Tol: mt, Dense: o.dense, Arnoldi: o.arnoldi})
	if err != nil {
		return nil, nil, 0, err
	}
	res.Seconds["verification"] = time.Since(start).Seconds()
	res.Stored, res.CyclesOK = memory.CountStored(s, res.Verified)
	logf("verified: %d of %d examples stored (fixed-point error ≤ %.3g, top eigenvalue < 1); %d of %d cycles stable", res.Stored, s.N, mt, res.CyclesOK, len(s.Cycles))
	return res, tr.Net, period, nil
}

// memoryLog returns the progress logger (stderr, unless --quiet).
func memoryLog(e *env, o *memoryOptions) func(format string, args ...any) {
	return func(format string, args ...any) {
		if !o.common.quiet {
			fmt.Fprintf(e.stderr, "memory: "+format+"\n", args...)
		}
	}
}

// memoryCell is one (width, depth) cell of a sweep in one mode.
type memoryCell struct {
	Mode     string         `json:"mode"`
	Width    int            `json:"width"`
	Depth    int            `json:"depth"`
	Training nn.TrainResult `json:"training"`
	Loss     float64        `json:"final_loss"`
	Stored   int            `json:"stored"`
	CyclesOK int            `json:"stable_cycles"`
	Seconds  float64        `json:"seconds"`
}

// runMemorySweep trains and verifies every (width, depth) cell in both
// modes on the same examples and writes table.json and table.png
// (stored examples per cell, autoencoding beside sequence encoding).
func runMemorySweep(e *env, o *memoryOptions, budget time.Duration) error {
	if o.out == "" {
		return usagef("--sweep-widths/--sweep-depths need --out DIR for the table")
	}
	if o.resume != "" {
		return usagef("--resume continues one network, not a sweep")
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("--out %s: %w", o.out, err)
	}
	widths, err := parsePositiveInts("--sweep-widths", o.sweepWidths, o.width)
	if err != nil {
		return err
	}
	depths, err := parsePositiveInts("--sweep-depths", o.sweepDepths, o.depth)
	if err != nil {
		return err
	}
	var cells []memoryCell
	values := map[string][][]float64{}
	for _, mode := range []string{"autoencode", "sequence"} {
		values[mode] = make([][]float64, len(depths))
		for di := range depths {
			values[mode][di] = make([]float64, len(widths))
		}
	}
	for di, depth := range depths {
		for wi, width := range widths {
			for _, mode := range []string{"autoencode", "sequence"} {
				cell, err := o.sweepCell(e, mode, width, depth, budget)
				if err != nil {
					return err
				}
				cells = append(cells, *cell)
				v := float64(cell.Stored)
				if o.lossTarget > 0 && !cell.Training.Reached {
					v = math.NaN() // not trained to the common target: not comparable
				}
				values[mode][di][wi] = v
				if err := modelfile.WriteAtomicContext(e.ctx, filepath.Join(o.out, "table.json"), func(w io.Writer) error {
					return writeJSON(w, cells)
				}); err != nil {
					return err
				}
			}
		}
	}
	rowL, colL := make([]string, len(depths)), make([]string, len(widths))
	for i, d := range depths {
		rowL[i] = strconv.Itoa(d)
	}
	for i, w := range widths {
		colL[i] = strconv.Itoa(w)
	}
	n := 0.0
	if data, err := o.load(e.ctx); err == nil {
		n = float64(data.Set.N)
	}
	for _, mode := range []string{"autoencode", "sequence"} {
		title := fmt.Sprintf("%s: examples stored (of %g; - = loss target not reached)", mode, n)
		if err := memory.Heatmap(e.ctx, filepath.Join(o.out, "table-"+mode+".png"), title, "depth", "width", rowL, colL, values[mode], max(n, 1)); err != nil {
			return err
		}
	}
	if o.common.json {
		return writeJSON(e.stdout, cells)
	}
	for _, c := range cells {
		fmt.Fprintf(e.stdout, "%-10s width %4d depth %2d: stored %3d, loss %.3g (%s)\n", c.Mode, c.Width, c.Depth, c.Stored, c.Loss, c.Training.Stop)
	}
	return nil
}

// sweepCell trains and verifies the network of one cell of the width ×
// depth table in one mode.
func (o *memoryOptions) sweepCell(e *env, mode string, width, depth int, budget time.Duration) (*memoryCell, error) {
	c := *o
	c.width, c.depth, c.mode = width, depth, mode
	c.ckpt = filepath.Join(o.out, fmt.Sprintf("%s-w%d-d%d.ckpt", mode, width, depth))
	c.out = ""
	if mode == "sequence" && o.data == "mnist" && o.sequences == 0 {
		// the same images as --rows autoencoded: the --digits pattern
		// (one image of each class) repeated
		c.sequences = max(1, o.rows/len(strings.ReplaceAll(o.digits, ",", "")))
	}
	cfg, err := c.config()
	if err != nil {
		return nil, err
	}
	data, err := c.load(e.ctx)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	memoryLog(e, o)("cell width %d depth %d, %s", width, depth, mode)
	res, _, _, err := trainVerify(e, &c, data, cfg, budget)
	if err != nil {
		return nil, err
	}
	return &memoryCell{Mode: mode, Width: width, Depth: depth, Training: res.Training, Loss: res.Loss, Stored: res.Stored, CyclesOK: res.CyclesOK, Seconds: time.Since(start).Seconds()}, nil
}

// parseInts reads a comma-separated list of positive integers (empty:
// the single default).
func parsePositiveInts(flag, s string, def int) ([]int, error) {
	if s == "" {
		return []int{def}, nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, usagef("%s %q: want positive integers, comma-separated", flag, s)
		}
		out = append(out, v)
	}
	return out, nil
}
