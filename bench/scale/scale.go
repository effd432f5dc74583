package scale

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/synth"
)

// Run is one fit and test of 'rfm bench scale': a row of results.tsv.
type Run struct {
	Set        string  `json:"set"`
	Method     string  `json:"method"` // exact, nystrom, tree, xgboost
	Train      int     `json:"train_rows"`
	Test       int     `json:"test_rows"`
	FitSeconds float64 `json:"fit_seconds"`
	PeakRSSMB  float64 `json:"peak_rss_mb"` // of the fit process
	// PredictRowsPerSec is the test rows over the wall time of 'rfm
	// predict' (reading, encoding and writing included).
	PredictRowsPerSec float64 `json:"predict_rows_per_s"`
	Metric            string  `json:"metric"` // accuracy, rmse or mse
	Value             float64 `json:"value"`
	Flags             string  `json:"flags"`
	Error             string  `json:"error,omitempty"`
}

// set is a train/test pair and how each method is run on it.
type set struct {
	name, train, test, target, task, metric string
	n, nTest                                int
	// flags per method: the fit flags beyond --data/--target/--task/--out.
	methods map[string][]string
}

// Sets are the data sets Bench knows.
var Sets = []string{"synth", "a9a", "ijcnn1", "kdd", "flights"}

// Methods are the methods Bench knows, in the order it runs them: tuned is
// 'rfm tune' (Options.TuneTime of search, then its final model), the others
// 'rfm fit' with a solver, and XGBoost.
var Methods = []string{"exact", "nystrom", "tree", "tuned", "xgboost"}

// Options say what Bench runs and where.
type Options struct {
	// Exe is the rfm binary that fits and predicts in child processes; its
	// 'bench _peak' runs RunMeasured.
	Exe string
	// DataDir is the folder of the large tables; OutDir receives the data
	// splits, models, predictions, results.tsv and the summaries.
	DataDir, OutDir string
	Sets            []string // of Sets, in this order
	Sizes           []int    // training rows of the synthetic set (each ≥ 100)
	ExactRows       int      // rows of the seeded subset the exact solver fits (≥ 100)
	Quick           bool     // small leaves, 1 AGOP round, few CG iterations
	Force           bool     // redo runs already in results.tsv
	Seed            uint64
	// XGBoost also runs Script (with Python) on the same splits.
	XGBoost        bool
	Script, Python string
	// Methods, when set, are the methods to run (of Methods; XGBoost still
	// needs the XGBoost option); nil: all.
	Methods []string
	// TuneTime is the search budget of the tuned method ('rfm tune
	// --time'; 0: 10m).
	TuneTime time.Duration
	// Progress, if set, is called after each run that was computed (not
	// the ones reused from results.tsv).
	Progress func(Run)
}

// Check reports options Bench cannot use.
func (o *Options) Check() error {
	for _, n := range o.Sizes {
		if n < 100 {
			return fmt.Errorf("scale: synthetic size %d: must be ≥ 100 rows", n)
		}
	}
	if o.ExactRows < 100 {
		return fmt.Errorf("scale: exact rows %d: must be ≥ 100", o.ExactRows)
	}
	for _, name := range o.Sets {
		if !slices.Contains(Sets, name) {
			return fmt.Errorf("scale: unknown set %q (known: %s)", name, strings.Join(Sets, ", "))
		}
	}
	for _, m := range o.Methods {
		if !slices.Contains(Methods, m) {
			return fmt.Errorf("scale: unknown method %q (known: %s)", m, strings.Join(Methods, ", "))
		}
	}
	if o.TuneTime < 0 {
		return fmt.Errorf("scale: tune time %v: must be ≥ 0", o.TuneTime)
	}
	return nil
}

