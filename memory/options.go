package memory

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/mnist"
	"github.com/rfmkit/rfm/nn"
)

// Options are the settings of rfm memory, one field per flag (the errors
// name the flags): where the examples come from, the network, the
// training's stop, the verification and recovery, and the width × depth
// table. Run runs them.
type Options struct {
	// Data is "mnist" (digits of MNISTDir) or a table file.
	Data, MNISTDir string
	Rows           int    // mnist, autoencode: images, the classes in turn
	Digits         string // mnist, sequence: the digit patterns, comma-separated
	Sequences      int    // mnist, sequence: sequences (0: one per pattern)
	Mode           string // autoencode or sequence
	// Order, Group and Features are the table's columns (TableOptions).
	Order, Group string
	Features     []string

	Width, Depth                     int
	Act                              string
	Power                            float64
	Bias                             bool
	Init                             string
	InitRange                        float64
	Opt                              string
	LR, Momentum, WeightDecay, Alpha float64
	Batch                            int
	Seed                             uint64
	LossTarget                       float64
	Epochs                           int
	Time                             time.Duration
	Checkpoint                       string
	CheckpointEvery                  int
	Resume                           string
	RequireTarget                    bool
	PowerIters, Arnoldi              int
	Dense                            bool
	Noise                            float64
	Copies                           int
	Mask                             bool
	Random                           int
	RandomKind                       string
	RandomSigma, Tol                 float64
	MaxSteps                         int
	MatchTol                         float64
	Grid, Arrows                     int
	Margin                           float64
	SweepWidths, SweepDepths         string // comma lists
	Out                              string
	Log                              func(format string, args ...any)
}

// Load reads the examples to store (MNIST digits or a table's rows).
func (o *Options) Load(ctx context.Context) (*Data, error) {
	if o.Mode != "autoencode" && o.Mode != "sequence" {
		return nil, cli.Usagef("--mode %q: want autoencode or sequence", o.Mode)
	}
	seqMode := o.Mode == "sequence"
	if o.Data == "mnist" {
		classes, err := MNISTClasses(seqMode, o.Rows, o.Digits, o.Sequences)
		if err != nil {
			return nil, cli.Usagef("%v", err)
		}
		train, _, err := mnist.Load(o.MNISTDir)
		if err != nil {
			return nil, err
		}
		return FromMNIST(train, classes, seqMode)
	}
	t, err := cli.ReadTable(ctx, o.Data, dataset.ReadOptions{})
	if err != nil {
		return nil, err
	}
	if seqMode && o.Order == "" {
		return nil, cli.Usagef("--mode sequence on a table needs --order COLUMN")
	}
	if !seqMode && (o.Order != "" || o.Group != "") && o.SweepWidths+o.SweepDepths == "" {
		return nil, cli.Usagef("--order and --group are for --mode sequence")
	}
	set, err := FromTable(t, TableOptions{Features: o.Features, Order: o.Order, Group: o.Group, Sequence: seqMode})
	if err != nil {
		return nil, err
	}
	return &Data{Set: set, Name: o.Data}, nil
}

// Network is the network of width × depth.
func (o *Options) Network(width, depth int) (nn.Config, error) {
	if width < 1 || depth < 1 || depth > nn.MaxDepth {
		return nn.Config{}, cli.Usagef("--width %d, --depth %d: a width ≥ 1 and 1 to %d hidden layers", width, depth, nn.MaxDepth)
	}
	init := nn.InitScheme(o.Init)
	if o.Init == "normal" {
		init = nn.InitNormal
	}
	cfg := nn.Config{Activation: nn.Activation(o.Act), Power: o.Power, Bias: o.Bias, Init: init, InitRange: o.InitRange,
		Optimizer: nn.Optimizer(o.Opt), LR: o.LR, Momentum: o.Momentum, WeightDecay: o.WeightDecay, Alpha: o.Alpha, BatchSize: o.Batch, Seed: o.Seed}
	for i := 0; i < depth; i++ {
		cfg.Widths = append(cfg.Widths, width)
	}
	if err := cfg.Validate(); err != nil {
		return nn.Config{}, cli.Usagef("%v", strings.TrimPrefix(err.Error(), "nn: "))
	}
	return cfg, nil
}

