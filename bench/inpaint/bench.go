package inpaint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/cntk"
	"github.com/rfmkit/rfm/internal/cli"
)

// Task is a masking task: its name, a description for the tables and the
// mask flags of rfm inpaint.
type Task struct {
	Name, Desc string
	Mask       []string
}

// Tasks are the benchmark's tasks.
var Tasks = []Task{
	{"holes", "large holes (12 × 16×16 px)", []string{"--holes", "12", "--hole-size", "16"}},
	{"random50", "50% random pixels missing", []string{"--missing", "0.5"}},
	{"random80", "80% random pixels missing", []string{"--missing", "0.8"}},
}

// Options say what Bench runs and where; the fields are the flags of 'rfm
// bench inpaint', and the errors of Check name them so.
type Options struct {
	// Exe is the rfm binary whose 'inpaint' command makes each run.
	Exe string
	// Images is the folder of the PNGs; Out receives runs.csv, summary.md
	// and grid_TASK.png; Work the per-run images, masks and reports.
	Images, Out, Work string
	// Reference is the reference script's CSV ("": Out/reference.csv, used
	// when present).
	Reference string
	// Tasks (of Tasks) and Methods (cntk, laplace): comma lists.
	Tasks, Methods string
	// SHoles and SRandom are the CNTK's s on the holes and the random tasks
	// without selection; SHoles is also the least s tried on the holes.
	SHoles, SRandom int
	// SelectS, SelectFilter and SelectRidge are the comma lists of values
	// tried by the selection; SelectCrops the crops it scores on.
	SelectS, SelectFilter, SelectRidge string
	SelectCrops                        int
	NoSelect                           bool    // the fixed s of SHoles and SRandom
	Tol                                float64 // CG's relative residual
	Bandwidth                          float64 // σ in pixels of the Laplace kernel
	Seed                               uint64  // of the masks and the selection's crops
	Force                              bool    // redo the runs whose report is in Work
	Collect                            bool    // run nothing: tabulate the runs in Work
	// Stderr receives the children's messages (nil: discarded); Log, when
	// set, the notes; Progress, when set, each run done.
	Stderr   io.Writer
	Log      func(format string, args ...any)
	Progress func(Run)
}

// Result is what Bench made.
type Result struct {
	Runs    []Run    // the rows of runs.csv
	Missing []string // with Collect: the runs not in Work ("image task method")
	Summary string   // the path of summary.md
}

// Check validates the options and returns the tasks and methods.
func (o *Options) Check() (tasks, methods []string, err error) {
	for _, t := range strings.Split(o.Tasks, ",") {
		t = strings.TrimSpace(t)
		if !slices.ContainsFunc(Tasks, func(x Task) bool { return x.Name == t }) {
			return nil, nil, cli.Usagef("--tasks: unknown task %q; the tasks are holes, random50, random80", t)
		}
		tasks = append(tasks, t)
	}
	for _, m := range strings.Split(o.Methods, ",") {
		m = strings.TrimSpace(m)
		if m != "cntk" && m != "laplace" {
			return nil, nil, cli.Usagef("--methods: unknown method %q; want cntk, laplace (biharmonic is the reference script's)", m)
		}
		methods = append(methods, m)
	}
	switch {
	case o.SHoles < 0 || o.SHoles > cntk.MaxS || o.SRandom < 0 || o.SRandom > cntk.MaxS:
		return nil, nil, cli.Usagef("--s-holes %d, --s-random %d: want 0..%d", o.SHoles, o.SRandom, cntk.MaxS)
	case !(o.Tol > 0 && o.Tol < 1):
		return nil, nil, cli.Usagef("--tol %g: want in (0, 1)", o.Tol)
	case o.SelectCrops < 1:
		return nil, nil, cli.Usagef("--select-crops %d: want ≥ 1", o.SelectCrops)
	case !(o.Bandwidth > 0):
		return nil, nil, cli.Usagef("--bandwidth %g: want > 0", o.Bandwidth)
	}
	for _, l := range []struct{ name, v string }{{"select-s", o.SelectS}, {"select-filter", o.SelectFilter}, {"select-ridge", o.SelectRidge}} {
		for _, x := range strings.Split(l.v, ",") {
			if v, err := strconv.ParseFloat(strings.TrimSpace(x), 64); err != nil || v < 0 {
				return nil, nil, cli.Usagef("--%s %q: want numbers ≥ 0", l.name, l.v)
			}
		}
	}
	if _, err := os.Stat(o.Images); err != nil {
		return nil, nil, fmt.Errorf("--images %s: %w", o.Images, cli.UnwrapPath(err))
	}
	return tasks, methods, nil
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		o.Log(format, args...)
	}
}

