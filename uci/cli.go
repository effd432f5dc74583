package uci

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rfmkit/rfm"
	"golang.org/x/term"
)

const usageText = `usage: rfm bench uci --data DIR [flags]

Reproduces the UCI-121 benchmark of the RFM papers (Fernández-Delgado et al.'s
121 data sets with their fixed splits) and ranks RFM and the Laplace kernel
among the 179 classifiers of the original study.

DIR is the uci121 folder (data/ and fernandez_delgado_2014_results.txt) or the
folder of data sets itself. Results go to --out: results.tsv (one row per data
set; a rerun skips the data sets already there), summary.md, summary.json and
rfm_vs_laplace.png.

Protocols:
  paper   the authors' protocol: grid λ × row normalization, 5 RFM rounds,
          selection on conxuntos.dat, fixed-M kernel ridge on the 4 k-fold splits
  clean   M and the grid point are learned inside each k-fold training split
          (80/20), so no test row influences them
  tuned   the paper protocol with a 240-point grid (bandwidth L 10/5/2, full or
          diagonal M, centred gradients, M = AGOP or AGOP^½), scored in both
          directions of the selection split (validation only, accuracies
          averaged); the chosen M is then learned on both selection halves

Flags:
`

// Command runs `rfm bench uci` with the arguments after "uci". It returns
// the exit status: 0 success, 1 failure, 2 usage error.
func Command(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("rfm bench uci", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usageText)
		fs.PrintDefaults()
	}
	var opt Options
	fs.StringVar(&opt.DataDir, "data", "", "benchmark `DIR` (required)")
	fs.StringVar(&opt.Subset, "subset", SubsetArora90, "data sets: arora90, all, or a comma list of `NAMES`")
	fs.StringVar(&opt.Protocol, "protocol", ProtocolPaper, "protocol: "+strings.Join(Protocols(), ", "))
	fs.IntVar(&opt.Jobs, "jobs", 1, "data sets run at once (`N`); large ones still run alone")
	fs.IntVar(&opt.Threads, "threads", 0, "total BLAS threads (`N`; 0 = one per CPU), shared by the jobs")
	fs.StringVar(&opt.OutDir, "out", "", "output `DIR` (default out/uci-PROTOCOL-SUBSET)")
	fs.BoolVar(&opt.Force, "force", false, "recompute data sets already in results.tsv")
	fs.Uint64Var(&opt.Seed, "seed", 1, "random `SEED` (AGOP sampling above 20 000 rows, clean-protocol splits)")
	fs.BoolVar(&opt.Float32, "float32", false, "store and factor kernel matrices in float32 (half the memory, faster)")
	refine := fs.Int("refine", rfm.DefaultConfig().Refine, "float64 refinement steps `K` of each float32 solve (with --float32)")
	quiet := fs.Bool("quiet", false, "no progress output")
	asJSON := fs.Bool("json", false, "print the report as JSON on stdout")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "rfm bench uci: "+format+"\n", a...)
		fmt.Fprintln(stderr, "run 'rfm bench uci -h' for help")
		return 2
	}
	switch {
	case fs.NArg() > 0:
		return usage("unexpected argument %q", fs.Arg(0))
	case opt.DataDir == "":
		return usage("--data DIR is required (the uci121 folder)")
	case !slices.Contains(Protocols(), opt.Protocol):
		return usage("unknown protocol %q (known: %s)", opt.Protocol, strings.Join(Protocols(), ", "))
	case opt.Jobs < 1:
		return usage("--jobs %d must be ≥ 1", opt.Jobs)
	case opt.Threads < 0:
		return usage("--threads %d must be ≥ 0", opt.Threads)
	case opt.Seed == 0:
		return usage("--seed must be ≥ 1")
	case *refine < 0:
		return usage("--refine %d must be ≥ 0", *refine)
	}
	opt.Refine = refine
	// Names are checked up front so that a typo is a usage error.
	layout, err := FindLayout(opt.DataDir)
	if err != nil {
		fmt.Fprintf(stderr, "rfm bench uci: %v\n", err)
		return 1
	}
	entries, err := Discover(layout.SetsDir)
	if err != nil {
		fmt.Fprintf(stderr, "rfm bench uci: %v\n", err)
		return 1
	}
	if _, err := Select(entries, opt.Subset); err != nil {
		return usage("%v", err)
	}
	if opt.OutDir == "" {
		sub := opt.Subset
		if sub != SubsetArora90 && sub != SubsetAll {
			sub = "selected"
		}
		opt.OutDir = filepath.Join("out", "uci-"+opt.Protocol+"-"+sub)
	}
	if !*quiet {
		opt.Progress = progressPrinter(stderr)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := Run(ctx, opt)
	if !*quiet {
		if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			fmt.Fprint(stderr, "\r\033[K")
		}
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			fmt.Fprintf(stderr, "rfm bench uci: interrupted; results so far are in %s (rerun the same command to resume)\n", filepath.Join(opt.OutDir, ResultsName))
			return 1
		}
		fmt.Fprintf(stderr, "rfm bench uci: %v\n", err)
		return 1
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "rfm bench uci: %v\n", err)
			return 1
		}
	} else if err := printReport(stdout, rep); err != nil {
		fmt.Fprintf(stderr, "rfm bench uci: %v\n", err)
		return 1
	}
	if rep.Failed > 0 {
		fmt.Fprintf(stderr, "rfm bench uci: %d data set(s) failed (see %s); rerun to retry them\n", rep.Failed, filepath.Join(rep.OutDir, SummaryMDName))
		return 1
	}
	return 0
}

// progressPrinter renders progress: a self-overwriting line with the ETA
// on a terminal (at most every 200 ms), otherwise one line per finished
// data set.
func progressPrinter(w io.Writer) func(Progress) {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
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
		if !finished {
			return
		}
		line := fmt.Sprintf("[%d/%d] %s %s", p.Done, p.Total, p.Dataset, p.Event)
		if r := p.Result; r != nil && r.Status == StatusOK {
			line += fmt.Sprintf(": RFM %.2f%%, Laplace %.2f%% (%.1fs)", r.TestAccuracy, r.LaplaceAccuracy, r.Seconds)
		} else if r != nil {
			line += ": " + r.Reason
		}
		fmt.Fprintf(w, "%s  [%.0f%%, elapsed %s, %s]\n", line, 100*p.Fraction, p.Elapsed.Round(time.Second), eta)
	}
}

// printReport writes the human summary: means, the ranking tables and the
// files written.
func printReport(w io.Writer, rep *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "UCI benchmark, protocol %s, subset %s: %d data sets (%d computed now, %d reused, %d skipped, %d failed) in %s\n",
		rep.Protocol, rep.Subset, rep.OK, rep.Computed, rep.Reused, rep.Skipped, rep.Failed, rep.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(&b, "mean test accuracy: RFM %.2f%%, Laplace %.2f%%\n", rep.MeanAccuracy, rep.MeanLaplace)
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
