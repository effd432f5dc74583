package rfm

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/rfmkit/rfm/agop"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/solve"
)

// Progress reports how far a fit has come.
type Progress struct {
	Stage    string  // "fit", "agop", "refit"
	Round    int     // current round (0-based)
	Rounds   int     // total rounds (Iters + 1)
	Fraction float64 // of the whole fit, in [0, 1]
	// Last, when a round has just been scored, is its record.
	Last *Round
}

// Fit trains an RFM on train, selecting the round on valid (or on a seeded
// holdout of train when valid is nil). progress may be nil.
func Fit(ctx context.Context, cfg Config, train, valid *Dataset, progress func(Progress)) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Solver == SolverTree {
		return nil, fmt.Errorf("rfm.Fit solves exactly: a tree of RFMs is fitted by tree.Fit")
	}
	if err := train.check("training", 2); err != nil {
		return nil, err
	}
	task := train.task()
	c := train.outputs()
	if task == Regression && cfg.ClassWeight == ClassWeightBalanced {
		return nil, fmt.Errorf("class weights (balanced) apply to classification; this target is a regression")
	}
	if task == Regression && cfg.Loss == LossLogistic {
		return nil, fmt.Errorf("the logistic loss applies to classification; this target is a regression")
	}
	if task == Classification {
		if err := singleClass(train.Labels); err != nil {
			return nil, err
		}
	}
	if valid != nil {
		if err := valid.check("validation", 1); err != nil {
			return nil, err
		}
		if valid.D != train.D || valid.task() != task {
			return nil, fmt.Errorf("validation data (%d features, %s) does not match training data (%d features, %s)", valid.D, valid.task(), train.D, task)
		}
		if task == Classification {
			if vc := valid.outputs(); vc > c {
				return nil, fmt.Errorf("validation data has class %d, training has only %d classes", vc-1, c)
			}
			valid = withClasses(valid, c)
		} else if valid.outputs() != c {
			return nil, fmt.Errorf("validation data has %d target columns, training has %d", valid.outputs(), c)
		}
	}
	train = withClasses(train, c)
	if err := checkFit(cfg, train, valid, c); err != nil {
		return nil, err
	}
	tr, va, note := holdout(cfg, train, valid)
	f := &fitter{cfg: cfg, task: task, c: c, progress: progress}
	defer f.ws.Release()
	m, err := f.run(ctx, tr, va)
	if err != nil {
		return nil, err
	}
	m.Note = joinNotes(note, m.Note)
	if cfg.FinalKernel != nil || cfg.Loss == LossLogistic {
		// "RFM (NTK)", or the logistic head: M was learned and the round
		// selected with the base kernel and the squared loss; α is fitted
		// again with the final kernel or loss on the selected M, on the
		// training rows, and scored on the validation rows (History holds
		// the rounds' scores, not the predictor's); the refit below then
		// uses all rows.
		what := "logistic loss"
		if cfg.FinalKernel != nil {
			m.KernelUsed = *cfg.FinalKernel
			what = "final kernel " + m.KernelUsed.String()
		}
		f.logistic = cfg.Loss == LossLogistic
		st, res, err := f.refit(ctx, m, tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		m.setState(st)
		if va != nil {
			acc, loss, err := f.scoreOn(ctx, m, va)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			m.Head = &Round{Round: m.BestRound, Bandwidth: m.KernelUsed.Bandwidth, ValAccuracy: acc, ValLoss: loss,
				Jitter: res.jitter, CGIters: res.cgIters, Steps: res.steps, StepLimit: res.atLimit}
		}
	}
	if task == Classification && va != nil && cfg.Calibrate.Enabled() {
		// The scores of the validation rows by the model fitted without
		// them: the calibration's data, kept for callers that combine
		// models (HoldoutScores). Only when calibrating: a search's many
		// fits need no extra pass over their validation rows.
		s, err := f.outputsOn(ctx, m, va)
		if err != nil {
			return nil, err
		}
		m.holdout = &heldOut{scores: s, labels: slices.Clone(va.Labels)}
	}
	if err := f.calibrate(m); err != nil {
		return nil, err
	}
	if cfg.Refit && va != nil {
		if err := f.refitChecked(ctx, m, tr, va); err != nil {
			return nil, err
		}
	}
	f.report(Progress{Stage: "done", Fraction: 1, Round: m.BestRound, Rounds: cfg.Iters + 1})
	return m, nil
}

