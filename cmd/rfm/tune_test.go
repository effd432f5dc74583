package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/tree"
	"github.com/rfmkit/rfm/tune"
)

// rfm tune searches, writes the best model (which predict and eval take),
// a trials table and figures; --resume fits nothing it has scored; the
// flags a user gives fix their settings.
func TestTune(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(300, 11))
	writeFile(t, filepath.Join(dir, "test.csv"), churnCSV(100, 12))
	args := []string{"tune", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--time", "0",
		"--min-rows", "60", "--iters", "2", "--diag", "--out", "t.rfm", "--plots", "figs", "--val-fraction", "0.2"}
	r := mustRun(t, dir, append(args, "--trials", "9", "--json")...)
	var res tune.Report
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("tune --json: %v\n%s", err, r.stdout)
	}
	if res.Drawn != 9 || res.Fits < 9 || res.Cached != 0 || len(res.Rungs) != 2 || res.Rungs[1] != 240 {
		t.Fatalf("tune --json: %+v", res)
	}
	// One holdout: no standard error, so the lowest validation loss wins,
	// never above the best plain kernel's (a candidate too).
	if res.Best.Accuracy == nil || res.Plain.Accuracy == nil || res.Best.Loss > res.Plain.Loss || res.Best.Rows != 240 {
		t.Fatalf("best %+v, plain kernel %+v", res.Best, res.Plain)
	}
	if !res.Config.Diag || res.Config.Iters != 2 || !res.Refitted || res.Rows != 300 {
		t.Fatalf("the fixed settings or the final fit: %+v", res)
	}
	// --time bounds the search only: its end and the final fit's are two
	// lines, so a long final fit is not taken for the search.
	ends := regexp.MustCompile(`(?m)^tune: 9 configurations, \d+ fits in [^;]+; best trial \d+; fitting the best configuration on all 300 rows\n(.*\n)*tune: final fit in [^;]+; model written to t\.rfm$`)
	if !ends.MatchString(r.stderr) {
		t.Fatalf("stderr does not end the search and then the final fit:\n%s", r.stderr)
	}
	if len(res.Figures) != 3 {
		t.Fatalf("figures %v", res.Figures)
	}
	for _, f := range res.Figures {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("figure %s: %v", f, err)
		}
	}
	fh, err := os.Open(filepath.Join(dir, "t.rfm.trials.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	if err != nil || len(rows) != 1+res.Fits || rows[0][0] != "trial" {
		t.Fatalf("trials table: %d rows, %v", len(rows), err)
	}
	for _, row := range rows[1:] {
		if row[17] != "true" || row[22] != "2" { // diag, iters: fixed by the flags
			t.Fatalf("a trial with diag %s, iters %s", row[17], row[22])
		}
	}
	ev := mustRun(t, dir, "eval", "--model", "t.rfm", "--data", "test.csv", "--json")
	if !strings.Contains(ev.stdout, `"accuracy"`) {
		t.Fatalf("eval of the tuned model:\n%s", ev.stdout)
	}

	// Resumed with one more bracket: the first nine are read back.
	more := mustRun(t, dir, append(args, "--trials", "18", "--resume", "--json")...)
	var res2 tune.Report
	if err := json.Unmarshal([]byte(more.stdout), &res2); err != nil {
		t.Fatal(err)
	}
	if res2.Cached != res.Fits || res2.Fits == 0 {
		t.Fatalf("resumed: %d trials read back (want %d), %d fitted", res2.Cached, res.Fits, res2.Fits)
	}
	text := mustRun(t, dir, append(args, "--trials", "9")...)
	for _, want := range []string{"Search: 9 configurations", "Best:", "Plain kernel:", "Best trials on 240 rows"} {
		if !strings.Contains(text.stdout, want) {
			t.Fatalf("tune text lacks %q:\n%s", want, text.stdout)
		}
	}
}

