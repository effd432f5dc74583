package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/testutil"
)

// wideCSV is rows × cols random numbers and a 0/1 target y.
func wideCSV(rows, cols int) string {
	return string(testutil.CSV(rows, cols, "y", func(i, j int) string {
		if j < cols {
			return fmt.Sprintf("%d.%d", (i*31+j*17)%10, (i+j)%7)
		}
		return fmt.Sprint(i % 2)
	}))
}

// A table too wide for a full M: one line naming the d×d matrices and
// suggesting --diag, exit 1, no runtime fatal error, nothing written; with
// --diag the same table fits. (d = 20 000 keeps the test quick: 6 × 3 GB.)
func TestWideTableIsPlanned(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "wide.csv"), wideCSV(3, 20_000))
	r := rfmCmd(t, dir, "fit", "--data", "wide.csv", "--target", "y", "--out", "w.rfm", "--memory-limit", "1G")
	if r.code != exitError {
		t.Fatalf("exit %d, want %d; stderr %q", r.code, exitError, r.stderr)
	}
	for _, want := range []string{"not enough memory: full M for d = 20000", "6 × 3.0 GiB", "1.0 GiB allowed", "--diag"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr %q lacks %q", r.stderr, want)
		}
	}
	if strings.Count(r.stderr, "\n") != 1 || strings.Contains(r.stderr, "fatal error") {
		t.Errorf("want one line, got %q", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "w.rfm")); err == nil {
		t.Error("a model file was written")
	}
	mustRun(t, dir, "fit", "--data", "wide.csv", "--target", "y", "--out", "w.rfm", "--memory-limit", "1G", "--diag", "--quiet")
	r = mustRun(t, dir, "predict", "--model", "w.rfm", "--data", "wide.csv")
	if lines := strings.Count(r.stdout, "\n"); lines != 4 {
		t.Errorf("predict wrote %d lines, want a header and 3 rows:\n%s", lines, r.stdout)
	}
	// cv plans the largest fold the same way.
	r = rfmCmd(t, dir, "cv", "--data", "wide.csv", "--target", "y", "--folds", "2", "--memory-limit", "1G")
	if r.code != exitError || !strings.Contains(r.stderr, "full M for d = 20000") {
		t.Errorf("cv: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestThreadsBound(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(40, 1))
	for _, cmd := range [][]string{
		{"fit", "--data", "train.csv", "--target", "churn", "--threads", "10000"},
		{"predict", "--model", "none.rfm", "--data", "train.csv", "--threads", "257"},
	} {
		r := rfmCmd(t, dir, cmd...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "at most 256") {
			t.Errorf("rfm %s: exit %d, stderr %q", strings.Join(cmd, " "), r.code, r.stderr)
		}
	}
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--threads", "256", "--iters", "1", "--quiet")
}

// The same fit twice: byte-identical model files.
func TestSameFitSameFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(200, 1))
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--out", "a.rfm", "--iters", "2", "--quiet")
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--out", "b.rfm", "--iters", "2", "--quiet")
	a, b := readFile(t, filepath.Join(dir, "a.rfm")), readFile(t, filepath.Join(dir, "b.rfm"))
	if a != b {
		t.Fatal("two identical fits wrote different files")
	}
}

// A temporary file left by a writer killed with -9 is removed by the next
// write of the same output; a live writer's is not.
func TestKilledWriterLeftoverIsCleaned(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(60, 1))
	dead := exec.Command(binary, "version")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf(".m.rfm.tmp-%d-00112233aabb", dead.Process.Pid)
	live := fmt.Sprintf(".m.rfm.tmp-%d-00112233aabb", os.Getpid())
	writeFile(t, filepath.Join(dir, stale), "half a model")
	writeFile(t, filepath.Join(dir, live), "being written")
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--out", "m.rfm", "--iters", "1", "--quiet")
	got := listDir(t, dir)
	if got[stale] || !got[live] || !got["m.rfm"] {
		t.Errorf("directory after the write: %v", got)
	}
}

// A named pipe with no reader as --out: the command waits for a reader
// and Ctrl-C ends the wait (exit 130, one line). It used to block in
// open(2) for ever, deaf to the signal.
func TestFIFOOutWithoutReader(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(60, 1))
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--out", "m.rfm", "--iters", "0", "--quiet")
	fifo := testutil.FIFO(t, dir, "pipe")
	// The signal must come after main has set up its handler (before,
	// Go's default action kills the process): wait a little, and should
	// the signal still have come too early (the process died of it, which
	// is not what is tested), start again waiting twice as long, up to 8
	// attempts (counted, not timed: a loaded machine only needs more).
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt, wait = attempt+1, 2*wait {
		cmd := exec.Command(binary, "predict", "--model", "m.rfm", "--data", "train.csv", "--out", "pipe", "--quiet")
		cmd.Dir = dir
		var errb bytes.Buffer
		cmd.Stderr = &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(wait)
		cmd.Process.Signal(os.Interrupt)
		err := cmd.Wait()
		ee, ok := err.(*exec.ExitError)
		if ok && ee.ExitCode() == -1 && attempt < 8 {
			continue // killed by the signal before main ran
		}
		if !ok || ee.ExitCode() != exitInterrupt {
			t.Fatalf("exit: %v, want code %d (stderr %q)", err, exitInterrupt, errb.String())
		}
		if got := errb.String(); got != "rfm predict: interrupted; nothing was written\n" {
			t.Errorf("stderr %q", got)
		}
		break
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was replaced: %v %v", fi, err)
	}
}

// A full device: the path once, then the cause.
func TestDevFullMessage(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		return // not Linux: nothing to check
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(60, 1))
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--out", "m.rfm", "--iters", "0", "--quiet")
	r := rfmCmd(t, dir, "predict", "--model", "m.rfm", "--data", "train.csv", "--out", "/dev/full")
	if r.code != exitError || strings.Count(r.stderr, "/dev/full") != 1 || !strings.Contains(r.stderr, "no space left on device") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// Classes of one or two rows: fit says why there is no validation.
func TestEmptyHoldoutIsReported(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "tiny.csv"), "a,b,y\n0,0,x\n0,1,x\n1,1,z\n2,2,z\n2,3,w\n5,1,w\n")
	r := mustRun(t, dir, "fit", "--data", "tiny.csv", "--target", "y", "--out", "t.rfm", "--iters", "1")
	for _, want := range []string{"validation  none: the holdout would have no rows (see the note)",
		"note: the stratified 20% holdout rounds to no rows: the largest class has 2 rows"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("fit output lacks %q:\n%s", want, r.stdout)
		}
	}
}
