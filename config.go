package rfm

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/solve"
)

// Task is what the model predicts.
type Task string

// The tasks.
const (
	Classification Task = "classification"
	Regression     Task = "regression"
)

// MNormalization is how a newly learned M is scaled (not to be confused
// with the row normalization of the inputs, Config.NormalizeRows).
type MNormalization string

// The normalizations of a new M.
const (
	MNormMean MNormalization = "mean" // divide the AGOP sum by the number of points (the papers)
	MNormMax  MNormalization = "max"  // then divide by the largest entry (later public code)
)

// Selection is the criterion that picks the kept round.
type Selection string

// The round selections; the zero value picks by task.
const (
	SelectByTask   Selection = ""         // accuracy for classification, loss for regression
	SelectAccuracy Selection = "accuracy" // validation accuracy, first strict maximum
	SelectLoss     Selection = "loss"     // validation MSE, first strict minimum
)

// ClassWeight is how a classifier weights its training rows.
type ClassWeight string

// The class weightings.
const (
	ClassWeightNone     ClassWeight = "none"
	ClassWeightBalanced ClassWeight = "balanced"
)

// Loss is the loss the predictor's coefficients are fitted with.
type Loss string

// The losses.
const (
	// LossSquared: kernel ridge regression on one-hot (or real) targets,
	// every round and the predictor (the papers).
	LossSquared Loss = "squared"
	// LossLogistic: the rounds learn M by kernel ridge regression as
	// usual; the predictor's α is then fitted by multinomial kernel
	// logistic regression on the selected M (solve.KLR), so its scores are
	// logits and its probabilities their softmax. Classification, exact
	// solver, λ > 0.
	LossLogistic Loss = "logistic"
)

// Solver is how the kernel machines of a fit are solved.
type Solver string

// The solvers. Fit runs SolverExact; the tree package runs SolverTree
// (tree.Fit); SolverAuto is resolved by ChooseSolver.
const (
	SolverAuto  Solver = "auto"  // exact while it fits and is quick, tree above
	SolverExact Solver = "exact" // one Cholesky of the n×n kernel matrix
	SolverTree  Solver = "tree"  // leaves of at most LeafSize rows, each exact
	// SolverNystrom: m centres and preconditioned conjugate gradients
	// (Falkon), memory O(n·d + m²); see solve.Nystrom.
	SolverNystrom Solver = "nystrom"
)

// CenterChoice is how the Nyström centres are drawn.
type CenterChoice string

// The choices of Nyström centres.
const (
	CentersUniform  CenterChoice = "uniform"  // seeded, without replacement
	CentersLeverage CenterChoice = "leverage" // by approximate ridge leverage scores
)

// DefaultCenters is the number of Nyström centres for n rows when
// Config.Centers is 0: 5√n, at least 1 000 and at most 10 000 (two m×m
// float64 factors of 10 000 take 1.6 GB), and never more than n.
func DefaultCenters(n int) int {
	m := int(5 * math.Sqrt(float64(n)))
	return min(n, max(1000, min(m, 10000)))
}

// SplitRule picks the direction a tree node is split along.
type SplitRule string

// The split rules of SolverTree.
const (
	// SplitAGOP: the top eigenvector of the AGOP of a plain kernel machine
	// fitted on a seeded, stratified sample of the node (the xRFM idea).
	SplitAGOP SplitRule = "agop"
	// SplitPCA: the top principal direction of the node's sample.
	SplitPCA SplitRule = "pca"
	// SplitRandom: a seeded random unit direction (a baseline).
	SplitRandom SplitRule = "random"
)

// AutoExactRows is the most training rows SolverAuto fits exactly: above
// it one exact round takes minutes (n = 25 000: about 50 s in float64 on
// two cores) and a tree of leaves is faster.
const AutoExactRows = 25000