// Bench runs every method on every set, each fit in its own process,
// reusing the successful runs of an earlier results.tsv (unless Force); it
// rewrites results.tsv after each run, writes summary.md, summary.json and
// the synthetic curves, and returns the runs.
func Bench(ctx context.Context, o Options) ([]Run, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(o.OutDir, "data"), 0o755); err != nil {
		return nil, err
	}
	resultsPath := filepath.Join(o.OutDir, "results.tsv")
	done := map[string]Run{}
	if !o.Force {
		old, err := readResults(resultsPath)
		if err != nil {
			return nil, err
		}
		for _, r := range old {
			done[r.Set+"/"+r.Method] = r
		}
	}
	b := &bench{ctx: ctx, exe: o.Exe, out: o.OutDir, seed: o.Seed, quick: o.Quick, exactRows: o.ExactRows, tuneTime: o.TuneTime}
	if b.tuneTime == 0 {
		b.tuneTime = 10 * time.Minute
	}
	var all []Run
	for _, name := range o.Sets {
		list, err := b.sets(name, o.Sizes, o.DataDir)
		if err != nil {
			return nil, err
		}
		for _, s := range list {
			for _, m := range Methods {
				if o.Methods != nil && !slices.Contains(o.Methods, m) || m == "xgboost" && !o.XGBoost {
					continue
				}
				flags, ok := s.methods[m]
				if !ok && m != "xgboost" {
					continue
				}
				if r, ok := done[s.name+"/"+m]; ok {
					all = append(all, r)
					continue
				}
				var r Run
				if m == "xgboost" {
					r = b.runXGBoost(s, o.Python, o.Script)
				} else {
					r = b.run(s, m, flags)
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if o.Progress != nil {
					o.Progress(r)
				}
				all = append(all, r)
				if err := writeResults(resultsPath, all); err != nil {
					return nil, err
				}
			}
		}
	}
	return all, writeSummary(o.OutDir, all)
}

// sets prepares the named set: one per size for the synthetic one.
func (b *bench) sets(name string, sizes []int, dataDir string) ([]*set, error) {
	if name != "synth" {
		s, err := b.realSet(name, dataDir)
		if err != nil {
			return nil, err
		}
		return []*set{s}, nil
	}
	var list []*set
	for _, n := range sizes {
		s, err := b.synthSet(n)
		if err != nil {
			return nil, err
		}
		list = append(list, s)
	}
	return list, nil
}

type bench struct {
	ctx       context.Context
	exe, out  string
	seed      uint64
	quick     bool
	exactRows int
	tuneTime  time.Duration
}

// Describe is the run in one line: its rows, times, memory and score, or
// why it failed.
func (r Run) Describe() string {
	if r.Error != "" {
		return "failed: " + r.Error
	}
	return fmt.Sprintf("%d rows, fit %.1f s, peak %.0f MB, predict %.0f rows/s, %s %.5g", r.Train, r.FitSeconds, r.PeakRSSMB, r.PredictRowsPerSec, r.Metric, r.Value)
}

// methodFlags are the fit flags of each method for a set of n rows: what
// 'rfm fit' does by default (5 rounds; the planner's leaf size, 10 000 rows
// where memory allows) in float32 for the exact solves; Nyström with 2
// rounds and 20 CG iterations (each round is a full CG solve over all n).
// --quick: small leaves, 1 round, 8 CG iterations, a search of 2
// configurations.
func (b *bench) methodFlags(n int) map[string][]string {
	seed := strconv.FormatUint(b.seed, 10)
	if b.quick {
		return map[string][]string{
			"tree":    {"--solver", "tree", "--leaf-size", "1000", "--iters", "1", "--float32", "--seed", seed},
			"nystrom": {"--solver", "nystrom", "--iters", "1", "--cg-iters", "8", "--seed", seed},
			"exact":   {"--solver", "exact", "--iters", "1", "--float32", "--seed", seed},
			"tuned":   {"--time", "0", "--trials", "2", "--leaf-size", "1000", "--iters", "1", "--float32", "--seed", seed},
		}
	}
	m := map[string][]string{
		"tree":  {"--solver", "tree", "--float32", "--seed", seed},
		"exact": {"--solver", "exact", "--float32", "--seed", seed},
		// rfm tune as a user runs it, with the tree's --float32.
		"tuned": {"--time", b.tuneTime.String(), "--float32", "--seed", seed},
	}
	if n <= 300000 {
		m["nystrom"] = []string{"--solver", "nystrom", "--iters", "2", "--cg-iters", "20", "--seed", seed}
	}
	return m
}

