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
	f := helpFlagSet("bench scale", "rfm bench scale [--data DIR] [flags]")
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
