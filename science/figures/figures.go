package figures

import (
	"fmt"
	"path/filepath"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/plot"
)

// Model draws what the RFM m learned into dir (which must exist) and
// returns the files written, in the order of the package comment. name
// titles the figures (its base name is used); names are the features'
// (nil: x0, x1, ...); top is how many features the bar chart ranks (0 or
// more than 40: 40); shape, if set, says the features are an image's
// pixels.
func Model(dir string, m *rfm.Model, name string, names []string, top int, shape *plot.ImageShape) ([]string, error) {
	if shape != nil && shape.Pixels() != m.D {
		return nil, fmt.Errorf("figures: an image of %dx%dx%d has %d pixels but the model has %d features", shape.H, shape.W, shape.C, shape.Pixels(), m.D)
	}
	base := filepath.Base(name)
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
	top4, topVals := topEigenvectors(m, vals, vecs, min(4, dm))
	nv := len(top4)
	trace := 0.0
	for _, l := range vals {
		trace += max(l, 0)
	}
	if err := add("eigenvectors.png", func(p string) error {
		return plot.Eigenvectors(p, names, top4, topVals, nv, base+": top eigenvectors of M"+learned)
	}); err != nil {
		return nil, err
	}

	xs, series, ylabel := roundSeries(m)
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
			return plot.Image(p, diag, shape.H, shape.W, shape.C, base+": diag(M)"+learned)
		}); err != nil {
			return nil, err
		}
		if shape.C == 1 {
			images := append([][]float64{diag}, top4...)
			titles := []string{"diag(M)"}
			for j := range top4 {
				titles = append(titles, eigenTitle(j, topVals[j], trace))
			}
			if err := add("eigenvector_images.png", func(p string) error {
				return plot.ImageGrid(p, images, shape.H, shape.W, titles, base+": what M weighs"+learned)
			}); err != nil {
				return nil, err
			}
		} else {
			for j, v := range top4 {
				if err := add(fmt.Sprintf("eigenvector%d_image.png", j+1), func(p string) error {
					return plot.Image(p, v, shape.H, shape.W, shape.C, fmt.Sprintf("%s: eigenvector %s", base, eigenTitle(j, topVals[j], trace)))
				}); err != nil {
					return nil, err
				}
			}
		}
	}
	return files, nil
}

// topEigenvectors are the k eigenvectors of M with the largest eigenvalues
// (EigSym's vals and vecs over the model's Dm features), lifted back to all
// D inputs and given one sign convention for the bars and the images alike,
// with their eigenvalues.
func topEigenvectors(m *rfm.Model, vals, vecs []float64, k int) ([][]float64, []float64) {
	dm := m.Dm()
	top := make([][]float64, k)
	topVals := make([]float64, k)
	for j := 0; j < k; j++ {
		col := dm - 1 - j
		v := make([]float64, m.D)
		for i := 0; i < dm; i++ {
			row := i
			if m.Selected != nil {
				row = m.Selected[i]
			}
			v[row] = vecs[i*dm+col]
		}
		top[j], topVals[j] = plot.Oriented(v), vals[col]
	}
	return top, topVals
}

// roundSeries is the validation score by round: accuracy for a
// classifier, the loss otherwise.
func roundSeries(m *rfm.Model) (xs []float64, series map[string][]float64, ylabel string) {
	xs = make([]float64, len(m.History))
	series = map[string][]float64{}
	acc := make([]float64, len(m.History))
	loss := make([]float64, len(m.History))
	for i, r := range m.History {
		xs[i], acc[i], loss[i] = float64(r.Round), r.ValAccuracy, r.ValLoss
	}
	ylabel = "validation MSE (standardized target)"
	if m.Task == "classification" {
		series["validation accuracy"] = acc
		ylabel = "validation accuracy"
	} else {
		series["validation loss"] = loss
	}
	return xs, series, ylabel
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
