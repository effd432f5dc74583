package main

import (
	"fmt"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/science/nfa"
	"github.com/rfmkit/rfm/synth"
)

type nfaOptions struct {
	nfa.Settings
	data, target, out, imageShape string
	withRFM                       bool
	common                        commonFlags
}

func cmdNFA(e *env, args []string) error {
	var o nfaOptions
	f := helpFlagSet("nfa", "rfm nfa [--task chain --n 256 --d 32 | --data FILE --target COL] [flags]")
	o.register(f)
	if err := f.ParseFlags(args, e.stderr); err != nil {
		return err
	}
	if err := o.common.apply(); err != nil {
		return err
	}
	if o.Task == string(synth.AlignmentReversing) {
		return nfaReversing(e, f, &o)
	}
	for _, name := range []string{"balance", "data-seeds", "net-seeds", "x-scale"} {
		if f.IsSet(name) {
			return usagef("--%s goes with --task alignment-reversing", name)
		}
	}
	if o.data != "" && (f.IsSet("task") || f.IsSet("n") || f.IsSet("d") || f.IsSet("test-n")) {
		return usagef("--task, --n, --d and --test-n describe the synthetic data; with --data they do not apply (20%% of the table is the test split)")
	}
	cfg, err := o.Network()
	if err != nil {
		return err
	}
	var shape *imageDims
	if o.imageShape != "" {
		if shape, err = parseImageShape(o.imageShape); err != nil {
			return err
		}
	}
	if err := cli.MkdirOut("out", o.out); err != nil {
		return err
	}
	tr, te, egop, label, classes, err := o.loadData(e)
	if err != nil {
		return err
	}
	if shape != nil && shape.Pixels() != tr.D {
		return usagef("--image-shape %s has %d pixels but the data has %d inputs", o.imageShape, shape.Pixels(), tr.D)
	}
	opt := nfa.Options{Network: cfg, Epochs: o.Epochs, Points: o.Points, Classes: classes, EGOP: egop, WithRFM: o.withRFM, Seed: o.Seed}
	if !o.common.json {
		opt.Progress = func(m nfa.Measurement) {
			fmt.Fprintf(e.stderr, "nfa: epoch %d (step %d): train %.4g, test %.4g; ρ UC/C %s\n", m.Epoch, m.Step, m.TrainMSE, m.TestMSE, m.LayerSummary())
		}
	}
	res, err := nfa.Run(e.ctx, tr, te, opt)
	if err != nil {
		return err
	}
	res.Data = label
	if o.out != "" {
		if err := nfa.WriteFiles(e.ctx, o.out, res, shape); err != nil {
			return err
		}
	}
	return cli.Print(e.stdout, o.common.json, res)
}