func TestTuneBadFlags(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(60, 13))
	base := []string{"tune", "--data", "train.csv", "--target", "churn", "--out", "m.rfm"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--folds", "1"}, "--folds 1"},
		{[]string{"--time", "soon"}, `--time "soon"`},
		{[]string{"--time", "0"}, "--time 0 needs --trials"},
		{[]string{"--kernel", "ntk"}, "--kernel ntk cannot be tuned"},
		{[]string{"--scale", "none", "--scales", "minmax"}, "--scale and --scales"},
		{[]string{"--scales", "zscore"}, `--scales: "zscore"`},
		{[]string{"--valid", "train.csv", "--folds", "3"}, "--valid and --folds"},
		{[]string{"--eta", "1"}, "--eta 1"},
		{[]string{"--max-rows", "50"}, "--max-rows 50: want 0 (every row) or N ≥ the first rung's rows (400)"},
		{[]string{"--max-rows", "-3"}, "--max-rows -3"},
		{[]string{"--min-rows", "60", "--max-rows", "59"}, "--max-rows 59: want 0 (every row) or N ≥ the first rung's rows (60)"},
		{[]string{"--repeats", "3"}, "--repeats 3: want 0 or 1 (once), or R ≥ 2 with K-fold cross-validation"},
		{[]string{"--trials", "-1"}, "--trials -1: want N ≥ 0"},
		{[]string{"--jobs", "-1"}, "--jobs -1: want 0"},
		{[]string{"--local-after", "-5"}, "--local-after -5: want N ≥ 1"},
		{[]string{"--min-rows", "3"}, "--min-rows 3: want N ≥ 10"},
		{[]string{"--final-centers", "-2"}, "--final-centers -2: want 0"},
		{[]string{"--trials-out", "train.csv"}, "--trials-out"},
		{[]string{"--rfm-t"}, "--rfm-t does not apply"},
		{[]string{"--ensemble", "0"}, "--ensemble 0: want 1 (the best alone) to 64"},
		{[]string{"--ensemble", "65"}, "--ensemble 65"},
	} {
		r := rfmCmd(t, dir, append(base, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "m.rfm")); err == nil {
		t.Error("a refused tune wrote a model")
	}
}