// FitWithM fits a kernel machine with a given feature matrix m (e.g. one
// an RFM learned before): no AGOP rounds and no holdout, α fitted on all of
// train with cfg's kernel, ridge and solver options.
func FitWithM(ctx context.Context, cfg Config, m kernel.FeatureMatrix, train *Dataset, progress func(Progress)) (*Model, error) {
	cfg = cfg.WithM(m)
	cfg.ValFraction = 0
	return Fit(ctx, cfg, train, nil, progress)
}

// WithM is the configuration of a kernel machine with the fixed feature
// matrix m: no AGOP rounds (Iters 0), M_0 = m.
func (c Config) WithM(m kernel.FeatureMatrix) Config {
	c.Iters, c.InitialM = 0, m
	c.Diag = m.Form == kernel.Diagonal
	return c
}

func withClasses(ds *Dataset, c int) *Dataset {
	if ds.Labels == nil || ds.Classes == c {
		return ds
	}
	cp := *ds
	cp.Classes = c
	return &cp
}

func singleClass(labels []int) error {
	for _, l := range labels[1:] {
		if l != labels[0] {
			return nil
		}
	}
	return fmt.Errorf("training data has a single class (%d): classification needs at least 2", labels[0])
}

type fitter struct {
	cfg      Config
	task     Task
	c        int
	progress func(Progress)
	ws       solve.Workspace
	steps    float64 // work units done
	// logistic: the solves fit the logistic loss (the head and its refit;
	// the rounds always fit the squared loss).
	logistic bool
	// nys64: a Float32 Nyström solve of this fit fell back to float64
	// factors (K_mm's pivots too small for float32); the later solves
	// factor in float64 at once instead of trying again.
	nys64 bool
}

func (f *fitter) report(p Progress) {
	if f.progress != nil {
		f.progress(p)
	}
}

// fraction: each round is a fit (weight 2) and an AGOP (weight 1); the
// refit is one more fit.
func (f *fitter) fraction() float64 {
	total := 2*float64(f.cfg.Iters+1) + float64(f.cfg.Iters) + 2
	return min(f.steps/total, 1)
}

// solveOptions passes the config to the solver, with a progress hook that
// moves Fraction through the factorization (a fit counts 2 work units; the
// factorization is most of one).
func (f *fitter) solveOptions(stage string, round int) solve.Options {
	opt := solve.Options{Ridge: f.cfg.Ridge, Float32: f.cfg.Float32, Refine: f.cfg.Refine, MemoryLimit: f.cfg.MemoryLimit}
	if f.progress != nil {
		base := f.steps
		opt.Progress = func(done float64) {
			f.steps = base + 1.6*done
			f.report(Progress{Stage: stage, Round: round, Rounds: f.cfg.Iters + 1, Fraction: f.fraction()})
			f.steps = base
		}
	}
	return opt
}

// solution is a fitted kernel machine in mapped coordinates: coefficients
// on centres that are every training row (exact) or m of them (Nyström).
type solution struct {
	alpha    []float64
	centers  kernel.Points[float64] // mapped
	index    []int                  // training rows that are the centres; nil: all
	jitter   float64
	f64      bool    // a float32 solve redone in float64
	residual float64 // a float32 solve's residual above solve.RefineTol
	cgIters  int
	steps    int  // the logistic head's majorization–minimization steps
	atLimit  bool // the logistic head ran out of steps before its tolerance
}

