package rfm

import (
	"context"
	"errors"
	"github.com/rfmkit/rfm/kernel"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/solve"
)

// The case: 3 rows × 100 000 features. A full M needs several
// d×d matrices of 80 GB; the plan refuses with that figure and suggests a
// diagonal M, which fits in 1 GiB.
func TestPlanFitWideFullM(t *testing.T) {
	cfg := DefaultConfig()
	s := FitShape{N: 3, D: 100_000, Outputs: 2, Threads: 2}
	err := PlanFit(s, cfg).Check(1 << 30)
	if !errors.Is(err, ErrTooLarge) || !errors.Is(err, solve.ErrTooLarge) {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
	for _, want := range []string{"full M for d = 100000", "6 × 74.5 GiB", "1.0 GiB allowed", "--diag"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	cfg.Diag = true
	p := PlanFit(s, cfg)
	if err := p.Check(1 << 30); err != nil {
		t.Fatalf("diagonal M refused: %v", err)
	}
	// The n×d copies, the AGOP block of 3 points and the threads' tiles:
	// tens of MB.
	if tot := p.Total(); tot < 10<<20 || tot > 100<<20 {
		t.Errorf("diagonal plan totals %d bytes; want between 10 and 100 MiB", tot)
	}
}

// Fit refuses before allocating: the call returns at once with the plan's
// error, for a d that would need 447 GiB.
func TestFitRefusesWideFullM(t *testing.T) {
	n, d := 3, 100_000
	x := make([]float64, n*d)
	for i := range x {
		x[i] = float64(i%7) / 7
	}
	cfg := DefaultConfig()
	cfg.MemoryLimit = 1 << 30
	_, err := Fit(context.Background(), cfg, &Dataset{X: x, N: n, D: d, Labels: []int{0, 1, 0}}, nil, nil)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "full M") {
		t.Fatalf("error %v, want the plan's refusal of the full M", err)
	}
}

// The kernel matrix still dominates for many rows, and the hint says float32.
func TestPlanFitManyRows(t *testing.T) {
	cfg := DefaultConfig()
	err := PlanFit(FitShape{N: 40_000, D: 10, Outputs: 2, Threads: 1}, cfg).Check(4 << 30)
	if err == nil || !strings.Contains(err.Error(), "the 40000×40000 kernel matrix needs 11.9 GiB") || !strings.Contains(err.Error(), "float32") {
		t.Fatalf("error %v, want the kernel matrix named with a float32 hint", err)
	}
	// Refit on training + validation rows: the solve is on all rows.
	p := PlanFit(FitShape{N: 1000, Valid: 1000, D: 10, Outputs: 2, Threads: 1}, cfg)
	if !hasItem(p, "the 2000×2000 kernel matrix") {
		t.Errorf("plan with a validation set: %+v", p.Items)
	}
}

// Threads multiply the per-thread blocks (kernel tiles, n×C accumulators).
func TestPlanFitThreads(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Diag = true
	s := FitShape{N: 100, D: 10, Outputs: 2, Threads: 1}
	one := PlanFit(s, cfg).Total()
	s.Threads = 10_000
	err := PlanFit(s, cfg).Check(1 << 30)
	if err == nil || !strings.Contains(err.Error(), "per-thread blocks (10000 threads)") {
		t.Fatalf("error %v, want the per-thread blocks named", err)
	}
	if many := PlanFit(s, cfg).Total(); many < one+9999*(8<<20) {
		t.Errorf("10 000 threads plan %d bytes, one thread %d", many, one)
	}
}

// Data already held by the caller counts against an explicit limit only.
func TestPlanHeldData(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Iters = 0
	s := FitShape{N: 10_000, D: 1000, Outputs: 2, Threads: 1, DataHeld: true}
	p := PlanFit(s, cfg)
	var held uint64
	for _, it := range p.Items {
		if it.Held {
			held += it.Total()
		}
	}
	if held != 10_000*1000*8 {
		t.Fatalf("held data %d bytes, want %d", held, 10_000*1000*8)
	}
	if err := p.Check(p.Total() - 1); err == nil {
		t.Error("an explicit limit one byte short was accepted")
	}
	if err := p.Check(p.Total()); err != nil {
		t.Errorf("an explicit limit of exactly the total was refused: %v", err)
	}
}

// Sizes that overflow uint64 saturate instead of wrapping to a small number.
func TestPlanSaturates(t *testing.T) {
	cfg := DefaultConfig()
	p := PlanFit(FitShape{N: 1 << 40, D: 1 << 40, Outputs: 2, Threads: 1}, cfg)
	if p.Total() != ^uint64(0) {
		t.Errorf("total %d, want saturation", p.Total())
	}
	if err := p.Check(1 << 40); err == nil {
		t.Error("an absurd plan was accepted")
	}
}

func TestPlanPredict(t *testing.T) {
	m := &Model{Header: Header{D: 100_000, Outputs: 2}, N: 3, M: kernel.FeatureMatrix{Form: kernel.Diagonal}}
	p := PlanPredict(m, 1_000_000, 4096, 1)
	err := p.Check(1 << 30)
	if err == nil || !strings.Contains(err.Error(), "the 1000000 query rows × 100000 features needs 745.1 GiB") {
		t.Fatalf("error %v, want the query rows named", err)
	}
	if !hasItem(p, "mapped copies of 4096 query rows") {
		t.Errorf("chunked plan: %+v", p.Items)
	}
}

func hasItem(p *MemoryPlan, what string) bool {
	for _, it := range p.Items {
		if strings.HasPrefix(it.What, what) {
			return true
		}
	}
	return false
}