// synthSet writes the low-rank task with n training rows (and the shared
// 20 000-row test file) into OUT/data.
func (b *bench) synthSet(n int) (*set, error) {
	dir := filepath.Join(b.out, "data")
	train := filepath.Join(dir, fmt.Sprintf("synth-%d.csv", n))
	test := filepath.Join(dir, "synth-test.csv")
	nTest := 20000
	if b.quick {
		nTest = 2000
	}
	for _, f := range []struct {
		path string
		n    int
		seed uint64
	}{{train, n, b.seed}, {test, nTest, b.seed + 1000}} {
		if _, err := os.Stat(f.path); err == nil {
			continue
		}
		s, err := synth.Generate(synth.LowRank, f.n, 20, f.seed)
		if err != nil {
			return nil, err
		}
		if err := atomicWrite(f.path, func(w io.Writer) error { return synth.WriteCSV(w, s) }); err != nil {
			return nil, err
		}
	}
	set := &set{name: fmt.Sprintf("synth-%d", n), train: train, test: test, target: "y", task: "regression", metric: "mse", n: n, nTest: nTest}
	set.methods = b.methodFlags(n)
	return set, b.exactSubset(set)
}

// realSet splits one of the large tables into OUT/data as its standard
// split says.
func (b *bench) realSet(name, dir string) (*set, error) {
	out := filepath.Join(b.out, "data")
	s := &set{name: name, target: "target", task: "classification", metric: "accuracy"}
	var src string
	var keep func(line int, fields []string) (train, test bool)
	switch name {
	case "a9a":
		src = filepath.Join(dir, "a9a_adult.csv.gz")
		keep = func(line int, _ []string) (bool, bool) { return line <= 32561, line > 32561 }
	case "ijcnn1":
		src = filepath.Join(dir, "ijcnn1.csv.gz")
		keep = func(line int, _ []string) (bool, bool) { return line <= 49990, line > 49990 }
	case "kdd":
		src = filepath.Join(dir, "kddcup99_10pct.csv.gz")
		keep = func(int, []string) (bool, bool) { return true, false }
	case "flights":
		src = filepath.Join(dir, "flights_3m.csv.gz")
		s.task, s.metric = "regression", "rmse"
		keep = func(_ int, f []string) (bool, bool) {
			m, _ := strconv.Atoi(f[0])
			return m <= 5, m == 6
		}
	}
	s.train = filepath.Join(out, name+"-train.csv")
	s.test = filepath.Join(out, name+"-test.csv")
	if name == "kdd" {
		n, err := splitTable(filepath.Join(dir, "kddcup99_corrected_test.csv.gz"), "", s.test, func(int, []string) (bool, bool) { return false, true })
		if err != nil {
			return nil, err
		}
		s.nTest = n[1]
	}
	// KDD's test rows come from their own file (written above): this pass
	// writes only the training file.
	testOut := s.test
	if name == "kdd" {
		testOut = ""
	}
	n, err := splitTable(src, s.train, testOut, keep)
	if err != nil {
		return nil, err
	}
	s.n = n[0]
	if name != "kdd" {
		s.nTest = n[1]
	}
	s.methods = b.methodFlags(s.n)
	return s, b.exactSubset(s)
}

