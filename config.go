package rfm

import (
	"fmt"
	"math"

	"github.com/rfmkit/rfm/kernel"
)

// Task is what the model predicts.
type Task string

// The tasks.
const (
	Classification Task = "classification"
	Regression     Task = "regression"
)

// Normalization of a new M.
const (
	NormMean = "mean" // divide the AGOP sum by the number of points (the papers)
	NormMax  = "max"  // then divide by the largest entry (later public code)
)

// Config holds every hyperparameter of a fit. DefaultConfig gives the
// papers' values; the zero Config is not valid.
type Config struct {
	Kernel kernel.Spec `json:"kernel"`
	Ridge  float64     `json:"ridge"` // λ ≥ 0
	// Iters is the number T of AGOP updates (T+1 fits; round 0 is the plain kernel).
	Iters int `json:"iters"`
	// Diag keeps M diagonal (stored as a vector): "gradient weighting".
	Diag bool `json:"diag"`
	// Centered subtracts each output's mean gradient before the outer products.
	Centered bool `json:"centered"`
	// AGOPSamples bounds the evaluation points of the AGOP (all rows when n ≤ it).
	AGOPSamples int `json:"agop_samples"`
	// AGOPReplace draws the AGOPSamples points with replacement when n > AGOPSamples
	// (the authors' UCI code) instead of without.
	AGOPReplace bool `json:"agop_replace,omitempty"`
	// Norm is NormMean or NormMax.
	Norm string `json:"norm"`
	// AGOPPower p sets the new M to AGOP^p (matrix power through the
	// eigendecomposition; element-wise for Diag). 1 is the papers' update;
	// later work on grokking uses 1/2. 0 means 1.
	AGOPPower float64 `json:"agop_power,omitempty"`
	// EarlyStop, when > 1, stops once the validation loss exceeds EarlyStop × the best so far.
	EarlyStop float64 `json:"early_stop,omitempty"`
	// ValFraction is the share of training rows held out for round selection
	// when no validation data is given (stratified for classification).
	ValFraction float64 `json:"val_fraction"`
	// Refit refits α on training ∪ validation rows with the selected M.
	Refit bool `json:"refit"`
	// FinalKernel, when set, is the kernel of the returned predictor: M is
	// learned and the round selected with Kernel, then α is fitted again
	// with FinalKernel on the selected M (e.g. "RFM (NTK)": Laplace RFM
	// features, NTK regression). Its bandwidth is used as given.
	FinalKernel *kernel.Spec `json:"final_kernel,omitempty"`
	// AdaptiveBandwidth, when > 0, sets L = AdaptiveBandwidth × the median
	// pairwise M-distance of up to 5 000 training rows, every round.
	AdaptiveBandwidth float64 `json:"adaptive_bandwidth,omitempty"`
	// NormalizeRows scales every input row to unit Euclidean norm (the UCI
	// protocol's option), before anything else.
	NormalizeRows bool `json:"normalize_rows,omitempty"`
	// Float32 stores and factors the n×n kernel matrix in float32 (half
	// the memory, about twice as fast) and computes the AGOP and the
	// validation scores in float32 too; Refine steps of float64 iterative
	// refinement bring α back near the float64 solution. Predictions of the
	// fitted model are float64.
	Float32 bool `json:"float32,omitempty"`
	// Refine is the number of float64 iterative-refinement steps of a float32 solve.
	Refine int `json:"refine,omitempty"`
	// Selection picks the round: "accuracy" (classification default, first
	// strict maximum) or "loss" (validation MSE; regression default).
	Selection string `json:"selection,omitempty"`
	// Seed drives every random choice (holdout, AGOP sampling).
	Seed uint64 `json:"seed"`
	// MemoryLimit caps the fit's planned memory in bytes (PlanFit: the
	// n×n matrix, a full M's d×d matrices, copies of the data, per-thread
	// blocks); 0 = 90% of available memory.
	MemoryLimit uint64 `json:"-"`
	// InitialM, when set, replaces M_0 = I: d entries with Diag, d×d
	// otherwise. With Iters = 0 this fits a kernel machine with a given,
	// previously learned M (the UCI protocol's evaluation step); with
	// Iters > 0 it warm-starts the rounds. The fitted model stores its own
	// M, so this is not saved with the config.
	InitialM []float64 `json:"-"`
}

// DefaultConfig returns the papers' defaults.
func DefaultConfig() Config {
	return Config{
		Kernel:      kernel.DefaultSpec(),
		Ridge:       1e-3,
		Iters:       5,
		AGOPSamples: 20000,
		Norm:        NormMean,
		AGOPPower:   1,
		ValFraction: 0.2,
		Refit:       true,
		Refine:      1,
		Seed:        1,
	}
}

// Validate reports the first out-of-range hyperparameter.
func (c Config) Validate() error {
	if err := c.Kernel.Validate(); err != nil {
		return err
	}
	if c.FinalKernel != nil {
		if err := c.FinalKernel.Validate(); err != nil {
			return fmt.Errorf("final kernel: %w", err)
		}
	}
	switch {
	case !(c.Ridge >= 0) || math.IsInf(c.Ridge, 0):
		return fmt.Errorf("ridge λ = %v must be a finite number ≥ 0", c.Ridge)
	case c.Iters < 0:
		return fmt.Errorf("iters = %d must be ≥ 0", c.Iters)
	case c.AGOPSamples < 1:
		return fmt.Errorf("agop samples = %d must be ≥ 1", c.AGOPSamples)
	case c.Norm != NormMean && c.Norm != NormMax:
		return fmt.Errorf("normalization %q must be %q or %q", c.Norm, NormMean, NormMax)
	case c.AGOPPower < 0 || c.AGOPPower > 2 || math.IsNaN(c.AGOPPower):
		return fmt.Errorf("AGOP power %v must be in (0, 2] (or 0 for the default 1)", c.AGOPPower)
	case c.EarlyStop != 0 && !(c.EarlyStop > 1):
		return fmt.Errorf("early stop factor %v must be > 1 (or 0 for off)", c.EarlyStop)
	case !(c.ValFraction >= 0 && c.ValFraction < 1):
		return fmt.Errorf("validation fraction %v must be in [0, 1)", c.ValFraction)
	case c.AdaptiveBandwidth < 0 || math.IsNaN(c.AdaptiveBandwidth):
		return fmt.Errorf("adaptive bandwidth factor %v must be ≥ 0", c.AdaptiveBandwidth)
	case c.AdaptiveBandwidth > 0 && !c.Kernel.Radial():
		return fmt.Errorf("adaptive bandwidth needs a radial kernel: %s has no bandwidth (set it to 0)", c.Kernel)
	case c.Refine < 0:
		return fmt.Errorf("refine = %d must be ≥ 0", c.Refine)
	case c.Selection != "" && c.Selection != "accuracy" && c.Selection != "loss":
		return fmt.Errorf("selection %q must be \"accuracy\" or \"loss\"", c.Selection)
	}
	return nil
}
