package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// The tree solver end to end: fit says what it chose, predict and eval read
// the tree file, inspect shows its leaves and global ranking, and cv runs
// it fold by fold. --solver auto builds a tree when the exact matrix does
// not fit the memory limit, and says so.
func TestTreeSolverEndToEnd(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "synth", "--task", "lowrank", "--n", "1500", "--d", "8", "--seed", "3", "--out", "train.csv")
	mustRun(t, dir, "synth", "--task", "lowrank", "--n", "300", "--d", "8", "--seed", "4", "--out", "test.csv")

	r := mustRun(t, dir, "fit", "--data", "train.csv", "--target", "y", "--solver", "tree", "--leaf-size", "400", "--iters", "1", "--out", "tree.rfm")
	for _, want := range []string{"solver      tree: asked for", "plan        leaves of at most 400 rows", "tree: depth 2, 7 nodes, 4 leaves", "model written to tree.rfm"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("fit output lacks %q:\n%s", want, r.stdout)
		}
	}
	mustRun(t, dir, "predict", "--model", "tree.rfm", "--data", "test.csv", "--out", "pred.csv")
	if lines := strings.Count(readFile(t, filepath.Join(dir, "pred.csv")), "\n"); lines != 301 {
		t.Errorf("pred.csv has %d lines, want a header and 300 rows", lines)
	}
	ev := mustRun(t, dir, "eval", "--model", "tree.rfm", "--data", "test.csv", "--json")
	var rep struct {
		Metrics struct {
			R2 float64 `json:"r2"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal([]byte(ev.stdout), &rep); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, ev.stdout)
	}
	if rep.Metrics.R2 < 0.5 {
		t.Errorf("tree test R² %.3f < 0.5", rep.Metrics.R2)
	}
	in := mustRun(t, dir, "inspect", "--model", "tree.rfm", "--top-features", "3", "--json")
	var ij inspectTreeJSON
	if err := json.Unmarshal([]byte(in.stdout), &ij); err != nil {
		t.Fatalf("inspect --json: %v\n%s", err, in.stdout)
	}
	if len(ij.Tree.Leaves) != 4 || ij.Tree.Depth != 2 || len(ij.TopFeatures) != 3 {
		t.Fatalf("inspect: %+v", ij)
	}
	relevant := map[string]bool{"x0": true, "x1": true, "x5": true}
	for _, f := range ij.TopFeatures[:2] {
		if !relevant[f.Name] {
			t.Errorf("global ranking puts %s in the top 2: %+v", f.Name, ij.TopFeatures)
		}
	}
	txt := mustRun(t, dir, "inspect", "tree.rfm")
	if !strings.Contains(txt.stdout, "features ranked over the leaves") || !strings.Contains(txt.stdout, "leaf  rows  round") {
		t.Errorf("inspect text:\n%s", txt.stdout)
	}

	// auto: 3000 rows need a 72 MB kernel matrix in float64; a 60 MB limit
	// sends them to a tree of 500-row leaves (about 20 MB each).
	mustRun(t, dir, "synth", "--task", "lowrank", "--n", "3000", "--d", "8", "--seed", "5", "--out", "train3000.csv")
	auto := mustRun(t, dir, "fit", "--data", "train3000.csv", "--target", "y", "--memory-limit", "60M", "--iters", "0", "--leaf-size", "500", "--out", "auto.rfm")
	if !strings.Contains(auto.stdout, "solver      tree: the exact solve does not fit") {
		t.Errorf("auto with a small memory limit:\n%s", auto.stdout)
	}
	exact := mustRun(t, dir, "fit", "--data", "test.csv", "--target", "y", "--iters", "0", "--out", "exact.rfm", "--json")
	if !strings.Contains(exact.stdout, `"solver": "exact"`) {
		t.Errorf("auto on 300 rows did not fit exactly:\n%s", exact.stdout)
	}

	cv := mustRun(t, dir, "cv", "--data", "train.csv", "--target", "y", "--solver", "tree", "--leaf-size", "400", "--iters", "0", "--folds", "2", "--json")
	if strings.Count(cv.stdout, `"leaves": 2`) != 2 { // 750 training rows a fold, leaves of ≤ 400
		t.Errorf("cv with a tree:\n%s", cv.stdout)
	}

	// Tree options are refused with the exact solver, and RFM-T with a tree.
	if r := rfmCmd(t, dir, "fit", "--data", "train.csv", "--target", "y", "--solver", "exact", "--leaf-size", "100"); r.code != 2 || !strings.Contains(r.stderr, "--leaf-size applies to --solver tree or auto only") {
		t.Errorf("--leaf-size with --solver exact: exit %d, %s", r.code, r.stderr)
	}
	if r := rfmCmd(t, dir, "fit", "--data", "train.csv", "--target", "y", "--solver", "tree", "--rfm-t"); r.code != 2 || !strings.Contains(r.stderr, "--rfm-t does not apply to a tree") {
		t.Errorf("--rfm-t with a tree: exit %d, %s", r.code, r.stderr)
	}
}

// rfm bench scale on two small synthetic sizes: every method runs in a
// child process, is scored, and the table, summary and curves are written;
// a rerun reuses results.tsv.
func TestBenchScaleSmoke(t *testing.T) {
	dir := t.TempDir()
	args := []string{"bench", "scale", "--sets", "synth", "--sizes", "600,1500", "--quick", "--exact-rows", "1000", "--out", "out"}
	r := mustRun(t, dir, args...)
	for _, want := range []string{"synth-600", "synth-1500", "exact", "nystrom", "tree", "mse"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("bench scale output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "failed") {
		t.Fatalf("a run failed:\n%s", r.stdout)
	}
	tsv := readFile(t, filepath.Join(dir, "out", "results.tsv"))
	if rows := strings.Count(tsv, "\n"); rows != 7 { // header + 2 sizes × 3 methods
		t.Fatalf("results.tsv has %d lines:\n%s", rows, tsv)
	}
	for _, f := range []string{"summary.md", "summary.json", "scale_time.png", "scale_score.png"} {
		readFile(t, filepath.Join(dir, "out", f))
	}
	again := mustRun(t, dir, args...)
	if again.stderr != "" {
		t.Errorf("the rerun recomputed runs instead of reusing results.tsv:\n%s", again.stderr)
	}
}
