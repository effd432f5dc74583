package uci

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/metrics"
)

// Result statuses.
const (
	StatusOK      = "ok"
	StatusSkipped = "skipped" // the data file is missing: reported, not failed
	StatusFailed  = "failed"
	// StatusPartial: the tuned protocol's evaluation splits finished so
	// far, saved after each so that a run stopped in a long data set
	// resumes at its next split (not counted in any summary).
	StatusPartial = "partial"
)

// Result is one data set's outcome. Accuracies are in percent.
type Result struct {
	Name    string `json:"name"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	N       int    `json:"n"` // rows of fich1
	D       int    `json:"d"`
	Classes int    `json:"classes"`
	// RFM and Laplace hold the selections: one for the paper and tuned
	// protocols, one per evaluation split for the clean protocol.
	RFM     []Choice `json:"rfm,omitempty"`
	Laplace []Choice `json:"laplace,omitempty"`
	// TestAccuracy is the mean of the 4 test accuracies TestAccuracies.
	TestAccuracy      float64   `json:"test_accuracy_pct"`
	TestAccuracies    []float64 `json:"test_accuracies_pct,omitempty"`
	LaplaceAccuracy   float64   `json:"laplace_accuracy_pct"`
	LaplaceAccuracies []float64 `json:"laplace_accuracies_pct,omitempty"`
	Seconds           float64   `json:"fit_seconds"`
	// LogLosses and CalLogLosses are the RFM's test log-losses (nats) per
	// evaluation split, of its probabilities as fitted and after the
	// power calibration fitted on the split's training rows (out of fold;
	// tuned protocol only; empty otherwise).
	LogLosses    []float64 `json:"test_log_losses,omitempty"`
	CalLogLosses []float64 `json:"test_cal_log_losses,omitempty"`
	// Members are the configurations each split's tuned model averages:
	// the --ensemble asked for, fewer when fewer reached the search's top
	// rung, 1 when their mean lost to the best alone on validation (tuned
	// protocol only).
	Members []int `json:"members,omitempty"`
	// Protocol is the run tag the result was computed under (see Options).
	Protocol string `json:"protocol"`

	// grids are the validation accuracies of every grid point, per
	// selection (written to OutDir/selection/<name>.tsv, not to results.tsv).
	grids []gridLog
}

// gridLog is one selection's grid: the settings in order and the validation
// accuracy (fraction) of each of their rounds.
type gridLog struct {
	grid    []Setting
	history [][]float64
}

// job is the work on one data set.
type job struct {
	protocol string
	base     base
	fit      fitFunc
	// report, if set, is told the cost units (see fitCost) of each
	// finished fit (done) and of the running fit's finished part (inflight).
	report func(done, inflight float64)
	// trials: the configurations ProtocolTuned's search draws per split (0: 30).
	trials int
	// ensemble: how many top configurations ProtocolTuned averages (≤ 1: one).
	ensemble int
	// resume, if set, is a StatusPartial result of this data set from an
	// earlier run: ProtocolTuned keeps its splits and computes the rest.
	resume *Result
	// checkpoint, if set, is given a StatusPartial copy of the result after
	// each evaluation split of ProtocolTuned but the last.
	checkpoint func(*Result) error
}

// evaluate runs the protocol on one loaded set.
func (j *job) evaluate(ctx context.Context, s *Set) (*Result, error) {
	start := time.Now()
	grid, err := Grid(j.protocol, s.Name)
	if err != nil {
		return nil, err
	}
	res := &Result{Name: s.Name, Status: StatusOK, N: s.N1, D: s.D, Classes: s.Classes}
	prior := 0.0 // seconds an earlier run spent on the splits resumed
	done := func(n int) func(Setting, float64) {
		return func(st Setting, f float64) { j.tell(fitCost(n, s.D, s.Classes, st.Iters+1), f) }
	}
	switch j.protocol {
	case ProtocolTuned:
		if p := j.resume; p != nil && resumable(p, s) {
			res, prior = p.splitsDone(), p.Seconds
		}
		save := func() error {
			if j.checkpoint == nil {
				return nil
			}
			p := *res
			p.Status = StatusPartial
			p.Reason = fmt.Sprintf("%d of %d evaluation splits done", len(res.TestAccuracies), len(s.Folds))
			p.setMeans()
			p.Seconds = prior + time.Since(start).Seconds()
			return j.checkpoint(&p)
		}
		if err := j.search(ctx, s, res, save); err != nil {
			return nil, err
		}
	case ProtocolPaper, ProtocolTunedGrid:
		a, b := s.subset(s.Select.Train), s.subset(s.Select.Test)
		sel, err := selectModel(ctx, j.fit, j.base, grid, a, b, done(a.N))
		if err != nil {
			return nil, fmt.Errorf("model selection: %w", err)
		}
		if j.protocol == ProtocolTunedGrid {
			// Both directions of the selection split, scores averaged: half
			// the variance of a choice made on a few dozen validation rows.
			back, err := selectModel(ctx, j.fit, j.base, grid, b, a, done(b.N))
			if err != nil {
				return nil, fmt.Errorf("model selection, halves swapped: %w", err)
			}
			if sel, err = averaged(grid, sel, back); err != nil {
				return nil, err
			}
			if sel.rfm.Round > 0 {
				both := append(append([]int(nil), s.Select.Train...), s.Select.Test...)
				if err := j.relearn(ctx, s, both, &sel.rfm); err != nil {
					return nil, fmt.Errorf("learning the selected M on both halves: %w", err)
				}
			}
		}
		res.RFM, res.Laplace = []Choice{sel.rfm}, []Choice{sel.laplace}
		res.grids = append(res.grids, gridLog{grid, sel.history})
		for r, f := range s.Folds {
			ar, al, err := j.evalPair(ctx, s, f, sel.rfm, sel.laplace)
			if err != nil {
				return nil, fmt.Errorf("evaluation split %d: %w", r+1, err)
			}
			res.TestAccuracies = append(res.TestAccuracies, ar)
			res.LaplaceAccuracies = append(res.LaplaceAccuracies, al)
		}
	case ProtocolClean:
		for r, f := range s.Folds {
			labels := make([]int, len(f.Train))
			for i, row := range f.Train {
				labels[i] = s.Labels[row]
			}
			ti, vi := rfm.Holdout(len(f.Train), labels, 0.2, j.base.seed+uint64(r))
			tr, va := pick(f.Train, ti), pick(f.Train, vi)
			sel, err := selectModel(ctx, j.fit, j.base, grid, s.subset(tr), s.subset(va), done(len(tr)))
			if err != nil {
				return nil, fmt.Errorf("model selection in split %d: %w", r+1, err)
			}
			ar, al, err := j.evalPair(ctx, s, f, sel.rfm, sel.laplace)
			if err != nil {
				return nil, fmt.Errorf("evaluation split %d: %w", r+1, err)
			}
			res.RFM = append(res.RFM, sel.rfm)
			res.grids = append(res.grids, gridLog{grid, sel.history})
			res.Laplace = append(res.Laplace, sel.laplace)
			res.TestAccuracies = append(res.TestAccuracies, ar)
			res.LaplaceAccuracies = append(res.LaplaceAccuracies, al)
		}
	default:
		return nil, fmt.Errorf("unknown protocol %q", j.protocol)
	}
	res.setMeans()
	res.Seconds = prior + time.Since(start).Seconds()
	return res, nil
}

// setMeans sets the mean accuracies from the per-split ones.
func (r *Result) setMeans() {
	r.TestAccuracy, r.LaplaceAccuracy = mean(r.TestAccuracies), mean(r.LaplaceAccuracies)
}

// resumable reports whether p, a StatusPartial result, holds some but not
// all of s's evaluation splits, each with every per-split column.
func resumable(p *Result, s *Set) bool {
	k := len(p.TestAccuracies)
	return p.Status == StatusPartial && p.N == s.N1 && p.D == s.D && p.Classes == s.Classes &&
		k > 0 && k < len(s.Folds) && len(p.LaplaceAccuracies) == k && len(p.RFM) == k && len(p.Laplace) == k &&
		len(p.LogLosses) == k && len(p.CalLogLosses) == k && (len(p.Members) == 0 || len(p.Members) == k)
}

// splitsDone is a copy of the partial result p to continue: its splits'
// columns, status ok, no means or reason.
func (p *Result) splitsDone() *Result {
	c := &Result{Name: p.Name, Status: StatusOK, N: p.N, D: p.D, Classes: p.Classes}
	c.RFM, c.Laplace = slices.Clone(p.RFM), slices.Clone(p.Laplace)
	c.TestAccuracies, c.LaplaceAccuracies = slices.Clone(p.TestAccuracies), slices.Clone(p.LaplaceAccuracies)
	c.LogLosses, c.CalLogLosses, c.Members = slices.Clone(p.LogLosses), slices.Clone(p.CalLogLosses), slices.Clone(p.Members)
	return c
}

// averaged combines two selections over the same grid (the two directions
// of one split): each (grid point, round) scores the mean of its two
// validation accuracies, and the choices are the first strict maxima of
// that mean in grid order, then round order, as in selectModel. The
// chosen RFM round's M is left unset: the caller learns it (relearn).
func averaged(grid []Setting, x, y *selection) (*selection, error) {
	if len(x.history) != len(grid) || len(y.history) != len(grid) {
		return nil, fmt.Errorf("averaging selections of %d and %d grid points over a grid of %d", len(x.history), len(y.history), len(grid))
	}
	out := &selection{}
	bestR, bestL := -1.0, -1.0
	for i, s := range grid {
		n := min(len(x.history[i]), len(y.history[i]))
		if n == 0 {
			return nil, fmt.Errorf("grid point %s (λ=%g) has no scored round", s, s.Lambda)
		}
		h := make([]float64, n)
		for r := range h {
			h[r] = (x.history[i][r] + y.history[i][r]) / 2
			if metrics.MetricAccuracy.Better(h[r], bestR) {
				bestR = h[r]
				out.rfm = Choice{Setting: s, Round: r, ValAccuracy: 100 * h[r]}
			}
		}
		if metrics.MetricAccuracy.Better(h[0], bestL) {
			bestL = h[0]
			out.laplace = Choice{Setting: s, Round: 0, ValAccuracy: 100 * h[0]}
		}
		out.history = append(out.history, h)
	}
	return out, nil
}

// relearn replaces ch's M by the M of the same setting after the same
// number of rounds, learned on the given rows (no validation data: the
// last round is kept).
func (j *job) relearn(ctx context.Context, s *Set, rows []int, ch *Choice) error {
	cfg := j.base.config(ch.Setting)
	cfg.Iters, cfg.ValFraction = ch.Round, 0
	u := fitCost(len(rows), s.D, s.Classes, ch.Round)
	m, err := j.fit(ctx, cfg, s.subset(rows), nil, fitProgress(func(f float64) { j.tell(u, f) }))
	if err != nil {
		return err
	}
	j.tell(u, 1)
	if m.M.IsIdentity() {
		return fmt.Errorf("round %d of %s left M = I", ch.Round, ch.Setting)
	}
	ch.M = m.M
	return nil
}

// evalPair fits the RFM and the Laplace choice on one (train, test) pair
// and returns their test accuracies in percent; when both choices give the
// same fit it is done once.
func (j *job) evalPair(ctx context.Context, s *Set, f Split, cr, cl Choice) (float64, float64, error) {
	tr, te := s.subset(f.Train), s.subset(f.Test)
	u := fitCost(len(f.Train), s.D, s.Classes, 1)
	prog := func(f float64) { j.tell(u, f) }
	ar, err := fixedKRR(ctx, j.base, cr, tr, te, prog)
	if err != nil {
		return 0, 0, fmt.Errorf("RFM (λ=%g, round %d): %w", cr.Lambda, cr.Round, err)
	}
	j.tell(u, 1)
	al := ar
	if !sameKRR(cr, cl) {
		if al, err = fixedKRR(ctx, j.base, cl, tr, te, prog); err != nil {
			return 0, 0, fmt.Errorf("Laplace (λ=%g): %w", cl.Lambda, err)
		}
	}
	j.tell(u, 1)
	return 100 * ar, 100 * al, nil
}

// tell reports that the fraction f of a fit worth units is done (f = 1:
// finished).
func (j *job) tell(units, f float64) {
	if j.report == nil {
		return
	}
	if f >= 1 {
		j.report(units, 0)
	} else {
		j.report(0, f*units)
	}
}

func pick(rows, idx []int) []int {
	out := make([]int, len(idx))
	for i, k := range idx {
		out[i] = rows[k]
	}
	return out
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// fitCost estimates the work of `rounds` KRR fits (with AGOPs in between)
// on n rows, in arbitrary units proportional to time: the Cholesky
// factorization (n³/3), the kernel and AGOP passes (n²·(d+c)) and a fixed
// per-fit overhead.
func fitCost(n, d, c, rounds int) float64 {
	nf := float64(n)
	return float64(rounds) * (nf*nf*nf/3 + 40*nf*nf*float64(d+c) + 2e6)
}

// tunedFitCost is fitCost weighted for the tuned protocol, whose fits
// cost more than their solves (halving rungs, scoring, data preparation):
// fitted to the measured seconds of the 118 sets in results/ (least
// squares in log seconds), a fixed 9·10⁷ per round and 200·n²·(d+c) for
// the kernel passes. With fitCost's weights the sets of 1 500–10 000 rows
// counted 3.6× more per second than the smaller ones, and the ETA after
// the small sets read 10 h for a run of 58 min; 2.1× with these weights on
// the files they were fitted to (TestTunedCostFollowsMeasuredTime).
func tunedFitCost(n, d, c, rounds int) float64 {
	nf := float64(n)
	return float64(rounds) * (nf*nf*nf/3 + 200*nf*nf*float64(d+c) + tunedRoundOverhead)
}

// tunedRoundOverhead is tunedFitCost's fixed cost of a round, also added
// to each Nyström final fit.
const tunedRoundOverhead = 9e7

// searchTrialCost is the estimated work of one configuration of the
// tuned protocol's search in a split of n training rows: about half the
// trials reach the top rung (the rest stop on smaller ones), each fitted
// on every inner fold with up to 5 rounds.
func searchTrialCost(n, d, c int) float64 {
	dz := searchDesign(n)
	return float64(max(dz.folds, 1)) / 2 * tunedFitCost(dz.topRows(n), d, c, 5)
}

// finalFitsCost is the estimated work of one evaluation split's final fits
// under ProtocolTuned on its n training rows: about 7 solves (the best
// configuration's rounds and refit, the plain kernel's), by Nyström above
// finalCenters rows (measured at 5× nystromCost, plus a round's fixed
// cost).
func finalFitsCost(n, d, c int) float64 {
	if n > finalCenters {
		return 7 * (5*nystromCost(n, finalCenters, d, c) + tunedRoundOverhead)
	}
	return 7 * tunedFitCost(n, d, c, 1)
}

// nystromCost is fitCost's estimate for one Nyström solve of n rows on m
// centres: the preconditioner's factorizations (about m³ in all) and some
// 30 conjugate-gradient passes over the n×m kernel block.
func nystromCost(n, m, d, c int) float64 {
	nf, mf := float64(n), float64(m)
	return mf*mf*mf + 60*nf*mf*float64(d+c)
}

// setCost is the estimated work of a whole data set under a protocol;
// trials is Options.Trials (ProtocolTuned's configurations per split, 0:
// the default).
func setCost(protocol string, m *Meta, trials int) float64 {
	g, _ := Grid(protocol, m.Name)
	// Identical grid points are fitted once.
	uniq := map[Setting]bool{}
	rounds := 0
	for _, s := range g {
		if !uniq[s] {
			uniq[s] = true
			rounds += s.Iters + 1
		}
	}
	nk := m.N1 - m.N1/4 // evaluation training splits hold about 3/4 of the rows
	eval := 8 * fitCost(nk, m.D, m.Classes, 1)
	if protocol == ProtocolClean {
		return EvalSplits*fitCost(nk*4/5, m.D, m.Classes, rounds) + eval
	}
	if protocol == ProtocolTuned {
		// The search in each split, then its final fits.
		return EvalSplits * (float64(searchTrials(trials))*searchTrialCost(nk, m.D, m.Classes) + finalFitsCost(nk, m.D, m.Classes))
	}
	if protocol == ProtocolTunedGrid {
		// The grid runs in both directions; M is then learned again on
		// both halves, typically after a couple of rounds.
		eval += fitCost(m.NVal, m.D, m.Classes, rounds) + fitCost(m.NTrain+m.NVal, m.D, m.Classes, 2)
	}
	return fitCost(m.NTrain, m.D, m.Classes, rounds) + eval
}
