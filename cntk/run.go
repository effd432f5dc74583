package cntk

import (
	"context"
	"encoding/json"
	"io"
	"math"

	"github.com/rfmkit/rfm/internal/atomicfile"
)

// Save writes the image as a PNG to path atomically: a failed or cancelled
// write leaves no half-written file.
func (m *Image) Save(ctx context.Context, path string) error {
	return atomicfile.Write(ctx, path, m.WritePNG)
}

// PSNRMissing is the peak signal-to-noise ratio in dB, on [0, 1], of res
// against orig over the pixels observed marks missing (all channels); res is
// clipped to [0, 1] first. It is 0 when no pixel is missing or res matches
// orig exactly there.
func PSNRMissing(orig, res *Image, observed []bool) float64 {
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

// HeatmapMask is the mask of a heatmap for pixel (y, x) of an h×w grid: a
// copy of observed, or without one a hole×hole square of missing pixels
// centred on the pixel; the pixel itself is always missing.
func HeatmapMask(observed []bool, h, w, y, x, hole int) []bool {
	obs := make([]bool, h*w)
	if observed != nil {
		copy(obs, observed)
	} else {
		for i := range h {
			for j := range w {
				obs[i*w+j] = i < y-hole/2 || i > y+(hole-1)/2 || j < x-hole/2 || j > x+(hole-1)/2
			}
		}
	}
	obs[y*w+x] = false
	return obs
}

// Heatmaps computes, for each number of down/upsamplings in ss (the other
// parameters from a), the weights of the observed pixels in the prediction
// of pixel (y, x) and the kernel row K((y, x), ·), both h×w row-major (the
// thesis's figure 3-4). A zero opt.Ridge becomes 1e-8: the identity prior's
// kernel is singular where the receptive field misses the diagonal.
func Heatmaps(ctx context.Context, a Arch, p Prior, h, w int, observed []bool, y, x int, ss []int, opt Options) (weights, rows [][]float64, err error) {
	if opt.Ridge == 0 {
		opt.Ridge = 1e-8
	}
	for _, n := range ss {
		an := Arch{S: n, Filter: a.Filter, Slope: a.Slope}
		k, err := NewKernel(ctx, an, p, h, w)
		if err != nil {
			return nil, nil, err
		}
		wts, _, err := Weights(ctx, k, observed, y, x, opt)
		if err != nil {
			return nil, nil, err
		}
		weights = append(weights, wts)
		rows = append(rows, k.Row(y, x))
	}
	return weights, rows, nil
}

// RunReport holds the figures of an inpainting run as rfm inpaint's
// --report writes them (fields in the JSON's alphabetical key order).
type RunReport struct {
	Bandwidth     float64 `json:"bandwidth"`
	Channels      int     `json:"channels"`
	Converged     bool    `json:"converged"`
	Exact         bool    `json:"exact"`
	Filter        int     `json:"filter"`
	Height        int     `json:"height"`
	Image         string  `json:"image"`
	Iterations    int     `json:"iterations"`
	Kernel        string  `json:"kernel"`
	KernelBytes   int64   `json:"kernel_bytes"`
	KernelSeconds float64 `json:"kernel_seconds"`
	Observed      int     `json:"observed"`
	PaddedHeight  int     `json:"padded_height"`
	PaddedWidth   int     `json:"padded_width"`
	PeakRSSBytes  uint64  `json:"peak_rss_bytes"`
	Precond       string  `json:"precond"` // CG's preconditioner ("" for Cholesky)
	// PrecondSeconds is the time to build CG's preconditioner (part of
	// SolveSeconds).
	PrecondSeconds float64 `json:"precond_seconds"`
	Prior          string  `json:"prior"`
	PSNRMissing    float64 `json:"psnr_missing"`
	Residual       float64 `json:"residual"`
	Ridge          float64 `json:"ridge"`
	S              int     `json:"s"`
	// Selection holds each candidate's PSNR on the held-out observed pixels
	// when s, the filter or the ridge were chosen by Select.
	Selection    []SelectionScore `json:"selection,omitempty"`
	Slope        float64          `json:"slope"`
	SolveSeconds float64          `json:"solve_seconds"`
	Tol          float64          `json:"tol"`
	TotalSeconds float64          `json:"total_seconds"`
	Width        int              `json:"width"`
}

// SelectionScore is a Score as the report writes it.
type SelectionScore struct {
	Filter int     `json:"filter"`
	PSNR   float64 `json:"psnr_heldout"`
	Ridge  float64 `json:"ridge"`
	S      int     `json:"s"`
}

// NewRunReport composes the report of inpainting image (path name, already
// loaded as m) with the kernel named kernel, architecture a and prior p,
// from the solve's report.
func NewRunReport(name string, m *Image, kernel string, bandwidth float64, a Arch, p Prior, rep Report) RunReport {
	r := RunReport{
		Image: name, Width: m.W, Height: m.H, Channels: m.C, PaddedWidth: rep.PadW, PaddedHeight: rep.PadH,
		Kernel: kernel, Bandwidth: bandwidth, S: a.S, Filter: a.Filter, Slope: a.Slope, Prior: p.Kind.String(),
		Observed: rep.Observed, Exact: rep.Exact, Iterations: rep.Iterations, Residual: rep.Residual, Converged: rep.Converged,
		KernelBytes: rep.KernelBytes, KernelSeconds: rep.KernelTime.Seconds(), SolveSeconds: rep.Time.Seconds(),
		PrecondSeconds: rep.PrecondTime.Seconds(),
	}
	if !rep.Exact {
		r.Precond = rep.Precond.String()
	}
	return r
}

// Write writes the report as indented JSON to path atomically.
func (r RunReport) Write(ctx context.Context, path string) error {
	return atomicfile.Write(ctx, path, r.WriteJSON)
}

// WriteJSON encodes the report as indented JSON.
func (r RunReport) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