// solve fits the kernel machine on the mapped rows z with cfg's solver.
func (f *fitter) solve(ctx context.Context, spec kernel.Spec, z kernel.Points[float64], y []float64, stage string, round int) (*solution, error) {
	if f.logistic && f.cfg.Solver == SolverNystrom {
		return f.solveNystromKLR(ctx, spec, z, y, stage, round)
	}
	if f.logistic {
		res, err := solve.KLR(ctx, &f.ws, spec, z, Argmax(y, z.N, f.c), f.c, solve.KLROptions{Options: f.solveOptions(stage, round)})
		if err != nil {
			return nil, err
		}
		return &solution{alpha: res.Alpha, centers: z, jitter: res.Jitter, steps: res.Iterations, atLimit: res.AtLimit}, nil
	}
	if f.cfg.Solver != SolverNystrom {
		opt := f.solveOptions(stage, round)
		if f.task == Classification && f.cfg.ClassWeight == ClassWeightBalanced {
			opt.RidgeScale = balancedRidgeScale(y, z.N, f.c)
		}
		res, err := solve.KRR(ctx, &f.ws, spec, z, y, f.c, opt)
		if err != nil {
			return nil, err
		}
		return &solution{alpha: res.Alpha, centers: z, jitter: res.Jitter, f64: res.Float64, residual: res.Residual}, nil
	}
	opt := f.nystromOptions(z.N, stage, round)
	// The exact solver's λ on K + λI is λ/n in Falkon's λ·n·K_mm.
	opt.Ridge = f.cfg.Ridge / float64(z.N)
	res, err := solve.Nystrom(ctx, spec, z, y, f.c, opt)
	if err != nil {
		return nil, err
	}
	fell := f.cfg.Float32 && !res.Float32Factors
	f.nys64 = f.nys64 || fell
	return &solution{alpha: res.Beta, centers: res.Centers, index: res.Index, jitter: res.Jitter, cgIters: res.Iterations, f64: fell}, nil
}

// nystromOptions passes the config to a Nyström solve on n rows (all but
// the ridge), with a progress hook over its iterations.
func (f *fitter) nystromOptions(n int, stage string, round int) solve.NystromOptions {
	m := f.cfg.Centers
	if m == 0 {
		m = DefaultCenters(n)
	}
	opt := solve.NystromOptions{
		M: min(m, n), MaxIter: f.cfg.CGIters, Seed: f.cfg.Seed + uint64(round),
		Leverage: f.cfg.CenterChoice == CentersLeverage, MemoryLimit: f.cfg.MemoryLimit,
		Float32: f.cfg.Float32 && !f.nys64,
		// The rounds, the head and the refit keep K_nm's block and the
		// factors in the fit's workspace (released when the fit returns).
		Workspace: &f.ws,
	}
	if f.progress != nil {
		base := f.steps
		opt.Progress = func(p solve.NystromProgress) {
			f.steps = base + 1.6*float64(p.Iter)/float64(max(p.MaxIter, 1))
			f.report(Progress{Stage: stage, Round: round, Rounds: f.cfg.Iters + 1, Fraction: f.fraction()})
			f.steps = base
		}
	}
	return opt
}

// solveNystromKLR fits the logistic head on Nyström centres: the same
// centres, seed and memory limit as the squared loss's solve, with λ the
// logistic objective's (as the exact head's).
func (f *fitter) solveNystromKLR(ctx context.Context, spec kernel.Spec, z kernel.Points[float64], y []float64, stage string, round int) (*solution, error) {
	opt := solve.NystromKLROptions{NystromOptions: f.nystromOptions(z.N, stage, round)}
	opt.Ridge = f.cfg.Ridge
	// The logistic head's factors are always float64 (solve.NystromKLR):
	// not a fallback, so not reported as one.
	res, err := solve.NystromKLR(ctx, spec, z, Argmax(y, z.N, f.c), f.c, opt)
	if err != nil {
		return nil, err
	}
	return &solution{alpha: res.Beta, centers: res.Centers, index: res.Index, jitter: res.Jitter, cgIters: res.Iterations, steps: res.Steps, atLimit: res.AtLimit}, nil
}

// balancedRidgeScale returns 1/w_i for the balanced class weights
// w_i = n/(c·n_k) of rows with one-hot targets y (n×c): the ridge of row i
// is λ·c·n_k/n.
func balancedRidgeScale(y []float64, n, c int) []float64 {
	counts := make([]int, c)
	class := make([]int, n)
	for i := 0; i < n; i++ {
		for k := 0; k < c; k++ {
			if y[i*c+k] == 1 {
				class[i] = k
			}
		}
		counts[class[i]]++
	}
	out := make([]float64, n)
	for i, k := range class {
		out[i] = float64(c*counts[k]) / float64(n)
	}
	return out
}

// centerRows returns the rows of x (n×d) that are a solution's centres.
func centerRows(x []float64, d int, index []int) []float64 {
	if index == nil {
		return x
	}
	out := make([]float64, len(index)*d)
	for i, r := range index {
		copy(out[i*d:(i+1)*d], x[r*d:(r+1)*d])
	}
	return out
}

