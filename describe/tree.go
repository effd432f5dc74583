package describe

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/tree"
)

// Tree summarizes a tree model, for 'fit --json' and 'inspect --json'.
type Tree struct {
	Depth      int    `json:"depth"`
	Nodes      int    `json:"nodes"`
	Leaves     []Leaf `json:"leaves"`
	LeafSize   int    `json:"leaf_size"`
	SplitRule  string `json:"split_rule"`
	LeafSolver string `json:"leaf_solver"`
	// Temperature of soft routing (0: hard routing).
	Temperature  float64  `json:"routing_temperature"`
	Plan         string   `json:"plan,omitempty"`
	Notes        []string `json:"notes,omitempty"`
	ValidationOn string   `json:"validation,omitempty"`
	// ValScore is the whole tree's score on --valid rows (accuracy or MSE).
	ValScore *float64 `json:"val_score,omitempty"`
}

// Leaf is one leaf of a Tree summary.
type Leaf struct {
	Leaf      int      `json:"leaf"`
	Rows      int      `json:"rows"`
	BestRound int      `json:"best_round"`
	ValScore  *float64 `json:"val_score,omitempty"` // the leaf's own holdout: accuracy or loss
	Class     *string  `json:"class,omitempty"`     // a constant leaf
	Top       []string `json:"top_features,omitempty"`
	Note      string   `json:"note,omitempty"`
}

// SummarizeTree describes the tree: its shape and, per leaf, its size,
// chosen round, holdout score and top features by diag(M).
func SummarizeTree(tm *tree.Model, names []string, tg *dataset.Target, top int) Tree {
	leafSolver := tm.Config.LeafSolver
	if leafSolver == "" {
		leafSolver = rfm.SolverExact
	}
	res := Tree{Depth: tm.Depth(), Nodes: len(tm.Nodes), LeafSize: tm.Config.LeafSize, SplitRule: string(tm.Config.SplitRule),
		LeafSolver: string(leafSolver), Temperature: tm.Temperature, Notes: tm.Notes}
	for i, lf := range tm.Leaves {
		lj := Leaf{Leaf: i, Rows: lf.N, Note: lf.Note}
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
			lj.Top = TopNames(m.FeatureDiagonal(), names, top)
		}
		res.Leaves = append(res.Leaves, lj)
	}
	return res
}

// TopNames lists the names of the k largest values, largest first.
func TopNames(v []float64, names []string, k int) []string {
	var out []string
	for _, j := range plot.Ranking(v)[:min(k, len(v))] {
		out = append(out, names[j])
	}
	return out
}

// WriteTree prints the tree's shape and a table of its leaves (the
// first 40; the JSON output has all).
func WriteTree(b *strings.Builder, t *Tree, task rfm.Task) {
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
		top := JoinLimited(l.Top, 5)
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

// TreeSummary is SummarizeTree of m when m is a tree of RFMs, else nil:
// the tree's own description, for reports that hold a model of any kind.
func TreeSummary(m rfm.Fitted, names []string, tg *dataset.Target, top int) *Tree {
	tm, ok := m.(*tree.Model)
	if !ok {
		return nil
	}
	s := SummarizeTree(tm, names, tg, top)
	return &s
}
