package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/rfmkit/rfm/cntk"
	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/plot"
)

func cmdInpaint(e *env, args []string) error {
	var (
		image, out, maskIn, maskOut, report string
		missing                             float64
		holes, holeSize                     int
		seed                                uint64
		s, filter                           int
		slope                               float64
		priorName                           string
		low, high                           float64
		ridge, tol                          float64
		maxIter, exactMax                   int
		heatmap, kernelOut                  string
		heatmapS                            listFlag
		heatmapSize                         int
		quiet                               bool
		kernelName                          string
		bandwidth                           float64
	)
	f := newFlagSet("inpaint", "rfm inpaint --image IMG.png (--missing R | --holes N | --mask M.png) --out OUT.png [flags]",
		`Inpaint an image with the exact CNTK of an encoder–decoder network (s stride-2
convolutions, s nearest-neighbour upsamplings, circular padding, q×q filters,
leaky-ReLU activation) whose input is a fixed feature prior (thesis ch. 3).
The kernel of a 2^(s+1)×2^(s+1) image is computed by the layer recursion and
expanded to the image size (SI appendix L); the solve over the observed pixels
is a Cholesky factorisation up to --exact-max pixels, else conjugate gradients
with products by the expanded kernel. Gray and RGB PNGs (channels share the
kernel). An image whose sides are not multiples of 2^s (or below 2^(s+1)) is
padded at the bottom and right with unobserved pixels and the result cropped
back; the command says so. The mask used is written next to the result
(--mask-out, default OUT with -mask.png) so other methods can use the same one.

With --heatmap X,Y it draws instead, for the pixel in column X and row Y, the
weights of the observed pixels in its prediction for each prior (uniform,
onehot, identity, meshgrid) and each s of --heatmap-s (the thesis's figure
3-4), one grid per prior: --out with -uniform, -onehot, -identity, -meshgrid
before .png. Without --image the grid is --heatmap-size pixels square;
without a mask flag the missing pixels are a --hole-size square centred on
the chosen pixel. The identity and meshgrid priors have no expansion: their
kernels are direct, drawn up to 64×64.`,
		`rfm inpaint --image camera.png --missing 0.5 --seed 1 --s 4 --out camera-cntk.png
rfm inpaint --image camera.png --holes 6 --hole-size 24 --s 5 --out camera-holes.png
rfm inpaint --heatmap 40,12 --heatmap-size 64 --hole-size 9 --out heat.png`)
	f.Section("Input and output")
	f.String(&image, "image", "", "the image `PNG` (gray or RGB)")
	f.String(&out, "out", "", "write the inpainted image to `PNG` (atomically); with --heatmap the heatmap grids' base name")
	f.String(&maskOut, "mask-out", "", "write the mask used to `PNG` (white observed, black missing; default OUT-mask.png)")
	f.String(&report, "report", "", "write the run's figures (PSNR of the missing pixels, times, kernel memory, peak memory) to `JSON`")
	f.Bool(&quiet, "quiet", false, "no summary on stderr")
	f.Section("Mask (one of)")
	f.String(&maskIn, "mask", "", "mask `PNG` of the image's size: white (> 0.5) observed, black missing")
	f.Float(&missing, "missing", 0, "hide this share `R` of the pixels, chosen at random with --seed")
	f.Int(&holes, "holes", 0, "hide `N` square holes at random positions (--seed)")
	f.Int(&holeSize, "hole-size", 16, "side of each hole in `PX`")
	f.Uint64(&seed, "seed", 1, "random `SEED` of the mask")
	f.Section("Kernel")
	f.String(&kernelName, "kernel", "cntk", "`NAME`: cntk, or a plain kernel on pixel coordinates for comparison: laplace, gaussian")
	f.Float(&bandwidth, "bandwidth", 2, "bandwidth σ in `PX` of the laplace and gaussian kernels")
	f.Int(&s, "s", 4, "number `S` of stride-2 convolutions and of upsamplings (0.."+strconv.Itoa(cntk.MaxS)+")")
	f.Int(&filter, "filter", 3, "odd filter size `Q` of every convolution")
	f.Float(&slope, "slope", 0, "activation max(u, `A`·u): 0 ReLU, 1 linear, −1 absolute value, else leaky ReLU")
	f.String(&priorName, "prior", "uniform", "feature prior `NAME`: uniform (i.i.d. U[low, high], infinite channels), onehot (a channel per pixel), identity (the identity matrix as an image; direct kernel, ≤ 64×64), meshgrid (direct, ≤ 64×64)")
	f.Float(&low, "prior-low", 0, "lower bound `A` of the uniform prior")
	f.Float(&high, "prior-high", 0.1, "upper bound `B` of the uniform prior")
	f.Section("Solve")
	f.Float(&ridge, "ridge", 0, "add `L`·K(x, x) to the diagonal of K_OO")
	f.Int(&exactMax, "exact-max", 4000, "factorise K_OO densely up to `N` observed pixels, else conjugate gradients")
	f.Float(&tol, "tol", 1e-4, "conjugate gradients' relative residual `T` to stop at")
	f.Int(&maxIter, "max-iter", 300, "at most `N` conjugate-gradient iterations")
	f.Section("Heatmaps")
	f.String(&heatmap, "heatmap", "", "draw the weights of the observed pixels in the prediction of pixel `X,Y` (column, row) instead of inpainting")
	f.List(&heatmapS, "heatmap-s", "numbers of down/upsamplings `LIST` to draw (default 1,2,3,4)")
	f.Int(&heatmapSize, "heatmap-size", 64, "side `N` of the square grid when --heatmap has no --image")
	f.String(&kernelOut, "kernel-out", "", "with --heatmap, also draw the kernel rows K(x, ·) to `PNG` (figure 3-4a), one grid per prior")
	pos, err := f.Parse(args, e.stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	coord := cntk.CoordKind(-1)
	switch kernelName {
	case "cntk":
	case "laplace":
		coord = cntk.CoordLaplace
	case "gaussian":
		coord = cntk.CoordGaussian
	default:
		return usagef("--kernel %q: want cntk, laplace or gaussian", kernelName)
	}
	prior, err := cntk.ParsePrior(priorName)
	if err != nil {
		return usagef("--prior %q: want uniform, onehot, identity or meshgrid", priorName)
	}
	if !(low < high) {
		return usagef("--prior-low %g must be below --prior-high %g", low, high)
	}
	arch := cntk.Arch{S: s, Filter: filter, Slope: slope}
	if err := arch.Validate(); err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "cntk: "))
	}
	opt := cntk.Options{Ridge: ridge, Tol: tol, MaxIter: maxIter, ExactMax: exactMax}
	if ridge < 0 {
		return usagef("--ridge %g: want ≥ 0", ridge)
	}
	if !(tol > 0 && tol < 1) {
		return usagef("--tol %g: want in (0, 1)", tol)
	}
	if maxIter < 1 {
		return usagef("--max-iter %d: want ≥ 1", maxIter)
	}
	if exactMax < 0 {
		return usagef("--exact-max %d: want ≥ 0", exactMax)
	}
	sources := 0
	for _, set := range []bool{maskIn != "", missing != 0, holes != 0} {
		if set {
			sources++
		}
	}
	if sources > 1 {
		return usagef("give one of --mask, --missing, --holes")
	}
	if out == "" {
		return usagef("--out is required")
	}
	if err := checkOutPath("out", out, image); err != nil {
		return err
	}
	if report != "" {
		if err := checkOutPath("report", report, image); err != nil {
			return err
		}
	}
	var img *cntk.Image
	h, w := heatmapSize, heatmapSize
	if image != "" {
		if img, err = cntk.LoadPNG(image); err != nil {
			return fmt.Errorf("--image %w", err)
		}
		h, w = img.H, img.W
	} else if heatmap == "" {
		return usagef("--image is required (or --heatmap)")
	}
	if heatmap == "" && sources == 0 {
		return usagef("give a mask: --missing R, --holes N or --mask M.png")
	}
	var observed []bool
	switch {
	case maskIn != "":
		m, err := cntk.LoadPNG(maskIn)
		if err != nil {
			return fmt.Errorf("--mask %w", err)
		}
		if m.H != h || m.W != w {
			return fmt.Errorf("--mask %s is %d×%d but the image is %d×%d", maskIn, m.W, m.H, w, h)
		}
		observed = cntk.MaskFromImage(m)
	case missing != 0:
		if observed, err = cntk.RandomMask(h, w, missing, seed); err != nil {
			return usagef("--missing %g: want a share in (0, 1)", missing)
		}
	case holes != 0:
		if observed, err = cntk.HolesMask(h, w, holes, holeSize, seed); err != nil {
			return usagef("--holes %d --hole-size %d: %s", holes, holeSize, strings.TrimPrefix(err.Error(), "cntk: "))
		}
	}
	if heatmap != "" {
		return runHeatmaps(e, heatmap, heatmapS, arch, cntk.Prior{Low: low, High: high}, h, w, observed, holeSize, opt, out, kernelOut)
	}
	if _, err := cntk.CheckMask(observed, h, w); err != nil {
		return fmt.Errorf("mask: %s", strings.TrimPrefix(err.Error(), "cntk: "))
	}
	if maskOut == "" {
		maskOut = strings.TrimSuffix(out, ".png") + "-mask.png"
	}
	if err := checkOutPath("mask-out", maskOut, image, out); err != nil {
		return err
	}
	p := cntk.Prior{Kind: prior, Low: low, High: high}
	if ph, pw := arch.FitSize(h, w); coord < 0 && (ph != h || pw != w) && !quiet {
		fmt.Fprintf(e.stderr, "rfm inpaint: %d×%d does not fit s = %d; padded to %d×%d with unobserved pixels, result cropped back\n", w, h, s, pw, ph)
	}
	bar := newProgress(e.stderr, e.tty(), quiet)
	opt.Progress = func(frac float64, stage string) { bar.Update(frac, stage) }
	start := time.Now()
	var res *cntk.Image
	var rep cntk.Report
	if coord >= 0 {
		var k *cntk.Kernel
		if k, err = cntk.CoordKernel(coord, bandwidth, h, w); err != nil {
			bar.Abort()
			return usagef("--bandwidth %g: %s", bandwidth, strings.TrimPrefix(err.Error(), "cntk: "))
		}
		res, rep, err = cntk.InpaintImageWith(e.ctx, k, img, observed, opt)
	} else {
		res, rep, err = cntk.InpaintImage(e.ctx, arch, p, img, observed, opt)
	}
	if err != nil {
		bar.Abort()
		return err
	}
	elapsed := time.Since(start)
	if err := writePNG(e.ctx, out, res); err != nil {
		bar.Abort()
		return err
	}
	if err := writePNG(e.ctx, maskOut, cntk.MaskImage(observed, h, w)); err != nil {
		bar.Abort()
		return err
	}
	psnr := psnrMissing(img, res, observed)
	peak := sysmem.PeakRSS()
	how := "Cholesky"
	if !rep.Exact {
		how = fmt.Sprintf("CG %d iterations, residual %.2g", rep.Iterations, rep.Residual)
		if !rep.Converged {
			how += " (not converged: raise --max-iter or --ridge)"
		}
	}
	bar.Finish(fmt.Sprintf("inpainted %d×%d with %s: kernel %s in %s, solve over %d observed pixels by %s in %s; PSNR on the missing pixels %.2f dB; peak memory %s",
		w, h, kernelName, sysmem.Human(uint64(rep.KernelBytes)), seconds(rep.KernelTime), rep.Observed, how, seconds(rep.Time), psnr, sysmem.Human(peak)))
	if report != "" {
		r := map[string]any{
			"image": image, "width": w, "height": h, "channels": img.C, "padded_width": rep.PadW, "padded_height": rep.PadH,
			"kernel": kernelName, "bandwidth": bandwidth, "s": s, "filter": filter, "slope": slope, "prior": p.Kind.String(),
			"observed": rep.Observed, "exact": rep.Exact, "iterations": rep.Iterations, "residual": rep.Residual, "converged": rep.Converged,
			"kernel_bytes": rep.KernelBytes, "kernel_seconds": rep.KernelTime.Seconds(), "solve_seconds": rep.Time.Seconds(),
			"total_seconds": elapsed.Seconds(), "peak_rss_bytes": peak, "psnr_missing": psnr,
		}
		if err := atomicfile.Write(e.ctx, report, func(wr io.Writer) error {
			enc := json.NewEncoder(wr)
			enc.SetIndent("", "  ")
			return enc.Encode(r)
		}); err != nil {
			return err
		}
	}
	return nil
}