// targets encodes the training targets: one-hot rows for classification,
// standardized columns for regression (returning mean and std).
func (f *fitter) targets(ds *Dataset) (y, mean, std []float64) {
	c := f.c
	y = make([]float64, ds.N*c)
	if f.task == Classification {
		for i, l := range ds.Labels {
			y[i*c+l] = 1
		}
		return y, nil, nil
	}
	mean, std = make([]float64, c), make([]float64, c)
	for k := 0; k < c; k++ {
		var s, s2 float64
		for i := 0; i < ds.N; i++ {
			s += ds.Y[i*c+k]
		}
		mean[k] = s / float64(ds.N)
		for i := 0; i < ds.N; i++ {
			v := ds.Y[i*c+k] - mean[k]
			s2 += v * v
		}
		std[k] = math.Sqrt(s2 / float64(ds.N))
		if !(std[k] > 0) {
			std[k] = 1
		}
		for i := 0; i < ds.N; i++ {
			y[i*c+k] = (ds.Y[i*c+k] - mean[k]) / std[k]
		}
	}
	return y, mean, std
}

// inputShift is the centring of the feature map: the column means for a
// radial kernel (it only reduces round-off there), none for ntk / nngp,
// which are not translation invariant (centring would change the kernel).
func inputShift(s kernel.Spec, x []float64, n, d int) []float64 {
	if !s.Radial() {
		return nil
	}
	return ColumnMeans(x, n, d)
}

