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

// ProgressPrinter renders a Run's progress on w: a self-overwriting line with the ETA on
// a terminal (at most every 200 ms), otherwise one line per finished data
// set and per evaluation split the tuned protocol saved.
func ProgressPrinter(w io.Writer, tty bool) func(Progress) {
	var last time.Time
	return func(p Progress) {
		finished := p.Event == "done" || p.Event == "failed" || p.Event == "skipped"
		eta := "ETA --"
		if p.ETA > 0 {
			eta = "ETA " + p.ETA.Round(time.Second).String()
		}
		if tty {
			if !finished && time.Since(last) < 200*time.Millisecond {
				return
			}
			last = time.Now()
			fmt.Fprintf(w, "\r\033[K[%d/%d] %5.1f%%  %s  elapsed %s  %s", p.Done, p.Total, 100*p.Fraction, eta, p.Elapsed.Round(time.Second), p.Dataset)
			return
		}
		if p.Event == "split" && p.Result != nil {
			// A long data set's evaluation split was saved (tuned).
			r := p.Result
			fmt.Fprintf(w, "[%d/%d] %s: %s, RFM %.2f%%, Laplace %.2f%% so far (%.1fs)  [%.0f%%, elapsed %s, %s]\n",
				p.Done, p.Total, p.Dataset, r.Reason, r.TestAccuracy, r.LaplaceAccuracy, r.Seconds, 100*p.Fraction, p.Elapsed.Round(time.Second), eta)
			return
		}
		if !finished {
			return
		}
		line := fmt.Sprintf("[%d/%d] %s %s", p.Done, p.Total, p.Dataset, p.Event)
		if r := p.Result; r != nil && r.Status == StatusOK {
			line += fmt.Sprintf(": RFM %.2f%%, Laplace %.2f%% (%.1fs)", r.TestAccuracy, r.LaplaceAccuracy, r.Seconds)
			if raw, cal, ok := r.MeanLogLosses(); ok {
				line += fmt.Sprintf(", log-loss %.4f, calibrated %.4f", raw, cal)
			}
		} else if r != nil {
			line += ": " + r.Reason
		}
		fmt.Fprintf(w, "%s  [%.0f%%, elapsed %s, %s]\n", line, 100*p.Fraction, p.Elapsed.Round(time.Second), eta)
	}
}
