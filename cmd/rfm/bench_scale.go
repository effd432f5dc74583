package main

import (
	"fmt"
	"os"

	"github.com/rfmkit/rfm/bench/scale"
)

// cmdBenchScale runs 'rfm bench scale': exact, Nyström and tree fits of
// growing tables, each in its own process (so that its peak RSS is its
// own), with their time, memory, prediction speed and test score.
func cmdBenchScale(e *env, args []string) error {
	var (
		o                              scale.Options
		sets, sizes, methods, tuneTime string
		asJSON                         bool
	)
	f := newFlagSet("bench scale", "rfm bench scale [--data DIR] [flags]",
		`Measure the solvers beyond one exact kernel matrix: for each data set, an
exact RFM on a seeded subset (the largest the exact solver takes quickly), the
Nyström solver and the tree of RFMs on all training rows. Every fit runs in a
child 'rfm fit' process, so that its peak RSS is measured alone; the test rows
are predicted by a child 'rfm predict'.

Sets:
  synth     low-rank regression y = x0·x1·1[x5 > 0] in d = 20 (SPEC §7), at
            each of --sizes, tested on 20 000 rows: the curves of time and
            MSE against n
  a9a       32 561 train / 16 281 test (the LIBSVM split of UCI Adult), accuracy
  ijcnn1    49 990 train / 91 701 test (the LIBSVM split), accuracy
  kdd       KDD'99: 494 021 train, the 311 029-row corrected test, accuracy
            (test classes absent from training count as errors)
  flights   3 M flights of 2001: months 1–5 train, month 6 test, RMSE of the
            arrival delay in minutes

Methods: exact, nystrom and tree are 'rfm fit' with that solver; tuned is
'rfm tune --time --tune-time' as a user runs it (its search, then its final
model: on a large table the default tree, a tuned tree or Nyström, chosen on
validation rows of the training file); xgboost needs --xgboost.

DIR is the folder of the large tables (../shared/data/large). Results go to
--out: results.tsv (a rerun skips what is there; --force redoes it),
summary.md, summary.json and scale_time.png, scale_score.png. With --xgboost,
XGBoost (Debian's python3-xgboost, hist method, a small grid and then a wider
one for as long as --tune-time, chosen on a validation split of the training
rows) runs on the same files for comparison.`,
		`rfm bench scale --data ../shared/data/large --out out/scale
rfm bench scale --sets synth --sizes 10000,100000,1000000 --out out/scale-synth
rfm bench scale --sets ijcnn1 --xgboost --out out/scale`)
	f.Section("Benchmark")
	f.String(&o.DataDir, "data", "../shared/data/large", "folder `DIR` of the large tables")
	f.String(&sets, "sets", "synth,a9a,ijcnn1,kdd,flights", "comma list of `SETS`: synth, a9a, ijcnn1, kdd, flights")
	f.String(&methods, "methods", "exact,nystrom,tree,tuned,xgboost", "comma list of `METHODS` to run: exact, nystrom, tree, tuned, xgboost (xgboost also needs --xgboost)")
	f.String(&tuneTime, "tune-time", "10m", "search `BUDGET` of the tuned method (rfm tune --time)")
	f.String(&sizes, "sizes", "10000,25000,100000,300000,1000000", "training rows `N,...` of the synthetic set")
	f.Int(&o.ExactRows, "exact-rows", 20000, "rows `N` of the seeded subset the exact solver fits")
	f.Bool(&o.Quick, "quick", false, "small leaves, 1 AGOP round, few CG iterations: a smoke run")
	f.Uint64(&o.Seed, "seed", 1, "`SEED` of the subsets, the synthetic data and every fit")
	f.String(&o.OutDir, "out", "out/scale", "output `DIR`")
	f.Bool(&o.Force, "force", false, "redo runs already in results.tsv")
	f.Bool(&o.XGBoost, "xgboost", false, "also run XGBoost on the same splits (needs python3-xgboost)")
	f.String(&o.Script, "xgboost-script", "scripts/xgboost_ref.py", "the XGBoost reference `SCRIPT`")
	f.String(&o.Python, "python", scale.DefaultPython(), "the Python 3 `INTERPRETER` that has xgboost, numpy and pandas")
	f.Section("Output")
	f.Bool(&asJSON, "json", false, "print the results as JSON on stdout")
	if err := f.ParseFlags(args, e.stdout); err != nil {
		return err
	}
	if err := o.ParseLists(sets, methods, sizes, tuneTime); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the rfm binary: %w", err)
	}
	o.Exe = exe
	o.Progress = func(r scale.Run) { fmt.Fprintf(e.stderr, "%s %s: %s\n", r.Set, r.Method, r.Describe()) }
	runs, err := scale.Bench(e.ctx, o)
	if err != nil {
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, runs)
	}
	return scale.WriteTable(e.stdout, runs)
}

// runMeasured is the internal 'rfm bench _peak PEAKFILE CMD ARGS...' that
// bench scale starts its children through (scale.RunMeasured).
func runMeasured(e *env, args []string) error {
	if len(args) < 2 {
		return usagef("bench %s: a peak file and a command are needed (internal to bench scale)", scale.PeakCommand)
	}
	code, err := scale.RunMeasured(e.ctx, args[0], args[1], args[2:], e.stdout, e.stderr)
	if err != nil {
		return err
	}
	if code != 0 {
		return exitCode(code)
	}
	return nil
}