// ColumnMeans returns the mean of each of the d columns of x (n×d).
func ColumnMeans(x []float64, n, d int) []float64 {
	mu := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range x[i*d : i*d+d] {
			mu[j] += v
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	return mu
}

// score evaluates outputs s (n×c, model space) against the dataset: a
// classifier's accuracy, and the MSE of the outputs against the one-hot
// classes or the standardized targets (NaN where a score has no value: no
// rows, or a NaN output).
func (f *fitter) score(s []float64, ds *Dataset, mean, std []float64) (acc, loss float64) {
	c, n := f.c, ds.N
	target := make([]float64, n*c)
	if f.task == Classification {
		for i, l := range ds.Labels {
			target[i*c+l] = 1
		}
		var err error
		if acc, err = metrics.Accuracy(ds.Labels, Argmax(s, n, c)); err != nil {
			acc = math.NaN()
		}
	} else {
		for i := range target {
			target[i] = (ds.Y[i] - mean[i%c]) / std[i%c]
		}
	}
	loss, err := metrics.MSE(target, s)
	if err != nil {
		loss = math.NaN()
	}
	return acc, loss
}

// better reports whether round r beats the best so far (first strict optimum).
func (f *fitter) better(r, best Round) bool {
	sel := f.cfg.Selection
	if sel == SelectByTask {
		sel = SelectLoss
		if f.task == Classification {
			sel = SelectAccuracy
		}
	}
	if sel == SelectAccuracy {
		return metrics.MetricAccuracy.Better(r.ValAccuracy, best.ValAccuracy)
	}
	return metrics.MetricLoss.Better(r.ValLoss, best.ValLoss)
}

func (f *fitter) run(ctx context.Context, tr, va *Dataset) (*Model, error) {
	cfg := f.cfg
	d := tr.D
	x := prepareX(tr.X, tr.N, d, cfg.NormalizeRows, nil)
	var xv []float64
	if va != nil {
		xv = prepareX(va.X, va.N, d, cfg.NormalizeRows, nil)
	}
	y, ymean, ystd := f.targets(tr)
	shift := inputShift(cfg.Kernel, x, tr.N, d)
	mt := kernel.IdentityMatrix(d) // M_0
	if !cfg.InitialM.IsIdentity() {
		mt = cfg.InitialM
		mt.Values = append([]float64(nil), mt.Values...)
	}
	if mt.D != d {
		return nil, fmt.Errorf("initial M is on %d features; the data has %d", mt.D, d)
	}
	m := &Model{Header: Header{Config: cfg, Task: f.task, Outputs: f.c, D: d}, N: tr.N, YMean: ymean, YStd: ystd, Shift: shift}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xa60b))
	best := Round{ValAccuracy: -1, ValLoss: math.Inf(1)}
	var bestAlpha []float64
	var bestIndex []int
	bestM := mt
	bestL := cfg.Kernel.Bandwidth
	rounds := cfg.Iters + 1
	for t := 0; t < rounds; t++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		fm, err := kernel.NewFeatureMap(mt, shift)
		if err != nil {
			return nil, err
		}
		spec := cfg.Kernel
		if cfg.AdaptiveBandwidth > 0 {
			med := medianDistance(x, tr.N, fm, rng)
			if med > 0 {
				spec.Bandwidth = cfg.AdaptiveBandwidth * med
			}
		}
		f.report(Progress{Stage: "fit", Round: t, Rounds: rounds, Fraction: f.fraction()})
		start := time.Now()
		z := fm.Map(x, tr.N)
		res, err := f.solve(ctx, spec, z, y, "fit", t)
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", t, err)
		}
		rec := Round{Round: t, Bandwidth: spec.Bandwidth, Jitter: res.jitter, Float64Solve: res.f64, Residual: res.residual, CGIters: res.cgIters}
		if va != nil {
			// Scored in float64 as the model predicts, also in a float32
			// fit: a Nyström β of a smooth kernel can have a norm of 10⁹,
			// and float32 kernel values then left adult's rounds at 52–60%
			// validation accuracy against the predictor's 85%.
			s, err := kernel.Apply(ctx, spec, fm.Map(xv, va.N), res.centers, res.alpha, f.c)
			if err != nil {
				return nil, err
			}
			rec.ValAccuracy, rec.ValLoss = f.score(s, va, ymean, ystd)
		}
		rec.FitSeconds = time.Since(start).Seconds()
		f.steps += 2
		// With no validation rows every round "improves": the last is kept.
		if va == nil || f.better(rec, best) || t == 0 {
			best = rec
			bestAlpha, bestM, bestL, bestIndex = res.alpha, mt, spec.Bandwidth, res.index
			m.BestRound = t
		}
		m.History = append(m.History, rec)
		stop := va != nil && cfg.EarlyStop > 1 && rec.ValLoss > cfg.EarlyStop*best.ValLoss
		if t+1 < rounds && !stop {
			f.report(Progress{Stage: "agop", Round: t, Rounds: rounds, Fraction: f.fraction(), Last: &m.History[len(m.History)-1]})
			start := time.Now()
			p := &agop.Predictor{Kernel: spec, Map: fm, Centers: res.centers, Alpha: res.alpha, C: f.c}
			// In float64 when the solve was beyond float32 (res.f64), and
			// for Nyström: the gradients sum α-weighted kernel terms, and
			// a Nyström β is not bounded by a ridge on its own norm
			// (‖β‖ = 10⁹ on adult), so float32 kernel values would leave
			// rounding larger than the gradient.
			opt := agop.Options{Diag: cfg.Diag, Centered: cfg.Centered, Float32: cfg.Float32 && !res.f64 && res.index == nil, Scratch: f.ws.Scratch64()}
			if res.index != nil {
				opt.EvalPoints = z // the AGOP is taken at training rows, not only at the centres
			}
			g, err := agop.Compute(ctx, p, f.evalPoints(tr.N, rng), opt)
			if err != nil {
				return nil, fmt.Errorf("round %d AGOP: %w", t, err)
			}
			m.History[len(m.History)-1].AGOPSeconds = time.Since(start).Seconds()
			f.steps++
			collectIfLarge(tr.N)
			if p := cfg.AGOPPower; p != 0 && p != 1 {
				if g, err = matrixPower(g, d, cfg.Diag, p); err != nil {
					return nil, fmt.Errorf("round %d: %w", t, err)
				}
			}
			if !normalizeM(g, cfg.MNorm) {
				m.Note = fmt.Sprintf("the AGOP of round %d vanished (constant predictor); stopped there", t)
				break
			}
			if cfg.Diag {
				mt = kernel.DiagonalMatrix(g)
			} else {
				mt = kernel.FullMatrix(d, g)
			}
		} else {
			f.report(Progress{Stage: "fit", Round: t, Rounds: rounds, Fraction: f.fraction(), Last: &m.History[len(m.History)-1]})
			if stop {
				m.Note = fmt.Sprintf("early stop after round %d: validation loss %.4g > %.3g × best %.4g", t, rec.ValLoss, cfg.EarlyStop, best.ValLoss)
				break
			}
		}
	}
	m.Alpha, m.M = bestAlpha, bestM
	m.KernelUsed = cfg.Kernel
	m.KernelUsed.Bandwidth = bestL
	m.Centers = centerRows(x, d, bestIndex)
	m.N = len(m.Centers) / d
	return m, nil
}

