package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/uci"
)

// cmdBenchUCI runs 'rfm bench uci': the UCI-121 protocol of package uci,
// with progress on stderr and the report on stdout.
func cmdBenchUCI(e *env, args []string) error {
	var opt uci.Options
	var bf cli.BenchFlags
	solver := rfm.DefaultConfig() // --float32 and --refine, as declared for fit
	f := helpFlagSet("bench uci", "rfm bench uci --data DIR [flags]")
	f.Section("Benchmark")
	f.String(&opt.DataDir, "data", "", "benchmark `DIR` (required)")
	f.String(&opt.Subset, "subset", uci.SubsetArora90, "data sets: arora90, all, or a comma list of `NAMES`")
	f.String(&opt.Protocol, "protocol", uci.ProtocolPaper, "`P`: "+strings.Join(uci.Protocols(), ", "))
	bf.DefineRun(f.FlagSet, cli.BenchWords{Items: "data sets", Results: "results.tsv", Out: "out/uci-PROTOCOL-SUBSET",
		Jobs: "; large ones still run alone", Seed: "AGOP sampling above 20 000 rows, clean-protocol splits, the tuned protocol's search"})
	f.Int(&opt.Ensemble, "ensemble", 3, "the tuned protocol's model: the mean of the `K` best configurations of each split's search (1: the best alone)")
	var combine string
	f.String(&combine, "combine", "", "compute nothing: summarize the data sets of earlier runs' results.tsv `FILES` (comma-separated files or their folders; one protocol, each set once) into --out")
	f.Section("Solver")
	f.Param(&solver, rfm.LookupParam("float32"))
	f.Param(&solver, rfm.LookupParam("refine"))
	bf.DefineOutput(f.FlagSet)
	pos, err := f.Parse(args, e.stdout)
	if err != nil {
		return err
	}
	if err := checkBenchUCI(f, &bf, &opt, pos); err != nil {
		return err
	}
	opt.Jobs, opt.Threads, opt.OutDir, opt.Force, opt.Seed, opt.Trials = bf.Jobs, bf.Threads, bf.OutDir, bf.Force, bf.Seed, bf.Trials
	if combine != "" {
		return benchUCICombine(e, f, opt, combine, bf.JSON)
	}
	if err := solver.Validate(); err != nil {
		return paramUsage(err)
	}
	opt.Float32, opt.Refine = solver.Float32, &solver.Refine
	return runBenchUCI(e, opt, bf.Quiet, bf.JSON)
}

// runBenchUCI checks the data sets' names, runs the benchmark and prints
// its report.
func runBenchUCI(e *env, opt uci.Options, quiet, asJSON bool) error {
	// Names are checked up front so that a typo is a usage error.
	layout, err := uci.FindLayout(opt.DataDir)
	if err != nil {
		return err
	}
	entries, err := uci.Discover(layout.SetsDir)
	if err != nil {
		return err
	}
	if _, err := uci.Select(entries, opt.Subset); err != nil {
		return usagef("--subset: %v", err)
	}
	if opt.OutDir == "" {
		opt.OutDir = uci.DefaultOutDir(opt.Protocol, opt.Subset)
	}
	tty := e.tty()
	if !quiet {
		opt.Progress = uci.ProgressPrinter(e.stderr, tty)
	}
	rep, err := uci.Run(e.ctx, opt)
	if !quiet && tty {
		fmt.Fprint(e.stderr, "\r\033[K")
	}
	if err != nil {
		return benchStopped(e, "uci", filepath.Join(opt.OutDir, uci.ResultsName), err)
	}
	if asJSON {
		err = writeJSON(e.stdout, rep)
	} else {
		err = rep.WriteText(e.stdout)
	}
	if err != nil {
		return err
	}
	if rep.Failed > 0 {
		return fmt.Errorf("%d data set(s) failed (see %s); rerun to retry them", rep.Failed, filepath.Join(rep.OutDir, uci.SummaryMDName))
	}
	return nil
}

// benchStopped is the error of a benchmark run (rfm bench SUITE) that
// stopped: an interruption says where the results so far are and exits
// with exitInterrupt.
func benchStopped(e *env, suite, results string, err error) error {
	if errors.Is(err, context.Canceled) && e.ctx.Err() != nil {
		fmt.Fprintf(e.stderr, "rfm bench %s: interrupted; results so far are in %s (rerun the same command to resume)\n", suite, results)
		return exitCode(exitInterrupt)
	}
	return err
}

// checkBenchUCI refuses flags that do not fit together or are out of range.
func checkBenchUCI(f *flagSet, bf *cli.BenchFlags, opt *uci.Options, pos []string) error {
	switch {
	case opt.DataDir == "":
		return usagef("--data DIR is required (the uci121 folder)")
	case !slices.Contains(uci.Protocols(), opt.Protocol):
		return usagef("--protocol %q: want one of %s", opt.Protocol, strings.Join(uci.Protocols(), ", "))
	case opt.Ensemble < 1 || opt.Ensemble > ensemble.MaxMembers:
		return usagef("--ensemble %d: want 1 (the best alone) to %d", opt.Ensemble, ensemble.MaxMembers)
	case f.IsSet("ensemble") && opt.Protocol != uci.ProtocolTuned:
		return usagef("--ensemble applies to --protocol tuned only")
	}
	return bf.Check(f.FlagSet, pos, opt.Protocol == uci.ProtocolTuned)
}

// benchUCICombine summarizes earlier runs' results files (--combine).
func benchUCICombine(e *env, f *flagSet, opt uci.Options, combine string, asJSON bool) error {
	for _, fl := range []string{"subset", "protocol", "jobs", "threads", "force", "seed", "trials", "ensemble", "float32", "refine"} {
		if f.IsSet(fl) {
			return usagef("--%s: --combine computes nothing, it summarizes the results files as they are", fl)
		}
	}
	if opt.OutDir == "" {
		opt.OutDir = filepath.Join("out", "uci-combined")
	}
	rep, err := uci.Combine(opt.DataDir, strings.Split(combine, ","), opt.OutDir)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, rep)
	}
	return rep.WriteText(e.stdout)
}
