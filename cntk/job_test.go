package cntk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Job.Run chooses among the candidates on held-out observed pixels, says
// so in the report, and fills the report's scores; a bad mask and a bad
// bandwidth are refused.
func TestJobRun(t *testing.T) {
	img := &Image{H: 16, W: 16, C: 1, Pix: make([]float64, 256)}
	for i := range img.Pix {
		img.Pix[i] = 0.2 + 0.5*float64(i%16)/16
	}
	observed, err := RandomMask(16, 16, 0.3, 1)
	if err != nil {
		t.Fatal(err)
	}
	j := Job{Name: "x", Arch: Arch{S: 1, Filter: 3}, Prior: Prior{Kind: PriorUniform, High: 0.1},
		Solve:      Options{Tol: 1e-6, MaxIter: 500, ExactMax: 4000},
		Candidates: []Candidate{{S: 1, Filter: 3}, {S: 2, Filter: 3}},
		Select:     SelectOptions{Holdout: 0.2, Crop: 16, Crops: 1, Seed: 1}}
	var stages []string
	j.Progress = func(_ float64, s string) { stages = append(stages, s) }
	res, r, err := j.Run(context.Background(), img, observed)
	if err != nil {
		t.Fatal(err)
	}
	if res.H != 16 || res.W != 16 || len(r.Selection) != 2 || (r.S != 1 && r.S != 2) || r.Kernel != "cntk" || r.Image != "x" {
		t.Errorf("result %d×%d, report %+v", res.W, res.H, r)
	}
	if r.PSNRMissing < 20 || r.TotalSeconds <= 0 || r.Tol != 1e-6 || len(stages) == 0 || stages[0] != "select" {
		t.Errorf("PSNR %v, seconds %v, tol %v, stages %v", r.PSNRMissing, r.TotalSeconds, r.Tol, stages)
	}
	if _, _, err := j.Run(context.Background(), img, observed[:10]); err == nil {
		t.Error("a mask of the wrong size was accepted")
	}
	j.Kernel, j.Bandwidth = "laplace", -1
	var be *BandwidthError
	if _, _, err := j.Run(context.Background(), img, observed); !errors.As(err, &be) {
		t.Errorf("bandwidth -1: %v, want a BandwidthError", err)
	}
	j.Kernel = "rbf"
	if _, _, err := j.Run(context.Background(), img, observed); err == nil || !strings.Contains(err.Error(), `kernel "rbf"`) {
		t.Errorf("kernel rbf: %v", err)
	}
}

// HeatmapFigures draws one grid per prior, and the kernel rows with kstem.
func TestHeatmapFigures(t *testing.T) {
	dir := t.TempDir()
	stem, kstem := filepath.Join(dir, "h"), filepath.Join(dir, "k")
	var skipped []PriorKind
	err := HeatmapFigures(context.Background(), Arch{S: 1, Filter: 3}, Prior{High: 0.1}, 8, 8, nil, 3, 4, 3, []int{1, 2}, Options{}, stem, kstem,
		func(k PriorKind) { skipped = append(skipped, k) })
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"uniform", "onehot", "identity", "meshgrid"} {
		for _, s := range []string{stem, kstem} {
			if _, err := os.Stat(s + "-" + k + ".png"); err != nil {
				t.Error(err)
			}
		}
	}
	if len(skipped) != 0 {
		t.Errorf("skipped %v on an 8×8 grid", skipped)
	}
}

// The summary names the solve, the choice and the scores.
func TestRunReportSummary(t *testing.T) {
	r := RunReport{Width: 4, Height: 3, Kernel: "cntk", KernelBytes: 2048, KernelSeconds: 0.5, Observed: 7, Iterations: 12, Residual: 1e-6,
		Precond: "block", Tol: 1e-5, SolveSeconds: 12, PSNRMissing: 30.123, S: 2, Filter: 3, Ridge: 0.1}
	got := r.Summary(true)
	for _, want := range []string{"inpainted 4×3 with cntk (chosen on held-out observed pixels: s = 2, filter 3, ridge 0.1)", "kernel 2.0 KiB in 0.50s",
		"by CG (block preconditioner) 12 iterations, residual 1e-06 (not converged to --tol 1e-05", "in 12.0s", "30.12 dB"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	r.Exact = true
	if got := r.Summary(false); !strings.Contains(got, "by Cholesky in") || strings.Contains(got, "chosen") {
		t.Errorf("%q", got)
	}
}
