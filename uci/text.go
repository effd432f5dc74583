package uci

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"
)

// DefaultOutDir is the output folder of a run that names none:
// out/uci-PROTOCOL-SUBSET, the subset "selected" for a list of names.
func DefaultOutDir(protocol, subset string) string {
	if subset != SubsetArora90 && subset != SubsetAll {
		subset = "selected"
	}
	return filepath.Join("out", "uci-"+protocol+"-"+subset)
}

// WriteText writes the report for a reader, as 'rfm bench uci' prints it:
// the counts and means, the ranking tables (the top TopRows classifiers
// and RFM and Laplace) of each scope, the notes and the files written.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "UCI benchmark, protocol %s, subset %s: %d data sets (%d computed now, %d reused, %d skipped, %d failed) in %s\n",
		rep.Protocol, rep.Subset, rep.OK, rep.Computed, rep.Reused, rep.Skipped, rep.Failed, rep.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "mean test accuracy: RFM %.2f%%, Laplace %.2f%%\n", rep.MeanAccuracy, rep.MeanLaplace)
	if rep.Members != nil {
		fmt.Fprintf(&b, "%s\n", rep.Members)
	}
	if rep.Calibration != nil {
		fmt.Fprintf(&b, "%s\n", rep.Calibration)
	}
	for _, sc := range rep.Scopes {
		fmt.Fprintf(&b, "\n%s (%d data sets): RFM %.2f%%, Laplace %.2f%%", sc.Name, len(sc.Datasets), sc.RFMMean, sc.LaplaceMean)
		if len(sc.Summaries) == 0 {
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "; Friedman place RFM %d, Laplace %d of %d\n", sc.RFMPlace, sc.LaplacePlace, len(sc.Summaries))
		fmt.Fprintf(&b, "%4s  %-28s  %8s  %8s  %6s  %6s  %6s  %6s\n", "#", "classifier", "friedman", "accuracy", "P90", "P95", "PMA", "ADTM")
		for i, s := range sc.Summaries {
			if i < TopRows || s.Classifier == ColumnRFM || s.Classifier == ColumnLaplace {
				fmt.Fprintf(&b, "%4d  %-28s  %8.2f  %8.2f  %6.1f  %6.1f  %6.1f  %6.1f\n", i+1, s.Classifier, s.FriedmanRank, s.Average, s.P90, s.P95, s.PMA, s.ADTM)
			}
		}
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	b.WriteString("\nwrote:\n")
	for _, f := range rep.Files {
		fmt.Fprintf(&b, "  %s\n", f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
