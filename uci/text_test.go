package uci

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm/metrics"
)

func TestDefaultOutDir(t *testing.T) {
	for _, c := range [][3]string{
		{ProtocolPaper, SubsetArora90, "uci-paper-arora90"},
		{ProtocolTuned, SubsetAll, "uci-tuned-all"},
		{ProtocolClean, "abalone,iris", "uci-clean-selected"},
	} {
		if got := DefaultOutDir(c[0], c[1]); got != filepath.Join("out", c[2]) {
			t.Errorf("%s %s: %s", c[0], c[1], got)
		}
	}
}

// WriteText lists the top classifiers of a scope and RFM and Laplace below
// them whatever their place, a scope without the table as one line, the
// notes and the files.
func TestWriteText(t *testing.T) {
	var sums []metrics.Summary
	for i := 0; i < TopRows+5; i++ {
		sums = append(sums, metrics.Summary{Classifier: fmt.Sprintf("c%02d", i), FriedmanRank: float64(i + 1), Average: 80})
	}
	sums[TopRows+2].Classifier = ColumnRFM
	rep := &Report{Protocol: ProtocolPaper, Subset: SubsetAll, OK: 3, Computed: 1, Reused: 2, MeanAccuracy: 81.5, MeanLaplace: 80.25,
		Elapsed: 1500 * time.Millisecond, Notes: []string{"a note"}, Files: []string{"out/summary.md"},
		Scopes: []Scope{{Name: "all", Datasets: []string{"a", "b", "c"}, RFMMean: 81.5, LaplaceMean: 80.25, Summaries: sums, RFMPlace: TopRows + 3, LaplacePlace: 1},
			{Name: "arora90", Datasets: []string{"a"}}}}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"UCI benchmark, protocol paper, subset all: 3 data sets (1 computed now, 2 reused, 0 skipped, 0 failed) in 1.5s\n",
		"mean test accuracy: RFM 81.50%, Laplace 80.25%\n",
		fmt.Sprintf("; Friedman place RFM %d, Laplace 1 of %d\n", TopRows+3, TopRows+5),
		fmt.Sprintf("%4d  %-28s", TopRows+3, ColumnRFM),
		"\narora90 (1 data sets): RFM 0.00%, Laplace 0.00%\n",
		"note: a note\n", "\nwrote:\n  out/summary.md\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, fmt.Sprintf("c%02d", TopRows+1)) {
		t.Errorf("a classifier below the top %d is listed:\n%s", TopRows, got)
	}
}

// TestProgressPrinterSplit: off a terminal, a saved evaluation split of a
// long data set gets its own line; other in-set events stay silent.
func TestProgressPrinterSplit(t *testing.T) {
	var b strings.Builder
	pr := ProgressPrinter(&b, false)
	pr(Progress{Done: 0, Total: 3, Dataset: "adult", Event: "fit", Fraction: 0.1})
	pr(Progress{Done: 0, Total: 3, Dataset: "adult", Event: "split", Fraction: 0.2, Result: &Result{
		Status: StatusPartial, Reason: "1 of 4 evaluation splits done", TestAccuracy: 85.5, LaplaceAccuracy: 84.25, Seconds: 1118.5}})
	want := "[0/3] adult: 1 of 4 evaluation splits done, RFM 85.50%, Laplace 84.25% so far (1118.5s)  [20%"
	if got := b.String(); !strings.HasPrefix(got, want) || strings.Count(got, "\n") != 1 {
		t.Errorf("progress:\n%s\nwant a line starting %q", got, want)
	}
}
