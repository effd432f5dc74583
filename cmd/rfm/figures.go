package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/plot"
)

// imageDims is the --image-shape of pixel inputs.
type imageDims struct{ h, w, c int }

func parseImageShape(s string) (*imageDims, error) {
	parts := strings.Split(strings.ToLower(s), "x")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, usagef("--image-shape %q: want HxW or HxWxC, e.g. 28x28", s)
	}
	dims := make([]int, 3)
	dims[2] = 1
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return nil, usagef("--image-shape %q: %q is not a positive whole number", s, p)
		}
		dims[i] = v
	}
	if c := dims[2]; c != 1 && c != 3 {
		return nil, usagef("--image-shape %q: %d channels; images have 1 (grey) or 3 (RGB)", s, c)
	}
	return &imageDims{h: dims[0], w: dims[1], c: dims[2]}, nil
}

// writeFigures draws what the model learned into dir and returns the files.
func writeFigures(dir string, lm *loadedModel, names []string, top int, shape *imageDims) ([]string, error) {
	// Check everything that can fail on the arguments before the first file
	// is written, so that a bad call leaves no partial set of figures.
	if shape != nil {
		if px := shape.h * shape.w * shape.c; px != rfmModel(lm).D {
			return nil, usagef("--image-shape %dx%dx%d has %d pixels but the model has %d features", shape.h, shape.w, shape.c, px, rfmModel(lm).D)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--plots %s: %w", dir, err)
	}
	m := rfmModel(lm)
	base := filepath.Base(lm.Name)
	var files []string
	add := func(name string, draw func(path string) error) error {
		path := filepath.Join(dir, name)
		if err := draw(path); err != nil {
			return fmt.Errorf("figure %s: %w", path, err)
		}
		files = append(files, path)
		return nil
	}
	diag := m.FeatureDiagonal()
	k := top
	if k == 0 || k > 40 {
		k = min(40, len(diag))
	}
	// A model that kept round 0 learned no M: say so on every figure of M
	// instead of drawing the identity as if it were a finding.
	learned := ""
	if m.M.IsIdentity() {
		learned = " (round 0 kept: M = I, nothing learned)"
	}
	if err := add("features.png", func(p string) error {
		return plot.FeatureBars(p, names, diag, k, "diag(M)", base+": features ranked by diag(M)"+learned)
	}); err != nil {
		return nil, err
	}

	// Eigen-decomposition of M over the model's (possibly RFM-T selected)
	// features, with vectors lifted back to all D inputs.
	dm := m.Dm()
	vals, vecs, err := kernel.EigSym(dm, m.FeatureMatrix())
	if err != nil {
		return nil, err
	}
	if err := add("spectrum.png", func(p string) error {
		return plot.Spectrum(p, vals, base+": eigenvalues of M"+learned)
	}); err != nil {
		return nil, err
	}
	nv := min(4, dm)
	top4 := make([][]float64, nv)
	topVals := make([]float64, nv)
	for j := 0; j < nv; j++ {
		col := dm - 1 - j
		v := make([]float64, m.D)
		for i := 0; i < dm; i++ {
			row := i
			if m.Selected != nil {
				row = m.Selected[i]
			}
			v[row] = vecs[i*dm+col]
		}
		// One sign convention for the bars and the images alike.
		top4[j], topVals[j] = plot.Oriented(v), vals[col]
	}
	trace := 0.0
	for _, l := range vals {
		trace += max(l, 0)
	}
	if err := add("eigenvectors.png", func(p string) error {
		return plot.Eigenvectors(p, names, top4, topVals, nv, base+": top eigenvectors of M"+learned)
	}); err != nil {
		return nil, err
	}

	xs := make([]float64, len(m.History))
	series := map[string][]float64{}
	acc := make([]float64, len(m.History))
	loss := make([]float64, len(m.History))
	for i, r := range m.History {
		xs[i], acc[i], loss[i] = float64(r.Round), r.ValAccuracy, r.ValLoss
	}
	ylabel := "validation MSE (standardized target)"
	if m.Task == "classification" {
		series["validation accuracy"] = acc
		ylabel = "validation accuracy"
	} else {
		series["validation loss"] = loss
	}
	if len(xs) > 0 && m.History[0].ValLoss > 0 {
		if err := add("rounds.png", func(p string) error {
			title := fmt.Sprintf("%s: validation by round (kept: %d)", base, m.BestRound)
			if m.Config.FinalKernel != nil {
				title += fmt.Sprintf("; rounds of %s, predictor %s", m.Config.Kernel, m.KernelUsed)
			}
			return plot.Curve(p, xs, series, "round", ylabel, title)
		}); err != nil {
			return nil, err
		}
	}

	if shape != nil {
		if err := add("diag_image.png", func(p string) error {
			return plot.Image(p, diag, shape.h, shape.w, shape.c, base+": diag(M)"+learned)
		}); err != nil {
			return nil, err
		}
		if shape.c == 1 {
			images := append([][]float64{diag}, top4...)
			titles := []string{"diag(M)"}
			for j := range top4 {
				titles = append(titles, eigenTitle(j, topVals[j], trace))
			}
			if err := add("eigenvector_images.png", func(p string) error {
				return plot.ImageGrid(p, images, shape.h, shape.w, titles, base+": what M weighs"+learned)
			}); err != nil {
				return nil, err
			}
		} else {
			for j, v := range top4 {
				if err := add(fmt.Sprintf("eigenvector%d_image.png", j+1), func(p string) error {
					return plot.Image(p, v, shape.h, shape.w, shape.c, fmt.Sprintf("%s: eigenvector %s", base, eigenTitle(j, topVals[j], trace)))
				}); err != nil {
					return nil, err
				}
			}
		}
	}
	return files, nil
}

// eigenTitle names eigenvector j by its share of the trace of M, short
// enough for a 224-px panel ("v1 · 63% of trace"); a vector with a share
// that rounds to 0 is noise, and the title says so.
func eigenTitle(j int, lambda, trace float64) string {
	if !(trace > 0) {
		return fmt.Sprintf("v%d", j+1)
	}
	share := 100 * max(lambda, 0) / trace
	if share < 0.05 {
		return fmt.Sprintf("v%d · ≈0%% (noise)", j+1)
	}
	return fmt.Sprintf("v%d · %.3g%% of trace", j+1, share)
}
