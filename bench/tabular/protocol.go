package tabular

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/tune"
)

// The protocols.
const (
	// ProtocolPaper is the RFM paper's recipe (appendix D): Laplace kernel,
	// L = 10, 5 RFM iterations, ridge λ ∈ {1e-4, 1e-3, 1e-2, 1e-1, 1}, with
	// and without projection of the rows to the unit sphere; regression
	// targets centred and scaled to unit variance (the engine does it). In
	// each split every grid point is fitted on the training rows with its
	// round chosen on the validation rows; the grid point of the highest
	// mean validation score over the splits is kept and its mean test
	// score reported (the authors' "highest average validation" rule).
	ProtocolPaper = "paper"
	// ProtocolTuned runs, in each split, the search of package tune (the
	// one 'rfm tune' runs) on the training rows, each configuration scored
	// on the validation rows, within a budget per task; the best is fitted
	// on the training rows (its round chosen on the validation rows) and
	// scored once on the test rows.
	ProtocolTuned = "tuned"
)

// Protocols lists the protocol names.
func Protocols() []string { return []string{ProtocolPaper, ProtocolTuned} }

// PaperRidges and PaperNormalize are the paper protocol's grid, in order.
var (
	PaperRidges    = []float64{1e-4, 1e-3, 1e-2, 1e-1, 1}
	PaperNormalize = []bool{false, true}
)

// PaperIters is the paper protocol's number of RFM iterations.
const PaperIters = 5

// Choice is one protocol's pick in one split or over a task.
type Choice struct {
	Ridge     float64 `json:"ridge"`
	Normalize bool    `json:"normalize"`
	Round     int     `json:"round"`
	// Config describes a tuned configuration (empty for the paper grid).
	Config string `json:"config,omitempty"`
}

// SplitScore is the outcome of one split.
type SplitScore struct {
	Val    float64 `json:"val"`  // validation score of the choice (accuracy % or R²)
	Test   float64 `json:"test"` // its test score
	Choice Choice  `json:"choice"`
	// Seconds is the split's wall time.
	Seconds float64 `json:"seconds"`
}

// GridPoint is one point of the paper grid with its per-split scores.
type GridPoint struct {
	Ridge     float64   `json:"ridge"`
	Normalize bool      `json:"normalize"`
	Val       []float64 `json:"val"`    // per split
	Test      []float64 `json:"test"`   // per split
	Rounds    []int     `json:"rounds"` // round kept in each split
}

// fitter runs the protocols; fit is the engine's (tests substitute it).
type fitter struct {
	protocol string
	float32  bool
	seed     uint64
	trials   int
	budget   time.Duration
	fit      func(ctx context.Context, cfg rfm.Config, train, valid *rfm.Dataset, progress func(rfm.Progress)) (*rfm.Model, error)
}

// paperConfig is the engine configuration of a paper grid point.
func (f *fitter) paperConfig(ridge float64, normalize, classification bool) rfm.Config {
	cfg := rfm.DefaultConfig()
	cfg.Ridge, cfg.NormalizeRows, cfg.Iters = ridge, normalize, PaperIters
	cfg.Refit, cfg.EarlyStop, cfg.ValFraction = false, 0, 0
	cfg.Float32, cfg.Seed = f.float32, f.seed
	cfg.Selection = rfm.SelectLoss
	if classification {
		cfg.Selection = rfm.SelectAccuracy
	}
	return cfg
}

// score returns a model's score on rows x: accuracy in % against labels
// (−1 counts as wrong) or R² against y.
func score(ctx context.Context, m *rfm.Model, x []float64, n int, labels []int, y []float64) (float64, error) {
	if labels != nil {
		pred, err := m.PredictClass(ctx, x, n)
		if err != nil {
			return 0, err
		}
		right := 0
		for i, p := range pred {
			if p == labels[i] {
				right++
			}
		}
		return 100 * float64(right) / float64(n), nil
	}
	pred, err := m.Predict(ctx, x, n)
	if err != nil {
		return 0, err
	}
	return metrics.R2(y, pred)
}

