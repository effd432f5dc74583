package rfm

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/metrics"
)

// Round records one RFM round.
type Round struct {
	Round       int     `json:"round"`
	Bandwidth   float64 `json:"bandwidth"`
	ValAccuracy float64 `json:"val_accuracy,omitempty"` // classification
	ValLoss     float64 `json:"val_loss"`               // MSE of the (one-hot or standardized) outputs
	Jitter      float64 `json:"jitter,omitempty"`       // δ the solver had to add
	// Float64Solve: a Float32 fit solved again in float64 because its
	// float32 matrix was not positive definite, needed a jitter, or its
	// refinement did not reach solve.RefineTol (Nyström: whose
	// preconditioner's pivots were too small for float32, so it was
	// factored in float64).
	Float64Solve bool `json:"float64_solve,omitempty"`
	// Residual: the relative residual of a float32 solve whose refinement
	// stopped above solve.RefineTol when a float64 solve did not fit in
	// memory (0 otherwise: the solve met the tolerance).
	Residual float64 `json:"residual,omitempty"`
	// CGIters: the conjugate-gradient iterations of a Nyström solve.
	CGIters int `json:"cg_iters,omitempty"`
	// Steps: the logistic head's majorization–minimization steps (Head);
	// StepLimit: they ran out before the gradient reached its tolerance.
	Steps     int  `json:"steps,omitempty"`
	StepLimit bool `json:"step_limit,omitempty"`
	// Wall-clock timings, for reports: model files leave them out (ToFile)
	// so that equal fits give equal bytes.
	FitSeconds  float64 `json:"fit_seconds,omitempty"`
	AGOPSeconds float64 `json:"agop_seconds,omitempty"`
}

// Model is a fitted RFM. Its exported fields are its whole state: it
// predicts without the training data. Methods are safe for concurrent use.
type Model struct {
	// Header: Config, Task, Outputs (classes or target columns), D (input
	// features) and Calibration (when set, by Config.Calibrate: maps the
	// classifier's scores to probabilities in PredictProba).
	Header
	// Selected, when set (RFM-T), lists the input columns the model uses;
	// the metric and centres then live in that subspace.
	Selected []int `json:"selected,omitempty"`
	// KernelUsed is the kernel of the predictor: Config.Kernel with the
	// bandwidth after adaptation, or Config.FinalKernel.
	KernelUsed kernel.Spec `json:"kernel_used"`
	// M is the learned feature matrix on the Dm inputs the model uses:
	// identity, diagonal (Dm values) or full (Dm×Dm). Its form is stored
	// in the JSON header ("metric"), its values as the "m" array.
	M     kernel.FeatureMatrix `json:"metric"`
	Shift []float64            `json:"-"` // centring of the inputs (does not change radial kernels)
	// Centers are the N training rows (after row normalization and column
	// selection), Alpha the N×Outputs coefficients.
	Centers []float64 `json:"-"`
	N       int       `json:"n"`
	Alpha   []float64 `json:"-"`
	// YMean, YStd undo the target standardization (regression).
	YMean   []float64 `json:"y_mean,omitempty"`
	YStd    []float64 `json:"y_std,omitempty"`
	History []Round   `json:"history"`
	// Head, with Config.FinalKernel or the logistic loss and validation
	// rows: the final kernel's or logistic head's validation score with the
	// selected M, fitted on the training rows (History scores the base
	// kernel's rounds, which chose M), and its solve (Steps, StepLimit).
	Head      *Round `json:"head,omitempty"`
	BestRound int    `json:"best_round"`
	Refitted  bool   `json:"refitted"`
	Note      string `json:"note,omitempty"`

	// holdout: the validation rows' scores before the refit (Fit only;
	// not stored in files).
	holdout *heldOut

	once  sync.Once
	cache *mapped
	err   error
}

// fittedState is the part of a model that a refit replaces: the centres
// and their coefficients, with the centring and target scaling they were
// fitted with. Model holds a sync.Once and cannot be copied whole; the
// fit saves and restores this instead (refitChecked).
type fittedState struct {
	centers     []float64
	n           int
	alpha       []float64
	shift       []float64
	yMean, yStd []float64
	refitted    bool
}

func (m *Model) state() fittedState {
	return fittedState{centers: m.Centers, n: m.N, alpha: m.Alpha, shift: m.Shift, yMean: m.YMean, yStd: m.YStd, refitted: m.Refitted}
}

func (m *Model) setState(s fittedState) {
	m.Centers, m.N, m.Alpha, m.Shift, m.YMean, m.YStd, m.Refitted = s.centers, s.n, s.alpha, s.shift, s.yMean, s.yStd, s.refitted
}

