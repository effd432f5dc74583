package rfm

import (
	"context"
	"fmt"

	"github.com/rfmkit/rfm/kernel"
)

// DefaultThreshold is RFM-T's cut on the min-max scaled diagonal of M.
const DefaultThreshold = 0.05

// FitThresholded is "thresholded RFM" (RFM-T, the papers' lottery-ticket
// experiment): fit an RFM with cfg, min-max scale diag(M) to [0, 1], keep
// the coordinates above threshold, and retrain a plain Laplace kernel
// machine (L = 10, λ = 1e-3, M = I) on those coordinates only. The returned
// model takes all D input columns and uses Selected of them.
func FitThresholded(ctx context.Context, cfg Config, threshold float64, train, valid *Dataset, progress func(Progress)) (*Model, error) {
	if !(threshold >= 0 && threshold < 1) {
		return nil, fmt.Errorf("RFM-T threshold %v must be in [0, 1)", threshold)
	}
	if cfg.FinalKernel != nil {
		// The retrained model is a plain Laplace machine by definition; a
		// final kernel would be fitted and thrown away.
		return nil, fmt.Errorf("RFM-T retrains a plain Laplace kernel on the selected features: a final kernel (%s) does not apply", cfg.FinalKernel)
	}
	full, err := Fit(ctx, cfg, train, valid, progress)
	if err != nil {
		return nil, err
	}
	diag := full.FeatureDiagonal()
	lo, hi := diag[0], diag[0]
	for _, v := range diag {
		lo, hi = min(lo, v), max(hi, v)
	}
	var sel []int
	for j, v := range diag {
		if hi > lo && (v-lo)/(hi-lo) > threshold {
			sel = append(sel, j)
		}
	}
	if len(sel) == 0 { // a constant diagonal carries no ranking: keep everything
		for j := range diag {
			sel = append(sel, j)
		}
	}
	plain := cfg
	plain.Kernel = kernel.DefaultSpec()
	plain.FinalKernel = nil
	plain.Ridge = 1e-3
	plain.Iters = 0
	plain.NormalizeRows = false
	sub := func(ds *Dataset) *Dataset {
		if ds == nil {
			return nil
		}
		cp := *ds
		cp.X = prepareX(ds.X, ds.N, ds.D, cfg.NormalizeRows, sel)
		cp.D = len(sel)
		return &cp
	}
	m, err := Fit(ctx, plain, sub(train), sub(valid), nil)
	if err != nil {
		return nil, fmt.Errorf("RFM-T retrain: %w", err)
	}
	// The retrained model sees the selected (and, if configured,
	// row-normalized) columns; record how to get there from raw rows.
	m.Config.NormalizeRows = cfg.NormalizeRows
	m.D = train.D
	m.Selected = sel
	m.Note = fmt.Sprintf("RFM-T: kept %d of %d features (scaled diag(M) > %g) from an RFM whose best round was %d", len(sel), train.D, threshold, full.BestRound)
	return m, nil
}
