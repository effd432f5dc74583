package main

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var headLine = regexp.MustCompile(`logistic head \([1-9][0-9]* steps\) on that M`)

// The logistic head on Nyström centres from the command line: it fits and
// says so; with every training row a centre it is the exact logistic head
// (its probabilities agree to the solvers' tolerances); a tree's leaves
// still refuse it with a message.
func TestLogisticNystromCLI(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(300, 3))
	writeFile(t, filepath.Join(dir, "test.csv"), churnCSV(200, 4))
	probs := map[string][]float64{}
	for _, solver := range []string{"exact", "nystrom"} {
		args := []string{"fit", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--iters", "1",
			"--solver", solver, "--ridge", "0.1", "--loss", "logistic", "--out", solver + ".rfm"}
		if solver == "nystrom" {
			args = append(args, "--centers", "300")
		}
		r := mustRun(t, dir, args...)
		// It names the head and the steps its solver took (converged on
		// this problem: no "stopped at the limit").
		if !headLine.MatchString(r.stderr + r.stdout) {
			t.Errorf("%s: fit output does not name the logistic head and its steps:\n%s%s", solver, r.stdout, r.stderr)
		}
		// inspect says it too, from the model file.
		if ri := mustRun(t, dir, "inspect", "--model", solver+".rfm"); !headLine.MatchString(ri.stdout) {
			t.Errorf("%s: inspect does not name the logistic head and its steps:\n%s", solver, ri.stdout)
		}
		mustRun(t, dir, "predict", "--model", solver+".rfm", "--data", "test.csv", "--proba", "--out", solver+".csv")
		recs := readCSV(t, readFile(t, filepath.Join(dir, solver+".csv")))
		for _, v := range column(t, recs, "proba_yes") {
			p, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			probs[solver] = append(probs[solver], p)
		}
	}
	worst := 0.0
	for i, p := range probs["exact"] {
		worst = max(worst, math.Abs(p-probs["nystrom"][i]))
	}
	t.Logf("%d test rows: largest probability difference %.3g", len(probs["exact"]), worst)
	if len(probs["exact"]) != 200 || worst > 1e-3 {
		t.Errorf("Nyström logistic head with every row a centre differs from the exact one by %.3g", worst)
	}
	r := rfmCmd(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--solver", "tree", "--loss", "logistic", "--out", "tree.rfm")
	if r.code == 0 || !strings.Contains(r.stderr, "not by a tree's leaves") {
		t.Errorf("tree + logistic: exit %d\n%s", r.code, r.stderr)
	}
}
