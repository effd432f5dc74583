package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/fit"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/tree"
)

// treeJSON summarizes a tree model, for 'fit --json' and 'inspect --json'.
type treeJSON struct {
	Depth      int        `json:"depth"`
	Nodes      int        `json:"nodes"`
	Leaves     []leafJSON `json:"leaves"`
	LeafSize   int        `json:"leaf_size"`
	SplitRule  string     `json:"split_rule"`
	LeafSolver string     `json:"leaf_solver"`
	// Temperature of soft routing (0: hard routing).
	Temperature  float64  `json:"routing_temperature"`
	Plan         string   `json:"plan,omitempty"`
	Notes        []string `json:"notes,omitempty"`
	ValidationOn string   `json:"validation,omitempty"`
	// ValScore is the whole tree's score on --valid rows (accuracy or MSE).
	ValScore *float64 `json:"val_score,omitempty"`
}

type leafJSON struct {
	Leaf      int      `json:"leaf"`
	Rows      int      `json:"rows"`
	BestRound int      `json:"best_round"`
	ValScore  *float64 `json:"val_score,omitempty"` // the leaf's own holdout: accuracy or loss
	Class     *string  `json:"class,omitempty"`     // a constant leaf
	Top       []string `json:"top_features,omitempty"`
	Note      string   `json:"note,omitempty"`
}

// fitTreeJSON is what 'rfm fit --json' prints for a tree.
type fitTreeJSON struct {
	fitData
	Solver  string     `json:"solver"`
	Why     string     `json:"solver_reason"`
	Config  rfm.Config `json:"config"`
	Tree    treeJSON   `json:"tree"`
	Seconds float64    `json:"seconds"`
}

// fitTree is what 'rfm fit' prints and saves for a tree of RFMs (res, fitted
// with the tree solver).
func fitTree(e *env, o *fitOptions, bar *progress, cfg rfm.Config, why string, fr *fit.Result, train, valid *rfm.Dataset, p *dataset.Pipeline, tg *dataset.Target) error {
	tm, plan := fr.Model.(*tree.Model), fr.Plan
	names := p.FeatureNames()
	summary := summarizeTree(tm, names, tg, 5)
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
	res := fitTreeJSON{
		fitData: newFitData(o, train, p, tg), Solver: string(cfg.Solver), Why: why,
		Config: tm.Config, Tree: summary, Seconds: elapsed.Seconds(),
	}
	if o.common.json {
		return writeJSON(e.stdout, res)
	}
	if o.common.quiet {
		return nil
	}
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "data\t%s: %d rows, %d input columns → %d features\n", o.data, train.N, len(p.Inputs), train.D)
	fmt.Fprintf(tw, "target\t%s\n", describeTarget(tg))
	fmt.Fprintf(tw, "solver\ttree: %s\n", why)
	fmt.Fprintf(tw, "plan\t%s\n", plan)
	fmt.Fprintf(tw, "model\t%s\n", describeConfig(tm.Config))
	fmt.Fprintf(tw, "validation\t%s\n", val)
	tw.Flush()
	b.WriteString("\n")
	writeTreeText(&b, &summary, tm.Task)
	fmt.Fprintf(&b, "model written to %s\n", o.out)
	_, err := io.WriteString(e.stdout, b.String())
	return err
}

// summarizeTree describes the tree: its shape and, per leaf, its size,
// chosen round, holdout score and top features by diag(M).
func summarizeTree(tm *tree.Model, names []string, tg *dataset.Target, top int) treeJSON {
	leafSolver := tm.Config.LeafSolver
	if leafSolver == "" {
		leafSolver = rfm.SolverExact
	}
	res := treeJSON{Depth: tm.Depth(), Nodes: len(tm.Nodes), LeafSize: tm.Config.LeafSize, SplitRule: string(tm.Config.SplitRule),
		LeafSolver: string(leafSolver), Temperature: tm.Temperature, Notes: tm.Notes}
	for i, lf := range tm.Leaves {
		lj := leafJSON{Leaf: i, Rows: lf.N, Note: lf.Note}
		if lf.Model == nil {
			cls := fmt.Sprint(lf.Class)
			if tg != nil && lf.Class < len(tg.Classes) {
				cls = tg.Classes[lf.Class]
			}
			lj.Class = &cls
		} else {
			m := lf.Model
			lj.BestRound = m.BestRound
			if len(m.History) > 0 && m.Config.ValFraction > 0 {
				r := m.History[m.BestRound]
				v := r.ValLoss
				if m.Task == rfm.Classification {
					v = r.ValAccuracy
				}
				lj.ValScore = &v
			}
			lj.Top = topNames(m.FeatureDiagonal(), names, top)
		}
		res.Leaves = append(res.Leaves, lj)
	}
	return res
}