// splitTable copies the header and the kept lines of a gzip CSV into the
// train and test files (either may be ""), unless both exist already, and
// returns the rows of each.
func splitTable(src, train, test string, keep func(line int, fields []string) (bool, bool)) ([2]int, error) {
	var counts [2]int
	if haveFile(train) && haveFile(test) {
		for i, path := range []string{train, test} {
			if path == "" {
				continue
			}
			n, err := countRows(path)
			if err != nil {
				return counts, err
			}
			counts[i] = n
		}
		return counts, nil
	}
	in, err := os.Open(src)
	if err != nil {
		return counts, fmt.Errorf("%s: %w (pass the folder of the large tables with --data)", src, err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		return counts, fmt.Errorf("%s: %w", src, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var bufs [2]bytes.Buffer
	line := 0
	for sc.Scan() {
		text := sc.Text()
		if line == 0 {
			for i := range bufs {
				bufs[i].WriteString(text + "\n")
			}
			line++
			continue
		}
		tr, te := keep(line, strings.SplitN(text, ",", 2))
		if tr {
			bufs[0].WriteString(text + "\n")
			counts[0]++
		}
		if te {
			bufs[1].WriteString(text + "\n")
			counts[1]++
		}
		line++
	}
	if err := sc.Err(); err != nil {
		return counts, fmt.Errorf("%s: %w", src, err)
	}
	for i, path := range []string{train, test} {
		if path == "" {
			continue
		}
		if err := atomicWrite(path, func(w io.Writer) error { _, err := w.Write(bufs[i].Bytes()); return err }); err != nil {
			return counts, err
		}
	}
	return counts, nil
}

func haveFile(path string) bool {
	if path == "" {
		return true
	}
	_, err := os.Stat(path)
	return err == nil
}

func countRows(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := -1 // the header
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		n++
	}
	return max(n, 0), sc.Err()
}

// exactSubset writes the seeded subset of the training rows the exact
// solver fits (all rows when there are few enough).
func (b *bench) exactSubset(s *set) error {
	if s.n <= b.exactRows {
		s.methods["exact"] = append(s.methods["exact"], "--data", s.train)
		return nil
	}
	path := strings.TrimSuffix(s.train, ".csv") + fmt.Sprintf("-subset%d.csv", b.exactRows)
	if !haveFile(path) {
		data, err := os.ReadFile(s.train)
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(data), "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		rng := rand.New(rand.NewPCG(b.seed, 0x5ca1e))
		pick := rng.Perm(len(lines) - 1)[:b.exactRows]
		slices.Sort(pick)
		if err := atomicWrite(path, func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			bw.WriteString(lines[0])
			for _, i := range pick {
				bw.WriteString(lines[i+1])
			}
			return bw.Flush()
		}); err != nil {
			return err
		}
	}
	s.methods["exact"] = append(s.methods["exact"], "--data", path)
	return nil
}

// run fits one method in a child process and predicts the test rows.
func (b *bench) run(s *set, method string, flags []string) Run {
	r := Run{Set: s.name, Method: method, Train: s.n, Test: s.nTest, Metric: s.metric}
	model := filepath.Join(b.out, fmt.Sprintf("%s-%s.rfm", s.name, method))
	cmd := "fit"
	if method == "tuned" {
		cmd = "tune"
	}
	args := []string{cmd, "--target", s.target, "--task", s.task, "--out", model, "--quiet"}
	if !slices.Contains(flags, "--data") {
		args = append(args, "--data", s.train)
	}
	args = append(args, flags...)
	if method == "exact" && s.n > b.exactRows {
		r.Train = b.exactRows
	}
	r.Flags = strings.Join(flags, " ")
	secs, rss, err := b.child(args...)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.FitSeconds, r.PeakRSSMB = secs, rss
	pred := filepath.Join(b.out, fmt.Sprintf("%s-%s.pred.csv", s.name, method))
	secs, _, err = b.child("predict", "--model", model, "--data", s.test, "--keep", s.target, "--out", pred, "--quiet")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.PredictRowsPerSec = float64(s.nTest) / secs
	return r.scored(pred)
}

// scored fills in the score of the predictions in pred, or the error.
func (r Run) scored(pred string) Run {
	v, err := ScorePredictions(pred, r.Metric)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Value = v
	return r
}

// child runs the rfm binary and returns its wall time and peak RSS (MB).
// The child is started by a fresh rfm process (RunMeasured) that reports
// the child's peak: the peak the kernel reports to this process's wait
// would be at least this process's own high-water mark (Go starts children
// with vfork semantics, and exec carries the old memory's peak over), which
// after reading the flights table is a gigabyte whatever the child used.
func (b *bench) child(args ...string) (float64, float64, error) {
	secs, rss, errText, err := b.measure(nil, b.exe, args...)
	if err != nil {
		msg := strings.TrimSpace(errText)
		if msg == "" {
			msg = err.Error()
		}
		return 0, 0, errors.New(msg)
	}
	return secs, rss, nil
}

// measure runs the program name with args through RunMeasured, its stdout
// to stdout (may be nil), and returns its wall time, peak RSS (MB) and
// stderr.
func (b *bench) measure(stdout io.Writer, name string, args ...string) (secs, rssMB float64, stderr string, err error) {
	peakFile, err := os.CreateTemp(b.out, ".peak-*")
	if err != nil {
		return 0, 0, "", err
	}
	peakFile.Close()
	defer os.Remove(peakFile.Name())
	full := append([]string{"bench", PeakCommand, peakFile.Name(), name}, args...)
	cmd := exec.CommandContext(b.ctx, b.exe, full...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &errb
	start := time.Now()
	err = cmd.Run()
	secs = time.Since(start).Seconds()
	if err != nil {
		return secs, 0, errb.String(), err
	}
	kb, err := readPeak(peakFile.Name())
	return secs, float64(kb) / 1024, errb.String(), err
}

// PeakCommand is the internal 'rfm bench' suite that runs a command and
// writes its peak RSS in kB to a file.
const PeakCommand = "_peak"

// RunMeasured runs the program name with args as a child, passing its
// output through to stdout and stderr, and writes the child's peak RSS (kB)
// to peakFile. It returns the child's exit status (at least 1 when it
// failed) and an error only when the child could not be run or the peak
// not written. It is what 'rfm bench _peak' runs: as a fresh process, its
// own small footprint is the floor of what the kernel reports for the
// child.
func RunMeasured(ctx context.Context, peakFile, name string, args []string, stdout, stderr io.Writer) (int, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stdout, cmd.Stderr = stdout, stderr
	runErr := cmd.Run()
	if cmd.ProcessState == nil {
		return 0, runErr
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		if err := os.WriteFile(peakFile, []byte(strconv.FormatInt(ru.Maxrss, 10)+"\n"), 0o644); err != nil {
			return 0, err
		}
	}
	if runErr != nil {
		return max(1, cmd.ProcessState.ExitCode()), nil
	}
	return 0, nil
}

// readPeak reads the peak RSS (kB) RunMeasured wrote.
func readPeak(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("peak RSS of a child: %q is not a number", b)
	}
	return kb, nil
}

// ValFraction is the share of training rows rfm fit and rfm tune hold out
// by default (rfm.Config.ValFraction), on which XGBoost also chooses.
const ValFraction = 0.2

// ValidRows are the training rows of the table at path that rfm fit and
// rfm tune (with seed and their default holdout) validate on:
// rfm.Holdout of the rows, stratified by the classes as rfm encodes them.
func ValidRows(path, target, task string, seed uint64) ([]int, error) {
	t, err := dataset.ReadFile(path, dataset.ReadOptions{})
	if err != nil {
		return nil, err
	}
	col, err := t.TargetColumn(target)
	if err != nil {
		return nil, err
	}
	var labels []int
	if task == "classification" {
		tg, err := dataset.FitTarget(col, task)
		if err != nil {
			return nil, err
		}
		if _, labels, err = tg.Encode(col); err != nil {
			return nil, err
		}
	}
	_, va := rfm.Holdout(t.NRows(), labels, ValFraction, seed)
	return va, nil
}

// writeValidRows writes the set's validation rows (ValidRows), one index
// a line, for the XGBoost script, and returns the file's path.
func (b *bench) writeValidRows(s *set) (string, error) {
	path := filepath.Join(b.out, "data", s.name+"-valid-rows.txt")
	rows, err := ValidRows(s.train, s.target, s.task, b.seed)
	if err != nil {
		return "", err
	}
	return path, atomicWrite(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		for _, i := range rows {
			fmt.Fprintln(bw, i)
		}
		return bw.Flush()
	})
}

