package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/fit"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/tree"
)

// fitTree is what 'rfm fit' prints and saves for a tree of RFMs (res, fitted
// with the tree solver).
func fitTree(e *env, o *fitOptions, bar *progress, cfg rfm.Config, why string, fr *fit.Result, train, valid *rfm.Dataset, p *dataset.Pipeline, tg *dataset.Target) error {
	tm, plan := fr.Model.(*tree.Model), fr.Plan
	names := p.FeatureNames()
	summary := describe.SummarizeTree(tm, names, tg, 5)
	summary.Plan = plan.String()
	if valid != nil {
		v, err := tm.ValScore(e.ctx, valid)
		if err != nil {
			bar.Abort()
			return fmt.Errorf("score the --valid rows: %w", err)
		}
		summary.ValScore, summary.ValidationOn = &v, fmt.Sprintf("%s (%d rows)", o.valid, valid.N)
	}
	val := fmt.Sprintf("each leaf holds out a seeded %g%% of its rows to pick its round", 100*cfg.ValFraction)
	if cfg.ValFraction == 0 {
		val = "none: each leaf keeps its last round"
	}
	info := trainingInfo{Data: o.data, Rows: train.N, Validation: val, Version: versionString()}
	if err := saveModel(e.ctx, o.out, tm, p, tg, info); err != nil {
		bar.Abort()
		return err
	}
	elapsed := bar.Elapsed()
	bar.Finish(fmt.Sprintf("fit: %d rows, a tree of %d leaves (depth %d), %s; model written to %s", train.N, len(tm.Leaves), tm.Depth(), seconds(elapsed), o.out))
	res := describe.FitTree{
		FitData: newFitData(o, train, p, tg), Solver: string(cfg.Solver), Why: why,
		Config: tm.Config, Tree: summary, Seconds: elapsed.Seconds(),
	}
	if o.common.json {
		return writeJSON(e.stdout, res)
	}
	if o.common.quiet {
		return nil
	}
	return describe.WriteFitTree(e.stdout, &res, plan.String(), val, tg, tm.Task)
}

// rankOrder is the indices of v, largest value first (ties in index
// order), as the feature figures rank them.
func rankOrder(v []float64) []int { return plot.Ranking(v) }

// inspectTreeJSON is what 'rfm inspect --json' prints for a tree.
type inspectTreeJSON struct {
	fileJSON
	Features    int           `json:"features"`
	Config      rfm.Config    `json:"config"`
	Tree        describe.Tree `json:"tree"`
	TopFeatures []featureJSON `json:"top_features"` // diag(M) of the leaves weighted by their rows
	Figures     []string      `json:"figures,omitempty"`
}

// inspectTree shows a tree model: its shape, every leaf's size, chosen
// round and top features, and the global feature ranking (each leaf's
// diag(M) weighted by its share of the training rows).
func inspectTree(e *env, lm *loadedModel, tm *tree.Model, top int, plots string, shape *imageDims, common commonFlags) error {
	names := featureNames(lm)
	res := inspectTreeJSON{fileJSON: newFileJSON(lm), Features: tm.D, Config: tm.Config, Tree: describe.SummarizeTree(tm, names, lm.Target, 5)}
	diag := tm.FeatureDiagonal()
	if top == 0 || top > len(diag) {
		top = len(diag)
	}
	order := rankOrder(diag)[:top]
	largest := 0.0
	if len(order) > 0 {
		largest = diag[order[0]]
	}
	for r, j := range order {
		rel := 0.0
		if largest > 0 {
			rel = diag[j] / largest
		}
		res.TopFeatures = append(res.TopFeatures, featureJSON{Rank: r + 1, Name: names[j], Diag: diag[j], Relative: rel})
	}
	if plots != "" {
		if shape != nil {
			return usagef("--image-shape: the figures of a tree are its global feature ranking only")
		}
		if err := os.MkdirAll(plots, 0o755); err != nil {
			return fmt.Errorf("--plots %s: %w", plots, err)
		}
		path := filepath.Join(plots, "features.png")
		k := min(40, len(diag))
		if err := plot.FeatureBars(path, names, diag, k, "diag(M), leaves weighted by rows", filepath.Base(lm.Name)+": features ranked over the tree's leaves"); err != nil {
			return fmt.Errorf("figure %s: %w", path, err)
		}
		res.Figures = append(res.Figures, path)
	}
	if common.json {
		return writeJSON(e.stdout, res)
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	writeFileHeader(tw, lm)
	fmt.Fprintf(tw, "leaves\t%s\n", describeConfig(tm.Config))
	tw.Flush()
	b.WriteString("\n")
	describe.WriteTree(&b, &res.Tree, tm.Task)
	fmt.Fprintf(&b, "\nfeatures ranked over the leaves (diag(M) weighted by leaf rows):\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, f := range res.TopFeatures {
		fmt.Fprintf(tw, "%d\t%s\t%.4g\t%.3f\n", f.Rank, f.Name, f.Diag, f.Relative)
	}
	tw.Flush()
	for _, f := range res.Figures {
		fmt.Fprintf(&b, "figure %s\n", f)
	}
	_, err := io.WriteString(e.stdout, b.String())
	return err
}
