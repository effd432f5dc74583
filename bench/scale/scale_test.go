package scale

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMain lets this test binary be its own Options.Exe: run as
// "bench _peak FILE CMD ARGS..." it is RunMeasured, as rfm is, and as
// "fit" or "predict" a stand-in for rfm's (fakeChild).
func TestMain(m *testing.M) {
	if len(os.Args) > 4 && os.Args[1] == "bench" && os.Args[2] == PeakCommand {
		code, err := RunMeasured(context.Background(), os.Args[3], os.Args[4], os.Args[5:], os.Stdout, os.Stderr)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			code = 1
		}
		os.Exit(code)
	}
	if len(os.Args) > 1 && (os.Args[1] == "fit" || os.Args[1] == "tune" || os.Args[1] == "predict") {
		if err := fakeChild(os.Args[1], os.Args[2:]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeChild stands in for 'rfm fit' (it writes the model file) and 'rfm
// predict --keep COL' (it predicts every row's target exactly), so that
// Bench's running, scoring and bookkeeping are tested without fitting.
func fakeChild(cmd string, args []string) error {
	flag := func(name string) string {
		for i, a := range args {
			if a == name && i+1 < len(args) {
				return args[i+1]
			}
		}
		return ""
	}
	if cmd == "fit" || cmd == "tune" {
		// A fit that is handed the poisoned test file fails (the
		// search must never see test rows).
		if p := os.Getenv("SCALE_TEST_POISON"); p != "" {
			for _, a := range args {
				if filepath.Clean(a) == filepath.Clean(p) {
					return fmt.Errorf("%s was given the test file %s", cmd, p)
				}
			}
		}
		if _, err := os.Stat(flag("--data")); err != nil {
			return err
		}
		return os.WriteFile(flag("--out"), []byte("model"), 0o644)
	}
	if _, err := os.Stat(flag("--model")); err != nil {
		return err
	}
	data, err := os.ReadFile(flag("--data"))
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	header := strings.Split(lines[0], ",")
	col := len(header) - 1
	for i, h := range header {
		if h == flag("--keep") {
			col = i
		}
	}
	var b strings.Builder
	b.WriteString(header[col] + ",prediction\n")
	for _, l := range lines[1:] {
		y := strings.Split(l, ",")[col]
		b.WriteString(y + "," + y + "\n")
	}
	return os.WriteFile(flag("--out"), []byte(b.String()), 0o644)
}

// Bench writes the synthetic sets, runs every method of each size in a
// child, scores the predictions, records the runs, and reuses them on a
// rerun unless forced.
func TestBenchSynthetic(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var reported []Run
	opt := Options{Exe: exe, OutDir: out, Sets: []string{"synth"}, Sizes: []int{200, 300}, ExactRows: 250, Quick: true, Seed: 1,
		Progress: func(r Run) { reported = append(reported, r) }}
	runs, err := Bench(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 || len(reported) != 8 {
		t.Fatalf("%d runs, %d reported", len(runs), len(reported))
	}
	for _, r := range runs {
		train := map[string]int{"synth-200": 200, "synth-300": 300}[r.Set]
		if r.Method == "exact" {
			train = min(train, 250) // the seeded subset
		}
		if r.Error != "" || r.Metric != "mse" || r.Value != 0 || r.Train != train || r.Test != 2000 || r.FitSeconds <= 0 || r.PeakRSSMB <= 0 || r.PredictRowsPerSec <= 0 {
			t.Errorf("%+v", r)
		}
	}
	subset, err := os.ReadFile(filepath.Join(out, "data", "synth-300-subset250.csv"))
	if err != nil || strings.Count(string(subset), "\n") != 251 {
		t.Errorf("exact subset: %v, %d lines", err, strings.Count(string(subset), "\n"))
	}
	reported = nil
	if again, err := Bench(context.Background(), opt); err != nil || len(again) != 8 || len(reported) != 0 {
		t.Errorf("rerun: %v, %d runs, %d computed again", err, len(again), len(reported))
	}
	opt.Force = true
	if _, err := Bench(context.Background(), opt); err != nil || len(reported) != 8 {
		t.Errorf("forced rerun: %v, %d computed", err, len(reported))
	}
}

// The tuned method's search never reads the test rows: its child 'rfm
// tune' is given the training file only. The test file is poisoned (its
// targets are not numbers, and a child handed its path fails): the tune
// and fit children succeed, and only the scoring of the predictions, which
// reads the test targets back, fails.
func TestTunedNeverReadsTest(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	test := filepath.Join(out, "data", "synth-test.csv")
	var poison strings.Builder
	poison.WriteString("x0,y\n")
	for range 2000 {
		poison.WriteString("1,poison\n")
	}
	if err := os.WriteFile(test, []byte(poison.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SCALE_TEST_POISON", test)
	opt := Options{Exe: exe, OutDir: out, Sets: []string{"synth"}, Sizes: []int{200}, ExactRows: 250, Quick: true, Seed: 1,
		Methods: []string{"tree", "tuned"}}
	runs, err := Bench(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want tree and tuned", len(runs))
	}
	for _, r := range runs {
		if r.FitSeconds <= 0 || !strings.Contains(r.Error, "poison") {
			t.Errorf("%s: fit %.3g s, error %q; want a fit and a scoring error on the poisoned targets", r.Method, r.FitSeconds, r.Error)
		}
	}
	if !strings.Contains(runs[1].Flags, "--time") {
		t.Errorf("tuned flags %q: want rfm tune's --time", runs[1].Flags)
	}
}

// The peak RSS measured for a child is the child's own, not this process's
// high-water mark (which the kernel's accounting of a child started by Go
// carries over): with 400 MB held here, a shell that does nothing measures
// well under 100 MB. A failing child's status and stderr come through.
func TestChildPeak(t *testing.T) {
	hold := make([]byte, 400<<20)
	for i := range hold {
		hold[i] = byte(i)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{ctx: context.Background(), exe: exe, out: t.TempDir()}
	secs, rss, errText, err := b.measure(nil, "/bin/sh", "-c", "true")
	if err != nil {
		t.Fatal(err, errText)
	}
	if secs <= 0 || rss <= 0 || rss > 100 {
		t.Errorf("sh -c true: %.3f s, peak %.0f MB; want a positive time and a peak under 100 MB (this process holds 400)", secs, rss)
	}
	if _, _, errText, err := b.measure(nil, "/bin/sh", "-c", "echo no-such.csv >&2; exit 3"); err == nil || !strings.Contains(errText, "no-such.csv") {
		t.Errorf("a failing child: err = %v, stderr %q, want its message", err, errText)
	}
	runtime.KeepAlive(hold)
}

// The KDD set's test rows come from the corrected file; the training file
// comes from the 10% file. Preparing the training file must not overwrite
// the test file (it once left the test file with its header only).
func TestKDDSplit(t *testing.T) {
	dir := t.TempDir()
	writeGz := func(name string, lines ...string) {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(strings.Join(lines, "\n") + "\n"))
		zw.Close()
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeGz("kddcup99_10pct.csv.gz", "a,b,target", "1,2,x", "3,4,y", "5,6,x")
	writeGz("kddcup99_corrected_test.csv.gz", "a,b,target", "7,8,x", "9,1,z")
	b := &bench{out: t.TempDir(), seed: 1, exactRows: 100}
	if err := os.MkdirAll(filepath.Join(b.out, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := b.realSet("kdd", dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.n != 3 || s.nTest != 2 {
		t.Errorf("rows: train %d, test %d; want 3 and 2", s.n, s.nTest)
	}
	// Again, with the files in place (counted, not rewritten).
	if s, err = b.realSet("kdd", dir); err != nil {
		t.Fatal(err)
	}
	if s.n != 3 || s.nTest != 2 {
		t.Errorf("second pass: rows: train %d, test %d; want 3 and 2", s.n, s.nTest)
	}
	for path, want := range map[string]string{s.train: "a,b,target\n1,2,x\n3,4,y\n5,6,x\n", s.test: "a,b,target\n7,8,x\n9,1,z\n"} {
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s:\n%s\nwant:\n%s", path, got, want)
		}
	}
}

// Predictions are scored as labels (text, or numbers when both parse) or
// by RMSE and MSE; a file without predictions is an error.
func TestScorePredictions(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cls := write("c.csv", "target,prediction\na,a\n1,1.0\nb,c\nd,d\n")
	if v, err := ScorePredictions(cls, "accuracy"); err != nil || v != 0.75 {
		t.Errorf("accuracy %v, %v; want 0.75", v, err)
	}
	reg := write("r.csv", "y,prediction\n1,2\n3,1\n")
	if v, err := ScorePredictions(reg, "mse"); err != nil || v != 2.5 {
		t.Errorf("mse %v, %v; want 2.5", v, err)
	}
	if v, err := ScorePredictions(reg, "rmse"); err != nil || math.Abs(v-math.Sqrt(2.5)) > 1e-15 {
		t.Errorf("rmse %v, %v", v, err)
	}
	for name, text := range map[string]string{"empty.csv": "y,prediction\n", "one.csv": "y\n1\n", "text.csv": "y,prediction\n1,x\n"} {
		if _, err := ScorePredictions(write(name, text), "mse"); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// results.tsv keeps the successful runs for a rerun and drops the failed
// ones; the summary writes its table and JSON (and curves for two sizes).
func TestResultsAndSummary(t *testing.T) {
	dir := t.TempDir()
	runs := []Run{
		{Set: "synth-1000", Method: "nystrom", Train: 1000, Test: 200, FitSeconds: 1.5, PeakRSSMB: 80, PredictRowsPerSec: 5000, Metric: "mse", Value: 0.25, Flags: "--solver nystrom"},
		{Set: "synth-2000", Method: "nystrom", Train: 2000, Test: 200, FitSeconds: 3, PeakRSSMB: 90, PredictRowsPerSec: 4000, Metric: "mse", Value: 0.2},
		{Set: "synth-2000", Method: "tree", Train: 2000, Metric: "mse", Error: "out\tof memory"},
	}
	path := filepath.Join(dir, "results.tsv")
	if err := writeResults(path, runs); err != nil {
		t.Fatal(err)
	}
	back, err := readResults(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0] != runs[0] || back[1].Value != 0.2 {
		t.Errorf("read back %+v", back)
	}
	if none, err := readResults(filepath.Join(dir, "none.tsv")); err != nil || none != nil {
		t.Errorf("a missing file: %v, %v", none, err)
	}
	if err := writeSummary(dir, runs); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "summary.md"))
	if !strings.Contains(string(md), "| synth-2000 | tree | 2000 |") || !strings.Contains(string(md), "failed: out\tof memory") {
		t.Errorf("summary.md:\n%s", md)
	}
	for _, f := range []string{"summary.json", "scale_time.png", "scale_score.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	var b strings.Builder
	if err := WriteTable(&b, runs); err != nil || strings.Count(b.String(), "\n") != 4 {
		t.Errorf("table: %v\n%s", err, b.String())
	}
	if got := runs[0].Describe(); got != "1000 rows, fit 1.5 s, peak 80 MB, predict 5000 rows/s, mse 0.25" {
		t.Errorf("describe: %q", got)
	}
	bad := Options{Sets: []string{"mnist"}, ExactRows: 100}
	if _, err := Bench(context.Background(), bad); err == nil || !strings.Contains(err.Error(), `unknown set "mnist"`) {
		t.Errorf("unknown set: %v", err)
	}
}
