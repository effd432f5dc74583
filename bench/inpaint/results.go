package inpaint

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rfmkit/rfm/cntk"
	"github.com/rfmkit/rfm/internal/atomicfile"
)

// Run is one row of runs.csv: a method on an image and task, scored.
type Run struct {
	Image, Task, Method     string
	PSNR, PSNRMissing, SSIM float64
	Seconds, PeakMB         float64
	S, Filter               int
	Ridge                   float64
	Iterations              int
	Residual                float64
	Converged               string
}

// CSVHeader is the header of runs.csv and of the reference script's
// reference.csv (which leaves the CNTK's columns empty).
var CSVHeader = []string{"image", "task", "method", "psnr", "psnr_missing", "ssim", "seconds", "peak_mb", "s", "filter", "ridge", "cg_iterations", "residual", "converged"}

// Record is the run's row of runs.csv.
func (r Run) Record() []string {
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

// ReadReference reads the reference script's CSV (same header as
// runs.csv).
func ReadReference(path string) ([]Run, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 || !slices.Equal(recs[0][:min(len(recs[0]), 8)], CSVHeader[:8]) {
		return nil, fmt.Errorf("want the header %s", strings.Join(CSVHeader[:8], ","))
	}
	var out []Run
	for i, rec := range recs[1:] {
		var v [5]float64
		for j := range v {
			if v[j], err = strconv.ParseFloat(rec[3+j], 64); err != nil {
				return nil, fmt.Errorf("line %d, %s: %q is not a number", i+2, CSVHeader[3+j], rec[3+j])
			}
		}
		out = append(out, Run{Image: rec[0], Task: rec[1], Method: rec[2], PSNR: v[0], PSNRMissing: v[1], SSIM: v[2], Seconds: v[3], PeakMB: v[4]})
	}
	return out, nil
}

// WriteResults writes runs.csv and summary.md into dir; missing names the
// runs left out (Options.Collect).
func WriteResults(ctx context.Context, dir string, runs []Run, haveRef bool, missing []string) error {
	err := atomicfile.Write(ctx, filepath.Join(dir, "runs.csv"), func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write(CSVHeader)
		for _, r := range runs {
			cw.Write(r.Record())
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
		for _, t := range Tasks {
			for _, m := range []string{"cntk", "laplace", "biharmonic"} {
				var n, p, pm, s, sec, peak float64
				for _, r := range runs {
					if r.Task == t.Name && r.Method == m {
						n++
						p, pm, s, sec, peak = p+r.PSNR, pm+r.PSNRMissing, s+r.SSIM, sec+r.Seconds, math.Max(peak, r.PeakMB)
					}
				}
				if n > 0 {
					fmt.Fprintf(w, "| %s | %s | %.2f | %.2f | %.4f | %.1f | %.0f |\n", t.Desc, m, p/n, pm/n, s/n, sec/n, peak)
				}
			}
		}
		fmt.Fprint(w, "\n## Per image\n\n| image | task | method | PSNR | PSNR missing | SSIM | seconds | peak MB | s | filter | CG iterations | residual |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, r := range runs {
			rec := r.Record()
			fmt.Fprintf(w, "| %s | %s | %s | %.2f | %.2f | %.4f | %.1f | %.0f | %s | %s | %s | %s |\n", r.Image, r.Task, r.Method, r.PSNR, r.PSNRMissing, r.SSIM, r.Seconds, r.PeakMB, rec[8], rec[9], rec[11], rec[12])
		}
		return nil
	})
}

// Grid draws, for the first three images run, the original, the masked
// image (missing pixels magenta) and each method's result whose PNG is in
// work, side by side, at half size.
func Grid(ctx context.Context, path, images, work string, names []string, task string, methods []string) error {
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