// Bench runs (or reads back) every method on every image and task, joins
// the reference rows and writes runs.csv, summary.md and the grids to Out.
func Bench(ctx context.Context, o Options) (*Result, error) {
	tasks, methods, err := o.Check()
	if err != nil {
		return nil, err
	}
	images, err := ListPNGs(o.Images)
	if err != nil {
		return nil, err
	}
	refRuns, haveRef, err := o.reference()
	if err != nil {
		return nil, err
	}
	for _, d := range []string{o.Out, o.Work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create %s: %w", d, cli.UnwrapPath(err))
		}
	}
	res := &Result{Summary: filepath.Join(o.Out, "summary.md")}
	for _, name := range images {
		for _, t := range tasks {
			for _, m := range methods {
				if o.Collect && !o.reusable(filepath.Join(o.Work, name+"-"+t+"-"+m+".json"), m) {
					res.Missing = append(res.Missing, name+" "+t+" "+m)
					continue
				}
				r, err := o.runOne(ctx, name, t, m)
				if err != nil {
					return nil, fmt.Errorf("%s, %s, %s: %w", name, t, m, err)
				}
				res.Runs = append(res.Runs, r)
				if o.Progress != nil {
					o.Progress(r)
				}
			}
		}
	}
	for _, r := range refRuns {
		if slices.Contains(images, r.Image) && slices.Contains(tasks, r.Task) {
			res.Runs = append(res.Runs, r)
		}
	}
	if len(res.Missing) > 0 {
		o.logf("--collect: %d runs not in %s, left out: %s", len(res.Missing), o.Work, strings.Join(res.Missing, ", "))
	}
	if err := WriteResults(ctx, o.Out, res.Runs, haveRef, res.Missing); err != nil {
		return nil, err
	}
	for _, t := range tasks {
		if o.Collect && !slices.ContainsFunc(res.Runs, func(r Run) bool { return r.Task == t && r.Method != "biharmonic" }) {
			continue
		}
		path := filepath.Join(o.Out, "grid_"+t+".png")
		if err := Grid(ctx, path, o.Images, o.Work, images, t, append(slices.Clone(methods), "biharmonic")); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// reference reads the reference rows: from Reference, or from
// Out/reference.csv when it is there.
func (o *Options) reference() ([]Run, bool, error) {
	ref := o.Reference
	if ref == "" {
		ref = filepath.Join(o.Out, "reference.csv")
	}
	runs, err := ReadReference(ref)
	switch {
	case errors.Is(err, os.ErrNotExist) && o.Reference == "":
		o.logf("no %s: the tables have no biharmonic column (run scripts/inpaint_reference.py bench, then this again)", ref)
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("--reference %s: %w", ref, err)
	}
	return runs, true, nil
}

// ListPNGs lists the images of dir by name without .png, sorted.
func ListPNGs(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("--images %s: %w", dir, cli.UnwrapPath(err))
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

// args are the rfm inpaint arguments of one run.
func (o *Options) args(img, base, task, method string) ([]string, error) {
	out, report, mask := base+"-"+method+".png", base+"-"+method+".json", base+"-mask.png"
	args := []string{"inpaint", "--image", img, "--out", out, "--report", report, "--tol", fmt.Sprint(o.Tol), "--quiet"}
	if method != "cntk" {
		if _, err := os.Stat(mask); err != nil {
			return nil, fmt.Errorf("no mask %s: run the cntk method first", mask)
		}
		return append(args, "--mask", mask, "--mask-out", base+"-"+method+"-mask.png", "--kernel", method, "--bandwidth", fmt.Sprint(o.Bandwidth)), nil
	}
	for _, t := range Tasks {
		if t.Name == task {
			args = append(args, t.Mask...)
		}
	}
	s := o.SRandom
	if task == "holes" {
		s = o.SHoles
	}
	args = append(args, "--seed", strconv.FormatUint(o.Seed, 10), "--mask-out", mask, "--s", strconv.Itoa(s))
	if !o.NoSelect {
		args = append(args, "--select-s", o.selectS(task), "--select-filter", o.SelectFilter, "--select-ridge", o.SelectRidge,
			"--select-crops", strconv.Itoa(o.SelectCrops))
	}
	return args, nil
}

// runOne runs (or, with its report in Work, reads back) one method on one
// image and task and scores it.
func (o *Options) runOne(ctx context.Context, name, task, method string) (Run, error) {
	img := filepath.Join(o.Images, name+".png")
	base := filepath.Join(o.Work, name+"-"+task)
	mask, out, report := base+"-mask.png", base+"-"+method+".png", base+"-"+method+".json"
	_, errMask := os.Stat(mask)
	if o.Force || errMask != nil || !o.reusable(report, method) {
		args, err := o.args(img, base, task, method)
		if err != nil {
			return Run{}, err
		}
		cmd := exec.CommandContext(ctx, o.Exe, args...)
		cmd.Stderr = o.Stderr
		if err := cmd.Run(); err != nil {
			return Run{}, fmt.Errorf("rfm %s: %w", strings.Join(args, " "), err)
		}
	}
	var rep cntk.RunReport
	data, err := os.ReadFile(report)
	if err != nil {
		return Run{}, err
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return Run{}, fmt.Errorf("%s: %w", report, err)
	}
	r := Run{Image: name, Task: task, Method: method, Seconds: rep.TotalSeconds, PeakMB: float64(rep.PeakRSSBytes) / (1 << 20),
		Iterations: rep.Iterations, Residual: rep.Residual, Converged: strconv.FormatBool(rep.Converged), Ridge: rep.Ridge}
	if method == "cntk" {
		r.S, r.Filter = rep.S, rep.Filter
	}
	if rep.Exact {
		r.Converged = "cholesky"
	}
	r.PSNR, r.PSNRMissing, r.SSIM, err = Score(img, mask, out)
	return r, err
}

// reusable reports whether report holds a run of method made with this
// benchmark's solve settings (an older run, or one with another Tol or
// selection, is redone).
func (o *Options) reusable(report, method string) bool {
	data, err := os.ReadFile(report)
	if err != nil {
		return false
	}
	var rep cntk.RunReport
	if json.Unmarshal(data, &rep) != nil || rep.Kernel != method || rep.Tol != o.Tol {
		return false
	}
	return method != "cntk" || (len(rep.Selection) > 0) != o.NoSelect
}

// selectS is the list of s tried on the task: on the holes only those
// at least SHoles.
func (o *Options) selectS(task string) string {
	if task != "holes" {
		return o.SelectS
	}
	var keep []string
	for _, v := range strings.Split(o.SelectS, ",") {
		if n, _ := strconv.Atoi(strings.TrimSpace(v)); n >= o.SHoles {
			keep = append(keep, strings.TrimSpace(v))
		}
	}
	if len(keep) == 0 {
		return strconv.Itoa(o.SHoles)
	}
	return strings.Join(keep, ",")
}

// Score reads the image, the mask and a result and returns the PSNR over
// the image and over the missing pixels, and the SSIM.
func Score(imgPath, maskPath, resPath string) (psnr, psnrMissing, ssim float64, err error) {
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
