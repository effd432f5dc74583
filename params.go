package rfm

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/kernel"
)

// ParamType is the value type of a hyperparameter.
type ParamType int

// The parameter types.
const (
	ParamBool   ParamType = iota // bool
	ParamInt                     // int
	ParamUint                    // uint64
	ParamFloat                   // float64
	ParamChoice                  // a string from Choices
)

// Range is a numeric interval a parameter must lie in. Lo and Hi are ±Inf
// when unbounded; Off, when true, also accepts 0 as "off".
type Range struct {
	Lo, Hi         float64
	LoOpen, HiOpen bool // exclusive bounds
	Off            bool
}

// Contains reports whether v is in the range (NaN and ±Inf never are).
func (r Range) Contains(v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	if r.Off && v == 0 {
		return true
	}
	lo := v > r.Lo || (!r.LoOpen && v == r.Lo)
	hi := v < r.Hi || (!r.HiOpen && v == r.Hi)
	return lo && hi
}

// text renders the range for a value named arg, e.g. "P in (0, 2]",
// "λ ≥ 0" or "D in 1..5" (integer ranges).
func (r Range) text(arg string, integer bool) string {
	lo, hi := !math.IsInf(r.Lo, -1), !math.IsInf(r.Hi, 1)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var s string
	switch {
	case lo && hi && integer:
		s = fmt.Sprintf("%s in %s..%s", arg, g(r.Lo), g(r.Hi))
	case lo && hi:
		l, h := "[", "]"
		if r.LoOpen {
			l = "("
		}
		if r.HiOpen {
			h = ")"
		}
		s = fmt.Sprintf("%s in %s%s, %s%s", arg, l, g(r.Lo), g(r.Hi), h)
	case lo && r.LoOpen:
		s = fmt.Sprintf("%s > %s", arg, g(r.Lo))
	case lo:
		s = fmt.Sprintf("%s ≥ %s", arg, g(r.Lo))
	case hi && r.HiOpen:
		s = fmt.Sprintf("%s < %s", arg, g(r.Hi))
	case hi:
		s = fmt.Sprintf("%s ≤ %s", arg, g(r.Hi))
	default:
		return ""
	}
	if r.Off {
		s += " (0: off)"
	}
	return s
}

// Param declares one hyperparameter of Config: its command-line name, the
// Go field it lives in, its type, its range or choices and its help. The
// declarations in Params are the single source of the command-line flags
// of 'rfm fit' and 'rfm cv', of Config.Validate and of the reference
// documentation.
type Param struct {
	Name    string    // command-line spelling, e.g. "agop-power"
	Field   string    // Go field of Config, e.g. "AGOPPower", named by library errors
	Arg     string    // the value's name in help texts, e.g. "P" (none for bools)
	Group   string    // section of the help text
	Help    string    // what it does; the range is appended by Usage
	Type    ParamType //
	Range   Range     // ParamInt, ParamFloat
	Choices []string  // ParamChoice; "" is accepted when EmptyOK
	EmptyOK bool      // ParamChoice: "" is a valid value (see Help)
	// Default, when not "", is the flag default of a parameter whose
	// Config field is zero unless it applies (the kernel's exponent and
	// depth); otherwise the default is read from DefaultConfig.
	Default string

	get func(c *Config) any // bool, int, uint64, float64 or string
	set func(c *Config, v any)
	// applies, when set, reports whether the parameter is used by c (e.g.
	// the bandwidth by radial kernels only); it is checked only then.
	applies func(c *Config) bool
	// AppliesTo says which configurations use it, when not all do.
	AppliesTo string
	// kernelShape marks the parameters of a kernel.Spec: they are checked
	// on Config.FinalKernel too.
	kernelShape bool
}

// Get returns the parameter's value in c.
func (p *Param) Get(c *Config) any { return p.get(c) }