// runXGBoost runs the reference script on the set's files, choosing on the
// validation rows rfm uses (writeValidRows), and keeps its curve of test
// score against fit time (CurveFile).
func (b *bench) runXGBoost(s *set, python, script string) Run {
	r := Run{Set: s.name, Method: "xgboost", Train: s.n, Test: s.nTest, Metric: s.metric}
	pred := filepath.Join(b.out, fmt.Sprintf("%s-xgboost.pred.csv", s.name))
	valid, err := b.writeValidRows(s)
	if err != nil {
		r.Error = "xgboost: the validation rows: " + err.Error()
		return r
	}
	args := []string{script, "--train", s.train, "--test", s.test, "--target", s.target, "--task", s.task, "--out", pred, "--seed", strconv.FormatUint(b.seed, 10),
		"--valid-rows", valid, "--curve", CurveFile(b.out, s.name),
		// A grid as wide as the tuned RFM's search budget allows.
		"--budget", strconv.FormatFloat(b.tuneTime.Seconds(), 'f', 0, 64)}
	var out bytes.Buffer
	secs, rss, errText, err := b.measure(&out, python, args...)
	if err != nil {
		r.Error = "xgboost: " + lastLine(errText, err)
		return r
	}
	r.FitSeconds, r.PeakRSSMB = secs, rss
	var info struct {
		FitSeconds   float64 `json:"fit_seconds"`
		PredictRowsS float64 `json:"predict_rows_per_s"`
		Params       string  `json:"params"`
	}
	if err := json.Unmarshal(out.Bytes(), &info); err == nil {
		r.FitSeconds, r.PredictRowsPerSec, r.Flags = info.FitSeconds, info.PredictRowsS, info.Params
	}
	return r.scored(pred)
}