// heldOut is a fit's validation rows: the scores of the model fitted
// without them, and their labels.
type heldOut struct {
	scores []float64
	labels []int
}

// HoldoutScores returns the raw class scores (rows × Outputs, as Predict
// gives them) of the validation rows of the fit that made the model, by
// the model fitted without those rows (before any refit on all rows), and
// their labels: what its calibration was fitted on. Both are nil unless
// the model is a classifier fitted with Config.Calibrate set and validation
// rows (and it was not read from a file). The caller must not change them.
func (m *Model) HoldoutScores() (scores []float64, labels []int) {
	if m.holdout == nil {
		return nil, nil
	}
	return m.holdout.scores, m.holdout.labels
}

type mapped struct {
	fm      *kernel.FeatureMap
	centers kernel.Points[float64]
}

// Dm is the dimension the metric acts on (len(Selected) or D).
func (m *Model) Dm() int {
	if m.Selected != nil {
		return len(m.Selected)
	}
	return m.D
}

func (m *Model) prepare() (*mapped, error) {
	m.once.Do(func() {
		mt := m.M
		if mt.IsIdentity() && mt.D == 0 {
			mt = kernel.IdentityMatrix(m.Dm())
		}
		if mt.D != m.Dm() {
			m.err = fmt.Errorf("model: M is on %d features, the model uses %d", mt.D, m.Dm())
			return
		}
		fm, err := kernel.NewFeatureMap(mt, m.Shift)
		if err != nil {
			m.err = fmt.Errorf("model: %w", err)
			return
		}
		if len(m.Centers) != m.N*m.Dm() || len(m.Alpha) != m.N*m.Outputs {
			m.err = fmt.Errorf("model: inconsistent sizes (n=%d, d=%d, outputs=%d)", m.N, m.Dm(), m.Outputs)
			return
		}
		m.cache = &mapped{fm: fm, centers: fm.Map(m.Centers, m.N)}
	})
	return m.cache, m.err
}

// inputs checks x and applies the model's row normalization and column
// selection.
func (m *Model) inputs(x []float64, n int) ([]float64, error) {
	if n < 0 || len(x) != n*m.D {
		return nil, fmt.Errorf("predict: got %d values for %d rows of %d features", len(x), n, m.D)
	}
	for i, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("predict: row %d, feature %d is %v", i/m.D, i%m.D, v)
		}
	}
	return prepareX(x, n, m.D, m.Config.NormalizeRows, m.Selected), nil
}

// prepareX applies row L2 normalization and column selection (copying).
func prepareX(x []float64, n, d int, normalize bool, sel []int) []float64 {
	out := append([]float64(nil), x[:n*d]...)
	if normalize {
		normalizeRows(out, n, d)
	}
	if sel == nil {
		return out
	}
	ds := len(sel)
	o2 := make([]float64, n*ds)
	for i := 0; i < n; i++ {
		for j, c := range sel {
			o2[i*ds+j] = out[i*d+c]
		}
	}
	return o2
}

// NormalizedRows returns a copy of the n rows of x (n×d) scaled to unit
// Euclidean norm (Config.NormalizeRows); an all-zero row stays zero.
func NormalizedRows(x []float64, n, d int) []float64 {
	out := append([]float64(nil), x[:n*d]...)
	normalizeRows(out, n, d)
	return out
}

// normalizeRows scales each row to unit norm; an all-zero row stays zero.
func normalizeRows(x []float64, n, d int) {
	for i := 0; i < n; i++ {
		row := x[i*d : i*d+d]
		s := 0.0
		for _, v := range row {
			s += v * v
		}
		if s > 0 {
			inv := 1 / math.Sqrt(s)
			for j := range row {
				row[j] *= inv
			}
		}
	}
}

// InputError is a prediction error caused by the rows given, not by the
// model: a value that is not finite, or (ntk, nngp) a row too long for the
// kernel's values to be represented. A server answers it as a bad request.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Check prepares the model for predicting (the map by M^½, the mapped
// centres) and reports an inconsistent model, so that a loader can refuse
// a file before it serves it, and the first prediction does not pay for
// the preparation.
func (m *Model) Check() error {
	_, err := m.prepare()
	return err
}

