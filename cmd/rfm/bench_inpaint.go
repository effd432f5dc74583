package main

import (
	"fmt"
	"os"
	"path/filepath"

	benchinpaint "github.com/rfmkit/rfm/bench/inpaint"
	"github.com/rfmkit/rfm/internal/cli"
)

// cmdBenchInpaint runs 'rfm bench inpaint' (package bench/inpaint).
func cmdBenchInpaint(e *env, args []string) error {
	var o benchinpaint.Options
	var quiet bool
	f := helpFlagSet("bench inpaint", "rfm bench inpaint [--images DIR] [--out DIR] [flags]")
	f.Section("Benchmark")
	f.String(&o.Images, "images", "../shared/data/images", "folder `DIR` of the PNG images")
	f.String(&o.Tasks, "tasks", "holes,random50,random80", "comma list of `TASKS`: holes, random50, random80")
	f.String(&o.Methods, "methods", "cntk,laplace", "comma list of `METHODS`: cntk, laplace")
	f.Uint64(&o.Seed, "seed", 1, "`SEED` of the masks and of the selection's crops")
	f.Int(&o.SHoles, "s-holes", 4, "`S` of the CNTK on the holes with --no-select, and the least s tried there (a hole of 16 px needs s ≥ 4)")
	f.Int(&o.SRandom, "s-random", 3, "`S` of the CNTK on the random tasks with --no-select")
	f.String(&o.SelectS, "select-s", "3,4,5", "s values `LIST` tried (those below --s-holes are dropped on the holes)")
	f.String(&o.SelectFilter, "select-filter", "3,5", "filter sizes `LIST` tried")
	f.String(&o.SelectRidge, "select-ridge", "0", "ridges `LIST` tried")
	f.Int(&o.SelectCrops, "select-crops", 2, "`N` crops of 128 px the candidates are scored on (rfm inpaint --select-crops)")
	f.Bool(&o.NoSelect, "no-select", false, "no selection: the fixed s of --s-holes and --s-random")
	f.Float(&o.Tol, "tol", 1e-5, "CG's relative residual `T` (rfm inpaint --tol)")
	f.Float(&o.Bandwidth, "bandwidth", 2, "σ in `PX` of the Laplace kernel")
	f.Section("Files")
	f.String(&o.Out, "out", "results/inpainting", "results `DIR`: runs.csv, summary.md, grid_TASK.png")
	f.String(&o.Work, "work", filepath.Join(os.TempDir(), "rfm-bench-inpaint"), "`DIR` of the per-run images, masks and reports")
	f.String(&o.Reference, "reference", "", "the reference `CSV` of scripts/inpaint_reference.py (default OUT/reference.csv, used if present)")
	f.Bool(&o.Force, "force", false, "redo runs whose report is already in --work")
	f.Bool(&o.Collect, "collect", false, "run nothing: make the tables from the runs already in --work (the others are listed as not run)")
	f.Bool(&quiet, "quiet", false, "no line per run on stderr")
	if err := f.ParseFlags(args, e.stdout); err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the rfm binary to run: %w", err)
	}
	o.Exe, o.Stderr = exe, e.stderr
	o.Log = cli.Logger(e.stderr, "rfm bench inpaint: ", false)
	if !quiet {
		o.Progress = func(r benchinpaint.Run) {
			fmt.Fprintf(e.stderr, "rfm bench inpaint: %s %s %s: PSNR %.2f dB, SSIM %.4f, %.1f s\n", r.Image, r.Task, r.Method, r.PSNR, r.SSIM, r.Seconds)
		}
	}
	res, err := benchinpaint.Bench(e.ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", res.Summary)
	return nil
}
