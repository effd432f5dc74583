package memory

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rfmkit/rfm/nn"
)

// An Experiment on three 2-D points trains to its loss target, verifies
// every example, recovers from random starts, counts the basins and writes
// summary.json, basins.png and the checkpoint into Out; a sweep writes a
// cell per width × depth × mode and table.json.
func TestExperimentRunAndSweep(t *testing.T) {
	set, err := NewSet([][]float64{{0.5, 0.5}, {-0.5, 0.3}, {0.1, -0.6}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	data := &Data{Set: set, Name: "three points"}
	out := t.TempDir()
	cfg := nn.Config{Widths: []int{48, 48, 48}, Activation: nn.Activation("cosid"), Bias: true, Init: nn.InitScheme("pytorch"),
		Optimizer: nn.Optimizer("adam"), LR: 1e-3, Alpha: 0.99, Seed: 1}
	var lines int
	x := &Experiment{Mode: "autoencode", Network: cfg, Budget: nn.Budget{Epochs: 20000, LossTarget: 1e-9, CheckpointEvery: 1000},
		PowerIters: 200, Dense: true, Seed: 1, Recoveries: []Recovery{{Name: "random-uniform", Kind: Random, Count: 20, Sigma: 1}},
		Tol: 1e-8, MaxSteps: 300, Grid: 10, Arrows: 5, Margin: 0.3, Out: out, Log: func(string, ...any) { lines++ }}
	res, err := x.Run(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Training.Reached || len(res.Verified) != 3 || res.Basins == nil || res.Basins.Grid != 10 || res.Recovery["random-uniform"].Starts != 20 {
		t.Fatalf("result: %+v", res)
	}
	if res.Ckpt != filepath.Join(out, "memory.ckpt") || res.TopRadius() <= 0 || lines < 3 {
		t.Errorf("checkpoint %q, top radius %g, %d log lines", res.Ckpt, res.TopRadius(), lines)
	}
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(raw, &back); err != nil || back.Stored != res.Stored || back.Examples != 3 {
		t.Fatalf("summary.json: %v, %+v", err, back)
	}
	for _, f := range []string{"basins.png", "memory.ckpt"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}

	sweep := *x
	sweep.Out = t.TempDir()
	sweep.Budget = nn.Budget{Epochs: 5}
	var modes []string
	cells, err := sweep.Sweep(context.Background(), []int{8, 16}, []int{1}, 3, func(mode string) (*Data, error) {
		modes = append(modes, mode)
		return data, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 4 || cells[1].Mode != "sequence" || cells[2].Width != 16 || cells[3].Depth != 1 || !slices.Equal(modes, []string{"autoencode", "sequence", "autoencode", "sequence"}) {
		t.Fatalf("cells %+v, modes %v", cells, modes)
	}
	for _, f := range []string{"table.json", "table-autoencode.png", "table-sequence.png", "sequence-w16-d1.ckpt"} {
		if _, err := os.Stat(filepath.Join(sweep.Out, f)); err != nil {
			t.Error(err)
		}
	}
}

// MNISTClasses gives rows classes in turn, or one list per sequence from
// the digit patterns, and refuses patterns that are not digits.
func TestMNISTClasses(t *testing.T) {
	c, err := MNISTClasses(false, 12, "", 0)
	if err != nil || len(c) != 1 || len(c[0]) != 12 || c[0][10] != 0 || c[0][11] != 1 {
		t.Fatalf("autoencode: %v, %v", c, err)
	}
	c, err = MNISTClasses(true, 0, "012,98", 3)
	if err != nil || len(c) != 3 || !slices.Equal(c[0], []int{0, 1, 2}) || !slices.Equal(c[1], []int{9, 8}) || !slices.Equal(c[2], c[0]) {
		t.Fatalf("sequence: %v, %v", c, err)
	}
	for _, bad := range []struct {
		seq   bool
		rows  int
		pats  string
		count int
	}{{false, 0, "", 0}, {true, 0, "01,", 0}, {true, 0, "0a", 0}, {true, 0, "01", -1}} {
		if _, err := MNISTClasses(bad.seq, bad.rows, bad.pats, bad.count); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
