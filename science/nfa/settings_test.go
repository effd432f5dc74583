package nfa

import (
	"strings"
	"testing"
)

// Settings build the network and the synthetic data, and refuse bad
// values naming the flag.
func TestSettings(t *testing.T) {
	s := Settings{Task: "chain", N: 20, D: 6, TestN: 5, Widths: "8,4", Activation: "relu", Optimizer: "adam", InitScale: "0.1,1,1",
		LR: 0.01, Momentum: 0.9, Batch: 4, Epochs: 2, Points: 1, Seed: 1}
	cfg, err := s.Network()
	if err != nil || len(cfg.Widths) != 2 || cfg.Momentum != 0 || cfg.InitScale[0] != 0.1 {
		t.Fatalf("%+v %v", cfg, err)
	}
	tr, te, egop, label, err := s.SyntheticData()
	if err != nil || tr.N != 20 || te.N != 5 || len(egop) != 36 || label != "synthetic chain, n = 20, d = 6" {
		t.Fatalf("%v %v %d %q %v", tr, te, len(egop), label, err)
	}
	for _, c := range []struct {
		edit func(*Settings)
		want string
	}{
		{func(s *Settings) { s.Widths = "0" }, "--widths"},
		{func(s *Settings) { s.InitScale = "x" }, "--init-scale"},
		{func(s *Settings) { s.Epochs = 0 }, "--epochs 0"},
		{func(s *Settings) { s.Batch = -1 }, "batch size -1"},
	} {
		s2 := s
		c.edit(&s2)
		if _, err := s2.Network(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	s.Task = "nope"
	if _, _, _, _, err := s.SyntheticData(); err == nil || !strings.Contains(err.Error(), `--task "nope"`) {
		t.Errorf("unknown task: %v", err)
	}
	if g, err := ParseBalances("0.5, 1"); err != nil || len(g) != 2 || g[1] != 1 {
		t.Errorf("%v %v", g, err)
	}
	if _, err := ParseBalances("0.5,0"); err == nil || !strings.Contains(err.Error(), `(got "0")`) {
		t.Errorf("γ = 0: %v", err)
	}
}

// Reversing takes n, d and the width only when given, and refuses the
// training flags.
func TestSettingsReversing(t *testing.T) {
	s := Settings{N: 40, D: 16, Widths: "12", Balances: "0.5,1", DataSeeds: 2, NetSeeds: 3, XScale: 0.1, Seed: 7}
	given := map[string]bool{"n": true, "d": true, "widths": true}
	ro, err := s.Reversing(func(f string) bool { return given[f] })
	if err != nil || ro.N != 40 || ro.D != 16 || ro.Width != 12 || len(ro.Balances) != 2 || ro.NetSeeds != 3 || ro.Scale != 0.1 || ro.Seed != 7 {
		t.Fatalf("%+v %v", ro, err)
	}
	def := DefaultReversingOptions()
	if ro, err := s.Reversing(func(string) bool { return false }); err != nil || ro.N != def.N || ro.Width != def.D {
		t.Errorf("defaults: %+v %v", ro, err)
	}
	if _, err := s.Reversing(func(f string) bool { return f == "lr" }); err == nil || !strings.Contains(err.Error(), "--lr does not apply") {
		t.Errorf("--lr: %v", err)
	}
	s.NetSeeds = 0
	if _, err := s.Reversing(func(string) bool { return false }); err == nil || !strings.Contains(err.Error(), "--net-seeds 0") {
		t.Errorf("no networks: %v", err)
	}
}