// rfm tune --ensemble K saves the mean of the K best configurations: one
// file that predict, eval and inspect take, and export refuses with the
// reason.
func TestTuneEnsemble(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(300, 21))
	writeFile(t, filepath.Join(dir, "test.csv"), churnCSV(80, 22))
	r := mustRun(t, dir, "tune", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--time", "0",
		"--trials", "9", "--min-rows", "60", "--iters", "2", "--folds", "3", "--calibrate", "power", "--scale", "standard",
		"--ensemble", "3", "--out", "e.rfm", "--json")
	var res tune.Report
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("tune --json: %v\n%s", err, r.stdout)
	}
	if len(res.Members) != 3 || res.Members[0] != res.Best.Trial || res.Asked != 3 {
		t.Fatalf("ensemble trials %v (asked %d), best trial %d", res.Members, res.Asked, res.Best.Trial)
	}
	lm, err := loadModel(filepath.Join(dir, "e.rfm"), true)
	if err != nil {
		t.Fatal(err)
	}
	if lm.Kind() != "ensemble" || lm.Fitted.(*ensemble.Model).NumMembers() != 3 || lm.Centers() != 3*300 {
		t.Fatalf("model kind %s, %d centres", lm.Kind(), lm.Centers())
	}
	if cal := lm.Calibration(); cal == nil || cal.Method != rfm.CalibratePower || cal.Rows != 300 {
		t.Fatalf("calibration %+v, want power on the 300 out-of-fold rows", cal)
	}
	mustRun(t, dir, "predict", "--model", "e.rfm", "--data", "test.csv", "--proba", "--out", "p.csv")
	out, err := os.ReadFile(filepath.Join(dir, "p.csv"))
	if err != nil || strings.Count(string(out), "\n") != 81 {
		t.Fatalf("predictions: %v\n%s", err, out)
	}
	ev := mustRun(t, dir, "eval", "--model", "e.rfm", "--data", "test.csv", "--json")
	if !strings.Contains(ev.stdout, `"accuracy"`) || !strings.Contains(ev.stdout, `"log_loss"`) {
		t.Fatalf("eval of the ensemble:\n%s", ev.stdout)
	}
	in := mustRun(t, dir, "inspect", "--model", "e.rfm")
	for _, want := range []string{"mean of 3 RFMs", "members (best first):", "member 0 (the best) in detail:", "calibration", "on 300 out-of-fold rows: the mean"} {
		if !strings.Contains(in.stdout, want) {
			t.Fatalf("inspect lacks %q:\n%s", want, in.stdout)
		}
	}
	if c := strings.Count(in.stdout, "trained on"); c != 1 {
		t.Fatalf("inspect prints the file's header %d times:\n%s", c, in.stdout)
	}
	inj := mustRun(t, dir, "inspect", "--model", "e.rfm", "--json")
	var ij describe.EnsembleInspection
	if err := json.Unmarshal([]byte(inj.stdout), &ij); err != nil || ij.Kind != "ensemble" || len(ij.Members) != 3 || ij.Best == nil {
		t.Fatalf("inspect --json: %v\n%s", err, inj.stdout)
	}
	ex := rfmCmd(t, dir, "export", "--model", "e.rfm", "--out", "e.onnx")
	if ex.code == 0 || !strings.Contains(ex.stderr, "an ensemble of RFMs") {
		t.Fatalf("export of an ensemble: exit %d, %s", ex.code, ex.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "e.onnx")); err == nil {
		t.Error("a refused export wrote a file")
	}

	// One configuration only: saved alone as an RFM, and the text says so.
	one := mustRun(t, dir, "tune", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--time", "0",
		"--trials", "1", "--min-rows", "60", "--iters", "2", "--ensemble", "3", "--out", "one.rfm")
	if !strings.Contains(one.stdout, "Ensemble: none (--ensemble 3)") {
		t.Fatalf("tune text:\n%s", one.stdout)
	}
	if lm, err := loadModel(filepath.Join(dir, "one.rfm"), true); err != nil || lm.Kind() != "rfm" {
		t.Fatalf("one configuration: %v", err)
	}
}

// An interrupted tune says what it left: the trials table, no model.
func TestTuneInterrupted(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(3000, 14))
	cmd := exec.Command(binary, "tune", "--data", "train.csv", "--target", "churn", "--time", "10m", "--out", "m.rfm", "--quiet")
	cmd.Dir = dir
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the first trials to reach the table, then interrupt.
	table := filepath.Join(dir, "m.rfm.trials.csv")
	for i := 0; i < 600; i++ {
		if b, err := os.ReadFile(table); err == nil && strings.Count(string(b), "\n") >= 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if err == nil {
		t.Fatal("an interrupted tune exited 0")
	}
	if !strings.Contains(errb.String(), "interrupted; no model was written") || !strings.Contains(errb.String(), "--resume") {
		t.Fatalf("stderr: %s", errb.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "m.rfm")); err == nil {
		t.Fatal("an interrupted tune wrote a model")
	}
	if b, err := os.ReadFile(table); err != nil || !strings.HasPrefix(string(b), "trial,") {
		t.Fatalf("trials table: %v", err)
	}
}