// Applies reports whether the parameter is used by c (by its kernel or its
// final kernel, for the kernel's parameters).
func (p *Param) Applies(c *Config) bool {
	if p.applies == nil || p.applies(c) {
		return true
	}
	if p.kernelShape && c.FinalKernel != nil {
		fc := *c
		fc.Kernel = *c.FinalKernel
		return p.applies(&fc)
	}
	return false
}

// Set parses s and stores it in c, without checking the range (Check and
// Config.Validate do): a parse error says which type was wanted.
func (p *Param) Set(c *Config, s string) error {
	v, err := p.Parse(s)
	if err != nil {
		return err
	}
	p.set(c, v)
	return nil
}

// Parse reads a value of the parameter's type from text.
func (p *Param) Parse(s string) (any, error) {
	switch p.Type {
	case ParamBool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, errors.New("want true or false")
		}
		return b, nil
	case ParamInt:
		v, err := strconv.Atoi(s)
		if err != nil {
			return nil, errors.New("want an integer")
		}
		return v, nil
	case ParamUint:
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, errors.New("want a non-negative integer")
		}
		return v, nil
	case ParamFloat:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, errors.New("want a number")
		}
		return v, nil
	}
	return s, nil
}

// Check reports why v (of the parameter's type) is out of range, or "".
func (p *Param) Check(v any) string {
	switch x := v.(type) {
	case float64:
		if !p.Range.Contains(x) {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return "must be a finite number " + p.Range.condition(false)
			}
			return "must be " + p.Range.condition(false)
		}
	case int:
		if !p.Range.Contains(float64(x)) {
			return "must be " + p.Range.condition(true)
		}
	case string:
		if p.Type == ParamChoice && !(x == "" && p.EmptyOK) && !slices.Contains(p.Choices, x) {
			return "must be " + orList(p.Choices)
		}
	}
	return ""
}

// condition is the range without the argument name: "in (0, 2]", "≥ 0".
func (r Range) condition(integer bool) string {
	return strings.TrimPrefix(r.text("\x00", integer), "\x00 ")
}

// Constraint is the range or the choices as the help text states them,
// e.g. "P in (0, 2]" or "one of mean, max"; "" when any value goes.
func (p *Param) Constraint() string {
	switch p.Type {
	case ParamInt, ParamFloat:
		return p.Range.text(p.Arg, p.Type == ParamInt)
	case ParamChoice:
		return p.Arg + ": " + orList(p.Choices)
	}
	return ""
}

// Usage is the help text with the constraint appended.
func (p *Param) Usage() string {
	if c := p.Constraint(); c != "" {
		return p.Help + "; " + c
	}
	return p.Help
}

// DefaultText is the default value as text, as a flag shows it.
func (p *Param) DefaultText() string {
	if p.Default != "" {
		return p.Default
	}
	def := DefaultConfig()
	return formatValue(p.get(&def))
}

