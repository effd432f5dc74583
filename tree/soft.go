package tree

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/metrics"
)

// softCut is the least probability of reaching a leaf that soft routing
// evaluates; the kept weights are renormalized. Rows far from every
// threshold reach one leaf and cost what hard routing costs.
const softCut = 1e-3

// Temperatures are the candidates of soft routing, in units of a node's
// projection spread (0 is hard routing). The first best on the held-out
// rows is kept, so hard routing wins ties.
var Temperatures = []float64{0, 0.01, 0.03, 0.1, 0.3}

type leafWeight struct {
	leaf int
	w    float64
}

// LeafWeights returns the leaves row x (D values) reaches under soft routing
// at temperature t > 0 with their probabilities (summing to 1); at t = 0,
// its one leaf with probability 1.
func (m *Model) LeafWeights(x []float64, t float64) (leaves []int, weights []float64) {
	for _, lw := range m.leafWeights(x, t, nil) {
		leaves, weights = append(leaves, lw.leaf), append(weights, lw.w)
	}
	return leaves, weights
}

func (m *Model) leafWeights(row []float64, t float64, buf []leafWeight) []leafWeight {
	type item struct {
		node int
		p    float64
	}
	stack := []item{{0, 1}}
	total := 0.0
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		nd := &m.Nodes[it.node]
		if nd.Leaf >= 0 {
			buf = append(buf, leafWeight{nd.Leaf, it.p})
			total += it.p
			continue
		}
		z := dot(row, nd.Dir) - nd.Threshold
		var right float64 // probability of going right
		switch {
		case t > 0 && nd.Scale > 0:
			right = 1 / (1 + math.Exp(-z/(t*nd.Scale)))
		case z > 0:
			right = 1
		}
		pl, pr := it.p*(1-right), it.p*right
		// The likelier side is always followed, so some leaf is reached.
		if pl >= softCut || pl >= pr {
			stack = append(stack, item{nd.Left, pl})
		}
		if pr >= softCut || pr > pl {
			stack = append(stack, item{nd.Right, pr})
		}
	}
	for i := range buf {
		buf[i].w /= total
	}
	return buf
}

// predictSoft predicts n rows of x under soft routing at temperature t.
func (m *Model) predictSoft(ctx context.Context, x []float64, n int, t float64) ([]float64, error) {
	groups := make([][]weighted, len(m.Leaves))
	var buf []leafWeight
	d := m.D
	for i := 0; i < n; i++ {
		buf = m.leafWeights(x[i*d:i*d+d], t, buf[:0])
		for _, lw := range buf {
			groups[lw.leaf] = append(groups[lw.leaf], weighted{i, lw.w})
		}
	}
	return m.predictGroups(ctx, x, n, groups)
}

// chooseTemperature scores each of Temperatures on the held-out rows of
// ds (accuracy for a classifier, mean squared error of a regression), keeps
// the first best and says so in the notes.
func (m *Model) chooseTemperature(ctx context.Context, ds *rfm.Dataset, held []int) error {
	val := ds.Subset(held)
	metric := metrics.MetricMSE
	if m.Task == rfm.Classification {
		metric = metrics.MetricAccuracy
	}
	best, bestScore := 0.0, metric.Worst()
	var parts []string
	for _, t := range Temperatures {
		var s []float64
		var err error
		if t == 0 {
			s, err = m.predictHard(ctx, val.X, val.N)
		} else {
			s, err = m.predictSoft(ctx, val.X, val.N, t)
		}
		if err != nil {
			return err
		}
		score, text := m.validationScore(val, s)
		parts = append(parts, fmt.Sprintf("%g: %s", t, text))
		if metric.Better(score, bestScore) {
			best, bestScore = t, score
		}
	}
	m.Temperature = best
	how := "hard routing kept"
	if best > 0 {
		how = fmt.Sprintf("temperature %g chosen", best)
	}
	m.Notes = append(m.Notes, fmt.Sprintf("soft routing: %s on %d held-out rows, which no leaf trained on (temperature: %s)", how, val.N, strings.Join(parts, ", ")))
	return nil
}

// validationScore scores predictions s of val: accuracy, or the mean
// squared error of a regression (NaN when it has none: a NaN prediction).
func (m *Model) validationScore(val *rfm.Dataset, s []float64) (float64, string) {
	c := m.Outputs
	if m.Task == rfm.Classification {
		// The rows and labels are val's: their sizes agree.
		acc, _ := metrics.Accuracy(val.Labels, metrics.ArgmaxRows(s, val.N, c))
		return acc, fmt.Sprintf("accuracy %.4f", acc)
	}
	mse, err := metrics.MSE(val.Y, s)
	if err != nil {
		mse = math.NaN()
	}
	return mse, fmt.Sprintf("MSE %.4g", mse)
}
