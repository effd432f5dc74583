package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/memory"
)

// rfm memory on a tiny 2-D set: trains to the target, verifies every
// example (dense eigenvalues beside the power iteration), recovers, draws
// the basins, writes summary.json; --resume continues the checkpoint.
func TestMemoryCommand(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "pts.csv"), "x,y\n0.5,0.5\n-0.5,0.3\n0.1,-0.6\n")
	common := []string{"--data", "pts.csv", "--width", "48", "--depth", "3", "--lr", "1e-3", "--random", "20", "--arrows", "5", "--max-steps", "300"}
	r := rfmCmd(t, dir, append([]string{"memory"}, append(common, "--loss-target", "1e-9", "--epochs", "20000", "--grid", "10", "--out", "out")...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res memory.Result
	raw, err := os.ReadFile(filepath.Join(dir, "out", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Training.Reached || len(res.Verified) != 3 || res.Basins == nil || res.Recovery["random-uniform"].Starts != 20 {
		t.Fatalf("summary: %+v", res)
	}
	for _, ex := range res.Verified {
		if ex.Dense == nil || ex.Radius <= 0 {
			t.Errorf("example %d: %+v", ex.Index, ex)
		}
	}
	for _, f := range []string{"basins.png", "memory.ckpt"} {
		if _, err := os.Stat(filepath.Join(dir, "out", f)); err != nil {
			t.Error(err)
		}
	}
	r = rfmCmd(t, dir, append([]string{"memory"}, append(common, "--resume", "out/memory.ckpt", "--checkpoint", "again.ckpt", "--grid", "0", "--json")...)...)
	if r.code != 0 || !strings.Contains(r.stdout, `"resumed_from": "out/memory.ckpt"`) {
		t.Fatalf("resume: exit %d: %s %s", r.code, r.stderr, r.stdout)
	}
}

// Bad input is refused with a message that says what and where; a loss
// target not reached is a warning with the checkpoint saved, an error only
// with --require-target.
func TestMemoryBadInput(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gap.csv"), "t,x,y\n0,1,2\n1,2,3\n3,4,5\n")
	writeFile(t, filepath.Join(dir, "rep.csv"), "t,x,y\n0,1,2\n1,2,3\n1,4,5\n")
	writeFile(t, filepath.Join(dir, "ragged.csv"), "x,y\n1,2\n3\n4,5\n")
	writeFile(t, filepath.Join(dir, "ok.csv"), "t,x,y\n0,1,2\n1,2,3\n2,4,5\n")
	small := []string{"--width", "8", "--random", "2", "--grid", "0"}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--data", "gap.csv", "--mode", "sequence", "--order", "t"}, 1, "a gap in the sequence"},
		{[]string{"--data", "rep.csv", "--mode", "sequence", "--order", "t"}, 1, "an order value repeats"},
		{[]string{"--data", "ok.csv", "--mode", "sequence"}, 2, "needs --order"},
		{[]string{"--data", "ragged.csv"}, 1, "line 3: 1 fields, but the header has 2"},
		{[]string{"--data", "ok.csv", "--act", "gelu"}, 2, `unknown activation "gelu"`},
		{[]string{"--data", "ok.csv", "--depth", "33"}, 2, "1 to 32 hidden layers"},
		{[]string{"--data", "ok.csv", "--epochs", "3", "--loss-target", "1e-30", "--require-target", "--checkpoint", "req.ckpt"}, 1, "loss target 1e-30 not reached"},
	} {
		r := rfmCmd(t, dir, append(append([]string{"memory"}, small...), c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "req.ckpt")); err != nil {
		t.Errorf("--require-target: no checkpoint saved: %v", err)
	}
	r := rfmCmd(t, dir, append(append([]string{"memory"}, small...), "--data", "ok.csv", "--epochs", "3", "--loss-target", "1e-30", "--checkpoint", "warn.ckpt")...)
	if r.code != 0 || !strings.Contains(r.stderr, "warning: loss target 1e-30 not reached") {
		t.Errorf("target not reached without --require-target: exit %d, %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "warn.ckpt")); err != nil {
		t.Errorf("no checkpoint saved: %v", err)
	}
}