// ChooseSolver resolves SolverAuto for a fit of the given shape: exact up
// to AutoExactRows rows when the n×n kernel matrix fits the memory budget,
// tree above. (What does not depend on the rows, such as a full M for a
// very wide table, a tree would not shrink: the whole plan is checked
// after the choice.) It returns the solver and why, for the command line.
func ChooseSolver(cfg Config, s FitShape) (Solver, string) {
	switch cfg.Solver {
	case SolverExact, SolverTree, SolverNystrom:
		return cfg.Solver, "asked for"
	}
	if cfg.Loss == LossLogistic {
		// A tree's leaves do not take the logistic loss: exact while it
		// is quick and fits, Nyström above.
		if s.N > AutoExactRows {
			return SolverNystrom, fmt.Sprintf("the logistic loss on %d rows (more than an exact solve takes quickly, %d) is fitted on Nyström centres", s.N, AutoExactRows)
		}
		if err := solve.Plan(s.N, false, cfg.MemoryLimit); err != nil {
			return SolverNystrom, fmt.Sprintf("the logistic loss is fitted on Nyström centres: the exact solve does not fit (%v)", err)
		}
		return SolverExact, fmt.Sprintf("%d rows fit one exact solve", s.N)
	}
	if s.N > AutoExactRows {
		return SolverTree, fmt.Sprintf("%d rows are more than an exact solve takes quickly (%d)", s.N, AutoExactRows)
	}
	if err := solve.Plan(s.N, cfg.Float32, cfg.MemoryLimit); err != nil {
		return SolverTree, fmt.Sprintf("the exact solve does not fit: %v", err)
	}
	return SolverExact, fmt.Sprintf("%d rows fit one exact solve", s.N)
}

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
	// MNorm scales each new M: MNormMean or MNormMax.
	MNorm MNormalization `json:"norm"`
	// AGOPPower p in (0, 2] sets the new M to AGOP^p (matrix power through
	// the eigendecomposition; element-wise for Diag). 1 is the papers'
	// update; later work on grokking uses 1/2. Model files written when 0
	// still meant 1 omit it and load as 1 (see UnmarshalJSON).
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
	// fitted model are float64. With the Nyström solver it factors the
	// preconditioner in float32 (solve.NystromOptions.Float32; CG and so
	// the solution stay float64; the logistic head keeps float64 factors)
	// and computes the AGOP and the validation scores in float32.
	Float32 bool `json:"float32,omitempty"`
	// Refine is the number of float64 iterative-refinement steps of a float32 solve.
	Refine int `json:"refine,omitempty"`
	// Selection picks the round: SelectAccuracy (classification default,
	// first strict maximum) or SelectLoss (validation MSE; regression
	// default); SelectByTask chooses by task.
	Selection Selection `json:"selection,omitempty"`
	// Calibrate fits a map from a classifier's scores to probabilities on
	// the validation rows (after the round is chosen, before the refit) and
	// stores it in the model ("" and CalibrateNone: none). Regression
	// ignores it; a tree is calibrated as a whole, on 10% of its rows (at
	// most 20 000) held out of the leaves, its leaves are not.
	Calibrate CalibrationMethod `json:"calibrate,omitempty"`
	// Loss of the predictor's fit: LossSquared ("" too) or LossLogistic
	// (a kernel logistic regression head on the learned M).
	Loss Loss `json:"loss,omitempty"`
	// ClassWeight "balanced" weights each training row of class k by
	// n/(classes·n_k) in the ridge regression (exact solves; classification
	// only), so that every class carries the same total weight; "" and
	// "none" weight rows equally.
	ClassWeight ClassWeight `json:"class_weight,omitempty"`
	// Seed drives every random choice (holdout, AGOP sampling).
	Seed uint64 `json:"seed"`
	// Solver: exact (Fit), tree (tree.Fit), nystrom or auto (see
	// ChooseSolver; fit.Fit resolves it and calls the solver); "" is
	// exact. The solvers' own options follow, each group in its struct
	// (embedded: cfg.LeafSize and the JSON key "leaf_size" read as before).
	Solver Solver `json:"solver,omitempty"`
	TreeOptions
	NystromOptions
	// MemoryLimit caps the fit's planned memory in bytes (PlanFit: the
	// n×n matrix, a full M's d×d matrices, copies of the data, per-thread
	// blocks); 0 = 90% of available memory.
	MemoryLimit uint64 `json:"-"`
	// InitialM, when set (not the identity), replaces M_0 = I. With
	// Iters = 0 this fits a kernel machine with a given, previously learned
	// M (see FitWithM); with Iters > 0 it warm-starts the rounds. The fitted
	// model stores its own M, so this is not saved with the config.
	InitialM kernel.FeatureMatrix `json:"-"`
}