// register declares rfm nfa's flags into o.
func (o *nfaOptions) register(f *flagSet) {
	f.Section("Data")
	f.String(&o.Task, "task", "chain", "synthetic task `NAME` of 'rfm synth' (when no --data)")
	f.Int(&o.N, "n", 256, "training rows `N` of the synthetic task")
	f.Int(&o.D, "d", 32, "inputs `D` of the synthetic task")
	f.Int(&o.TestN, "test-n", 2000, "test rows `N` of the synthetic task (a later seed)")
	f.String(&o.data, "data", "", "train on this table `FILE` instead (20% held out for the test figures)")
	f.String(&o.target, "target", "", "the table's target `COL`")
	f.String(&o.Balances, "balance", defaultBalances, "alignment-reversing: the balances `LIST` γ ∈ (0, 1]")
	f.Int(&o.DataSeeds, "data-seeds", 4, "alignment-reversing: datasets `N` per balance (seeds --seed, --seed+1, …)")
	f.Int(&o.NetSeeds, "net-seeds", 30, "alignment-reversing: networks `N` to average over")
	f.Float(&o.XScale, "x-scale", 1, "alignment-reversing: the data's row scale `S` (X₁ ~ N(0, S²Σ); see 'rfm synth -h')")
	f.Section("Network")
	f.String(&o.Widths, "widths", "256,256", "hidden layer `WIDTHS` (1 to 32 of them)")
	f.String(&o.Activation, "activation", "relu", "`ACT`: relu, leaky-relu, tanh or sine")
	f.Bool(&o.Bias, "bias", false, "give the layers biases")
	f.String(&o.InitScale, "init-scale", "1", "multiply the initial weights' std, `S` for every layer or a list per layer (first layer first)")
	f.Section("Training")
	f.String(&o.Optimizer, "optimizer", "sgd", "`OPT`: sgd (with --momentum) or adam")
	f.Float(&o.LR, "lr", 0.05, "learning `RATE`")
	f.Float(&o.Momentum, "momentum", 0.9, "SGD momentum `M`")
	f.Float(&o.WeightDecay, "weight-decay", 0, "L2 weight decay `W` of the weights (not the biases)")
	f.Int(&o.Batch, "batch", 128, "rows per step `N` (0: full batch)")
	f.Int(&o.Epochs, "epochs", 500, "passes over the training rows `N`")
	f.Int(&o.Points, "points", 14, "measure at `K` log-spaced epochs (and at initialization)")
	f.Uint64(&o.Seed, "seed", 1, "random `SEED` (data, initialization, batch order)")
	f.Bool(&o.withRFM, "rfm", false, "also fit an RFM (the defaults) and compare its M")
	f.Section("Output")
	f.String(&o.out, "out", "", "write nfa.csv, nfa.json and figures into `DIR`")
	f.String(&o.imageShape, "image-shape", "", "inputs are `HxW` pixels: draw diagonals as images")
	o.common.add(f, "json", "threads")
}

// loadData reads or draws the training and test rows. egop is the
// synthetic task's exact EGOP (nil for a table); classes is the number of
// one-hot outputs of a classification table (0 otherwise).
func (o *nfaOptions) loadData(e *env) (tr, te *nfa.Data, egop []float64, label string, classes int, err error) {
	if o.data == "" {
		if o.target != "" {
			return nil, nil, nil, "", 0, usagef("--target goes with --data")
		}
		tr, te, egop, label, err = o.SyntheticData()
		return tr, te, egop, label, 0, err
	}
	if o.target == "" {
		return nil, nil, nil, "", 0, usagef("--target is required with --data")
	}
	t, err := readTable(e.ctx, o.data, dataset.ReadOptions{})
	if err != nil {
		return nil, nil, nil, "", 0, err
	}
	// A seeded 20% test split; the pipeline is fitted on the training
	// rows only.
	if tr, te, classes, err = nfa.FromTable(t, o.data, o.target, o.Seed); err != nil {
		return nil, nil, nil, "", 0, cli.InFile(o.data, err)
	}
	return tr, te, nil, fmt.Sprintf("%s (target %s)", o.data, o.target), classes, nil
}

const defaultBalances = "0.05,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1"

// nfaReversing runs the alignment reversing sweep (science/nfa).
func nfaReversing(e *env, f *flagSet, o *nfaOptions) error {
	ro, err := o.Reversing(f.IsSet)
	if err != nil {
		return err
	}
	if err := cli.MkdirOut("out", o.out); err != nil {
		return err
	}
	if !o.common.json {
		ro.Progress = func(p nfa.ReversingPoint) {
			fmt.Fprintf(e.stderr, "nfa: γ %g, data seed %d: predicted %.4f, observed %.4f ± %.4f\n", p.Balance, p.DataSeed, p.Predicted, p.Observed, p.ObsStd)
		}
	}
	res, err := nfa.AlignmentReversing(e.ctx, ro)
	if err != nil {
		return err
	}
	if o.out != "" {
		if err := nfa.WriteReversing(e.ctx, o.out, res); err != nil {
			return err
		}
	}
	return cli.Print(e.stdout, o.common.json, res)
}
