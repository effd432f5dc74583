package metrics

import (
	"fmt"
	"math"
)

// Brier returns the multi-class Brier score, (1/n) Σ_i Σ_k (p[i,k] − 1[yTrue[i] = k])²,
// with prob the row-major n×c class probabilities: 0 is perfect, 2 the
// worst (all mass on a wrong class).
func Brier(yTrue []int, prob []float64, c int) (float64, error) {
	if err := checkProb(yTrue, prob, c); err != nil {
		return 0, fmt.Errorf("brier score: %w", err)
	}
	sum := 0.0
	for i, t := range yTrue {
		for k := 0; k < c; k++ {
			d := prob[i*c+k]
			if k == t {
				d--
			}
			sum += d * d
		}
	}
	return sum / float64(len(yTrue)), nil
}

// ReliabilityBin is one bin of a reliability diagram: the rows whose top
// probability (the confidence of the predicted class) falls in [Lo, Hi).
type ReliabilityBin struct {
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Count      int     `json:"count"`
	Confidence float64 `json:"confidence"` // mean top probability of the bin's rows
	Accuracy   float64 `json:"accuracy"`   // share of them predicted right
}

// Reliability bins the rows by the probability of their predicted class
// (the row's argmax, ties to the lowest class) into bins equal-width bins
// of [0, 1] (the last includes 1) and returns the bins and the expected
// calibration error, Σ_b (count_b/n)·|accuracy_b − confidence_b|. Empty
// bins have Count 0.
func Reliability(yTrue []int, prob []float64, c, bins int) ([]ReliabilityBin, float64, error) {
	if bins < 1 {
		return nil, 0, fmt.Errorf("reliability: %d bins, want ≥ 1", bins)
	}
	if err := checkProb(yTrue, prob, c); err != nil {
		return nil, 0, fmt.Errorf("reliability: %w", err)
	}
	pred, err := Argmax(prob, c)
	if err != nil {
		return nil, 0, fmt.Errorf("reliability: %w", err)
	}
	out := make([]ReliabilityBin, bins)
	for b := range out {
		out[b].Lo, out[b].Hi = float64(b)/float64(bins), float64(b+1)/float64(bins)
	}
	for i, t := range yTrue {
		p := prob[i*c+pred[i]]
		b := min(int(p*float64(bins)), bins-1)
		out[b].Count++
		out[b].Confidence += p
		if pred[i] == t {
			out[b].Accuracy++
		}
	}
	ece := 0.0
	for b := range out {
		if out[b].Count == 0 {
			continue
		}
		k := float64(out[b].Count)
		out[b].Confidence /= k
		out[b].Accuracy /= k
		ece += k / float64(len(yTrue)) * math.Abs(out[b].Accuracy-out[b].Confidence)
	}
	return out, ece, nil
}

// ECEBins is the number of bins of the expected calibration error that
// EvaluateClassification reports (the usual choice in the calibration
// literature).
const ECEBins = 15