// valScore scores a model on an encoded split's validation rows.
func valScore(ctx context.Context, m *rfm.Model, e *Encoded) (float64, error) {
	return score(ctx, m, e.Val.X, e.Val.N, e.Val.Labels, e.Val.Y)
}

// testScore scores a model on an encoded split's test rows.
func testScore(ctx context.Context, m *rfm.Model, e *Encoded) (float64, error) {
	return score(ctx, m, e.TestX, e.TestN, e.TestLabels, e.TestY)
}

// paperSplit fits every grid point on one split and records its
// validation and test scores into grid (index k = the split).
func (f *fitter) paperSplit(ctx context.Context, e *Encoded, grid []GridPoint, classification bool, tell func(string)) error {
	for i := range grid {
		g := &grid[i]
		cfg := f.paperConfig(g.Ridge, g.Normalize, classification)
		m, err := f.fit(ctx, cfg, e.Train, e.Val, nil)
		if err != nil {
			return fmt.Errorf("fit λ=%g normalize=%v: %w", g.Ridge, g.Normalize, err)
		}
		v, err := valScore(ctx, m, e)
		if err != nil {
			return err
		}
		t, err := testScore(ctx, m, e)
		if err != nil {
			return err
		}
		g.Val, g.Test, g.Rounds = append(g.Val, v), append(g.Test, t), append(g.Rounds, m.BestRound)
		tell(fmt.Sprintf("λ=%g normalize=%v", g.Ridge, g.Normalize))
	}
	return nil
}

// newPaperGrid is the empty paper grid (λ outer, normalization inner).
func newPaperGrid() []GridPoint {
	var g []GridPoint
	for _, l := range PaperRidges {
		for _, n := range PaperNormalize {
			g = append(g, GridPoint{Ridge: l, Normalize: n})
		}
	}
	return g
}

// bestPoint returns the grid point of the first strict maximum of the
// mean validation score; only validation scores take part.
func bestPoint(grid []GridPoint) int {
	best, bv := -1, math.Inf(-1)
	for i, g := range grid {
		if v := mean(g.Val); v > bv {
			best, bv = i, v
		}
	}
	return best
}

// tunedSplit runs the tune search on one split: configurations fitted on
// the training rows and scored on the validation rows, the best fitted
// again (round chosen on validation) and scored on the test rows.
func (f *fitter) tunedSplit(ctx context.Context, e *Encoded, split int, budget time.Duration, tell func(string)) (*SplitScore, error) {
	base := rfm.DefaultConfig()
	base.Float32, base.Seed = f.float32, f.seed+uint64(split)
	base.Refit, base.ValFraction = false, 0
	opt := tune.Options{Base: base, Data: map[string]*rfm.Dataset{"": e.Train}, Valid: map[string]*rfm.Dataset{"": e.Val},
		Trials: f.trials, Budget: budget, Jobs: 1}
	opt.Done = func(t tune.Trial) { tell(fmt.Sprintf("trial %d (%d rows)", t.Index, t.Rows)) }
	sr, err := tune.Run(ctx, opt)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	if sr.Best == nil {
		return nil, fmt.Errorf("search: no configuration was scored within the budget")
	}
	m, err := tune.FinalFit(ctx, opt, sr.Best, nil)
	if err != nil {
		return nil, fmt.Errorf("final fit: %w", err)
	}
	v, err := valScore(ctx, m, e)
	if err != nil {
		return nil, err
	}
	t, err := testScore(ctx, m, e)
	if err != nil {
		return nil, err
	}
	c := sr.Best.Config
	desc := fmt.Sprintf("%s L=%g λ=%g T=%d diag=%v centered=%v p=%g norm-rows=%v", c.Kernel.Kind, c.Kernel.Bandwidth, c.Ridge, c.Iters, c.Diag, c.Centered, c.AGOPPower, c.NormalizeRows)
	return &SplitScore{Val: v, Test: t, Choice: Choice{Ridge: c.Ridge, Normalize: c.NormalizeRows, Round: m.BestRound, Config: desc}}, nil
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
