package complete

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

// The text report lists the NTK before the baselines on each holdout, a
// mean over no columns as "-", and the note and output file.
func TestReportWriteText(t *testing.T) {
	r := &Report{Data: "m.csv", Rows: 4, Cols: 5, Observed: 10, Prior: "onehot", Depth: 1, Activation: "relu",
		Holdout: &HoldoutReport{Cells: 3, NTK: Scores{RMSE: 0.5, MeanR2: math.NaN()},
			Baselines: map[string]Scores{"svd5": {RMSE: 0.9}, "row_mean": {RMSE: 0.7, MeanR2: 0.25, R2Columns: 2}}},
		Note: "a note", Out: "out.csv"}
	var b strings.Builder
	r.WriteText(&b)
	got := b.String()
	for _, want := range []string{"matrix m.csv: 4 rows × 5 columns, 10 observed (50.0%)", "held-out entries (3 cells):", "a note", "completed matrix written to out.csv"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	ntk, row, svd := strings.Index(got, "  ntk "), strings.Index(got, "  row_mean "), strings.Index(got, "  svd5 ")
	if ntk < 0 || !(ntk < row && row < svd) {
		t.Errorf("method order ntk %d, row_mean %d, svd5 %d:\n%s", ntk, row, svd, got)
	}
	if line := got[ntk : strings.Index(got[ntk:], "\n")+ntk]; !strings.HasSuffix(strings.TrimSpace(line), "-") {
		t.Errorf("NaN mean R² over no columns not a dash: %q", line)
	}
	if strings.Contains(got, "held-out columns") {
		t.Error("a holdout that was not run is printed")
	}
}

// ScoreHoldouts fills the report of each holdout asked for, records the
// share of the entries holdout, and says which holdout could not be split.
func TestScoreHoldouts(t *testing.T) {
	y, _ := randomProblem(4, 30, 20, 3, 0.4)
	st := &Study{Priors: []string{"onehot"}, Options: Options{Depth: 1}, Baselines: true, SVDRank: 2}
	r := st.NewReport("y", y)
	if err := st.ScoreHoldouts(context.Background(), y, 0.2, 3, 1, r); err != nil {
		t.Fatal(err)
	}
	if r.Holdout == nil || r.Holdout.Share != 0.2 || r.Holdout.Cells == 0 || r.HoldoutColumns == nil || len(r.HoldoutColumns.Columns) != 3 || len(r.Holdout.Baselines) != 3 {
		t.Fatalf("report %+v / %+v", r.Holdout, r.HoldoutColumns)
	}
	r = st.NewReport("y", y)
	err := st.ScoreHoldouts(context.Background(), y, 0, 20, 1, r)
	var he *HoldoutError
	if !errors.As(err, &he) || !he.Columns || !he.Split || r.Holdout != nil {
		t.Errorf("holding out every column: %v", err)
	}
}
