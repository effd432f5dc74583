package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/cntk"
	"github.com/rfmkit/rfm/internal/cli"
)

// inpaintOptions holds rfm inpaint's flags.
// inpaintOptions are cntk.Settings and the other flags of rfm inpaint.
type inpaintOptions struct {
	cntk.Settings
	image, out, maskOut, report string
	heatmap, kernelOut          string
	heatmapS                    listFlag
	heatmapSize                 int
	quiet                       bool
	selS, selFilter, selRidge   listFlag
}

func cmdInpaint(e *env, args []string) error {
	var o inpaintOptions
	f := helpFlagSet("inpaint", "rfm inpaint --image IMG.png (--missing R | --holes N | --mask M.png) --out OUT.png [flags]")
	o.register(f)
	pos, err := f.Parse(args, e.stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	coord, arch, opt, err := o.check()
	if err != nil {
		return err
	}
	var img *cntk.Image
	h, w := o.heatmapSize, o.heatmapSize
	if o.image != "" {
		if img, err = cntk.LoadPNG(o.image); err != nil {
			return fmt.Errorf("--image %w", err)
		}
		h, w = img.H, img.W
	} else if o.heatmap == "" {
		return usagef("--image is required (or --heatmap)")
	}
	if o.heatmap == "" && o.MaskSources() == 0 {
		return usagef("give a mask: --missing R, --holes N or --mask M.png")
	}
	observed, err := o.LoadMask(h, w)
	if err != nil {
		return err
	}
	if o.heatmap != "" {
		return runHeatmaps(e, o.heatmap, o.heatmapS, arch, cntk.Prior{Low: o.Low, High: o.High}, h, w, observed, o.HoleSize, opt, o.out, o.kernelOut)
	}
	return o.run(e, coord, arch, opt, img, observed)
}

// register declares the flags.
func (o *inpaintOptions) register(f *flagSet) {
	f.Section("Input and output")
	f.String(&o.image, "image", "", "the image `PNG` (gray or RGB)")
	f.String(&o.out, "out", "", "write the inpainted image to `PNG` (atomically); with --heatmap the heatmap grids' base name")
	f.String(&o.maskOut, "mask-out", "", "write the mask used to `PNG` (white observed, black missing; default OUT-mask.png)")
	f.String(&o.report, "report", "", "write the run's figures (PSNR of the missing pixels, times, kernel memory, peak memory) to `JSON`")
	f.Bool(&o.quiet, "quiet", false, "no summary on stderr")
	f.Section("Mask (one of)")
	f.String(&o.Mask, "mask", "", "mask `PNG` of the image's size: white (> 0.5) observed, black missing")
	f.Float(&o.Missing, "missing", 0, "hide this share `R` of the pixels, chosen at random with --seed")
	f.Int(&o.Holes, "holes", 0, "hide `N` square holes at random positions (--seed)")
	f.Int(&o.HoleSize, "hole-size", 16, "side of each hole in `PX`")
	f.Uint64(&o.Seed, "seed", 1, "random `SEED` of the mask")
	f.Section("Kernel")
	f.String(&o.Kernel, "kernel", "cntk", "`NAME`: cntk, or a plain kernel on pixel coordinates for comparison: laplace, gaussian")
	f.Float(&o.Bandwidth, "bandwidth", 2, "bandwidth σ in `PX` of the laplace and gaussian kernels")
	f.Int(&o.S, "s", 4, "number `S` of stride-2 convolutions and of upsamplings (0.."+strconv.Itoa(cntk.MaxS)+")")
	f.Int(&o.Filter, "filter", 3, "odd filter size `Q` of every convolution")
	f.Float(&o.Slope, "slope", 0, "activation max(u, `A`·u): 0 ReLU, 1 linear, −1 absolute value, else leaky ReLU")
	f.String(&o.Prior, "prior", "uniform", "feature prior `NAME`: uniform (i.i.d. U[low, high], infinite channels), onehot (a channel per pixel), identity (the identity matrix as an image; direct kernel, ≤ 64×64), meshgrid (direct, ≤ 64×64)")
	f.Float(&o.Low, "prior-low", 0, "lower bound `A` of the uniform prior")
	f.Float(&o.High, "prior-high", 0.1, "upper bound `B` of the uniform prior")
	f.Section("Solve")
	f.Float(&o.Ridge, "ridge", 0, "add `L`·K(x, x) to the diagonal of K_OO")
	f.Int(&o.ExactMax, "exact-max", 4000, "factorise K_OO densely up to `N` observed pixels, else conjugate gradients")
	f.Float(&o.Tol, "tol", 1e-5, "stop conjugate gradients when the relative residual ‖b − Kα‖/‖b‖ is below `T`")
	f.Int(&o.MaxIter, "max-iter", 1000, "safety cap of `N` conjugate-gradient iterations (the summary says if the solve stopped there unconverged)")
	f.String(&o.Precond, "precond", "block", "conjugate gradients' preconditioner `NAME`: block (block Jacobi on square tiles), jacobi (diagonal), none")
	f.Int(&o.Tile, "tile", 0, "side in `PX` of the block preconditioner's tiles (0: 8)")
	f.Section("Selection on observed pixels (cntk kernel)")
	f.List(&o.selS, "select-s", "choose --s among `LIST` by predicting held-out observed pixels")
	f.List(&o.selFilter, "select-filter", "choose --filter among `LIST` the same way")
	f.List(&o.selRidge, "select-ridge", "choose --ridge among `LIST` the same way")
	f.Float(&o.SelectHoldout, "select-holdout", 0.1, "share `F` of the observed pixels of each crop hidden and predicted (with --holes: as squares of --hole-size)")
	f.Int(&o.SelectCrop, "select-crop", 128, "side `PX` of the crops the candidates are scored on")
	f.Int(&o.SelectCrops, "select-crops", 4, "number `N` of crops, placed at random with --seed")
	f.Section("Heatmaps")
	f.String(&o.heatmap, "heatmap", "", "draw the weights of the observed pixels in the prediction of pixel `X,Y` (column, row) instead of inpainting")
	f.List(&o.heatmapS, "heatmap-s", "numbers of down/upsamplings `LIST` to draw (default 1,2,3,4)")
	f.Int(&o.heatmapSize, "heatmap-size", 64, "side `N` of the square grid when --heatmap has no --image")
	f.String(&o.kernelOut, "kernel-out", "", "with --heatmap, also draw the kernel rows K(x, ·) to `PNG` (figure 3-4a), one grid per prior")
}

// check validates the flags that need no image (cntk.Settings.Check) and
// the output paths.
func (o *inpaintOptions) check() (cntk.CoordKind, cntk.Arch, cntk.Options, error) {
	coord, arch, opt, err := o.Check()
	if err == nil && o.out == "" {
		err = usagef("--out is required")
	}
	if err == nil {
		err = checkOutPath("out", o.out, o.image)
	}
	if err == nil && o.report != "" {
		err = checkOutPath("report", o.report, o.image)
	}
	return coord, arch, opt, err
}

// run inpaints img, writes the result, the mask and the report, and prints
// the summary.
func (o *inpaintOptions) run(e *env, coord cntk.CoordKind, arch cntk.Arch, opt cntk.Options, img *cntk.Image, observed []bool) error {
	h, w := img.H, img.W
	maskOut := o.maskOut
	if maskOut == "" {
		maskOut = strings.TrimSuffix(o.out, ".png") + "-mask.png"
	}
	if err := checkOutPath("mask-out", maskOut, o.image, o.out); err != nil {
		return err
	}
	kind, _ := cntk.ParsePrior(o.Prior)
	job := cntk.Job{Name: o.image, Kernel: o.Kernel, Bandwidth: o.Bandwidth, Arch: arch,
		Prior: cntk.Prior{Kind: kind, Low: o.Low, High: o.High}, Solve: opt,
		Select: cntk.SelectOptions{Holdout: o.SelectHoldout, Crop: o.SelectCrop, Crops: o.SelectCrops, Seed: o.Seed}}
	if o.Holes != 0 {
		job.Select.HoleSize = o.HoleSize
	}
	if coord < 0 && len(o.selS)+len(o.selFilter)+len(o.selRidge) > 0 {
		var err error
		if job.Candidates, err = cntk.Candidates(o.selS, o.selFilter, o.selRidge, arch, opt.Ridge); err != nil {
			return err
		}
	}
	if ph, pw := arch.FitSize(h, w); coord < 0 && (ph != h || pw != w) && !o.quiet {
		fmt.Fprintf(e.stderr, "rfm inpaint: %d×%d does not fit s = %d; padded to %d×%d with unobserved pixels, result cropped back\n", w, h, o.S, pw, ph)
	}
	bar := newProgress(e.stderr, e.tty(), o.quiet)
	job.Progress = func(frac float64, stage string) { bar.Update(frac, stage) }
	res, r, err := job.Run(e.ctx, img, observed)
	var be *cntk.BandwidthError
	if errors.As(err, &be) {
		err = usagef("--bandwidth %g: %s", o.Bandwidth, strings.TrimPrefix(be.Err.Error(), "cntk: "))
	}
	// The result, its mask and the report are written as a set: all of
	// them or, on any failure, none (earlier files restored).
	outs := []cli.OutputFile{{Path: o.out, Write: res.WritePNG}, {Path: maskOut, Write: cntk.MaskImage(observed, h, w).WritePNG}}
	if o.report != "" {
		outs = append(outs, cli.OutputFile{Path: o.report, Write: r.WriteJSON})
	}
	if err == nil {
		err = cli.WriteAll(e.ctx, outs)
	}
	if err != nil {
		bar.Abort()
		return err
	}
	bar.Finish(r.Summary(len(job.Candidates) > 0))
	return nil
}

// runHeatmaps draws the weight heatmaps of figure 3-4, one grid per prior.
func runHeatmaps(e *env, at string, sList listFlag, arch cntk.Arch, base cntk.Prior, h, w int, observed []bool, hole int, opt cntk.Options, out, kernelOut string) error {
	x, y, ss, err := cntk.ParseHeatmap(at, sList, arch, h, w)
	if err != nil {
		return err
	}
	return cntk.HeatmapFigures(e.ctx, arch, base, h, w, observed, y, x, hole, ss, opt, strings.TrimSuffix(out, ".png"), strings.TrimSuffix(kernelOut, ".png"), func(kind cntk.PriorKind) {
		fmt.Fprintf(e.stderr, "rfm inpaint: %s prior skipped: its kernel is direct and %d×%d exceeds %d pixels\n", kind, w, h, cntk.MaxDirectPixels)
	})
}