func writePNG(ctx context.Context, path string, m *cntk.Image) error {
	return atomicfile.Write(ctx, path, m.WritePNG)
}

// psnrMissing is the PSNR over the missing pixels (all channels), on [0, 1].
func psnrMissing(orig, res *cntk.Image, observed []bool) float64 {
	se, n := 0.0, 0
	for p, o := range observed {
		if o {
			continue
		}
		for ch := range orig.C {
			d := min(1, max(0, res.Pix[p*orig.C+ch])) - orig.Pix[p*orig.C+ch]
			se += d * d
			n++
		}
	}
	if n == 0 || se == 0 {
		return 0
	}
	return 10 * math.Log10(float64(n)/se)
}

// runHeatmaps draws the weight heatmaps of figure 3-4, one grid per prior.
func runHeatmaps(e *env, at string, sList listFlag, arch cntk.Arch, base cntk.Prior, h, w int, observed []bool, hole int, opt cntk.Options, out, kernelOut string) error {
	parts := strings.Split(at, ",")
	if len(parts) != 2 {
		return usagef("--heatmap %q: want X,Y (column, row)", at)
	}
	x, errX := strconv.Atoi(strings.TrimSpace(parts[0]))
	y, errY := strconv.Atoi(strings.TrimSpace(parts[1]))
	if errX != nil || errY != nil || x < 0 || y < 0 || x >= w || y >= h {
		return usagef("--heatmap %q: want X,Y with 0 ≤ X < %d and 0 ≤ Y < %d", at, w, h)
	}
	if len(sList) == 0 {
		sList = listFlag{"1", "2", "3", "4"}
	}
	var ss []int
	for _, v := range sList {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > cntk.MaxS {
			return usagef("--heatmap-s %q: want numbers in 0..%d", v, cntk.MaxS)
		}
		a := cntk.Arch{S: n, Filter: arch.Filter, Slope: arch.Slope}
		if err := a.CheckSize(h, w); err != nil {
			return usagef("--heatmap-s %d: %s", n, strings.TrimPrefix(err.Error(), "cntk: "))
		}
		ss = append(ss, n)
	}
	if len(ss) > plot.MaxGridImages {
		return usagef("--heatmap-s: at most %d values", plot.MaxGridImages)
	}
	if observed == nil { // a hole centred on the pixel
		observed = make([]bool, h*w)
		for i := range h {
			for j := range w {
				observed[i*w+j] = i < y-hole/2 || i > y+(hole-1)/2 || j < x-hole/2 || j > x+(hole-1)/2
			}
		}
	}
	observed[y*w+x] = false
	if _, err := cntk.CheckMask(observed, h, w); err != nil {
		return fmt.Errorf("mask: %s", strings.TrimPrefix(err.Error(), "cntk: "))
	}
	if opt.Ridge == 0 {
		// The identity prior's kernel is singular where the receptive field
		// misses the diagonal.
		opt.Ridge = 1e-8
	}
	stem := strings.TrimSuffix(out, ".png")
	kstem := strings.TrimSuffix(kernelOut, ".png")
	for _, kind := range []cntk.PriorKind{cntk.PriorUniform, cntk.PriorOneHot, cntk.PriorIdentity, cntk.PriorMeshgrid} {
		p := base
		p.Kind = kind
		if !p.Stationary() && h*w > cntk.MaxDirectPixels {
			fmt.Fprintf(e.stderr, "rfm inpaint: %s prior skipped: its kernel is direct and %d×%d exceeds %d pixels\n", kind, w, h, cntk.MaxDirectPixels)
			continue
		}
		var weights, rows [][]float64
		var titles []string
		for _, n := range ss {
			a := cntk.Arch{S: n, Filter: arch.Filter, Slope: arch.Slope}
			k, err := cntk.NewKernel(e.ctx, a, p, h, w)
			if err != nil {
				return err
			}
			wts, _, err := cntk.Weights(e.ctx, k, observed, y, x, opt)
			if err != nil {
				return err
			}
			weights = append(weights, wts)
			rows = append(rows, k.Row(y, x))
			titles = append(titles, fmt.Sprintf("s = %d", n))
		}
		title := fmt.Sprintf("%s prior: weight of each observed pixel in the prediction of (%d, %d)", kind, x, y)
		if err := plot.ImageGrid(stem+"-"+kind.String()+".png", weights, h, w, titles, title); err != nil {
			return err
		}
		if kernelOut != "" {
			title := fmt.Sprintf("%s prior: kernel row K((%d, %d), ·)", kind, x, y)
			if err := plot.ImageGrid(kstem+"-"+kind.String()+".png", rows, h, w, titles, title); err != nil {
				return err
			}
		}
	}
	return nil
}
