package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rfmkit/rfm/cntk"
	"github.com/rfmkit/rfm/internal/atomicfile"
)

// inpaintTasks are the benchmark's tasks: the mask flags of rfm inpaint and
// the hold-out pattern of the selection.
var inpaintTasks = []inpaintTask{
	{"holes", "large holes (12 × 16×16 px)", []string{"--holes", "12", "--hole-size", "16"}},
	{"random50", "50% random pixels missing", []string{"--missing", "0.5"}},
	{"random80", "80% random pixels missing", []string{"--missing", "0.8"}},
}

type inpaintTask struct {
	name, desc string
	mask       []string
}

// benchInpaintOptions holds rfm bench inpaint's flags.
type benchInpaintOptions struct {
	images, out, work, tasks, methods, reference string
	sHoles, sRandom                              int
	selS, selFilter, selRidge                    string
	selCrops                                     int
	tol                                          float64
	bandwidth                                    float64
	seed                                         uint64
	force, noSelect, quiet, collect              bool
}

// inpaintRun is one row of runs.csv.
type inpaintRun struct {
	Image, Task, Method     string
	PSNR, PSNRMissing, SSIM float64
	Seconds, PeakMB         float64
	S, Filter               int
	Ridge                   float64
	Iterations              int
	Residual                float64
	Converged               string
}

