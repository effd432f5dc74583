// Package experiment holds the small measures the research harnesses
// (package hyperbf's study, science/nfa, science/phenomena) share: the
// accuracy of class scores and log-spaced measurement epochs. It is not a
// public API.
package experiment

import (
	"math"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/metrics"
)

// AccuracyPct is the accuracy in percent of the argmax of n×k scores
// against labels (n = len(labels)); 0 when they do not match.
func AccuracyPct(scores []float64, labels []int, k int) float64 {
	a, err := metrics.Accuracy(labels, rfm.Argmax(scores, len(labels), k))
	if err != nil {
		return 0
	}
	return 100 * a
}

// LogEpochs marks about k epochs in [1, epochs], log-spaced, the last
// always included.
func LogEpochs(epochs, k int) map[int]bool {
	out := map[int]bool{epochs: true}
	for i := 0; i < k; i++ {
		e := int(math.Round(math.Pow(float64(epochs), float64(i)/float64(max(1, k-1)))))
		out[min(max(e, 1), epochs)] = true
	}
	return out
}
