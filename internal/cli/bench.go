package cli

import (
	"github.com/rfmkit/rfm/internal/linalg"
)

// BenchFlags are the flags the benchmark runners ('rfm bench uci',
// 'rfm bench tabular') share: how the run is scheduled, where it writes,
// and how it reports.
type BenchFlags struct {
	Jobs, Threads int
	OutDir        string
	Force         bool
	Seed          uint64
	Trials        int
	Quiet, JSON   bool
}

// BenchWords are a runner's words in its flags' help.
type BenchWords struct {
	Items   string // what a job runs: "data sets", "tasks"
	Results string // the resumable results file: "results.tsv"
	Out     string // the default output folder: "out/uci-PROTOCOL-SUBSET"
	Jobs    string // appended to --jobs' help
	Seed    string // what the seed draws
}

// DefineRun declares --jobs, --threads, --out, --force, --seed and
// --trials in the current section.
func (b *BenchFlags) DefineRun(f *FlagSet, w BenchWords) {
	f.Int(&b.Jobs, "jobs", 1, w.Items+" run at once (`N`)"+w.Jobs)
	f.Int(&b.Threads, "threads", 0, "total BLAS threads (`N`; 0 = one per CPU), shared by the jobs")
	f.String(&b.OutDir, "out", "", "output `DIR` (default "+w.Out+")")
	f.Bool(&b.Force, "force", false, "recompute "+w.Items+" already in "+w.Results)
	f.Uint64(&b.Seed, "seed", 1, "random `SEED` ≥ 1 ("+w.Seed+")")
	f.Int(&b.Trials, "trials", 30, "configurations `N` the tuned protocol's search draws in each split")
}

// DefineOutput starts the Output section: --quiet and --json.
func (b *BenchFlags) DefineOutput(f *FlagSet) {
	f.Section("Output")
	f.Bool(&b.Quiet, "quiet", false, "no progress output")
	f.Bool(&b.JSON, "json", false, "print the report as JSON on stdout")
}

// Check refuses positional arguments and out-of-range values as usage
// errors; tuned says whether the protocol chosen is the one --trials
// applies to.
func (b *BenchFlags) Check(f *FlagSet, pos []string, tuned bool) error {
	switch {
	case len(pos) > 0:
		return Usagef("unexpected argument %q", pos[0])
	case b.Jobs < 1 || b.Jobs > linalg.MaxThreads:
		return Usagef("--jobs %d: want 1 to %d", b.Jobs, linalg.MaxThreads)
	case linalg.CheckThreads(b.Threads) != nil:
		return Usagef("--threads %d: %v", b.Threads, linalg.CheckThreads(b.Threads))
	case b.Seed == 0:
		return Usagef("--seed 0: must be ≥ 1")
	case b.Trials < 1:
		return Usagef("--trials %d: must be ≥ 1", b.Trials)
	case f.IsSet("trials") && !tuned:
		return Usagef("--trials applies to --protocol tuned only")
	}
	return nil
}
