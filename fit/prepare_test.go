package fit

import (
	"testing"

	"github.com/rfmkit/rfm"
)

// Prepare resolves auto, plans an RFM's memory and leaves a tree's to
// the tree.
func TestPrepare(t *testing.T) {
	cfg := rfm.DefaultConfig()
	cfg.Solver = rfm.SolverAuto
	small := rfm.FitShape{N: 300, D: 5, Outputs: 1}
	c, why, err := Prepare(cfg, small)
	if err != nil || c.Solver != rfm.SolverExact || why == "" {
		t.Fatalf("small: %q, %q, %v", c.Solver, why, err)
	}
	cfg.MemoryLimit = 1 << 10
	if c, _, err := Prepare(cfg, small); err != nil || c.Solver != rfm.SolverTree {
		t.Errorf("auto beyond the memory limit: %q, %v; want the tree", c.Solver, err)
	}
	cfg.Solver = rfm.SolverExact
	if _, _, err := Prepare(cfg, small); err == nil {
		t.Error("an exact fit beyond the memory limit passed")
	}
	cfg.Solver = rfm.SolverTree
	if c, _, err := Prepare(cfg, small); err != nil || c.Solver != rfm.SolverTree {
		t.Errorf("tree: %q, %v", c.Solver, err)
	}
}