func cmdBenchInpaint(e *env, args []string) error {
	var o benchInpaintOptions
	f := newFlagSet("bench inpaint", "rfm bench inpaint [--images DIR] [--out DIR] [flags]",
		`The inpainting benchmark of issue 43: every PNG of --images, three tasks
(large holes: 12 squares of 16 px; 50% and 80% of the pixels missing at
random, seeded), the CNTK against a Laplace kernel on pixel coordinates on
the same mask. Each run is a child 'rfm inpaint' (its time and peak RSS are
its own) whose images and report go to --work; a rerun skips the runs whose
report is there (--force redoes them). PSNR (whole image and missing pixels)
and SSIM (scikit-image's defaults, computed here) of every result.

The CNTK's s, filter and ridge are chosen per image and task on held-out
observed pixels (rfm inpaint --select-*), never on the hidden ones; with
--no-select it runs at --s-holes / --s-random, filter 3, no ridge.

The reference, scikit-image's biharmonic inpainting, is not part of rfm: run
scripts/inpaint_reference.py bench on the masks of --work; its reference.csv
(in --out, or --reference) is read back and its rows join the tables.

Writes to --out: runs.csv (one row per image, task and method), summary.md
(means per task and method, then every run) and grid_TASK.png (original,
masked in magenta, each method, for up to three images, halved).`,
		`rfm bench inpaint --images ../shared/data/images --out results/inpainting
/usr/bin/python3 scripts/inpaint_reference.py bench ../shared/data/images /tmp/rfm-bench-inpaint results/inpainting
rfm bench inpaint --out results/inpainting    # again: joins the reference`)
	f.Section("Benchmark")
	f.String(&o.images, "images", "../shared/data/images", "folder `DIR` of the PNG images")
	f.String(&o.tasks, "tasks", "holes,random50,random80", "comma list of `TASKS`: holes, random50, random80")
	f.String(&o.methods, "methods", "cntk,laplace", "comma list of `METHODS`: cntk, laplace")
	f.Uint64(&o.seed, "seed", 1, "`SEED` of the masks and of the selection's crops")
	f.Int(&o.sHoles, "s-holes", 4, "`S` of the CNTK on the holes with --no-select, and the least s tried there (a hole of 16 px needs s ≥ 4)")
	f.Int(&o.sRandom, "s-random", 3, "`S` of the CNTK on the random tasks with --no-select")
	f.String(&o.selS, "select-s", "3,4,5", "s values `LIST` tried (those below --s-holes are dropped on the holes)")
	f.String(&o.selFilter, "select-filter", "3,5", "filter sizes `LIST` tried")
	f.String(&o.selRidge, "select-ridge", "0", "ridges `LIST` tried")
	f.Int(&o.selCrops, "select-crops", 2, "`N` crops of 128 px the candidates are scored on (rfm inpaint --select-crops)")
	f.Bool(&o.noSelect, "no-select", false, "no selection: the fixed s of --s-holes and --s-random")
	f.Float(&o.tol, "tol", 1e-5, "CG's relative residual `T` (rfm inpaint --tol)")
	f.Float(&o.bandwidth, "bandwidth", 2, "σ in `PX` of the Laplace kernel")
	f.Section("Files")
	f.String(&o.out, "out", "results/inpainting", "results `DIR`: runs.csv, summary.md, grid_TASK.png")
	f.String(&o.work, "work", filepath.Join(os.TempDir(), "rfm-bench-inpaint"), "`DIR` of the per-run images, masks and reports")
	f.String(&o.reference, "reference", "", "the reference `CSV` of scripts/inpaint_reference.py (default OUT/reference.csv, used if present)")
	f.Bool(&o.force, "force", false, "redo runs whose report is already in --work")
	f.Bool(&o.collect, "collect", false, "run nothing: make the tables from the runs already in --work (the others are listed as not run)")
	f.Bool(&o.quiet, "quiet", false, "no line per run on stderr")
	pos, err := f.Parse(args, e.stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	tasks, methods, err := o.check()
	if err != nil {
		return err
	}
	images, err := listPNGs(o.images)
	if err != nil {
		return err
	}
	ref := o.reference
	if ref == "" {
		ref = filepath.Join(o.out, "reference.csv")
	}
	refRuns, err := readInpaintReference(ref)
	switch {
	case errors.Is(err, os.ErrNotExist) && o.reference == "":
		fmt.Fprintf(e.stderr, "rfm bench inpaint: no %s: the tables have no biharmonic column (run scripts/inpaint_reference.py bench, then this again)\n", ref)
	case err != nil:
		return fmt.Errorf("--reference %s: %w", ref, err)
	}
	haveRef := err == nil
	for _, d := range []string{o.out, o.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cannot create %s: %w", d, unwrapPath(err))
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find the rfm binary to run: %w", err)
	}
	var runs []inpaintRun
	var missing []string // with --collect: the runs not in --work
	for _, name := range images {
		for _, t := range tasks {
			for _, m := range methods {
				if o.collect && !o.reusable(filepath.Join(o.work, name+"-"+t+"-"+m+".json"), m) {
					missing = append(missing, name+" "+t+" "+m)
					continue
				}
				r, err := o.runOne(e, exe, name, t, m)
				if err != nil {
					return fmt.Errorf("%s, %s, %s: %w", name, t, m, err)
				}
				runs = append(runs, r)
				if !o.quiet {
					fmt.Fprintf(e.stderr, "rfm bench inpaint: %s %s %s: PSNR %.2f dB, SSIM %.4f, %.1f s\n", name, t, m, r.PSNR, r.SSIM, r.Seconds)
				}
			}
		}
	}
	for _, r := range refRuns {
		if slices.Contains(images, r.Image) && slices.Contains(tasks, r.Task) {
			runs = append(runs, r)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(e.stderr, "rfm bench inpaint: --collect: %d runs not in %s, left out: %s\n", len(missing), o.work, strings.Join(missing, ", "))
	}
	if err := writeInpaintResults(e.ctx, o.out, runs, haveRef, missing); err != nil {
		return err
	}
	for _, t := range tasks {
		if o.collect && !slices.ContainsFunc(runs, func(r inpaintRun) bool { return r.Task == t && r.Method != "biharmonic" }) {
			continue
		}
		path := filepath.Join(o.out, "grid_"+t+".png")
		if err := inpaintGrid(e.ctx, path, o.images, o.work, images, t, append(slices.Clone(methods), "biharmonic")); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", filepath.Join(o.out, "summary.md"))
	return nil
}

// check validates the flags and returns the tasks and methods.
func (o *benchInpaintOptions) check() (tasks, methods []string, err error) {
	for _, t := range strings.Split(o.tasks, ",") {
		t = strings.TrimSpace(t)
		if !slices.ContainsFunc(inpaintTasks, func(x inpaintTask) bool { return x.name == t }) {
			return nil, nil, usagef("--tasks: unknown task %q; the tasks are holes, random50, random80", t)
		}
		tasks = append(tasks, t)
	}
	for _, m := range strings.Split(o.methods, ",") {
		m = strings.TrimSpace(m)
		if m != "cntk" && m != "laplace" {
			return nil, nil, usagef("--methods: unknown method %q; want cntk, laplace (biharmonic is the reference script's)", m)
		}
		methods = append(methods, m)
	}
	switch {
	case o.sHoles < 0 || o.sHoles > cntk.MaxS || o.sRandom < 0 || o.sRandom > cntk.MaxS:
		return nil, nil, usagef("--s-holes %d, --s-random %d: want 0..%d", o.sHoles, o.sRandom, cntk.MaxS)
	case !(o.tol > 0 && o.tol < 1):
		return nil, nil, usagef("--tol %g: want in (0, 1)", o.tol)
	case o.selCrops < 1:
		return nil, nil, usagef("--select-crops %d: want ≥ 1", o.selCrops)
	case !(o.bandwidth > 0):
		return nil, nil, usagef("--bandwidth %g: want > 0", o.bandwidth)
	}
	for _, l := range []struct{ name, v string }{{"select-s", o.selS}, {"select-filter", o.selFilter}, {"select-ridge", o.selRidge}} {
		for _, x := range strings.Split(l.v, ",") {
			if v, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil || v < 0 {
				return nil, nil, usagef("--%s %q: want numbers ≥ 0", l.name, l.v)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(o.images)); err != nil {
		return nil, nil, fmt.Errorf("--images %s: %w", o.images, unwrapPath(err))
	}
	return tasks, methods, nil
}

// listPNGs lists the images of dir by name without .png, sorted.
func listPNGs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--images %s: %w", dir, unwrapPath(err))
	}
	var out []string
	for _, en := range ents {
		if n := en.Name(); !en.IsDir() && strings.HasSuffix(n, ".png") {
			out = append(out, strings.TrimSuffix(n, ".png"))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--images %s: no .png file there", dir)
	}
	slices.Sort(out)
	return out, nil
}

// runOne runs (or, with its report in --work, reads back) one method on one
// image and task and scores it.
func (o *benchInpaintOptions) runOne(e *env, exe, name, task, method string) (inpaintRun, error) {
	img := filepath.Join(o.images, name+".png")
	base := filepath.Join(o.work, name+"-"+task)
	mask := base + "-mask.png"
	out, report := base+"-"+method+".png", base+"-"+method+".json"
	_, errMask := os.Stat(mask)
	if o.force || errMask != nil || !o.reusable(report, method) {
		args := []string{"inpaint", "--image", img, "--out", out, "--report", report, "--tol", fmt.Sprint(o.tol), "--quiet"}
		if method == "cntk" {
			for _, t := range inpaintTasks {
				if t.name == task {
					args = append(args, t.mask...)
				}
			}
			args = append(args, "--seed", strconv.FormatUint(o.seed, 10), "--mask-out", mask)
			s := o.sRandom
			if task == "holes" {
				s = o.sHoles
			}
			args = append(args, "--s", strconv.Itoa(s))
			if !o.noSelect {
				args = append(args, "--select-s", o.selectS(task), "--select-filter", o.selFilter, "--select-ridge", o.selRidge,
					"--select-crops", strconv.Itoa(o.selCrops))
			}
		} else {
			if errMask != nil {
				return inpaintRun{}, fmt.Errorf("no mask %s: run the cntk method first", mask)
			}
			args = append(args, "--mask", mask, "--mask-out", base+"-"+method+"-mask.png", "--kernel", method, "--bandwidth", fmt.Sprint(o.bandwidth))
		}
		cmd := exec.CommandContext(e.ctx, exe, args...)
		cmd.Stderr = e.stderr
		if err := cmd.Run(); err != nil {
			return inpaintRun{}, fmt.Errorf("rfm %s: %w", strings.Join(args, " "), err)
		}
	}
	var rep cntk.RunReport
	data, err := os.ReadFile(report)
	if err != nil {
		return inpaintRun{}, err
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return inpaintRun{}, fmt.Errorf("%s: %w", report, err)
	}
	r := inpaintRun{Image: name, Task: task, Method: method, Seconds: rep.TotalSeconds, PeakMB: float64(rep.PeakRSSBytes) / (1 << 20),
		Iterations: rep.Iterations, Residual: rep.Residual, Converged: strconv.FormatBool(rep.Converged), Ridge: rep.Ridge}
	if method == "cntk" {
		r.S, r.Filter = rep.S, rep.Filter
	}
	if rep.Exact {
		r.Converged = "cholesky"
	}
	r.PSNR, r.PSNRMissing, r.SSIM, err = scoreInpaint(img, mask, out)
	return r, err
}

// reusable reports whether report holds a run of method made with this
// benchmark's solve settings (an older run, or one with another --tol or
// selection, is redone).
func (o *benchInpaintOptions) reusable(report, method string) bool {
	data, err := os.ReadFile(report)
	if err != nil {
		return false
	}
	var rep cntk.RunReport
	if json.Unmarshal(data, &rep) != nil || rep.Kernel != method || rep.Tol != o.tol {
		return false
	}
	return method != "cntk" || (len(rep.Selection) > 0) != o.noSelect
}

// selectS is the list of s tried on the task: on the holes only those
// at least --s-holes.
func (o *benchInpaintOptions) selectS(task string) string {
	if task != "holes" {
		return o.selS
	}
	var keep []string
	for _, v := range strings.Split(o.selS, ",") {
		if n, _ := strconv.Atoi(strings.TrimSpace(v)); n >= o.sHoles {
			keep = append(keep, strings.TrimSpace(v))
		}
	}
	if len(keep) == 0 {
		return strconv.Itoa(o.sHoles)
	}
	return strings.Join(keep, ",")
}

// scoreInpaint reads the image, the mask and a result and returns the PSNR
// over the image and over the missing pixels, and the SSIM.
func scoreInpaint(imgPath, maskPath, resPath string) (psnr, psnrMissing, ssim float64, err error) {
	var ims [3]*cntk.Image
	for i, p := range []string{imgPath, maskPath, resPath} {
		if ims[i], err = cntk.LoadPNG(p); err != nil {
			return 0, 0, 0, err
		}
	}
	if psnr, err = cntk.PSNR(ims[0], ims[2]); err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %w", resPath, err)
	}
	if ssim, err = cntk.SSIM(ims[0], ims[2]); err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %w", resPath, err)
	}
	observed := cntk.MaskFromImage(ims[1])
	if len(observed) != ims[0].H*ims[0].W {
		return 0, 0, 0, fmt.Errorf("%s is not the size of %s", maskPath, imgPath)
	}
	return psnr, cntk.PSNRMissing(ims[0], ims[2], observed), ssim, nil
}

// inpaintCSVHeader is the header of runs.csv and of the reference script's
// reference.csv (which leaves the CNTK's columns empty).
var inpaintCSVHeader = []string{"image", "task", "method", "psnr", "psnr_missing", "ssim", "seconds", "peak_mb", "s", "filter", "ridge", "cg_iterations", "residual", "converged"}

func (r inpaintRun) record() []string {
	g := func(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
	rec := []string{r.Image, r.Task, r.Method, g(r.PSNR, 3), g(r.PSNRMissing, 3), g(r.SSIM, 4), g(r.Seconds, 2), g(r.PeakMB, 1), "", "", "", "", "", r.Converged}
	if r.Method != "biharmonic" {
		rec[10], rec[11], rec[12] = fmt.Sprint(r.Ridge), strconv.Itoa(r.Iterations), strconv.FormatFloat(r.Residual, 'g', 3, 64)
	}
	if r.Method == "cntk" {
		rec[8], rec[9] = strconv.Itoa(r.S), strconv.Itoa(r.Filter)
	}
	return rec
}

// readInpaintReference reads the reference script's CSV (same header as
// runs.csv).
func readInpaintReference(path string) ([]inpaintRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || !slices.Equal(recs[0][:min(len(recs[0]), 8)], inpaintCSVHeader[:8]) {
		return nil, fmt.Errorf("want the header %s", strings.Join(inpaintCSVHeader[:8], ","))
	}
	var out []inpaintRun
	for i, rec := range recs[1:] {
		var v [5]float64
		for j := range v {
			if v[j], err = strconv.ParseFloat(rec[3+j], 64); err != nil {
				return nil, fmt.Errorf("line %d, %s: %q is not a number", i+2, inpaintCSVHeader[3+j], rec[3+j])
			}
		}
		out = append(out, inpaintRun{Image: rec[0], Task: rec[1], Method: rec[2], PSNR: v[0], PSNRMissing: v[1], SSIM: v[2], Seconds: v[3], PeakMB: v[4]})
	}
	return out, nil
}

// writeInpaintResults writes runs.csv and summary.md.
func writeInpaintResults(ctx context.Context, dir string, runs []inpaintRun, haveRef bool, missing []string) error {
	err := atomicfile.Write(ctx, filepath.Join(dir, "runs.csv"), func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(inpaintCSVHeader)
		for _, r := range runs {
			cw.Write(r.record())
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	return atomicfile.Write(ctx, filepath.Join(dir, "summary.md"), func(w io.Writer) error {
		fmt.Fprintf(w, "# Inpainting benchmark (issue 43)\n\nMade by `rfm bench inpaint` on %s (see docs/inpainting.md for the commands). "+
			"PSNR and SSIM over the whole image (SSIM with scikit-image's defaults, data range 1), PSNR also over the missing pixels only. "+
			"Times and peak memory are per process (rfm inpaint: the whole command, selection included; biharmonic: the call), "+
			"measured on a shared, loaded 2-core machine.", time.Now().UTC().Format("2006-01-02"))
		if !haveRef {
			fmt.Fprint(w, " No reference.csv was found: no biharmonic rows.")
		}
		if len(missing) > 0 {
			fmt.Fprintf(w, " Collected from the runs done (--collect); not run, so not in the means: %s.", strings.Join(missing, ", "))
		}
		fmt.Fprint(w, "\n\n## Means over the images\n\n| task | method | PSNR | PSNR missing | SSIM | seconds | peak MB |\n|---|---|---|---|---|---|---|\n")
		for _, t := range inpaintTasks {
			for _, m := range []string{"cntk", "laplace", "biharmonic"} {
				var n, p, pm, s, sec, peak float64
				for _, r := range runs {
					if r.Task == t.name && r.Method == m {
						n++
						p, pm, s, sec, peak = p+r.PSNR, pm+r.PSNRMissing, s+r.SSIM, sec+r.Seconds, math.Max(peak, r.PeakMB)
					}
				}
				if n > 0 {
					fmt.Fprintf(w, "| %s | %s | %.2f | %.2f | %.4f | %.1f | %.0f |\n", t.desc, m, p/n, pm/n, s/n, sec/n, peak)
				}
			}
		}
		fmt.Fprint(w, "\n## Per image\n\n| image | task | method | PSNR | PSNR missing | SSIM | seconds | peak MB | s | filter | CG iterations | residual |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range runs {
			rec := r.record()
			fmt.Fprintf(w, "| %s | %s | %s | %.2f | %.2f | %.4f | %.1f | %.0f | %s | %s | %s | %s |\n", r.Image, r.Task, r.Method, r.PSNR, r.PSNRMissing, r.SSIM, r.Seconds, r.PeakMB, rec[8], rec[9], rec[11], rec[12])
		}
		return nil
	})
}

// inpaintGrid draws, for the first three images run, the original, the masked
// image (missing pixels magenta) and each method's result whose PNG is in
// work, side by side, at half size.
func inpaintGrid(ctx context.Context, path, images, work string, names []string, task string, methods []string) error {
	var rows [][]*cntk.Image
	for _, name := range names {
		if len(rows) == 3 {
			break
		}
		base := filepath.Join(work, name+"-"+task)
		mask, err := cntk.LoadPNG(base + "-mask.png")
		if errors.Is(err, os.ErrNotExist) {
			continue // not run (--collect)
		}
		if err != nil {
			return err
		}
		orig, err := cntk.LoadPNG(filepath.Join(images, name+".png"))
		if err != nil {
			return err
		}
		masked := toRGB(orig)
		for p, ob := range cntk.MaskFromImage(mask) {
			if !ob {
				masked.Pix[3*p], masked.Pix[3*p+1], masked.Pix[3*p+2] = 1, 0, 1
			}
		}
		row := []*cntk.Image{toRGB(orig), masked}
		for _, m := range methods {
			if res, err := cntk.LoadPNG(base + "-" + m + ".png"); err == nil {
				row = append(row, toRGB(res))
			}
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil
	}
	const gap = 4
	cols, cw, ch := 0, 0, 0
	for _, row := range rows {
		cols = max(cols, len(row))
		for _, m := range row {
			cw, ch = max(cw, m.W/2), max(ch, m.H/2)
		}
	}
	g := &cntk.Image{W: cols*(cw+gap) - gap, H: len(rows)*(ch+gap) - gap, C: 3}
	g.Pix = make([]float64, g.W*g.H*3)
	for i := range g.Pix {
		g.Pix[i] = 1
	}
	for ri, row := range rows {
		for ci, m := range row {
			for i := range m.H / 2 {
				for j := range m.W / 2 {
					for c := range 3 {
						v := 0.0
						for _, d := range [4][2]int{{0, 0}, {0, 1}, {1, 0}, {1, 1}} {
							v += m.Pix[((2*i+d[0])*m.W+2*j+d[1])*3+c]
						}
						g.Pix[((ri*(ch+gap)+i)*g.W+ci*(cw+gap)+j)*3+c] = v / 4
					}
				}
			}
		}
	}
	return g.Save(ctx, path)
}

func toRGB(m *cntk.Image) *cntk.Image {
	if m.C == 3 {
		return m
	}
	o := &cntk.Image{H: m.H, W: m.W, C: 3, Pix: make([]float64, m.H*m.W*3)}
	for p, v := range m.Pix {
		o.Pix[3*p], o.Pix[3*p+1], o.Pix[3*p+2] = v, v, v
	}
	return o
}