func lastLine(s string, err error) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return l
	}
	return err.Error()
}

// ScorePredictions reads a CSV of (target, prediction) columns, as 'rfm
// predict --keep TARGET' writes it, and returns the accuracy (labels
// compared as text, or as numbers when both parse) or the RMSE or MSE.
func ScorePredictions(path, metric string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.ReuseRecord = true
	if _, err := r.Read(); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	n, hit, se := 0, 0, 0.0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		if len(rec) < 2 {
			return 0, fmt.Errorf("%s: line %d has %d columns, want the target and the prediction", path, n+2, len(rec))
		}
		n++
		if metric == "accuracy" {
			a, b := strings.TrimSpace(rec[0]), strings.TrimSpace(rec[1])
			x, e1 := strconv.ParseFloat(a, 64)
			y, e2 := strconv.ParseFloat(b, 64)
			if a == b || (e1 == nil && e2 == nil && x == y) {
				hit++
			}
			continue
		}
		y, e1 := strconv.ParseFloat(rec[0], 64)
		p, e2 := strconv.ParseFloat(rec[1], 64)
		if e1 != nil || e2 != nil {
			return 0, fmt.Errorf("%s: line %d: %q, %q are not numbers", path, n+1, rec[0], rec[1])
		}
		se += (y - p) * (y - p)
	}
	if n == 0 {
		return 0, fmt.Errorf("%s: no predictions", path)
	}
	switch metric {
	case "accuracy":
		return float64(hit) / float64(n), nil
	case "rmse":
		return math.Sqrt(se / float64(n)), nil
	}
	return se / float64(n), nil
}

var columns = []string{"set", "method", "train_rows", "test_rows", "fit_seconds", "peak_rss_mb", "predict_rows_per_s", "metric", "value", "flags", "error"}

func writeResults(path string, runs []Run) error {
	return atomicWrite(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		bw.WriteString(strings.Join(columns, "\t") + "\n")
		for _, r := range runs {
			fmt.Fprintf(bw, "%s\t%s\t%d\t%d\t%.2f\t%.0f\t%.0f\t%s\t%.6g\t%s\t%s\n", r.Set, r.Method, r.Train, r.Test, r.FitSeconds, r.PeakRSSMB, r.PredictRowsPerSec, r.Metric, r.Value, r.Flags, strings.ReplaceAll(r.Error, "\t", " "))
		}
		return bw.Flush()
	})
}

// readResults reads the runs of a results.tsv that succeeded (a
// failed run is done again); a missing file has none.
func readResults(path string) ([]Run, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.FieldsPerRecord, r.LazyQuotes = '\t', len(columns), true
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w (delete it, or use --force)", path, err)
	}
	var out []Run
	for _, f := range rows[min(1, len(rows)):] {
		if f[10] != "" {
			continue
		}
		r := Run{Set: f[0], Method: f[1], Metric: f[7], Flags: f[9]}
		r.Train, _ = strconv.Atoi(f[2])
		r.Test, _ = strconv.Atoi(f[3])
		r.FitSeconds, _ = strconv.ParseFloat(f[4], 64)
		r.PeakRSSMB, _ = strconv.ParseFloat(f[5], 64)
		r.PredictRowsPerSec, _ = strconv.ParseFloat(f[6], 64)
		r.Value, _ = strconv.ParseFloat(f[8], 64)
		out = append(out, r)
	}
	return out, nil
}

