package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

// rfm-beam predict's --out appears whole or not at all: a second run into
// it is refused unless --overwrite, which leaves no stale part of the
// first; a failed run leaves the folder as it was and no temporary
// folder beside it; no run leaves a file in the temporary folder.
func TestPredictOutFolder(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	glob := writeShards(t, dir, []int{300, 200, 100})
	model := filepath.Join(dir, "m.rfm")
	if err := runFit(t, testSpec(), glob, model); err != nil {
		t.Fatal(err)
	}
	for _, name := range testutil.DirNames(t, tmp) { // runFit's, by beamx.Run directly
		os.RemoveAll(filepath.Join(tmp, name))
	}
	ctx := context.Background()
	outs := t.TempDir()
	out := filepath.Join(outs, "pred")
	if err := predictBeam(ctx, model, glob, out, false, false, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := testutil.DirNames(t, out); !slices.Equal(got, []string{"part-00000.csv", "part-00001.csv", "part-00002.csv"}) {
		t.Fatalf("parts: %v", got)
	}
	err := predictBeam(ctx, model, glob, out, false, false, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is not empty") || !strings.Contains(err.Error(), "--overwrite") {
		t.Errorf("a second run into a full --out: %v", err)
	}
	one := filepath.Join(dir, "part0.csv")
	if err := predictBeam(ctx, model, one, out, false, true, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := testutil.DirNames(t, out); !slices.Equal(got, []string{"part-00000.csv"}) {
		t.Errorf("after --overwrite with one input: %v (stale parts)", got)
	}
	before := readAll(t, filepath.Join(out, "part-00000.csv"))
	// A second input with other columns fails the run.
	bad := filepath.Join(dir, "zbad.csv")
	os.WriteFile(bad, []byte("q,r\n1,2\n"), 0o644)
	if err := predictBeam(ctx, model, one+","+bad, out, false, true, io.Discard); err == nil {
		t.Fatal("a run with a bad input succeeded")
	}
	if got := testutil.DirNames(t, out); !slices.Equal(got, []string{"part-00000.csv"}) || readAll(t, filepath.Join(out, "part-00000.csv")) != before {
		t.Errorf("a failed run changed --out: %v", got)
	}
	if got := testutil.DirNames(t, outs); !slices.Equal(got, []string{"pred"}) {
		t.Errorf("beside --out after the runs: %v", got)
	}
	fresh := filepath.Join(outs, "fresh")
	if err := predictBeam(ctx, model, one+","+bad, fresh, false, false, io.Discard); err == nil {
		t.Fatal("a run with a bad input succeeded")
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a failed run created --out: %v", err)
	}
	if got := testutil.DirNames(t, tmp); len(got) != 0 {
		t.Errorf("the runs left in the temporary folder: %v", got)
	}
}

func readAll(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A named pipe matched by --data, or given as --model, is refused at
// once (opening it would wait, beyond Ctrl-C, for a writer).
func TestFIFOInputsRefused(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, []int{50})
	fifo := testutil.FIFO(t, dir, "part9.csv")
	ctx := context.Background()
	if _, err := expand(ctx, glob); err == nil || !strings.Contains(err.Error(), fifo+" is not a regular file") {
		t.Errorf("a glob matching a FIFO: %v", err)
	}
	err := predictBeam(ctx, fifo, filepath.Join(dir, "part0.csv*"), filepath.Join(dir, "out"), false, false, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is a named pipe (FIFO)") {
		t.Errorf("a FIFO model: %v", err)
	}
}
