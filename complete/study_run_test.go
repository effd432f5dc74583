package complete

import (
	"context"
	"strings"
	"testing"
)

// Study.Run completes and hands the matrix to Write, scores a holdout
// without completing when nothing is to be written, and refuses a matrix
// with nothing to complete.
func TestStudyRun(t *testing.T) {
	m, n := 6, 5
	y := NewMatrix(m, n)
	for k := range y.Values {
		y.Values[k] = float64(k%7) + 1
		y.Observed[k] = k%4 != 1
	}
	act, _ := ParseActivation("relu", 0)
	st := &Study{Priors: []string{"onehot"}, Options: Options{Depth: 1, Activation: act, Strategy: StrategyAuto}}
	var written *Matrix
	r, err := st.Run(context.Background(), y, RunOptions{Data: "y", Out: "out.csv", Write: func(c *Matrix) error { written = c; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if written == nil || written.Count() != m*n || r.Out != "out.csv" || r.Groups == 0 || !strings.HasPrefix(r.Summary(), "completed 6×5 (") {
		t.Errorf("written %v, report %+v, summary %q", written, r, r.Summary())
	}
	r, err = st.Run(context.Background(), y, RunOptions{Data: "y", Holdout: 0.2, Seed: 1})
	if err != nil || r.Holdout == nil || r.Groups != 0 {
		t.Errorf("holdout only: %+v %v", r, err)
	}
	for k := range y.Observed {
		y.Observed[k] = true
	}
	if _, err := st.Run(context.Background(), y, RunOptions{Data: "y"}); err == nil || !strings.Contains(err.Error(), "nothing to complete") {
		t.Errorf("all observed: %v", err)
	}
}
