package complete

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteText prints the report: the matrix and the kernel, a table of the
// scores on each holdout (the NTK beside the baselines), the note and the
// output file.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "matrix %s: %d rows × %d columns, %d observed (%.1f%%)\n", r.Data, r.Rows, r.Cols, r.Observed, 100*float64(r.Observed)/float64(r.Rows*r.Cols))
	fmt.Fprintf(w, "NTK: prior %s, depth %d, %s, ridge %g\n", r.Prior, r.Depth, r.Activation, r.Ridge)
	for _, h := range []struct {
		name string
		r    *HoldoutReport
	}{{"held-out entries", r.Holdout}, {"held-out columns", r.HoldoutColumns}} {
		if h.r == nil {
			continue
		}
		fmt.Fprintf(w, "%s (%d cells):\n", h.name, h.r.Cells)
		fmt.Fprintf(w, "  %-14s %9s %9s %8s %8s %9s %8s %11s\n", "method", "RMSE", "MAE", "R²", "Pearson", "thesis r", "mean R²", "mean cosine")
		line := func(name string, s Scores) {
			fmt.Fprintf(w, "  %-14s %9.4g %9.4g %8.4f %8.4f %9.4f %8s %11s\n", name, s.RMSE, s.MAE, s.R2, s.Pearson, s.ThesisR, orDash(s.MeanR2, s.R2Columns), orDash(s.MeanCosine, s.CosineColumns))
		}
		line("ntk", h.r.NTK)
		for _, name := range []string{"row_mean", "column_mean"} {
			if s, ok := h.r.Baselines[name]; ok {
				line(name, s)
			}
		}
		for name, s := range h.r.Baselines {
			if strings.HasPrefix(name, "svd") {
				line(name, s)
			}
		}
	}
	if r.Note != "" {
		fmt.Fprintln(w, r.Note)
	}
	if r.Out != "" {
		fmt.Fprintf(w, "completed matrix written to %s\n", r.Out)
	}
}

// orDash is v to four decimals, or "-" when no column (n) defines it.
func orDash(v float64, n int) string {
	if n == 0 || math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.4f", v)
}
