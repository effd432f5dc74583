package nfa

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/synth"
)

// Settings are the network, training, synthetic-data and alignment
// reversing flags of rfm nfa (the errors name the flags).
type Settings struct {
	Task                          string // synthetic task of package synth
	N, D, TestN                   int    // its training rows, inputs and test rows
	Widths, Activation, Optimizer string
	InitScale                     string // one factor, or one per layer
	LR, Momentum, WeightDecay     float64
	Batch, Epochs, Points         int
	Bias                          bool
	Seed                          uint64
	// Alignment reversing: the balances γ (comma list), datasets per γ,
	// networks and the data's row scale.
	Balances            string
	DataSeeds, NetSeeds int
	XScale              float64
}

// Network is the network the settings describe, checked.
func (s Settings) Network() (nn.Config, error) {
	cfg := nn.DefaultConfig()
	var err error
	if cfg.Widths, err = nn.ParseWidths(s.Widths); err != nil {
		return cfg, cli.Usagef("--widths %q: want positive widths such as 256,256", s.Widths)
	}
	cfg.Activation, cfg.Optimizer = nn.Activation(s.Activation), nn.Optimizer(s.Optimizer)
	cfg.LR, cfg.Momentum, cfg.BatchSize, cfg.Bias, cfg.Seed, cfg.WeightDecay = s.LR, s.Momentum, s.Batch, s.Bias, s.Seed, s.WeightDecay
	if s.Optimizer == string(nn.Adam) {
		cfg.Momentum = 0
	}
	if cfg.InitScale, err = nn.ParseInitScale(s.InitScale, len(cfg.Widths)); err != nil {
		return cfg, cli.Usagef("--init-scale %q: want positive numbers such as 1 or 0.1,1,1", s.InitScale)
	}
	if err := cfg.Validate(); err != nil {
		return cfg, cli.Usagef("%s", strings.TrimPrefix(err.Error(), "nn: "))
	}
	switch {
	case s.Epochs < 1:
		return cfg, cli.Usagef("--epochs %d: must be at least 1", s.Epochs)
	case s.Points < 1:
		return cfg, cli.Usagef("--points %d: must be at least 1", s.Points)
	case s.Batch < 0:
		return cfg, cli.Usagef("--batch %d: must be ≥ 0", s.Batch)
	}
	return cfg, nil
}

// SyntheticData draws the synthetic task's training and test rows (one draw
// split in two: they share the target) and its exact EGOP; label describes
// them.
func (s Settings) SyntheticData() (tr, te *Data, egop []float64, label string, err error) {
	task := synth.Task(s.Task)
	if !synth.IsTask(s.Task) {
		return nil, nil, nil, "", cli.Usagef("--task %q: want one of %s, %s", s.Task, synth.TaskNames(), synth.AlignmentReversing)
	}
	if s.N < 2 || s.TestN < 1 {
		return nil, nil, nil, "", cli.Usagef("--n must be at least 2 and --test-n at least 1")
	}
	if tr, te, egop, err = Synthetic(task, s.N, s.TestN, s.D, s.Seed); err != nil {
		return nil, nil, nil, "", cli.Usagef("%s", strings.TrimPrefix(err.Error(), "synth: "))
	}
	return tr, te, egop, fmt.Sprintf("synthetic %s, n = %d, d = %d", task, s.N, s.D), nil
}

// ParseBalances parses the comma list of balances γ ∈ (0, 1] of --balance.
func ParseBalances(list string) ([]float64, error) {
	var out []float64
	for _, s := range strings.Split(list, ",") {
		g, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(g > 0 && g <= 1) {
			return nil, cli.Usagef("--balance %q: each γ must be a number in (0, 1] (got %q)", list, strings.TrimSpace(s))
		}
		out = append(out, g)
	}
	return out, nil
}

// Reversing is the alignment-reversing sweep the settings describe (n = d
// = 1024 and width d unless given); given reports whether a flag was given,
// and a training flag is refused.
func (s Settings) Reversing(given func(flag string) bool) (ReversingOptions, error) {
	ro := DefaultReversingOptions()
	for _, name := range []string{"data", "target", "test-n", "activation", "bias", "init-scale", "optimizer", "lr", "momentum", "weight-decay", "batch", "epochs", "points", "rfm", "image-shape"} {
		if given(name) {
			return ro, cli.Usagef("--%s does not apply to --task alignment-reversing (no training: the measurement is at initialization)", name)
		}
	}
	if !(s.XScale > 0) || math.IsInf(s.XScale, 0) {
		return ro, cli.Usagef("--x-scale %v: must be positive and finite", s.XScale)
	}
	ro.DataSeeds, ro.NetSeeds, ro.Seed, ro.Scale = s.DataSeeds, s.NetSeeds, s.Seed, s.XScale
	if given("n") {
		ro.N = s.N
	}
	if given("d") {
		ro.D = s.D
	}
	ro.Width = ro.D
	if given("widths") {
		w, err := strconv.Atoi(strings.TrimSpace(s.Widths))
		if err != nil || w < 1 {
			return ro, cli.Usagef("--widths %q: alignment-reversing's network has one hidden layer: want one positive width such as 1024", s.Widths)
		}
		ro.Width = w
	}
	var err error
	if ro.Balances, err = ParseBalances(s.Balances); err != nil {
		return ro, err
	}
	switch {
	case s.DataSeeds < 1:
		return ro, cli.Usagef("--data-seeds %d: must be at least 1", s.DataSeeds)
	case s.NetSeeds < 1:
		return ro, cli.Usagef("--net-seeds %d: must be at least 1", s.NetSeeds)
	}
	if err := ro.CheckData(); err != nil {
		return ro, cli.Usagef("%s", strings.TrimPrefix(err.Error(), "synth: "))
	}
	return ro, nil
}
