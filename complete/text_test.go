package complete

import (
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