// Predict returns the raw outputs for n rows of x (n×D): class scores for
// classification, targets in their original units for regression.
func (m *Model) Predict(ctx context.Context, x []float64, n int) ([]float64, error) {
	xs, err := m.inputs(x, n)
	if err != nil {
		return nil, &InputError{err}
	}
	mp, err := m.prepare()
	if err != nil {
		return nil, err
	}
	// Padded to whole bands, so that a row's prediction does not depend on
	// the rows beside it (kernel.BatchRows).
	np := n
	if b := kernel.BatchRows(); n%b != 0 {
		np = (n/b + 1) * b
		xs = append(xs[:n*m.Dm():n*m.Dm()], make([]float64, (np-n)*m.Dm())...)
	}
	zq := mp.fm.Map(xs, np)
	if err := m.KernelUsed.CheckScale(zq.Z, n, m.Dm(), false); err != nil { // NTK/NNGP values would overflow
		return nil, &InputError{err}
	}
	out, err := kernel.ApplyBatch(ctx, m.KernelUsed, zq, mp.centers, m.Alpha, m.Outputs)
	if err != nil {
		return nil, err
	}
	out = out[:n*m.Outputs]
	if m.Task == Regression && m.YStd != nil {
		c := m.Outputs
		for i := range out {
			out[i] = out[i]*m.YStd[i%c] + m.YMean[i%c]
		}
	}
	return out, nil
}

// PredictClass returns the argmax class of each row (classification).
func (m *Model) PredictClass(ctx context.Context, x []float64, n int) ([]int, error) {
	return ClassOf(ctx, m.Task, m.Outputs, m.Predict, x, n)
}

// ProbEps bounds probabilities away from 0 and 1.
const ProbEps = 1e-6

// PredictProba returns n×classes probabilities: with a Calibration, its
// map of the kernel machine's scores; without, the scores clipped to
// [ProbEps, 1−ProbEps] and renormalized, which rank and sum to one but are
// not calibrated.
func (m *Model) PredictProba(ctx context.Context, x []float64, n int) ([]float64, error) {
	return ProbaOf(ctx, m.Task, m.Outputs, m.Calibration, m.Predict, x, n)
}

// ScoreFunc is a model's Predict: n rows of x in, n×outputs scores out.
type ScoreFunc func(ctx context.Context, x []float64, n int) ([]float64, error)

// classScores is predict for a classifier's class methods; a model of
// another task is refused, naming what was asked.
func classScores(ctx context.Context, task Task, predict ScoreFunc, x []float64, n int, what string) ([]float64, error) {
	if task != Classification {
		return nil, fmt.Errorf("%s: the model is a %s model", what, task)
	}
	return predict(ctx, x, n)
}

// ClassOf is PredictClass of any classifier (an RFM, a tree, an
// ensemble): the argmax of each row's outputs scores by predict.
func ClassOf(ctx context.Context, task Task, outputs int, predict ScoreFunc, x []float64, n int) ([]int, error) {
	s, err := classScores(ctx, task, predict, x, n, "predict class")
	if err != nil {
		return nil, err
	}
	return Argmax(s, n, outputs), nil
}

// ProbaOf is PredictProba of any classifier: cal's map of predict's
// scores (nil: clipped and renormalized).
func ProbaOf(ctx context.Context, task Task, outputs int, cal *Calibration, predict ScoreFunc, x []float64, n int) ([]float64, error) {
	s, err := classScores(ctx, task, predict, x, n, "predict proba")
	if err != nil {
		return nil, err
	}
	cal.Apply(s, n, outputs)
	return s, nil
}

// Probabilities turns n×c class scores into probabilities in place: each
// clipped to [ProbEps, 1−ProbEps], each row renormalized to sum to one.
func Probabilities(s []float64, n, c int) {
	for i := 0; i < n; i++ {
		row := s[i*c : i*c+c]
		sum := 0.0
		for j, v := range row {
			row[j] = min(max(v, ProbEps), 1-ProbEps)
			sum += row[j]
		}
		for j := range row {
			row[j] /= sum
		}
	}
}

// Argmax returns the index of the largest of each row's c scores (the
// first on ties): the predicted classes (metrics.ArgmaxRows).
func Argmax(s []float64, n, c int) []int { return metrics.ArgmaxRows(s, n, c) }

// FeatureMatrix returns M as a dense Dm×Dm matrix (identity and diagonal
// metrics expanded).
func (m *Model) FeatureMatrix() []float64 {
	mt := m.M
	mt.D = m.Dm()
	return mt.Dense()
}

// FeatureDiagonal returns diag(M) over all D input columns (0 for columns
// that RFM-T dropped).
func (m *Model) FeatureDiagonal() []float64 {
	mt := m.M
	mt.D = m.Dm()
	out := make([]float64, m.D)
	for i, v := range mt.Diag() {
		col := i
		if m.Selected != nil {
			col = m.Selected[i]
		}
		out[col] = v
	}
	return out
}
