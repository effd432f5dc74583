// Command rfm-beam trains and scores tree-partitioned RFMs on Apache Beam:
// in-process on the Prism runner by default, or on a Flink, Spark or
// Dataflow cluster with Beam's runner flags. It writes ordinary model
// files: rfm predict, rfm serve and rfm inspect use them unchanged.
//
// It is a module of its own so that the Beam SDK's dependencies stay out
// of the rfm library.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/predictor"
)

const usage = `Usage:
  rfm-beam fit --data GLOBS --target COL --out FILE [flags] [Beam flags]
  rfm-beam predict --model FILE --data GLOBS --out DIR [--proba] [--overwrite] [Beam flags]

fit trains a tree of RFMs on the rows of every file matched by GLOBS (comma
separated; CSV, TSV, gzipped or not, or Parquet; all with the same header):
the column pipeline and the tree's routing are fitted on a seeded sample of
--sample rows, every row is routed to its leaf, each leaf's RFM is fitted in
a worker, and one model file is written to --out (rfm predict, serve and
inspect read it). The same data, seed and flags give the same file.

predict scores the rows of every file matched by GLOBS with a model file:
one output file DIR/part-NNNNN.csv per input file, in its row order, as
'rfm predict' writes them.

The runner is Prism, in this process, unless --runner says otherwise; its
worker runs in a separate process with
  --environment_type=PROCESS --environment_config='{"command": "PATH/rfm-beam"}'
      --worker_binary=PATH/rfm-beam
Other runners:
  --runner=flink --endpoint=HOST:8099 --environment_type=LOOPBACK
  --runner=spark --endpoint=HOST:8099 --environment_type=LOOPBACK
  --runner=dataflow --project=P --region=R --staging_location=gs://B/staging
      --temp_location=gs://B/tmp (data and --out on gs:// then)
Run 'rfm-beam fit -h' for every flag.
`

func main() {
	if id, endpoint, ok := processWorkerArgs(os.Args[1:]); ok {
		// Started by a runner's process environment: provision, then
		// become the worker below.
		err := bootProcessWorker(id, endpoint)
		fmt.Fprintf(os.Stderr, "rfm-beam worker: %v\n", err)
		os.Exit(1)
	}
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "--") && os.Args[1] != "--help" {
		// Started by a runner as a worker (--worker and its options): the
		// Beam harness takes over in Init.
		flag.Parse()
		beam.Init()
		return
	}
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		if err == flag.ErrHelp {
			return
		}
		fmt.Fprintf(os.Stderr, "rfm-beam: %v\n", rootCause(err))
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// initBeam initializes Beam and then quiets its log: Prism logs every
// bundle and dumps a failed bundle's plan, and the error that ends the run
// says what failed (RFM_BEAM_LOG=debug keeps the runner's log).
func initBeam() {
	beam.Init()
	if os.Getenv("RFM_BEAM_LOG") != "debug" {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.Level(100)})))
	}
}

// rootCause trims a failed job's error to what the failing step said: the
// runner wraps it in the bundle's whole execution plan.
func rootCause(err error) string {
	s := err.Error()
	const mark = "] failed:\n"
	if i := strings.LastIndex(s, mark); i >= 0 {
		return strings.TrimSpace(s[i+len(mark):])
	}
	return s
}

type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// run parses the subcommand and its flags (on the process's flag set,
// where Beam's runner flags live) and runs it.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return usagef("a command is needed: fit or predict")
		}
		return nil
	}
	switch args[0] {
	case "fit":
		return cmdFit(ctx, args[1:], stderr)
	case "predict":
		return cmdPredict(ctx, args[1:], stderr)
	}
	return usagef("unknown command %q: fit or predict", args[0])
}

// fitFlags are fit's own flags.
type fitFlags struct {
	data, target, task, scale, ignore, out string
	sample                                 int
	memory                                 uint64
	cfg                                    rfm.Config
}

// newFlags is a command's flag set, for its own flags; parse adds Beam's
// (runner, endpoint, ...), which Beam registers on the process's flag set.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parse parses args with the command's flags and Beam's; -h lists the
// command's own.
func parse(own *flag.FlagSet, args []string, stderr io.Writer) error {
	all := flag.NewFlagSet(own.Name(), flag.ContinueOnError)
	all.SetOutput(stderr)
	own.VisitAll(func(f *flag.Flag) { all.Var(f.Value, f.Name, f.Usage) })
	flag.CommandLine.VisitAll(func(f *flag.Flag) {
		if all.Lookup(f.Name) == nil {
			all.Var(f.Value, f.Name, f.Usage)
		}
	})
	all.Usage = func() {
		fmt.Fprint(stderr, usage, "\nFlags of "+own.Name()+":\n")
		own.PrintDefaults()
		fmt.Fprint(stderr, "\nEvery flag of Beam's Go SDK is accepted too (--runner, --endpoint, --environment_type, --job_name, ...).\n")
	}
	if err := all.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return err
		}
		return usageError{err}
	}
	if all.NArg() > 0 {
		return usagef("unexpected argument %q", all.Arg(0))
	}
	return nil
}

