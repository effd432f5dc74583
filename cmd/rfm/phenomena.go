package main

import (
	"fmt"
	"strings"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/mnist"
	"github.com/rfmkit/rfm/science/phenomena"
)

func cmdPhenomena(e *env, args []string) error {
	var (
		kind, dir, out    string
		n, epochs, rounds int
		lr, strength, wd  float64
		seed              uint64
		common            commonFlags
	)
	f := helpFlagSet("phenomena", "rfm phenomena --kind marker|halves [--mnist DIR] [--out DIR]")
	f.String(&kind, "kind", "", "`KIND`: marker or halves")
	f.String(&dir, "mnist", "../shared/data/mnist", "the MNIST folder `DIR`")
	f.Int(&n, "n", 1000, "training images `N`")
	f.Int(&epochs, "epochs", 300, "network training epochs `N`")
	f.Int(&rounds, "rounds", 5, "RFM rounds `N` (each measured)")
	f.Float(&lr, "lr", 0.05, "the network's SGD learning `RATE`")
	f.Float(&wd, "weight-decay", 0.001, "the network's L2 weight decay `W`")
	f.Float(&strength, "marker", 0.2, "marker: the brightness `V` of its two pixels (a digit stroke is 1)")
	f.Uint64(&seed, "seed", 1, "random `SEED`")
	f.String(&out, "out", "", "write phenomena.json and figures into `DIR`")
	common.add(f, "json", "threads")
	if _, err := f.Parse(args, e.stderr); err != nil {
		return err
	}
	if err := common.apply(); err != nil {
		return err
	}
	if kind != "marker" && kind != "halves" {
		return usagef("--kind %q: want marker or halves", kind)
	}
	if n < 20 || epochs < 1 || rounds < 1 || !(lr > 0) {
		return usagef("--n ≥ 20, --epochs ≥ 1, --rounds ≥ 1 and --lr > 0 are needed")
	}
	opt := phenomena.Options{Kind: kind, N: n, Epochs: epochs, Rounds: rounds, LR: lr, WeightDecay: wd, Strength: strength, Seed: seed}
	if cfg := opt.NetworkConfig(); cfg.Validate() != nil {
		return usagef("%s", strings.TrimPrefix(cfg.Validate().Error(), "nn: "))
	}
	if !common.json {
		opt.Progress = func(p phenomena.Point) {
			fmt.Fprintf(e.stderr, "phenomena: %s %d: train %.1f%%, test %.1f%%, focus mass %.3f\n", p.Model, p.Time, p.TrainAcc, p.TestAcc, p.FocusMass)
		}
	}
	train, test, err := mnist.Load(dir)
	if err != nil {
		return err
	}
	if err := cli.MkdirOut("out", out); err != nil {
		return err
	}
	res, err := phenomena.Run(e.ctx, train, test, opt)
	if err != nil {
		return err
	}
	if out != "" {
		if err := phenomena.WriteFiles(e.ctx, out, res); err != nil {
			return err
		}
	}
	return cli.Print(e.stdout, common.json, res)
}