// A table beyond what --solver auto fits exactly is tuned on samples of
// tune.LargeMaxRows rows, its final model chosen among the default tree, a
// tuned tree and a Nyström fit on tune.LargeCenters centres (fewer when
// they do not fit in memory), and tune says so before
// it starts (the run is interrupted there: the fits take minutes). With
// class weights (exact solves only) it is refused before any fit, with the
// ways to tune it.
func TestTuneTreeSizedTable(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "big.csv"), churnCSV(rfm.AutoExactRows+1, 15))
	cmd, pipe := startRFM(t, dir, "tune", "--data", "big.csv", "--target", "churn", "--out", "m.rfm", "--time", "10m")
	// Without the line the search would run for minutes: killed, the
	// pipe ends and the test fails on the empty line instead of hanging.
	deadline := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	want := regexp.MustCompile(`^tune: --solver auto would fit a tree \(25001 rows are more than an exact solve takes quickly \(25000\)\), so the search fits stratified samples of at most 4000 rows \(--max-rows\); the saved model is rfm fit's default tree, a tree of the best configuration, or \(on at most 120000 rows\) a Nyström fit on (10000|5000|2500|1250) centres \(--final-centers\), whichever the validation rows prefer, the default tree unless beaten beyond the noise$`)
	var first string
	sc := bufio.NewScanner(pipe)
	if sc.Scan() {
		first = sc.Text()
	}
	cmd.Process.Signal(os.Interrupt)
	io.Copy(io.Discard, pipe)
	werr := cmd.Wait()
	if !want.MatchString(first) {
		t.Fatalf("tune's first line on stderr: %q; want %s", first, want)
	}
	if werr == nil {
		t.Error("an interrupted tune exited 0")
	}
	if _, err := os.Stat(filepath.Join(dir, "m.rfm")); err == nil {
		t.Error("an interrupted tune wrote a model")
	}
	r := rfmCmd(t, dir, "tune", "--data", "big.csv", "--target", "churn", "--out", "m.rfm", "--trials", "2", "--time", "0", "--class-weight", "balanced")
	refusal := "--solver auto would fit the search's 25001 rows by a tree (25001 rows are more than an exact solve takes quickly (25000)): use --max-rows N --final-centers M to search exactly on samples of N rows and fit the model by Nyström on M centres, or --solver nystrom"
	if r.code == 0 || !strings.Contains(r.stderr, refusal) {
		t.Fatalf("exit %d, stderr %q; want %q", r.code, r.stderr, refusal)
	}
	// --final-centers not below the rows: the final fit would be exact.
	r = rfmCmd(t, dir, "tune", "--data", "big.csv", "--target", "churn", "--out", "m.rfm", "--trials", "2", "--time", "0",
		"--max-rows", "2000", "--final-centers", "30000")
	if want := "give M below 25001"; r.code != 2 || !strings.Contains(r.stderr, want) {
		t.Fatalf("exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.rfm")); err == nil {
		t.Error("a refused tune wrote a model")
	}
}

// --final-centers: the search stays exact on --max-rows samples and the
// saved model is a Nyström fit on M centres of every row; bad values are
// refused with the flag's name.
func TestTuneFinalCenters(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(1500, 31))
	mustRun(t, dir, "tune", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--time", "0",
		"--trials", "3", "--min-rows", "100", "--max-rows", "300", "--iters", "1", "--final-centers", "400",
		"--out", "m.rfm", "--quiet")
	lm, err := loadModel(filepath.Join(dir, "m.rfm"), true)
	if err != nil {
		t.Fatal(err)
	}
	if lm.Kind() != "rfm" || lm.Config().Solver != rfm.SolverNystrom || lm.Centers() != 400 {
		t.Fatalf("saved model: kind %s, solver %q, %d centres; want nystrom on 400", lm.Kind(), lm.Config().Solver, lm.Centers())
	}
	b, err := os.ReadFile(filepath.Join(dir, "m.rfm.trials.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "nystrom") {
		t.Fatalf("the search's trials should be exact:\n%s", b)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--final-centers", "-1"}, "--final-centers -1"},
		{[]string{"--final-centers", "100", "--class-weight", "balanced"}, "--class-weight balanced"},
	} {
		args := append([]string{"tune", "--data", "train.csv", "--target", "churn", "--trials", "2", "--out", "bad.rfm"}, c.args...)
		r := rfmCmd(t, dir, args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %s", c.args, r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "bad.rfm")); err == nil {
			t.Errorf("%v wrote a model", c.args)
		}
	}
}