func cmdFit(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("fit", stderr)
	var o fitFlags
	o.cfg = rfm.DefaultConfig()
	o.cfg.Solver = rfm.SolverTree
	fs.StringVar(&o.data, "data", "", "comma-separated `GLOBS` of the training files (required)")
	fs.StringVar(&o.target, "target", "", "the column `COL` to predict (required)")
	fs.StringVar(&o.task, "task", "auto", "`T`: auto, classification or regression")
	fs.StringVar(&o.scale, "scale", "standard", "numeric columns' scaling `S`: standard, none, minmax or robust")
	fs.StringVar(&o.ignore, "ignore", "", "comma-separated `COLS` not to use")
	fs.StringVar(&o.out, "out", "", "the model `FILE` to write (required)")
	fs.IntVar(&o.sample, "sample", 1000000, "rows `N` of the seeded sample the pipeline and the routing are fitted on")
	fs.Uint64Var(&o.memory, "leaf-memory", 0, "`BYTES` one leaf fit may use in a worker (0: 90% of the worker's available memory)")
	for _, p := range rfm.Params() {
		if p.Name == "solver" || p.Name == "calibrate" || p.Name == "soft-routing" {
			continue // a tree, without held-out rows
		}
		p := p
		set := func(s string) error { return p.Set(&o.cfg, s) }
		help := p.Usage()
		if p.Type == rfm.ParamBool {
			fs.BoolFunc(p.Name, help, set)
		} else {
			fs.Func(p.Name, help+" (default "+p.DefaultText()+")", set)
		}
	}
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	switch {
	case o.data == "":
		return usagef("--data is required")
	case o.target == "":
		return usagef("--target is required")
	case o.out == "":
		return usagef("--out is required")
	case o.sample < 2:
		return usagef("--sample %d: at least 2 rows", o.sample)
	}
	if err := o.cfg.Validate(); err != nil {
		return usageError{err}
	}
	initBeam()
	spec := FitSpec{Target: o.target, Task: o.task, Scaling: o.scale, Sample: o.sample, Seed: o.cfg.Seed, Memory: o.memory, Config: o.cfg}
	if o.ignore != "" {
		spec.Ignore = strings.Split(o.ignore, ",")
	}
	return fitBeam(ctx, spec, o.data, o.out, stderr)
}

// fitBeam expands the globs, reads the header and runs the fit pipeline.
func fitBeam(ctx context.Context, spec FitSpec, globs, out string, stderr io.Writer) error {
	shards, err := expand(ctx, globs)
	if err != nil {
		return err
	}
	header, err := readHeader(ctx, shards[0].Path)
	if err != nil {
		return err
	}
	if !slices.Contains(header, spec.Target) {
		return usagef("--target %q is not a column of %s (columns: %s)", spec.Target, shards[0].Path, strings.Join(header, ", "))
	}
	info := predictor.TrainingInfo{Data: globs, Validation: "none (each leaf holds out its own rows)", Version: "rfm-beam"}
	fmt.Fprintf(stderr, "rfm-beam fit: %d files, sample %d rows, seed %d\n", len(shards), spec.Sample, spec.Seed)
	p := fitPipeline(spec, shards, header, out, info)
	res, err := runPipeline(ctx, p)
	if err != nil {
		return err
	}
	printMetrics(stderr, res)
	if _, err := os.Stat(out); err != nil && !strings.Contains(out, "://") {
		return fmt.Errorf("the pipeline ended without writing %s", out)
	}
	fmt.Fprintf(stderr, "rfm-beam fit: wrote %s\n", out)
	return nil
}

func cmdPredict(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("predict", stderr)
	var model, data, out string
	var proba, overwrite bool
	fs.StringVar(&model, "model", "", "the model `FILE` (required)")
	fs.StringVar(&data, "data", "", "comma-separated `GLOBS` of the files to score (required)")
	fs.StringVar(&out, "out", "", "the output `DIR` (required): part-NNNNN.csv per input file")
	fs.BoolVar(&proba, "proba", false, "add one probability column per class (classification)")
	fs.BoolVar(&overwrite, "overwrite", false, "replace a --out folder that is not empty (refused by default)")
	if err := parse(fs, args, stderr); err != nil {
		return err
	}
	switch {
	case model == "":
		return usagef("--model is required")
	case data == "":
		return usagef("--data is required")
	case out == "":
		return usagef("--out is required")
	}
	initBeam()
	return predictBeam(ctx, model, data, out, proba, overwrite, stderr)
}

