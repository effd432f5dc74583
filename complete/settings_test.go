package complete

import (
	"strings"
	"testing"
)

// Check turns the settings into Options and priors (metadata by default
// with Meta) and names the flag at fault.
func TestSettingsCheck(t *testing.T) {
	ok := Settings{Depth: 2, Activation: "relu", Slope: 0.1, Strategy: StrategyAuto, SVDRank: 5, Meta: "m.csv", MemoryLimit: "1G"}
	opt, priors, err := ok.Check(nil)
	if err != nil || opt.Depth != 2 || opt.MemoryLimit != 1<<30 || len(priors) != 1 || priors[0] != "metadata" {
		t.Fatalf("%+v %v %v", opt, priors, err)
	}
	for _, c := range []struct {
		edit  func(*Settings)
		given string
		want  string
	}{
		{func(s *Settings) { s.Depth = 6 }, "", "--depth 6"},
		{func(s *Settings) { s.Ridge = -1 }, "", "--ridge -1"},
		{func(s *Settings) { s.Strategy = "x" }, "", `--strategy "x"`},
		{func(s *Settings) {}, "slope", "--slope applies to --activation leaky-relu only"},
		{func(s *Settings) {}, "holdout", "--holdout 0"},
		{func(s *Settings) { s.Baselines = true }, "", "--baselines"},
		{func(s *Settings) { s.Prior = "onehot" }, "", "--meta is given but --prior onehot"},
		{func(s *Settings) { s.Meta = ""; s.NewColumns = []string{"x"} }, "", "--new-columns needs --meta"},
		{func(s *Settings) { s.Long = true }, "row-id", "--row-id"},
	} {
		s := ok
		c.edit(&s)
		_, _, err := s.Check(func(f string) bool { return f == c.given })
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}