// A table of fewer than 2 000 rows is scored by folds unless told
// otherwise, and says so; the configurations are capped by the rows; the
// choice (the defaults protected) is in --json and in the model's note.
func TestTuneSmallTableFolds(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(150, 21))
	r := mustRun(t, dir, "tune", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--time", "1h",
		"--min-rows", "60", "--iters", "1", "--diag", "--out", "s.rfm", "--json")
	var res tune.Report
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("tune --json: %v\n%s", err, r.stdout)
	}
	if !strings.Contains(r.stderr, "150 rows (< 2000): every fit is scored by 5-fold cross-validation × 2 repeats") {
		t.Fatalf("stderr does not say the design:\n%s", r.stderr)
	}
	if res.Design != "5 folds × 2 repeats" || res.TrialCap != 20 || res.Drawn != 20 {
		t.Fatalf("design %q, cap %d, %d configurations", res.Design, res.TrialCap, res.Drawn)
	}
	c := res.Choice
	if c == nil || c.Splits != 10 || c.Folds != 5 || c.Candidates < 20 || res.Default == nil {
		t.Fatalf("choice %+v, base %+v", c, res.Default)
	}
	if c.Kept == "defaults" && res.Best.Trial != 0 || c.Kept != "defaults" && !(c.Margin > c.Z*c.SE) {
		t.Fatalf("kept %q with trial %d: %+v", c.Kept, res.Best.Trial, c)
	}
	in := mustRun(t, dir, "inspect", "--model", "s.rfm")
	if !strings.Contains(in.stdout, "rfm tune: 5 folds × 2 repeats; chosen on the validation loss") {
		t.Fatalf("the model's note does not say how it was chosen:\n%s", in.stdout)
	}
	// A holdout asked for is kept, and a trial count given is not capped.
	h := mustRun(t, dir, "tune", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--time", "0", "--trials", "3",
		"--val-fraction", "0.3", "--min-rows", "60", "--iters", "1", "--diag", "--out", "h.rfm", "--json")
	res = tune.Report{}
	if err := json.Unmarshal([]byte(h.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Design, "holdout 30%") || res.TrialCap != 0 || res.Drawn != 3 || strings.Contains(h.stderr, "cross-validation") {
		t.Fatalf("--val-fraction 0.3 --trials 3: design %q, cap %d, %d drawn\n%s", res.Design, res.TrialCap, res.Drawn, h.stderr)
	}
}

// A forest file (what rfm tune --forest saves when the forest pays) is a
// model like the others: predict reads it and, a forest of the same tree
// twice, gives the tree's predictions; inspect describes it.
func TestForestFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(400, 21))
	writeFile(t, filepath.Join(dir, "test.csv"), churnCSV(80, 22))
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--solver", "tree", "--leaf-size", "150",
		"--iters", "1", "--out", "tree.rfm", "--quiet")
	lm, err := loadModel(filepath.Join(dir, "tree.rfm"), true)
	if err != nil {
		t.Fatal(err)
	}
	tm := lm.Fitted.(*tree.Model)
	f, err := tree.NewForest([]*tree.Model{tm, tm})
	if err != nil {
		t.Fatal(err)
	}
	info := trainingInfo{Data: "train.csv", Rows: 400, Validation: "test", Version: versionString()}
	if err := saveModel(context.Background(), filepath.Join(dir, "forest.rfm"), f, lm.Pipeline, lm.Target, info); err != nil {
		t.Fatal(err)
	}
	a := mustRun(t, dir, "predict", "--model", "tree.rfm", "--data", "test.csv")
	b := mustRun(t, dir, "predict", "--model", "forest.rfm", "--data", "test.csv")
	if a.stdout == "" || a.stdout != b.stdout {
		t.Fatalf("tree and forest of it predict differently:\n%s\n%s", a.stdout, b.stdout)
	}
	r := mustRun(t, dir, "inspect", "--model", "forest.rfm")
	if !strings.Contains(r.stdout, "forest of 2 trees") {
		t.Fatalf("inspect: %s", r.stdout)
	}
}
