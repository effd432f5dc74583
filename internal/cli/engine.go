package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/fit"
	"github.com/rfmkit/rfm/tree"
)

// EngineFlags are the engine's settings: the hyperparameters declared in
// rfm.Params, read straight into a Config, and the command line's own
// RFM-T switch and memory cap.
type EngineFlags struct {
	Cfg       rfm.Config
	Memory    string
	RFMT      bool
	Threshold float64
}

// Register declares the flags in f, in their sections.
func (g *EngineFlags) Register(f *FlagSet) {
	g.Cfg = rfm.DefaultConfig()
	for _, p := range rfm.Params() {
		if p.Default != "" { // a kernel parameter the default kernel leaves at zero
			if err := p.Set(&g.Cfg, p.Default); err != nil {
				panic(fmt.Sprintf("declared default of %s: %v", p.Name, err))
			}
		}
	}
	group := func(title string) {
		f.Section(title)
		for _, p := range rfm.Params() {
			if p.Group == title {
				f.Param(&g.Cfg, p)
			}
		}
	}
	group(rfm.GroupKernel)
	f.Bool(&g.RFMT, "rfm-t", false, "thresholded RFM: keep the features whose scaled diag(M) exceeds --threshold and refit a plain Laplace kernel on them")
	f.Float(&g.Threshold, "threshold", rfm.DefaultThreshold, "RFM-T cut `T` in [0, 1) on min-max scaled diag(M)")
	group(rfm.GroupSelection)
	group(rfm.GroupSolver)
	f.String(&g.Memory, "memory-limit", "", "cap `SIZE` on the whole fit's memory (kernel matrix, M, copies of the data, per-thread blocks), e.g. 8G (default: 90% of available memory)")
}

// Config checks the engine configuration, naming the flag at fault.
func (g *EngineFlags) Config(f *FlagSet) (rfm.Config, error) {
	cfg := g.Cfg
	rfm.FinishKernels(&cfg)
	for _, p := range rfm.Params() {
		if f.IsSet(p.Name) && !p.Applies(&cfg) {
			if strings.Contains(p.AppliesTo, "kernel") {
				return cfg, Usagef("--%s applies to %s only (the kernel is %s)", p.Name, p.AppliesTo, cfg.Kernel.Kind)
			}
			return cfg, Usagef("--%s applies to %s only", p.Name, p.AppliesTo)
		}
	}
	if err := CheckFinite("threshold", g.Threshold); err != nil {
		return cfg, err
	}
	switch {
	case !(g.Threshold >= 0 && g.Threshold < 1):
		return cfg, Usagef("--threshold %v: must be in [0, 1)", g.Threshold)
	case f.IsSet("threshold") && !g.RFMT:
		return cfg, Usagef("--threshold applies with --rfm-t only")
	case g.RFMT && cfg.FinalKernel != nil:
		return cfg, Usagef("--final-kernel does not apply with --rfm-t: RFM-T refits a plain Laplace kernel on the selected features")
	}
	if g.Memory != "" {
		b, err := ParseBytes(g.Memory)
		if err != nil {
			return cfg, Usagef("--memory-limit: %v", err)
		}
		cfg.MemoryLimit = b
	}
	if err := cfg.Validate(); err != nil {
		return cfg, ParamUsage(err)
	}
	return cfg, nil
}

// ParamUsage words a Config error as a usage error: a parameter out of
// range is named by its flag ("--agop-power 3: must be in (0, 2]").
func ParamUsage(err error) error {
	var pe *rfm.ParamError
	if errors.As(err, &pe) {
		return Usagef("--%s %s: %s", pe.Param.Name, pe.ValueText(), pe.Reason)
	}
	return Usagef("%v", err)
}

// FitOptions are the fit's options: RFM-T when asked, the validation rows
// and the progress bar (nil: none).
func (g *EngineFlags) FitOptions(valid *rfm.Dataset, bar *Progress) fit.Options {
	opt := fit.Options{Valid: valid, Thresholded: g.RFMT, Threshold: g.Threshold}
	if bar != nil {
		opt.Progress = func(pr rfm.Progress) { bar.Update(pr.Fraction, describe.RoundLabel(pr)) }
		opt.TreeProgress = func(pr tree.Progress) {
			label := fmt.Sprintf("splitting: %d nodes", pr.Node)
			if pr.Stage != "split" {
				label = fmt.Sprintf("leaves %d/%d", pr.Leaves, pr.Total)
			}
			bar.Update(pr.Fraction, label)
		}
	}
	return opt
}

// FitError words fit.ErrThresholdedTree as a usage error.
func (g *EngineFlags) FitError(err error, rows int) error {
	if errors.Is(err, fit.ErrThresholdedTree) {
		return Usagef("--rfm-t does not apply to a tree of RFMs (--solver tree, or auto with %d rows)", rows)
	}
	return err
}
