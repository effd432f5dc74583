package tune

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/plot"
)

// Figures draws the search res into dir (PNG files, listed): the top
// rung's scores in the order the trials ended with the best so far, and
// every scored trial of the first rung against its bandwidth and its
// ridge.
func Figures(dir string, res *Result) ([]string, error) {
	classification := res.Task == rfm.Classification
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--plots %s: %w", dir, err)
	}
	val := func(t *Trial) float64 {
		if classification {
			return t.Accuracy
		}
		return t.Loss
	}
	ylabel := "validation loss (MSE, standardized)"
	if classification {
		ylabel = "validation accuracy"
	}
	top := res.Best.Rows
	var xs, ys, bests []float64
	var best *Trial
	for i := range res.Trials {
		t := &res.Trials[i]
		if !t.Scored() || t.Rows != top {
			continue
		}
		if best == nil || Better(res.Task, t, best) {
			best = t
		}
		xs = append(xs, float64(len(xs)+1))
		ys = append(ys, val(t))
		bests = append(bests, val(best))
	}
	var files []string
	path := filepath.Join(dir, "trials.png")
	title := fmt.Sprintf("rfm tune: %d trials on %d rows (%s)", len(xs), top, res.Design)
	if err := plot.Curve(path, xs, map[string][]float64{"trial": ys, "best so far": bests}, "trial (in the order they ended)", ylabel, title); err != nil {
		return nil, err
	}
	files = append(files, path)
	first := res.Rungs[0]
	// The bandwidth as the search drew it: relative to the median distance
	// between rows of its scaling (trials given an absolute L are left out),
	// or absolute when it was fixed.
	relative := false
	for i := range res.Trials {
		relative = relative || res.Trials[i].Ratio > 0
	}
	var bw, bsc, rd, sc []float64
	for i := range res.Trials {
		t := &res.Trials[i]
		if !t.Scored() || t.Rows != first {
			continue
		}
		switch {
		case !relative:
			bw, bsc = append(bw, math.Log10(t.Config.Kernel.Bandwidth)), append(bsc, val(t))
		case t.Ratio > 0:
			bw, bsc = append(bw, math.Log10(t.Ratio)), append(bsc, val(t))
		}
		rd = append(rd, math.Log10(t.Config.Ridge))
		sc = append(sc, val(t))
	}
	if len(sc) == 0 {
		return files, nil
	}
	bwLabel := "log10 bandwidth L"
	if relative {
		bwLabel = "log10 (bandwidth L / median distance between rows)"
	}
	for _, p := range []struct {
		name, label string
		x, y        []float64
	}{{"bandwidth.png", bwLabel, bw, bsc}, {"ridge.png", "log10 ridge λ", rd, sc}} {
		if len(p.x) == 0 {
			continue
		}
		path := filepath.Join(dir, p.name)
		title := fmt.Sprintf("rfm tune: %d trials on %d rows", len(p.x), first)
		if err := plot.Scatter(path, p.x, p.y, nil, p.label, ylabel, title, false); err != nil {
			return nil, err
		}
		files = append(files, path)
	}
	return files, nil
}