// scoreOn scores the model's current α (fitted on its Centers) on
// validation rows, as the rounds are scored.
func (f *fitter) scoreOn(ctx context.Context, m *Model, va *Dataset) (acc, loss float64, err error) {
	s, err := f.outputsOn(ctx, m, va)
	if err != nil {
		return 0, 0, err
	}
	if f.logistic {
		// Logits: the loss is the squared error of their probabilities, as
		// the squared loss's outputs are compared with the one-hot targets.
		for i := 0; i < va.N; i++ {
			softmax(s[i*f.c:i*f.c+f.c], 1)
		}
	}
	acc, loss = f.score(s, va, m.YMean, m.YStd)
	return acc, loss, nil
}

// outputsOn returns the model's raw outputs (va.N×c) on the rows of va.
func (f *fitter) outputsOn(ctx context.Context, m *Model, va *Dataset) ([]float64, error) {
	fm, err := kernel.NewFeatureMap(m.M, m.Shift)
	if err != nil {
		return nil, err
	}
	zv := fm.Map(prepareX(va.X, va.N, m.D, f.cfg.NormalizeRows, nil), va.N)
	return kernel.Apply(ctx, m.KernelUsed, zv, fm.Map(m.Centers, m.N), m.Alpha, f.c)
}

// NoValidationNote is a model's note when a calibration was asked for but
// there were no validation rows to fit it on.
const NoValidationNote = "no validation rows: the probabilities are not calibrated"

// calibrate fits cfg.Calibrate's map on the validation rows' scores of
// the model before its refit (rows it was not fitted on: m.holdout).
func (f *fitter) calibrate(m *Model) error {
	if f.task != Classification {
		return nil
	}
	var base *Calibration // how the scores become probabilities without calibration
	if f.logistic {
		// The logistic head's probabilities are the softmax of its logits,
		// stored as a temperature of 1 so that every path from scores to
		// probabilities (Calibration.Apply) applies it.
		base = &Calibration{Method: CalibrateTemperature, Temperature: 1}
		m.Calibration = base
	}
	if !f.cfg.Calibrate.Enabled() {
		return nil
	}
	if m.holdout == nil {
		m.Note = joinNotes(m.Note, NoValidationNote)
		return nil
	}
	// Checked as with folds: across 4 parts of the holdout (checkParts).
	cal, note, err := calibrateChecked(f.cfg.Calibrate, m.holdout.scores, m.holdout.labels, f.c, base, nil)
	if err != nil {
		return err
	}
	m.Calibration = cal
	m.Note = joinNotes(m.Note, note)
	return nil
}

// refit solves for α again on the rows of all with the selected metric
// and bandwidth; it returns what it fitted, which the caller sets on the
// model (setState), and the solve.
func (f *fitter) refit(ctx context.Context, m *Model, all *Dataset) (fittedState, *solution, error) {
	f.report(Progress{Stage: "refit", Round: m.BestRound, Rounds: f.cfg.Iters + 1, Fraction: f.fraction()})
	d := m.D
	x := prepareX(all.X, all.N, d, f.cfg.NormalizeRows, nil)
	y, mean, std := f.targets(all)
	shift := inputShift(m.KernelUsed, x, all.N, d)
	fm, err := kernel.NewFeatureMap(m.M, shift)
	if err != nil {
		return fittedState{}, nil, err
	}
	res, err := f.solve(ctx, m.KernelUsed, fm.Map(x, all.N), y, "refit", m.BestRound)
	if err != nil {
		return fittedState{}, nil, fmt.Errorf("refit: %w", err)
	}
	f.steps += 2
	centers := centerRows(x, d, res.index)
	return fittedState{centers: centers, n: len(centers) / d, alpha: res.alpha, shift: shift, yMean: mean, yStd: std}, res, nil
}

// refitHook, set only by tests, sees (and may spoil) each refit model.
var refitHook func(*Model)

// refitSlack: a refit is kept unless its loss on the validation rows, now
// among its training rows, exceeds refitSlack × that of the model fitted
// without them (a healthy refit fits them better, not worse).
const refitSlack = 1.1

