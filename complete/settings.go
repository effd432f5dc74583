package complete

import (
	"github.com/rfmkit/rfm/internal/cli"
)

// Settings are the model, prior and evaluation flags of rfm complete (the
// errors name the flags); Check turns them into Options.
type Settings struct {
	Long                  bool     // the matrix is read as entries
	Prior, Meta           string   // the prior list; the metadata table
	NewColumns            []string // ids of columns to add and predict
	Bias, Identity        float64  // prior bias and identity weight
	Depth                 int
	Activation            string
	Slope, Ridge          float64
	Strategy, MemoryLimit string
	Refit                 bool
	Holdout               float64
	HoldoutColumns        int
	Baselines             bool
	SVDRank               int
}

// Check validates the settings that need no data and returns the
// completion's options and the priors; given reports whether a flag was
// given on the command line (nil: none was).
func (s *Settings) Check(given func(flag string) bool) (Options, []string, error) {
	if given == nil {
		given = func(string) bool { return false }
	}
	var opt Options
	if s.Long && given("row-id") {
		return opt, nil, cli.Usagef("--row-id names the row id column of a wide matrix; with --long use --row-col")
	}
	if !s.Long && (given("row-col") || given("col-col") || given("value-col")) {
		return opt, nil, cli.Usagef("--row-col, --col-col and --value-col describe --long input")
	}
	act, err := ParseActivation(s.Activation, s.Slope)
	if err != nil {
		return opt, nil, cli.Usagef("--activation: %v", err)
	}
	if given("slope") && act.Name != "leaky-relu" {
		return opt, nil, cli.Usagef("--slope applies to --activation leaky-relu only")
	}
	if s.Depth < 1 || s.Depth > 5 {
		return opt, nil, cli.Usagef("--depth %d: must be 1..5", s.Depth)
	}
	if err := cli.CheckFinite("ridge", s.Ridge); err != nil {
		return opt, nil, err
	}
	if s.Ridge < 0 {
		return opt, nil, cli.Usagef("--ridge %v: must be ≥ 0", s.Ridge)
	}
	if err := cli.CheckFinite("prior-bias", s.Bias); err != nil {
		return opt, nil, err
	}
	if err := cli.CheckFinite("prior-identity", s.Identity); err != nil {
		return opt, nil, err
	}
	if s.Identity < 0 {
		return opt, nil, cli.Usagef("--prior-identity %v: must be ≥ 0", s.Identity)
	}
	switch s.Strategy {
	case StrategyAuto, StrategyDirect, StrategySchur, StrategyNaive:
	default:
		return opt, nil, cli.Usagef("--strategy %q: want auto, direct, schur or naive", s.Strategy)
	}
	if given("holdout") && !(s.Holdout > 0 && s.Holdout < 1) {
		return opt, nil, cli.Usagef("--holdout %v: must lie strictly between 0 and 1", s.Holdout)
	}
	if given("holdout-columns") && s.HoldoutColumns < 1 {
		return opt, nil, cli.Usagef("--holdout-columns %d: must be ≥ 1", s.HoldoutColumns)
	}
	if s.Baselines && s.Holdout == 0 && s.HoldoutColumns == 0 {
		return opt, nil, cli.Usagef("--baselines scores on a holdout: give --holdout or --holdout-columns")
	}
	if s.SVDRank < 1 {
		return opt, nil, cli.Usagef("--svd-rank %d: must be ≥ 1", s.SVDRank)
	}
	var limit uint64
	if s.MemoryLimit != "" {
		if limit, err = cli.ParseBytes(s.MemoryLimit); err != nil {
			return opt, nil, cli.Usagef("--memory-limit: %v", err)
		}
	}
	priors, err := s.Priors()
	if err != nil {
		return opt, nil, err
	}
	opt = Options{Depth: s.Depth, Activation: act, Ridge: s.Ridge, Strategy: s.Strategy, MemoryLimit: limit, Refit: s.Refit}
	return opt, priors, nil
}

// Priors parses Prior (default: metadata with --meta, else onehot) and
// checks it against --meta and --new-columns.
func (s *Settings) Priors() ([]string, error) {
	ps := s.Prior
	if ps == "" {
		ps = "onehot"
		if s.Meta != "" {
			ps = "metadata"
		}
	}
	priors, err := ParsePriors(ps)
	if err != nil {
		return nil, cli.Usagef("--prior: %v", err)
	}
	hasMeta := false
	for _, p := range priors {
		hasMeta = hasMeta || p == "metadata"
	}
	if hasMeta && s.Meta == "" {
		return nil, cli.Usagef("--prior metadata needs --meta TABLE")
	}
	if !hasMeta && s.Meta != "" {
		return nil, cli.Usagef("--meta is given but --prior %s does not use it: add metadata to --prior", ps)
	}
	if len(s.NewColumns) > 0 && s.Meta == "" {
		return nil, cli.Usagef("--new-columns needs --meta: a new column is known only by its metadata")
	}
	return priors, nil
}