// topNames lists the names of the k largest values, largest first.
func topNames(v []float64, names []string, k int) []string {
	var out []string
	for _, j := range rankOrder(v)[:min(k, len(v))] {
		out = append(out, names[j])
	}
	return out
}

// rankOrder is the indices of v, largest value first (ties in index
// order), as the feature figures rank them.
func rankOrder(v []float64) []int { return plot.Ranking(v) }

// writeTreeText prints the tree's shape and a table of its leaves (the
// first 40; the JSON output has all).
func writeTreeText(b *strings.Builder, t *treeJSON, task rfm.Task) {
	sizes := make([]int, len(t.Leaves))
	constant := 0
	for i, l := range t.Leaves {
		sizes[i] = l.Rows
		if l.Class != nil {
			constant++
		}
	}
	slices.Sort(sizes)
	fmt.Fprintf(b, "tree: depth %d, %d nodes, %d %s leaves of %d–%d rows (median %d), split by %s", t.Depth, t.Nodes, len(t.Leaves), t.LeafSolver, sizes[0], sizes[len(sizes)-1], sizes[len(sizes)/2], t.SplitRule)
	if constant > 0 {
		fmt.Fprintf(b, "; %d leaves of a single class", constant)
	}
	if t.Temperature > 0 {
		fmt.Fprintf(b, "; soft routing at temperature %g", t.Temperature)
	}
	b.WriteString("\n")
	if t.ValScore != nil {
		what := "accuracy"
		if task == rfm.Regression {
			what = "MSE"
		}
		fmt.Fprintf(b, "validation %s on %s: %.4g\n", what, t.ValidationOn, *t.ValScore)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	score := "val_accuracy"
	if task == rfm.Regression {
		score = "val_loss"
	}
	fmt.Fprintf(tw, "leaf\trows\tround\t%s\ttop features\n", score)
	for i, l := range t.Leaves {
		if i == 40 {
			fmt.Fprintf(tw, "...\t%d more leaves (see --json)\t\t\t\n", len(t.Leaves)-40)
			break
		}
		v := "-"
		if l.ValScore != nil {
			v = fmt.Sprintf("%.4g", *l.ValScore)
		}
		top := joinLimited(l.Top, 5)
		round := fmt.Sprint(l.BestRound)
		if l.Class != nil {
			round, top = "-", "constant: class "+*l.Class
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\n", l.Leaf, l.Rows, round, v, top)
	}
	tw.Flush()
	for _, n := range t.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
}

// inspectTreeJSON is what 'rfm inspect --json' prints for a tree.
type inspectTreeJSON struct {
	fileJSON
	Features    int           `json:"features"`
	Config      rfm.Config    `json:"config"`
	Tree        treeJSON      `json:"tree"`
	TopFeatures []featureJSON `json:"top_features"` // diag(M) of the leaves weighted by their rows
	Figures     []string      `json:"figures,omitempty"`
}

// inspectTree shows a tree model: its shape, every leaf's size, chosen
// round and top features, and the global feature ranking (each leaf's
// diag(M) weighted by its share of the training rows).
func inspectTree(e *env, lm *loadedModel, tm *tree.Model, top int, plots string, shape *imageDims, common commonFlags) error {
	names := featureNames(lm)
	res := inspectTreeJSON{fileJSON: newFileJSON(lm), Features: tm.D, Config: tm.Config, Tree: summarizeTree(tm, names, lm.Target, 5)}
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
	writeTreeText(&b, &res.Tree, tm.Task)
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