// Table is the results as text cells, a header first.
func Table(runs []Run) [][]string {
	rows := [][]string{{"set", "method", "train rows", "fit s", "peak RSS MB", "predict rows/s", "score"}}
	for _, r := range runs {
		score := fmt.Sprintf("%s %.5g", r.Metric, r.Value)
		if r.Error != "" {
			score = "failed: " + r.Error
		}
		rows = append(rows, []string{r.Set, r.Method, strconv.Itoa(r.Train), fmt.Sprintf("%.1f", r.FitSeconds),
			fmt.Sprintf("%.0f", r.PeakRSSMB), fmt.Sprintf("%.0f", r.PredictRowsPerSec), score})
	}
	return rows
}

// WriteTable prints the runs as an aligned text table.
func WriteTable(w io.Writer, runs []Run) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, row := range Table(runs) {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// writeSummary writes summary.md, summary.json and, for the synthetic
// sizes, the curves of fit time and test MSE against n.
func writeSummary(dir string, runs []Run) error {
	var md bytes.Buffer
	for i, row := range Table(runs) {
		fmt.Fprintf(&md, "| %s |\n", strings.Join(row, " | "))
		if i == 0 {
			md.WriteString(strings.Repeat("|---", len(row)) + "|\n")
		}
	}
	if err := writeTimeToScore(&md, dir, runs); err != nil {
		return err
	}
	if err := plotTimeToScore(dir, runs); err != nil {
		return err
	}
	if err := atomicWrite(filepath.Join(dir, "summary.md"), func(w io.Writer) error { _, err := w.Write(md.Bytes()); return err }); err != nil {
		return err
	}
	js, err := json.MarshalIndent(runs, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicWrite(filepath.Join(dir, "summary.json"), func(w io.Writer) error { _, err := w.Write(append(js, '\n')); return err }); err != nil {
		return err
	}
	// Curves over the synthetic sizes.
	var sizes []float64
	for _, r := range runs {
		if strings.HasPrefix(r.Set, "synth-") && r.Method != "xgboost" && !slices.Contains(sizes, float64(r.Train)) && r.Method != "exact" {
			sizes = append(sizes, float64(r.Train))
		}
	}
	slices.Sort(sizes)
	if len(sizes) < 2 {
		return nil
	}
	xs := make([]float64, len(sizes))
	for i, n := range sizes {
		xs[i] = math.Log10(n)
	}
	times, scores := map[string][]float64{}, map[string][]float64{}
	for _, r := range runs {
		if !strings.HasPrefix(r.Set, "synth-") || r.Error != "" {
			continue
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(r.Set, "synth-"))
		i := slices.Index(sizes, float64(n))
		if i < 0 {
			continue
		}
		name := r.Method
		if r.Method == "exact" {
			name = "exact (subset)"
		}
		if _, ok := times[name]; !ok {
			times[name], scores[name] = nanSlice(len(sizes)), nanSlice(len(sizes))
		}
		times[name][i], scores[name][i] = r.FitSeconds, r.Value
	}
	if len(times) == 0 {
		return nil
	}
	if err := plot.Curve(filepath.Join(dir, "scale_time.png"), xs, times, "log10 training rows", "fit seconds", "Fit time against n (synthetic low-rank, d = 20)"); err != nil {
		return err
	}
	return plot.Curve(filepath.Join(dir, "scale_score.png"), xs, scores, "log10 training rows", "test MSE", "Test MSE against n (synthetic low-rank, d = 20)")
}

func nanSlice(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = math.NaN()
	}
	return out
}

// atomicWrite writes a result file whole or not at all.
func atomicWrite(path string, write func(io.Writer) error) error {
	return atomicfile.Write(context.Background(), path, write)
}

// DefaultPython is Debian's interpreter when it is there (python3-xgboost
// installs into it; a python3 earlier on PATH, from pyenv say, lacks it),
// else python3 from PATH.
func DefaultPython() string {
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}
