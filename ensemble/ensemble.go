// Package ensemble combines RFMs fitted on the same features into one
// model: a classifier's probability is the mean of its members'
// uncalibrated probabilities (their clipped scores, or a logistic head's
// softmax), optionally calibrated as a whole; a regression's output is the
// mean of its members' outputs. rfm tune --ensemble K keeps the K best
// configurations of a search this way: on Arora's UCI sets the mean of the
// top three beat the single best on more sets than it lost (docs/tuning.md, results/).
//
// An ensemble is saved as one model file of kind "rfm.Ensemble" holding
// every member model (see modelfile/FORMAT.md).
//
// It does not read tables or know about the command line.
package ensemble

import (
	"context"
	"errors"
	"fmt"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/metrics"
)

// MaxMembers bounds the members of an ensemble (and of its file).
const MaxMembers = 64

// Model is an ensemble of RFMs that take the same features. Its exported
// fields are its whole state; methods are safe for concurrent use once it
// is built (New or FromFile).
//
// Its Header's Config is the first (best) member's; its Calibration, when
// set, maps the mean of the members' uncalibrated probabilities (the
// ensemble's scores) to its probabilities (nil: the mean itself).
type Model struct {
	rfm.Header
	// Members are the fitted models, best first.
	Members []*rfm.Model `json:"-"`
	Note    string       `json:"note,omitempty"`
	// Validation, when set, scores the mean against its best member alone
	// on rows neither was fitted on (Validate).
	Validation *Validation `json:"validation,omitempty"`
}

// Kind is "ensemble".
func (m *Model) Kind() string { return "ensemble" }

// NumMembers is the number of members.
func (m *Model) NumMembers() int { return len(m.Members) }

// SubModels are the members (rfm.Composite).
func (m *Model) SubModels() []*rfm.Model { return m.Members }

// Validation compares an ensemble (classification) with its first, best,
// member alone on held-out rows, before any calibration of either: the
// out-of-fold rows of every training row (Folds) or a holdout's rows. It
// is informative: see BelowFloor.
type Validation struct {
	Rows         int     `json:"rows"`
	Folds        bool    `json:"folds"`
	Accuracy     float64 `json:"accuracy"`      // the mean's
	BestAccuracy float64 `json:"best_accuracy"` // member 0's
	LogLoss      float64 `json:"log_loss"`
	BestLogLoss  float64 `json:"best_log_loss"`
	// MeanOnly and BestOnly count the rows only the mean, and only the
	// best member, classifies right (informative).
	MeanOnly int `json:"mean_only"`
	BestOnly int `json:"best_only"`
	// Floor, when > 0, is the tuned plain kernel's accuracy on these rows
	// (rfm tune: the best round 0 of the search's top rung).
	Floor float64 `json:"floor,omitempty"`
}

// BelowFloor reports whether the mean scored below Floor on the held-out
// rows. It is not evidence that the mean is worse: the floor (the tuned
// plain kernel) and BestAccuracy are the maxima of many noisy scores
// chosen on these rows, so biased upward, and the mean's is not. On
// Arora's UCI sets, replacing such a mean by its best member lowered the
// test accuracy (docs/tuning.md, results/), so rfm tune keeps the mean and reports this.
func (v *Validation) BelowFloor() bool {
	return v != nil && metrics.MetricAccuracy.Better(v.Floor, v.Accuracy)
}

// New builds an ensemble of members (at least one, at most MaxMembers, of
// the same task, features and outputs), without a calibration.
func New(members []*rfm.Model) (*Model, error) {
	if len(members) == 0 {
		return nil, errors.New("ensemble: no members")
	}
	m0 := members[0]
	m := &Model{Header: rfm.Header{Config: m0.Config, Task: m0.Task, D: m0.D, Outputs: m0.Outputs}, Members: members}
	if err := m.Check(); err != nil {
		return nil, err
	}
	return m, nil
}

// Check verifies that the members agree and are ready to predict, and that
// the calibration fits the outputs.
func (m *Model) Check() error {
	if len(m.Members) == 0 || len(m.Members) > MaxMembers {
		return fmt.Errorf("ensemble: %d members (want 1 to %d)", len(m.Members), MaxMembers)
	}
	for i, mm := range m.Members {
		if mm == nil {
			return fmt.Errorf("ensemble: member %d is missing", i)
		}
		if mm.Task != m.Task || mm.D != m.D || mm.Outputs != m.Outputs {
			return fmt.Errorf("ensemble: member %d is a %s model of %d features and %d outputs; the ensemble has %s, %d and %d", i, mm.Task, mm.D, mm.Outputs, m.Task, m.D, m.Outputs)
		}
		if err := mm.Check(); err != nil {
			return fmt.Errorf("ensemble: member %d: %w", i, err)
		}
	}
	if m.Task == rfm.Regression && m.Calibration != nil {
		return errors.New("ensemble: a regression ensemble has no calibration")
	}
	return m.Calibration.Check(m.Task, m.Outputs)
}