// predictBeam checks the model, expands the globs and runs the scoring
// pipeline. A local --out folder appears whole or not at all: the parts
// are written to a temporary sibling folder, renamed to out once every
// part is written; a failed run leaves out as it was. An out that is not
// empty is refused unless overwrite.
func predictBeam(ctx context.Context, model, globs, out string, proba, overwrite bool, stderr io.Writer) error {
	r, err := openShard(ctx, model)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil {
		return err
	}
	m, err := predictor.Read(strings.NewReader(string(b)), model)
	if err != nil {
		return err
	}
	if err := m.NeedPipeline(); err != nil {
		return err
	}
	if proba && !m.Target.IsClassification() {
		return usagef("--proba needs a classification model; %s is a regression model", model)
	}
	shards, err := expand(ctx, globs)
	if err != nil {
		return err
	}
	dest := out
	var publish func() error
	if !strings.Contains(out, "://") {
		if dest, publish, err = stageDir(out, overwrite); err != nil {
			return err
		}
		defer os.RemoveAll(dest) // gone once renamed; a failed run's parts otherwise
	}
	res, err := runPipeline(ctx, predictPipeline(b, shards, dest, proba))
	if err != nil {
		return err
	}
	if publish != nil {
		if err := publish(); err != nil {
			return err
		}
	}
	printMetrics(stderr, res)
	fmt.Fprintf(stderr, "rfm-beam predict: %d files → %s\n", len(shards), out)
	return nil
}

// stageDir prepares the temporary sibling folder a run writes out's parts
// to, and returns the function that puts it in out's place. out must be
// missing, an empty folder, or (with overwrite) a folder.
func stageDir(out string, overwrite bool) (tmp string, publish func() error, err error) {
	out = filepath.Clean(out)
	st, err := os.Stat(out)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return "", nil, fmt.Errorf("--out %s: %w", out, err)
	case !st.IsDir():
		return "", nil, usagef("--out %s is not a folder", out)
	default:
		entries, err := os.ReadDir(out)
		if err != nil {
			return "", nil, fmt.Errorf("--out %s: %w", out, err)
		}
		if len(entries) > 0 && !overwrite {
			return "", nil, usagef("--out %s is not empty (%d entries); give an empty or new folder, or --overwrite to replace it", out, len(entries))
		}
	}
	parent := filepath.Dir(out)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", nil, fmt.Errorf("--out %s: %w", out, err)
	}
	tmp, err = os.MkdirTemp(parent, "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return "", nil, fmt.Errorf("--out %s: %w", out, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return "", nil, err
	}
	publish = func() error {
		// A folder cannot be renamed over one that has entries: the old
		// one is moved aside first and removed once the new one is in.
		old := ""
		if _, err := os.Stat(out); err == nil {
			old = tmp + ".old"
			if err := os.Rename(out, old); err != nil {
				return fmt.Errorf("--out %s: %w", out, err)
			}
		}
		if err := os.Rename(tmp, out); err != nil {
			if old != "" {
				os.Rename(old, out)
			}
			return fmt.Errorf("--out %s: %w", out, err)
		}
		if old != "" {
			os.RemoveAll(old)
		}
		return nil
	}
	return tmp, publish, nil
}

// runPipeline runs p with the process's temporary folder pointed at a
// private one, removed afterwards: the Beam SDK leaves files there (an
// empty beamloopbackworker-* per run in loopback mode) that nothing else
// would remove.
func runPipeline(ctx context.Context, p *beam.Pipeline) (beam.PipelineResult, error) {
	dir, err := os.MkdirTemp("", "rfm-beam-run-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	prev, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", dir)
	defer func() {
		if had {
			os.Setenv("TMPDIR", prev)
		} else {
			os.Unsetenv("TMPDIR")
		}
	}()
	return beamx.RunWithMetrics(ctx, p)
}

// printMetrics prints the pipeline's counters and distributions.
func printMetrics(w io.Writer, res beam.PipelineResult) {
	if res == nil {
		return
	}
	q := res.Metrics().AllMetrics()
	for _, c := range q.Counters() {
		fmt.Fprintf(w, "  %-16s %d\n", c.Name(), c.Result())
	}
	for _, d := range q.Distributions() {
		r := d.Result()
		if r.Count > 0 {
			fmt.Fprintf(w, "  %-16s count %d, min %d, mean %.1f, max %d\n", d.Name(), r.Count, r.Min, float64(r.Sum)/float64(r.Count), r.Max)
		}
	}
}
