package predictor

import (
	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
)

// Tally gathers, a piece of a table at a time, a model's outputs on the
// encoded rows and the rows' true targets, keeping only those (memory grows
// with rows × outputs, not with the table), and scores them at the end.
type Tally struct {
	Target *dataset.Target
	N      int // rows added

	labels        []int
	yTrue, scores []float64
}

// Add records one piece: the table t, its encoding ds (Encode) and the
// model's outputs on ds (ds.N × outputs scores).
func (s *Tally) Add(t *dataset.Table, ds *rfm.Dataset, scores []float64) {
	s.scores = append(s.scores, scores...)
	if s.Target.IsClassification() {
		s.labels = append(s.labels, ds.Labels...)
	} else {
		s.yTrue = append(s.yTrue, TrueValues(s.Target, t, ds.Y)...)
	}
	s.N += ds.N
}

// Score scores the rows added (see Score) for a model of the given
// calibration (nil for none) and number of outputs.
func (s *Tally) Score(cal *rfm.Calibration, outputs int) (any, error) {
	return Score(s.Target, cal, s.labels, s.yTrue, s.scores, s.N, outputs)
}
