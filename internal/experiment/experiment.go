// Package experiment holds the small measures the research harnesses
// (package hyperbf's study, science/nfa, science/phenomena) share: the
// accuracy of class scores, log-spaced measurement epochs and a feature
// matrix as a dense matrix. It is not a public API.
package experiment

import (
	"math"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
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

// DenseM is a feature matrix as a dense d×d matrix.
func DenseM(m kernel.FeatureMatrix, d int) []float64 {
	out := make([]float64, d*d)
	switch m.Form {
	case kernel.Full:
		copy(out, m.Values)
	case kernel.Diagonal:
		for i, v := range m.Values {
			out[i*d+i] = v
		}
	default:
		for i := 0; i < d; i++ {
			out[i*d+i] = 1
		}
	}
	return out
}