func formatValue(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func orList(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// ParamError is a hyperparameter outside its declared range. Its message
// names the Go field ("AGOPPower = 3: must be in (0, 2]"); the command
// line says the same with Param.Name.
type ParamError struct {
	Param  *Param
	Field  string // Go field path, e.g. "AGOPPower" or "FinalKernel.Bandwidth"
	Value  any
	Reason string // e.g. "must be in (0, 2]"
}

func (e *ParamError) Error() string {
	return fmt.Sprintf("%s = %s: %s", e.Field, e.ValueText(), e.Reason)
}

// ValueText is the offending value as text (strings quoted).
func (e *ParamError) ValueText() string {
	if s, ok := e.Value.(string); ok {
		return strconv.Quote(s)
	}
	return formatValue(e.Value)
}

// check reports c's value of p when it is out of range.
func (p *Param) check(c *Config) error {
	if p.applies != nil && !p.applies(c) {
		return nil
	}
	v := p.get(c)
	if why := p.Check(v); why != "" {
		return &ParamError{Param: p, Field: p.Field, Value: v, Reason: why}
	}
	return nil
}

// LookupParam returns the declaration of the named parameter, or nil.
func LookupParam(name string) *Param {
	for i := range params {
		if params[i].Name == name {
			return &params[i]
		}
	}
	return nil
}

// Params returns the declarations of every hyperparameter, in help order.
func Params() []*Param {
	out := make([]*Param, len(params))
	for i := range params {
		out[i] = &params[i]
	}
	return out
}

// The help sections of the parameters.
const (
	GroupKernel    = "Kernel and feature learning"
	GroupSelection = "Round selection"
	GroupSolver    = "Solver"
)

func kindNames() []string {
	var s []string
	for _, k := range kernel.Kinds() {
		s = append(s, string(k))
	}
	return s
}

func radial(c *Config) bool { return c.Kernel.Radial() }

func isTree(c *Config) bool { return c.Solver == SolverTree || c.Solver == SolverAuto }

// isNystrom: the Nyström options apply (the solver, or a tree's leaves).
func isNystrom(c *Config) bool {
	return c.Solver == SolverNystrom || (isTree(c) && c.LeafSolver == SolverNystrom)
}

var (
	atLeast0 = Range{Lo: 0, Hi: math.Inf(1)}
	atLeast1 = Range{Lo: 1, Hi: math.Inf(1)}
	above0   = Range{Lo: 0, LoOpen: true, Hi: math.Inf(1)}
)

// Typed constructors: each binds a declaration to a field of Config.

func floatParam(p Param, field func(c *Config) *float64) Param {
	p.Type = ParamFloat
	p.get = func(c *Config) any { return *field(c) }
	p.set = func(c *Config, v any) { *field(c) = v.(float64) }
	return p
}

func intParam(p Param, field func(c *Config) *int) Param {
	p.Type = ParamInt
	p.get = func(c *Config) any { return *field(c) }
	p.set = func(c *Config, v any) { *field(c) = v.(int) }
	return p
}

func boolParam(p Param, field func(c *Config) *bool) Param {
	p.Type = ParamBool
	p.get = func(c *Config) any { return *field(c) }
	p.set = func(c *Config, v any) { *field(c) = v.(bool) }
	return p
}

func choiceParam[T ~string](p Param, choices []T, field func(c *Config) *T) Param {
	p.Type = ParamChoice
	for _, c := range choices {
		p.Choices = append(p.Choices, string(c))
	}
	p.get = func(c *Config) any { return string(*field(c)) }
	p.set = func(c *Config, v any) { *field(c) = T(v.(string)) }
	return p
}

// params is the declaration. Adding a hyperparameter: a field in Config,
// its default in DefaultConfig, one entry here and its use in the engine.
var params = []Param{
	choiceParam(Param{Name: "kernel", Field: "Kernel.Kind", Arg: "NAME", Group: GroupKernel, kernelShape: true,
		Help: "base kernel `NAME`"}, kernel.Kinds(), func(c *Config) *kernel.Kind { return &c.Kernel.Kind }),
	floatParam(Param{Name: "bandwidth", Field: "Kernel.Bandwidth", Arg: "L", Group: GroupKernel, kernelShape: true,
		Help: "kernel bandwidth `L` of the radial kernels (laplace, gen-laplace, gaussian, lp-laplace)", Range: above0,
		applies: radial, AppliesTo: "the radial kernels (laplace, gen-laplace, gaussian, lp-laplace)"},
		func(c *Config) *float64 { return &c.Kernel.Bandwidth }),
	floatParam(Param{Name: "exponent", Field: "Kernel.Exponent", Arg: "q", Group: GroupKernel, kernelShape: true, Default: "1",
		Help: "exponent `q` of the gen-laplace and lp-laplace kernels", Range: Range{Lo: 0, LoOpen: true, Hi: 2},
		applies:   func(c *Config) bool { return c.Kernel.Kind == kernel.GenLaplace || c.Kernel.Kind == kernel.LpLaplace },
		AppliesTo: "the gen-laplace and lp-laplace kernels"},
		func(c *Config) *float64 { return &c.Kernel.Exponent }),
	floatParam(Param{Name: "power", Field: "Kernel.Power", Arg: "p", Group: GroupKernel, kernelShape: true, Default: "1",
		Help:    "power `p` of the lp-laplace kernel exp(−(Σ|u_i|^p)^(q/p)/L^q); p = q = 1 is the product Laplace kernel",
		Range:   Range{Lo: 0, LoOpen: true, Hi: 2},
		applies: func(c *Config) bool { return c.Kernel.Kind == kernel.LpLaplace }, AppliesTo: "the lp-laplace kernel"},
		func(c *Config) *float64 { return &c.Kernel.Power }),
	intParam(Param{Name: "depth", Field: "Kernel.Depth", Arg: "D", Group: GroupKernel, kernelShape: true, Default: "2",
		Help: "depth `D` of the ntk and nngp kernels (they have no bandwidth)", Range: Range{Lo: 1, Hi: kernel.MaxDepth},
		applies: func(c *Config) bool { return !c.Kernel.Radial() }, AppliesTo: "the ntk and nngp kernels"},
		func(c *Config) *int { return &c.Kernel.Depth }),
	{Name: "final-kernel", Field: "FinalKernel.Kind", Arg: "NAME", Group: GroupKernel, Type: ParamChoice, Choices: kindNames(), EmptyOK: true,
		Help: "refit α with this kernel `NAME` on the learned M, e.g. ntk for \"RFM (NTK)\" (same --bandwidth, --exponent, --depth)",
		get: func(c *Config) any {
			if c.FinalKernel == nil {
				return ""
			}
			return string(c.FinalKernel.Kind)
		},
		set: func(c *Config, v any) {
			if v.(string) == "" {
				c.FinalKernel = nil
				return
			}
			// The other parameters of the spec are the base kernel's; see FinishKernels.
			c.FinalKernel = &kernel.Spec{Kind: kernel.Kind(v.(string))}
		}},
	floatParam(Param{Name: "ridge", Field: "Ridge", Arg: "λ", Group: GroupKernel,
		Help: "ridge regularization `λ`", Range: atLeast0}, func(c *Config) *float64 { return &c.Ridge }),
	intParam(Param{Name: "iters", Field: "Iters", Arg: "T", Group: GroupKernel,
		Help: "AGOP updates `T` (T+1 fits; round 0 is the plain kernel)", Range: atLeast0}, func(c *Config) *int { return &c.Iters }),
	boolParam(Param{Name: "diag", Field: "Diag", Group: GroupKernel,
		Help: "learn a diagonal M only (feature weighting; faster for many features)"}, func(c *Config) *bool { return &c.Diag }),
	boolParam(Param{Name: "centered", Field: "Centered", Group: GroupKernel,
		Help: "subtract the mean gradient before the outer products"}, func(c *Config) *bool { return &c.Centered }),
	intParam(Param{Name: "agop-samples", Field: "AGOPSamples", Arg: "N", Group: GroupKernel,
		Help: "rows used to estimate the AGOP, at most `N`", Range: atLeast1}, func(c *Config) *int { return &c.AGOPSamples }),
	boolParam(Param{Name: "agop-replace", Field: "AGOPReplace", Group: GroupKernel,
		Help: "sample the AGOP rows with replacement (the authors' UCI code)"}, func(c *Config) *bool { return &c.AGOPReplace }),
	choiceParam(Param{Name: "norm", Field: "MNorm", Arg: "N", Group: GroupKernel,
		Help: "normalization `N` of a new M (mean: the papers; max: later public code)"},
		[]MNormalization{MNormMean, MNormMax}, func(c *Config) *MNormalization { return &c.MNorm }),
	floatParam(Param{Name: "agop-power", Field: "AGOPPower", Arg: "P", Group: GroupKernel,
		Help: "set the new M to AGOP^`P` (1: the papers; 0.5: the grokking work)", Range: Range{Lo: 0, LoOpen: true, Hi: 2}},
		func(c *Config) *float64 { return &c.AGOPPower }),
	floatParam(Param{Name: "adaptive-bandwidth", Field: "AdaptiveBandwidth", Arg: "F", Group: GroupKernel,
		Help: "when > 0, L = `F` × median pairwise M-distance, every round", Range: atLeast0},
		func(c *Config) *float64 { return &c.AdaptiveBandwidth }),
	boolParam(Param{Name: "normalize-rows", Field: "NormalizeRows", Group: GroupKernel,
		Help: "scale every input row to unit length first (UCI protocol option)"}, func(c *Config) *bool { return &c.NormalizeRows }),

	floatParam(Param{Name: "val-fraction", Field: "ValFraction", Arg: "F", Group: GroupSelection,
		Help:  "share `F` of training rows held out (seeded, stratified) to pick the round when no validation rows are given; 0 keeps the last round",
		Range: Range{Lo: 0, Hi: 1, HiOpen: true}}, func(c *Config) *float64 { return &c.ValFraction }),
	choiceParam(Param{Name: "selection", Field: "Selection", Arg: "S", Group: GroupSelection, EmptyOK: true,
		Help: "pick the round by `S` (default: accuracy for classification, loss for regression)"},
		[]Selection{SelectAccuracy, SelectLoss}, func(c *Config) *Selection { return &c.Selection }),
	choiceParam(Param{Name: "calibrate", Field: "Calibrate", Arg: "C", Group: GroupSelection, EmptyOK: true,
		Help: "classification: fit probabilities on the validation rows by `C`: temperature (softmax of the scores over T, fitted by log-loss; classes unchanged), power (the uncalibrated probabilities to a fitted power β, renormalized: contains the model as fitted at β = 1; classes unchanged), isotonic (per class, then renormalized) or none (default: scores clipped and renormalized)"},
		[]CalibrationMethod{CalibrateNone, CalibrateTemperature, CalibratePower, CalibrateIsotonic}, func(c *Config) *CalibrationMethod { return &c.Calibrate }),
	choiceParam(Param{Name: "loss", Field: "Loss", Arg: "L", Group: GroupSelection, EmptyOK: true,
		Help: "loss `L` of the final predictor: squared (the default: kernel ridge regression, the papers) or logistic (kernel logistic regression on the learned M; classification, exact or Nyström solver)"},
		[]Loss{LossSquared, LossLogistic}, func(c *Config) *Loss { return &c.Loss }),
	choiceParam(Param{Name: "class-weight", Field: "ClassWeight", Arg: "W", Group: GroupSelection, EmptyOK: true,
		Help: "classification: `W` = balanced weights each class's rows by n/(classes·n_k) in the ridge regression (exact solves), for imbalanced classes; none (default) weights rows equally"},
		[]ClassWeight{ClassWeightNone, ClassWeightBalanced}, func(c *Config) *ClassWeight { return &c.ClassWeight }),
	floatParam(Param{Name: "early-stop", Field: "EarlyStop", Arg: "F", Group: GroupSelection,
		Help: "stop once the validation loss exceeds `F` × the best, e.g. 1.1", Range: Range{Lo: 1, LoOpen: true, Hi: math.Inf(1), Off: true}},
		func(c *Config) *float64 { return &c.EarlyStop }),
	{Name: "no-refit", Field: "Refit", Group: GroupSelection, Type: ParamBool,
		Help: "keep α fitted on the training part instead of refitting on training + validation rows",
		get:  func(c *Config) any { return !c.Refit },
		set:  func(c *Config, v any) { c.Refit = !v.(bool) }},
	{Name: "seed", Field: "Seed", Arg: "SEED", Group: GroupSelection, Type: ParamUint,
		Help: "`SEED` of the holdout and AGOP sampling",
		get:  func(c *Config) any { return c.Seed },
		set:  func(c *Config, v any) { c.Seed = v.(uint64) }},

	choiceParam(Param{Name: "solver", Field: "Solver", Arg: "S", Group: GroupSolver, EmptyOK: true, Default: "auto",
		Help: "`S`: exact (one n×n kernel matrix), tree (leaves of at most --leaf-size rows, each an exact RFM), nystrom (--centers centres and conjugate gradients) or auto (exact up to 25 000 rows when it fits in memory, tree above)"},
		[]Solver{SolverAuto, SolverExact, SolverTree, SolverNystrom}, func(c *Config) *Solver { return &c.Solver }),
	intParam(Param{Name: "leaf-size", Field: "LeafSize", Arg: "N", Group: GroupSolver,
		Help: "most rows `N` of a tree leaf (0: the planner's choice: 10 000, or 10 000·√(10⁶/n) down to 4 000 above a million rows, less when memory is short)", Range: Range{Lo: 10, Hi: math.Inf(1), Off: true},
		applies: isTree, AppliesTo: "--solver tree or auto"}, func(c *Config) *int { return &c.LeafSize }),
	choiceParam(Param{Name: "split-rule", Field: "SplitRule", Arg: "R", Group: GroupSolver, EmptyOK: true,
		Help:    "direction `R` a tree node is split along: agop (the default: top AGOP eigenvector of a kernel machine on a sample of the node), pca or random",
		applies: isTree, AppliesTo: "--solver tree or auto"},
		[]SplitRule{SplitAGOP, SplitPCA, SplitRandom}, func(c *Config) *SplitRule { return &c.SplitRule }),
	intParam(Param{Name: "split-sample", Field: "SplitSample", Arg: "N", Group: GroupSolver,
		Help: "rows `N` of a tree node sampled to find its split (0: 4 000)", Range: Range{Lo: 10, Hi: 20000, Off: true},
		applies: isTree, AppliesTo: "--solver tree or auto"}, func(c *Config) *int { return &c.SplitSample }),
	choiceParam(Param{Name: "leaf-solver", Field: "LeafSolver", Arg: "S", Group: GroupSolver, EmptyOK: true,
		Help:    "how a tree's leaves are solved, `S`: exact (the default) or nystrom (--centers centres per leaf, float64: leaves of 100 000 rows and more)",
		applies: isTree, AppliesTo: "--solver tree or auto"},
		[]Solver{SolverExact, SolverNystrom}, func(c *Config) *Solver { return &c.LeafSolver }),
	boolParam(Param{Name: "soft-routing", Field: "SoftRouting", Group: GroupSolver,
		Help:    "hold out 10% of the rows (at most 20 000) to choose a temperature that blends the leaves near each split threshold (hard routing when it scores best)",
		applies: isTree, AppliesTo: "--solver tree or auto"}, func(c *Config) *bool { return &c.SoftRouting }),
	intParam(Param{Name: "centers", Field: "Centers", Arg: "M", Group: GroupSolver,
		Help: "Nyström centres `M` (0: 5√n, between 1 000 and 10 000)", Range: atLeast0,
		applies: isNystrom, AppliesTo: "--solver nystrom or --leaf-solver nystrom"}, func(c *Config) *int { return &c.Centers }),
	choiceParam(Param{Name: "center-choice", Field: "CenterChoice", Arg: "C", Group: GroupSolver, EmptyOK: true,
		Help:    "how the Nyström centres are drawn, `C`: uniform (the default) or leverage (approximate ridge leverage scores)",
		applies: isNystrom, AppliesTo: "--solver nystrom or --leaf-solver nystrom"},
		[]CenterChoice{CentersUniform, CentersLeverage}, func(c *Config) *CenterChoice { return &c.CenterChoice }),
	intParam(Param{Name: "cg-iters", Field: "CGIters", Arg: "K", Group: GroupSolver,
		Help: "most conjugate-gradient iterations `K` of a Nyström solve (0: 50)", Range: atLeast0,
		applies: isNystrom, AppliesTo: "--solver nystrom or --leaf-solver nystrom"}, func(c *Config) *int { return &c.CGIters }),
	boolParam(Param{Name: "float32", Field: "Float32", Group: GroupSolver,
		Help: "store and factor the kernel matrix in float32 (half the memory); with --solver nystrom, factor the preconditioner in float32 (about twice as fast; CG and the solution stay float64)"}, func(c *Config) *bool { return &c.Float32 }),
	intParam(Param{Name: "refine", Field: "Refine", Arg: "K", Group: GroupSolver,
		Help: "least float64 refinement steps `K` of a float32 exact solve: more follow until the residual is 1e-5 of the targets' norm, and one that stalls or needs a jitter is solved in float64 when memory allows (0: none, unchecked)", Range: atLeast0}, func(c *Config) *int { return &c.Refine }),
}

// FinishKernels completes a Config whose kernel parameters were set one by
// one (from flags): the final kernel takes the base kernel's bandwidth,
// exponent and depth, and each spec keeps only the parameters of its kind
// (so the stored config is the same as a literal Spec would give).
func FinishKernels(c *Config) {
	if c.FinalKernel != nil {
		fk := c.Kernel
		fk.Kind = c.FinalKernel.Kind
		fk = tidySpec(fk)
		c.FinalKernel = &fk
	}
	c.Kernel = tidySpec(c.Kernel)
}

func tidySpec(s kernel.Spec) kernel.Spec {
	switch s.Kind {
	case kernel.NTK, kernel.NNGP:
		return kernel.Spec{Kind: s.Kind, Depth: s.Depth}
	case kernel.GenLaplace:
		return kernel.Spec{Kind: s.Kind, Bandwidth: s.Bandwidth, Exponent: s.Exponent}
	case kernel.LpLaplace:
		return kernel.Spec{Kind: s.Kind, Bandwidth: s.Bandwidth, Exponent: s.Exponent, Power: s.Power}
	}
	return kernel.Spec{Kind: s.Kind, Bandwidth: s.Bandwidth}
}

// Overlay sets hyperparameters of c from the fields of the struct v (or a
// pointer to one) that are tagged `param:"NAME"` with a declared
// parameter's name; with `param:"NAME,omitzero"` a zero field leaves c's
// value. A small struct of a few parameters (a grid point) can so stand
// for a Config without copying fields by hand. Fields are applied in
// order; values are not range-checked (Validate does that).
func Overlay(c *Config, v any) error {
	rv := reflect.Indirect(reflect.ValueOf(v))
	if rv.Kind() != reflect.Struct {
		return fmt.Errorf("overlay: %T is not a struct", v)
	}
	rt := rv.Type()
	for i := range rt.NumField() {
		tag, ok := rt.Field(i).Tag.Lookup("param")
		if !ok {
			continue
		}
		name, opt, _ := strings.Cut(tag, ",")
		p := LookupParam(name)
		if p == nil {
			return fmt.Errorf("overlay: field %s names no parameter %q", rt.Field(i).Name, name)
		}
		f := rv.Field(i)
		if opt == "omitzero" && f.IsZero() {
			continue
		}
		var val any
		switch {
		case p.Type == ParamFloat && f.CanFloat():
			val = f.Float()
		case p.Type == ParamInt && f.CanInt():
			val = int(f.Int())
		case p.Type == ParamUint && f.CanUint():
			val = f.Uint()
		case p.Type == ParamBool && f.Kind() == reflect.Bool:
			val = f.Bool()
		case p.Type == ParamChoice && f.Kind() == reflect.String:
			val = f.String()
		default:
			return fmt.Errorf("overlay: field %s of type %s cannot hold parameter %q", rt.Field(i).Name, f.Type(), name)
		}
		p.set(c, val)
	}
	return nil
}
