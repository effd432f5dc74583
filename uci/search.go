package uci

import (
	"context"
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/tune"
)

// searchTrials is the tuned protocol's number of configurations per
// evaluation split: n, or 30.
func searchTrials(n int) int {
	if n > 0 {
		return n
	}
	return 30
}

// design is how the tuned protocol scores a configuration inside one
// evaluation training split of n rows.
type design struct {
	folds   int // ≥ 2: k-fold inside the split; 0: one holdout
	minRows int // the search's smallest rung
	maxRows int // the search's top rung at most (0: every row)
}

// searchMaxRows caps the rows the tuned protocol's search fits on (the
// larger sets of the 118: letter, adult, statlog-shuttle...); the chosen
// configuration is then fitted on the whole training split. No set of
// Arora's 90 reaches it (at most 3 000 rows after the holdout).
const searchMaxRows = tune.LargeMaxRows

// finalCenters bounds the exact final fits of the tuned protocol: a split
// of more training rows (magic, letter, chess-krvk, adult, statlog-shuttle:
// 14 000–33 000) is fitted by Nyström on this many centres
// (tune.Options.FinalCenters); an exact fit there takes minutes per round
// and the protocol fits four models per split. Every other set of the 118
// (nursery's 9 720 rows the largest) is fitted exactly.
const finalCenters = tune.LargeCenters

// searchDesign: small splits are scored by 4-fold cross-validation (a
// 20% holdout of a few hundred rows is too noisy to choose among dozens of
// configurations), larger ones on a holdout; the smallest rung keeps at
// least 100 rows; the top rung at most searchMaxRows.
func searchDesign(n int) design {
	if n < 1000 {
		return design{folds: 4, minRows: 100}
	}
	return design{minRows: 200, maxRows: searchMaxRows}
}

// topRows is the number of rows of the search's top rung on a training
// split of n rows: those of a fold, or of the 20% holdout, capped by maxRows.
func (dz design) topRows(n int) int {
	top := n * 4 / 5
	if dz.folds > 1 {
		top = n * (dz.folds - 1) / dz.folds
	}
	if dz.maxRows > 0 {
		top = min(top, dz.maxRows)
	}
	return top
}

// search runs ProtocolTuned on one set: in each evaluation split, a tune
// search on its training rows only, then the best configuration (and the
// best plain kernel of the same search, for the Laplace column) fitted on
// the training rows and scored on the test rows. Splits already in res (a
// resumed run) are skipped; each split's seed depends only on its number,
// so a resumed set scores as an uninterrupted one. save is called after
// every split but the last.
func (j *job) search(ctx context.Context, s *Set, res *Result, save func() error) error {
	for r, f := range s.Folds {
		if r < len(res.TestAccuracies) {
			continue
		}
		train, test := s.subset(f.Train), s.subset(f.Test)
		base := j.base.config(Setting{Lambda: 1e-3, Bandwidth: 10, Norm: rfm.MNormMean, Iters: 5})
		base.Refit, base.ValFraction = true, 0.2
		// The power calibration keeps every class ranking (the accuracies
		// are those of the uncalibrated model), contains the model as
		// fitted (β = 1), and is scored against it; with folds it is fitted
		// on the out-of-fold scores of every training row (FinalFit).
		base.Calibrate = rfm.CalibratePower
		base.Seed = j.base.seed + uint64(r)
		dz := searchDesign(train.N)
		sp := tune.Space{Iters: []int{1, 2, 3, 5}}
		if forceNoNormalize[s.Name] {
			sp.NormalizeRows = []bool{false}
		}
		opt := tune.Options{Base: base, Data: map[string]*rfm.Dataset{"": train}, Space: sp,
			Trials: searchTrials(j.trials), Folds: dz.folds, MinRows: dz.minRows, MaxRows: dz.maxRows,
			FinalCenters: finalCenters, Jobs: 1}
		u := searchTrialCost(train.N, s.D, s.Classes) // progress units
		opt.Done = func(tune.Trial) { j.tell(u, 1) }
		sr, err := tune.Run(ctx, opt)
		if err != nil {
			return fmt.Errorf("search in split %d: %w", r+1, err)
		}
		fm, err := tune.FinalModel(ctx, opt, sr, j.ensemble, nil)
		if err != nil {
			return fmt.Errorf("split %d, best configuration: %w", r+1, err)
		}
		best := fm.Model
		if j.ensemble > 1 {
			res.Members = append(res.Members, len(fm.Trials))
		}
		lap, err := tune.FinalFit(ctx, opt, tune.PlainTrial(sr.Plain), nil)
		if err != nil {
			return fmt.Errorf("split %d, best plain kernel: %w", r+1, err)
		}
		j.tell(finalFitsCost(train.N, s.D, s.Classes), 1)
		ar, err := accuracy(ctx, best, test)
		if err != nil {
			return err
		}
		al, err := accuracy(ctx, lap, test)
		if err != nil {
			return err
		}
		raw, err := logLoss(ctx, best.UncalibratedProba, lap.Outputs, test)
		if err != nil {
			return err
		}
		cal, err := logLoss(ctx, best.PredictProba, lap.Outputs, test)
		if err != nil {
			return err
		}
		res.LogLosses = append(res.LogLosses, raw)
		res.CalLogLosses = append(res.CalLogLosses, cal)
		res.RFM = append(res.RFM, choiceOf(sr.Best, sr.Best.Accuracy, sr.Best.Round))
		res.Laplace = append(res.Laplace, choiceOf(sr.Plain, sr.Plain.PlainAccuracy, 0))
		res.TestAccuracies = append(res.TestAccuracies, 100*ar)
		res.LaplaceAccuracies = append(res.LaplaceAccuracies, 100*al)
		if r+1 < len(s.Folds) {
			if err := save(); err != nil {
				return err
			}
		}
	}
	return nil
}

// choiceOf records a search trial as the Choice of results.tsv (the
// kernel's exponents and the bandwidth's ratio are in the search, not in
// the table).
func choiceOf(t *tune.Trial, val float64, round int) Choice {
	c := t.Config
	st := Setting{Lambda: c.Ridge, Normalize: c.NormalizeRows, Bandwidth: c.Kernel.Bandwidth, Kernel: c.Kernel.Kind,
		Diag: c.Diag, Centered: c.Centered, Norm: c.MNorm, Iters: c.Iters}
	if c.AGOPPower != 1 {
		st.Power = c.AGOPPower
	}
	return Choice{Setting: st, Round: round, ValAccuracy: 100 * val}
}

// accuracy is the share of test rows m classifies right.
func accuracy(ctx context.Context, m rfm.Classifier, test *rfm.Dataset) (float64, error) {
	pred, err := m.PredictClass(ctx, test.X, test.N)
	if err != nil {
		return 0, err
	}
	return metrics.Accuracy(test.Labels, pred)
}

// logLoss is the mean test log-loss (nats) of the c-class probabilities
// proba gives.
func logLoss(ctx context.Context, proba func(context.Context, []float64, int) ([]float64, error), c int, test *rfm.Dataset) (float64, error) {
	p, err := proba(ctx, test.X, test.N)
	if err != nil {
		return 0, err
	}
	return metrics.LogLoss(test.Labels, p, c)
}