// DefaultConfig returns the papers' defaults.
func DefaultConfig() Config {
	return Config{
		Kernel:      kernel.DefaultSpec(),
		Ridge:       1e-3,
		Iters:       5,
		AGOPSamples: 20000,
		MNorm:       MNormMean,
		AGOPPower:   1,
		ValFraction: 0.2,
		Refit:       true,
		Refine:      1,
		Seed:        1,
	}
}

// Validate reports the first hyperparameter outside its declared range
// (see Params) as a *ParamError, or a combination that does not work.
func (c Config) Validate() error {
	for i := range params {
		if err := params[i].check(&c); err != nil {
			return err
		}
	}
	if !c.InitialM.IsIdentity() {
		if err := c.InitialM.Validate(); err != nil {
			return fmt.Errorf("initial M: %w", err)
		}
	}
	if c.FinalKernel != nil {
		fc := c
		fc.Kernel = *c.FinalKernel
		for i := range params {
			p := &params[i]
			if !p.kernelShape {
				continue
			}
			if err := p.check(&fc); err != nil {
				pe := err.(*ParamError)
				pe.Field = "FinalKernel." + strings.TrimPrefix(pe.Field, "Kernel.")
				return pe
			}
		}
	}
	if c.AdaptiveBandwidth > 0 && !c.Kernel.Radial() {
		return fmt.Errorf("adaptive bandwidth needs a radial kernel: %s has no bandwidth (set it to 0)", c.Kernel)
	}
	if c.LeafSolver != "" && c.LeafSolver != SolverExact && c.LeafSolver != SolverNystrom {
		return fmt.Errorf("leaf solver %q: a tree's leaves are solved exact or nystrom", c.LeafSolver)
	}
	if c.ClassWeight == ClassWeightBalanced && isNystrom(&c) {
		return fmt.Errorf("class weights apply to exact solves (and a tree's exact leaves): the Nyström solver weights rows equally")
	}
	if c.Loss == LossLogistic {
		switch {
		case c.Solver == SolverTree:
			return fmt.Errorf("the logistic loss is fitted by an exact or Nyström solve (solver exact or nystrom), not by a tree's leaves")
		case c.ClassWeight == ClassWeightBalanced:
			return fmt.Errorf("the logistic loss does not take class weights")
		case c.Ridge == 0:
			return fmt.Errorf("the logistic loss needs a ridge λ > 0")
		}
	}
	if c.Diag && c.InitialM.Form == kernel.Full {
		return fmt.Errorf("a full initial M cannot start a diagonal RFM (Diag)")
	}
	return nil
}

// TreeOptions are the tree solver's options (SolverTree: tree.Fit), part
// of a Config.
type TreeOptions struct {
	// LeafSize is the most rows of a tree leaf (0: chosen by the planner).
	LeafSize int `json:"leaf_size,omitempty"`
	// SplitRule picks each node's direction ("": agop).
	SplitRule SplitRule `json:"split_rule,omitempty"`
	// SplitSample is the most rows of a node used to find its direction
	// (0: 4 000).
	SplitSample int `json:"split_sample,omitempty"`
	// LeafSolver solves a tree's leaves: SolverExact ("" too) or
	// SolverNystrom (Centers centres per leaf, float64), which lets a leaf
	// hold far more rows than an exact solve would.
	LeafSolver Solver `json:"leaf_solver,omitempty"`
	// SoftRouting holds out rows of a tree fit (10%, at most 20 000) to
	// choose a temperature for routing rows softly across the split
	// thresholds (0, hard routing, when it scores best).
	SoftRouting bool `json:"soft_routing,omitempty"`
}

// NystromOptions are the Nyström solver's options (SolverNystrom, and a
// tree's Nyström leaves), part of a Config.
type NystromOptions struct {
	// Centers is the number m of Nyström centres (0: DefaultCenters).
	Centers int `json:"centers,omitempty"`
	// CenterChoice draws them ("": uniform).
	CenterChoice CenterChoice `json:"center_choice,omitempty"`
	// CGIters bounds the conjugate-gradient iterations of a Nyström solve
	// (0: 50).
	CGIters int `json:"cg_iters,omitempty"`
}

// UnmarshalJSON decodes a Config. A missing agop_power is the default 1:
// files written while 0 meant 1 omitted it.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config // without methods, so no recursion
	p := plain{AGOPPower: 1}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*c = Config(p)
	return nil
}