// Experiment checks the options and returns the experiment they describe.
func (o *Options) Experiment() (*Experiment, error) {
	if o.Data == "" {
		return nil, cli.Usagef("--data is required: mnist or a table")
	}
	cfg, err := o.Network(o.Width, o.Depth)
	if err != nil {
		return nil, err
	}
	if o.Epochs < 0 || o.CheckpointEvery < 0 || !(o.LossTarget >= 0) || o.PowerIters < 2 || o.Arnoldi < 0 || o.Copies < 1 || o.Random < 0 || o.MaxSteps < 1 || !(o.Tol > 0) || !(o.MatchTol >= 0) || !(o.Noise >= 0) || o.Grid < 0 || o.Grid == 1 {
		return nil, cli.Usagef("--epochs, --checkpoint-every, --loss-target, --random, --noise, --match-tol ≥ 0; --power-iters ≥ 2; --copies, --max-steps ≥ 1; --tol > 0; --grid 0 or ≥ 2")
	}
	if o.Epochs == 0 && o.Time == 0 && o.LossTarget == 0 {
		return nil, cli.Usagef("training needs a stop: --loss-target, --epochs or --time")
	}
	if o.RandomKind != "uniform" && o.RandomKind != "gaussian" {
		return nil, cli.Usagef("--random-kind %q: want uniform or gaussian", o.RandomKind)
	}
	return &Experiment{Mode: o.Mode, Network: cfg, Resume: o.Resume, RequireTarget: o.RequireTarget,
		Budget:     nn.Budget{Epochs: o.Epochs, Time: o.Time, LossTarget: o.LossTarget, Checkpoint: o.Checkpoint, CheckpointEvery: o.CheckpointEvery},
		PowerIters: o.PowerIters, Arnoldi: o.Arnoldi, Dense: o.Dense, Seed: o.Seed, MatchTol: o.MatchTol,
		Recoveries: o.recoveries(), Tol: o.Tol, MaxSteps: o.MaxSteps, Grid: o.Grid, Arrows: o.Arrows, Margin: o.Margin, Out: o.Out, Log: o.Log}, nil
}

// recoveries lists the recovery runs the options ask for.
func (o *Options) recoveries() []Recovery {
	var runs []Recovery
	if o.Noise > 0 {
		runs = append(runs, Recovery{Name: "noise", Kind: Noise, Count: o.Copies, Sigma: o.Noise})
	}
	if o.Mask {
		runs = append(runs, Recovery{Name: "mask", Kind: Mask, Count: o.Copies})
	}
	if o.Random > 0 {
		k := Random
		if o.RandomKind == "gaussian" {
			k = Gaussian
		}
		runs = append(runs, Recovery{Name: "random-" + o.RandomKind, Kind: k, Count: o.Random, Sigma: o.RandomSigma})
	}
	return runs
}

// Sweep reports whether the options ask for the width × depth table.
func (o *Options) Sweep() bool { return o.SweepWidths+o.SweepDepths != "" }

// Run runs the experiment on the loaded examples; the Result's Data names
// them.
func (o *Options) Run(ctx context.Context) (*Result, *Data, error) {
	x, err := o.Experiment()
	if err != nil {
		return nil, nil, err
	}
	data, err := o.Load(ctx)
	if err != nil {
		return nil, nil, err
	}
	res, err := x.Run(ctx, data)
	return res, data, err
}

// RunSweep trains and verifies every (width, depth) cell of SweepWidths ×
// SweepDepths in both modes on the same examples (Experiment.Sweep).
func (o *Options) RunSweep(ctx context.Context) ([]Cell, error) {
	x, err := o.Experiment()
	if err != nil {
		return nil, err
	}
	if o.Out == "" {
		return nil, cli.Usagef("--sweep-widths/--sweep-depths need --out DIR for the table")
	}
	if o.Resume != "" {
		return nil, cli.Usagef("--resume continues one network, not a sweep")
	}
	widths, err := cli.ParseInts("sweep-widths", split(o.SweepWidths), []int{o.Width}, 1, 0)
	if err != nil {
		return nil, err
	}
	depths, err := cli.ParseInts("sweep-depths", split(o.SweepDepths), []int{o.Depth}, 1, 0)
	if err != nil {
		return nil, err
	}
	for _, d := range depths {
		if _, err := o.Network(widths[0], d); err != nil {
			return nil, err
		}
	}
	n := 0
	if data, err := o.Load(ctx); err == nil {
		n = data.Set.N
	}
	return x.Sweep(ctx, widths, depths, n, func(mode string) (*Data, error) {
		c := *o
		c.Mode = mode
		if mode == "sequence" && o.Data == "mnist" && o.Sequences == 0 {
			// the same images as Rows autoencoded: the Digits pattern (one
			// image of each class) repeated
			c.Sequences = max(1, o.Rows/len(strings.ReplaceAll(o.Digits, ",", "")))
		}
		return c.Load(ctx)
	})
}

// Summary is the two lines rfm memory prints after a run.
func (r *Result) Summary(data *Data) string {
	return fmt.Sprintf("stored %d of %d examples, %d of %d cycles stable; loss %.3g after %d epochs\nlargest top eigenvalue %.4g\n",
		r.Stored, data.Set.N, r.CyclesOK, len(data.Set.Cycles), r.Loss, r.Training.Epochs, r.TopRadius())
}

// split splits a comma list ("" is no items).
func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