// refitChecked refits α on tr ∪ va (refit) and keeps the refit unless it
// fits the validation rows, now among its training rows, worse than the
// model fitted without them did: the new solve went wrong, and nothing
// else would see it (no rows are left to score it on). Measured on adult
// (24 421 rows, a Gaussian kernel of L = 35.1 with the logistic head,
// Nyström on 10 000 centres): the refit scored 66.8% on test against 84.9%
// for the model it replaced. The model without the refit is then kept,
// with a note.
func (f *fitter) refitChecked(ctx context.Context, m *Model, tr, va *Dataset) error {
	before := keptLoss(m)
	kept := m.state()
	st, _, err := f.refit(ctx, m, concat(tr, va))
	if err != nil {
		return err
	}
	st.refitted = true
	m.setState(st)
	if refitHook != nil {
		refitHook(m)
	}
	_, after, err := f.scoreOn(ctx, m, va)
	if err != nil {
		return err
	}
	if !(after <= refitSlack*before) {
		m.setState(kept)
		m.Note = joinNotes(m.Note, fmt.Sprintf("the refit on all %d rows fitted the %d validation rows worse (loss %.4g) than the model fitted without them (%.4g): that model is kept", tr.N+va.N, va.N, after, before))
	}
	return nil
}

// keptLoss is the validation loss of the model before its refit, as the
// fit already scored it: its head's (logistic head, final kernel) or its
// kept round's (History holds every round from 0, in order). Both are
// scored with the float64 kernel values the predictor uses
// (TestRoundScoresAreThePredictors), so refitChecked need not pass over
// the validation rows again.
func keptLoss(m *Model) float64 {
	if m.Head != nil {
		return m.Head.ValLoss
	}
	return m.History[m.BestRound].ValLoss
}

// collectIfLarge runs the garbage collector between rounds of a large fit.
// The n×n matrix is live for the whole fit, so with the default GOGC the
// heap may grow to twice its size before a collection: each round's
// scratch (AGOP blocks, prediction tiles, mapped copies of X) would pile up
// as resident memory. A collection costs milliseconds here (the big
// buffers hold no pointers) against seconds per round.
func collectIfLarge(n int) {
	if n >= 4000 {
		runtime.GC()
	}
}

// evalPoints picks the AGOP evaluation rows: all rows when n ≤ AGOPSamples,
// otherwise a seeded sample (with replacement when AGOPReplace).
func (f *fitter) evalPoints(n int, rng *rand.Rand) []int {
	s := f.cfg.AGOPSamples
	if n <= s {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	if f.cfg.AGOPReplace {
		idx := make([]int, s)
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		return idx
	}
	return rng.Perm(n)[:s]
}

// matrixPower returns A^p for a symmetric PSD d×d matrix (negative
// eigenvalues from round-off clamped to 0), or the element-wise power of a
// diagonal stored as a vector.
func matrixPower(a []float64, d int, diag bool, p float64) ([]float64, error) {
	if diag {
		out := make([]float64, d)
		for i, v := range a {
			out[i] = math.Pow(max(v, 0), p)
		}
		return out, nil
	}
	return kernel.PowerPSD(d, a, p)
}

// normalizeM applies the "mean" (nothing more to do) or "max" normalization
// in place; it reports false when the matrix is zero or not finite.
func normalizeM(g []float64, norm MNormalization) bool {
	mx := 0.0
	for _, v := range g {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
		mx = max(mx, math.Abs(v))
	}
	if mx == 0 {
		return false
	}
	if norm == MNormMax {
		for i := range g {
			g[i] /= mx
		}
	}
	return true
}

// medianDistance is the median pairwise M-distance over up to 5 000 rows.
func medianDistance(x []float64, n int, fm *kernel.FeatureMap, rng *rand.Rand) float64 {
	d := fm.D
	idx := rng.Perm(n)
	if len(idx) > 5000 {
		idx = idx[:5000]
	}
	k := len(idx)
	xs := make([]float64, k*d)
	for i, r := range idx {
		copy(xs[i*d:], x[r*d:(r+1)*d])
	}
	z := fm.Map(xs, k)
	sq := make([]float64, k*k)
	kernel.SquaredDistances(z, z, sq)
	pairs := make([]float64, 0, k*(k-1)/2)
	for i := 0; i < k; i++ {
		pairs = append(pairs, sq[i*k:i*k+i]...)
	}
	if len(pairs) == 0 {
		return 0
	}
	return math.Sqrt(quickselect(pairs, len(pairs)/2))
}

// quickselect returns the k-th smallest value (0-based), reordering a.
func quickselect(a []float64, k int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		p := a[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for a[i] < p {
				i++
			}
			for a[j] > p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return a[k]
		}
	}
	return a[k]
}
