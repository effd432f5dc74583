package cntk

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/plot"
)

// Job is one inpainting run as rfm inpaint makes it: the kernel (the CNTK
// of Arch and Prior, or a plain kernel on pixel coordinates), the solve,
// and optionally the choice of s, the filter and the ridge on held-out
// observed pixels.
type Job struct {
	Name string // the image's name in the report
	// Kernel is "cntk" (or ""), or a plain kernel on pixel coordinates:
	// "laplace" or "gaussian" of bandwidth σ = Bandwidth pixels.
	Kernel    string
	Bandwidth float64
	Arch      Arch
	Prior     Prior
	Solve     Options
	// Candidates, when not empty (the CNTK only), are scored by Select with
	// SelectOptions (its Solve and Progress are the job's) and the best one
	// is used.
	Candidates []Candidate
	Select     SelectOptions
	// Progress, when set, is called with the fraction done and the stage.
	Progress func(frac float64, stage string)
}

// Run inpaints img where observed is false and returns the result and the
// report (its PSNR over the missing pixels, times and peak memory
// included). With candidates, Arch and Solve.Ridge in the report are the
// chosen ones.
func (j Job) Run(ctx context.Context, img *Image, observed []bool) (*Image, RunReport, error) {
	if _, err := CheckMask(observed, img.H, img.W); err != nil {
		return nil, RunReport{}, fmt.Errorf("mask: %s", strings.TrimPrefix(err.Error(), "cntk: "))
	}
	coord := CoordKind(-1)
	switch j.Kernel {
	case "", "cntk":
		j.Kernel = "cntk"
	case "laplace":
		coord = CoordLaplace
	case "gaussian":
		coord = CoordGaussian
	default:
		return nil, RunReport{}, fmt.Errorf("cntk: kernel %q: want cntk, laplace or gaussian", j.Kernel)
	}
	start := time.Now()
	j.Solve.Progress = j.Progress
	var sel []Score
	if coord < 0 && len(j.Candidates) > 0 {
		so := j.Select
		so.Solve = j.Solve
		if j.Progress != nil {
			so.Progress = func(f float64, c Candidate) { j.Progress(f, "select") }
		}
		best, scores, err := Select(ctx, img, observed, j.Arch, j.Prior, j.Candidates, so)
		if err != nil {
			return nil, RunReport{}, err
		}
		j.Arch.S, j.Arch.Filter, j.Solve.Ridge, sel = best.S, best.Filter, best.Ridge, scores
	}
	var res *Image
	var rep Report
	var err error
	if coord >= 0 {
		var k *Kernel
		if k, err = CoordKernel(coord, j.Bandwidth, img.H, img.W); err != nil {
			return nil, RunReport{}, &BandwidthError{j.Bandwidth, err}
		}
		res, rep, err = InpaintImageWith(ctx, k, img, observed, j.Solve)
	} else {
		res, rep, err = InpaintImage(ctx, j.Arch, j.Prior, img, observed, j.Solve)
	}
	if err != nil {
		return nil, RunReport{}, err
	}
	r := NewRunReport(j.Name, img, j.Kernel, j.Bandwidth, j.Arch, j.Prior, rep)
	r.Ridge, r.Tol = j.Solve.Ridge, j.Solve.Tol
	for _, sc := range sel {
		r.Selection = append(r.Selection, SelectionScore{S: sc.S, Filter: sc.Filter, Ridge: sc.Ridge, PSNR: sc.PSNR})
	}
	r.PSNRMissing = PSNRMissing(img, res, observed)
	r.PeakRSSBytes = sysmem.PeakRSS()
	r.TotalSeconds = time.Since(start).Seconds()
	return res, r, nil
}

// BandwidthError is a bandwidth the coordinate kernel refuses.
type BandwidthError struct {
	Bandwidth float64
	Err       error
}

func (e *BandwidthError) Error() string { return e.Err.Error() }
func (e *BandwidthError) Unwrap() error { return e.Err }

// HeatmapFigures draws the weight heatmaps of the thesis's figure 3-4 for
// pixel (y, x): for each prior kind (uniform, onehot, identity, meshgrid),
// one grid of the weights of the observed pixels in its prediction, an
// image per s of ss, to stem-KIND.png; with kstem, the kernel rows K((y,
// x), ·) too, to kstem-KIND.png. observed nil is a hole×hole square of
// missing pixels around the pixel. A direct prior too large for its kernel
// is skipped and passed to skipped (when set).
func HeatmapFigures(ctx context.Context, a Arch, base Prior, h, w int, observed []bool, y, x, hole int, ss []int, opt Options, stem, kstem string, skipped func(PriorKind)) error {
	observed = HeatmapMask(observed, h, w, y, x, hole)
	if _, err := CheckMask(observed, h, w); err != nil {
		return fmt.Errorf("mask: %s", strings.TrimPrefix(err.Error(), "cntk: "))
	}
	var titles []string
	for _, n := range ss {
		titles = append(titles, fmt.Sprintf("s = %d", n))
	}
	for _, kind := range []PriorKind{PriorUniform, PriorOneHot, PriorIdentity, PriorMeshgrid} {
		p := base
		p.Kind = kind
		if !p.Stationary() && h*w > MaxDirectPixels {
			if skipped != nil {
				skipped(kind)
			}
			continue
		}
		weights, rows, err := Heatmaps(ctx, a, p, h, w, observed, y, x, ss, opt)
		if err != nil {
			return err
		}
		title := fmt.Sprintf("%s prior: weight of each observed pixel in the prediction of (%d, %d)", kind, x, y)
		if err := plot.ImageGrid(stem+"-"+kind.String()+".png", weights, h, w, titles, title); err != nil {
			return err
		}
		if kstem != "" {
			title := fmt.Sprintf("%s prior: kernel row K((%d, %d), ·)", kind, x, y)
			if err := plot.ImageGrid(kstem+"-"+kind.String()+".png", rows, h, w, titles, title); err != nil {
				return err
			}
		}
	}
	return nil
}

// Summary is the line rfm inpaint ends with; selected says s, the filter
// and the ridge were chosen on held-out pixels.
func (r RunReport) Summary(selected bool) string {
	how := "Cholesky"
	if !r.Exact {
		how = fmt.Sprintf("CG (%s preconditioner) %d iterations, residual %.2g", r.Precond, r.Iterations, r.Residual)
		if !r.Converged {
			how += fmt.Sprintf(" (not converged to --tol %g: raise --max-iter or --ridge)", r.Tol)
		}
	}
	chosen := ""
	if selected {
		chosen = fmt.Sprintf(" (chosen on held-out observed pixels: s = %d, filter %d, ridge %g)", r.S, r.Filter, r.Ridge)
	}
	secs := func(s float64) string { return cli.Seconds(time.Duration(s * float64(time.Second))) }
	return fmt.Sprintf("inpainted %d×%d with %s%s: kernel %s in %s, solve over %d observed pixels by %s in %s; PSNR on the missing pixels %.2f dB; peak memory %s",
		r.Width, r.Height, r.Kernel, chosen, sysmem.Human(uint64(r.KernelBytes)), secs(r.KernelSeconds), r.Observed, how, secs(r.SolveSeconds), r.PSNRMissing, sysmem.Human(r.PeakRSSBytes))
}