// Predict returns the ensemble's raw outputs for n rows of x (n×D): for
// classification the mean of the members' uncalibrated probabilities (the
// scores its calibration maps), for regression the mean of their outputs.
func (m *Model) Predict(ctx context.Context, x []float64, n int) ([]float64, error) {
	return rfm.MeanOutputs(len(m.Members), "member", func(i int) ([]float64, error) {
		if m.Task == rfm.Classification {
			return m.Members[i].UncalibratedProba(ctx, x, n)
		}
		return m.Members[i].Predict(ctx, x, n)
	})
}

// PredictProba returns n×classes probabilities: the calibration's map of
// the mean probability, or the mean itself (clipped to [ProbEps, 1−ProbEps]
// and renormalized).
func (m *Model) PredictProba(ctx context.Context, x []float64, n int) ([]float64, error) {
	return rfm.ProbaOf(ctx, m.Task, m.Outputs, m.Calibration, m.Predict, x, n)
}

// UncalibratedProba returns the mean of the members' uncalibrated
// probabilities, clipped and renormalized: what the calibration is
// compared against.
func (m *Model) UncalibratedProba(ctx context.Context, x []float64, n int) ([]float64, error) {
	return rfm.ProbaOf(ctx, m.Task, m.Outputs, nil, m.Predict, x, n)
}

// PredictClass returns the argmax class of each row (classification) by
// the mean probability, as an rfm.Model's by its scores.
func (m *Model) PredictClass(ctx context.Context, x []float64, n int) ([]int, error) {
	return rfm.ClassOf(ctx, m.Task, m.Outputs, m.Predict, x, n)
}

// Calibrate fits the ensemble's calibration on held-out scores: scores[i]
// are member i's raw class scores (rows × Outputs, as its Predict gives
// them) of rows it was not fitted on, the same rows in the same order for
// every member, with their labels. The members' uncalibrated probabilities
// are averaged and the method's map fitted on the mean; with folds (each
// row's fold, as the scores were made) it is kept only when it lowers the
// log-loss across them, as rfm.Model.Recalibrate does.
func (m *Model) Calibrate(method rfm.CalibrationMethod, scores [][]float64, labels []int, folds []int) error {
	if m.Task != rfm.Classification {
		return fmt.Errorf("calibration: a %s ensemble has no probabilities to calibrate", m.Task)
	}
	mean, err := m.meanFromScores(scores, labels, "ensemble calibration")
	if err != nil {
		return err
	}
	cal, note, err := rfm.FitCheckedCalibration(method, mean, labels, m.Outputs, folds)
	if err != nil {
		return err
	}
	m.Calibration = cal
	if note != "" {
		m.Note = note
	}
	return nil
}

// meanFromScores is the mean of the members' uncalibrated probabilities of
// held-out rows from their raw scores (as Calibrate takes them).
func (m *Model) meanFromScores(scores [][]float64, labels []int, what string) ([]float64, error) {
	if len(scores) != len(m.Members) {
		return nil, fmt.Errorf("%s: scores of %d members for %d members", what, len(scores), len(m.Members))
	}
	c, n := m.Outputs, len(labels)
	mean := make([]float64, n*c)
	for i, s := range scores {
		if len(s) != n*c {
			return nil, fmt.Errorf("%s: member %d has %d scores for %d rows of %d classes", what, i, len(s), n, c)
		}
		p := m.Members[i].UncalibratedFromScores(s, n)
		for j, v := range p {
			mean[j] += v / float64(len(scores))
		}
	}
	return mean, nil
}

// Validate scores the mean of the members and the first member alone on
// held-out rows (scores and labels as Calibrate takes them; folds: they
// are out-of-fold scores) and stores the result in m.Validation.
func (m *Model) Validate(scores [][]float64, labels []int, folds bool) error {
	if m.Task != rfm.Classification {
		return fmt.Errorf("validation: a %s ensemble is not compared on held-out rows", m.Task)
	}
	mean, err := m.meanFromScores(scores, labels, "ensemble validation")
	if err != nil {
		return err
	}
	if len(labels) == 0 {
		return errors.New("ensemble validation: no held-out rows")
	}
	c := m.Outputs
	v := &Validation{Rows: len(labels), Folds: folds}
	best := m.Members[0].UncalibratedFromScores(scores[0], len(labels))
	if v.Accuracy, v.LogLoss, err = score(mean, labels, c); err != nil {
		return err
	}
	if v.BestAccuracy, v.BestLogLoss, err = score(best, labels, c); err != nil {
		return err
	}
	pm, pb := rfm.Argmax(mean, len(labels), c), rfm.Argmax(best, len(labels), c)
	for i, l := range labels {
		switch {
		case pm[i] == l && pb[i] != l:
			v.MeanOnly++
		case pb[i] == l && pm[i] != l:
			v.BestOnly++
		}
	}
	m.Validation = v
	return nil
}

// score is the accuracy and log-loss of n×c probabilities p.
func score(p []float64, labels []int, c int) (acc, loss float64, err error) {
	pred := rfm.Argmax(p, len(labels), c)
	if acc, err = metrics.Accuracy(labels, pred); err != nil {
		return 0, 0, err
	}
	loss, err = metrics.LogLoss(labels, p, c)
	return acc, loss, err
}
