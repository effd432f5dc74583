package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/tree"
)

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
