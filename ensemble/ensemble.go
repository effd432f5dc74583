// Package ensemble combines RFMs fitted on the same features into one
// model: a classifier's probability is the mean of its members'
// uncalibrated probabilities (their clipped scores, or a logistic head's
// softmax), optionally calibrated as a whole; a regression's output is the
// mean of its members' outputs. rfm tune --ensemble K keeps the K best
// configurations of a search this way: on Arora's UCI sets the mean of the
// top three beat the single best on more sets than it lost (README).
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
)

// MaxMembers bounds the members of an ensemble (and of its file).
const MaxMembers = 64

// Model is an ensemble of RFMs that take the same features. Its exported
// fields are its whole state; methods are safe for concurrent use once it
// is built (New or FromFile).
type Model struct {
	Task    rfm.Task `json:"task"`
	D       int      `json:"d"`
	Outputs int      `json:"outputs"`
	// Members are the fitted models, best first: Config is the first's.
	Members []*rfm.Model `json:"-"`
	// Calibration, when set, maps the mean of the members' uncalibrated
	// probabilities (the ensemble's scores) to its probabilities; nil: the
	// mean itself.
	Calibration *rfm.Calibration `json:"calibration,omitempty"`
	Note        string           `json:"note,omitempty"`
}

// New builds an ensemble of members (at least one, at most MaxMembers, of
// the same task, features and outputs), without a calibration.
func New(members []*rfm.Model) (*Model, error) {
	if len(members) == 0 {
		return nil, errors.New("ensemble: no members")
	}
	m0 := members[0]
	m := &Model{Task: m0.Task, D: m0.D, Outputs: m0.Outputs, Members: members}
	if err := m.Check(); err != nil {
		return nil, err
	}
	return m, nil
}

// Config is the configuration of the first (best) member.
func (m *Model) Config() rfm.Config { return m.Members[0].Config }

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
	var sum []float64
	for i, mm := range m.Members {
		var y []float64
		var err error
		if m.Task == rfm.Classification {
			y, err = mm.UncalibratedProba(ctx, x, n)
		} else {
			y, err = mm.Predict(ctx, x, n)
		}
		if err != nil {
			if i == 0 {
				return nil, err
			}
			return nil, fmt.Errorf("member %d: %w", i, err)
		}
		if sum == nil {
			sum = y
			continue
		}
		for j, v := range y {
			sum[j] += v
		}
	}
	k := float64(len(m.Members))
	for j := range sum {
		sum[j] /= k
	}
	return sum, nil
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
	if len(scores) != len(m.Members) {
		return fmt.Errorf("ensemble calibration: scores of %d members for %d members", len(scores), len(m.Members))
	}
	c, n := m.Outputs, len(labels)
	mean := make([]float64, n*c)
	for i, s := range scores {
		if len(s) != n*c {
			return fmt.Errorf("ensemble calibration: member %d has %d scores for %d rows of %d classes", i, len(s), n, c)
		}
		p := m.Members[i].UncalibratedFromScores(s, n)
		for j, v := range p {
			mean[j] += v / float64(len(scores))
		}
	}
	cal, note, err := rfm.FitCheckedCalibration(method, mean, labels, c, folds)
	if err != nil {
		return err
	}
	m.Calibration = cal
	if note != "" {
		m.Note = note
	}
	return nil
}
