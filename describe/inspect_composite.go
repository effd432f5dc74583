package describe

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/predictor"
	"github.com/rfmkit/rfm/tree"
)

// TreeInspection is the inspection of a tree of RFMs: its shape, every
// leaf's size, chosen round and top features, and the global feature
// ranking (each leaf's diag(M) weighted by its share of the training
// rows).
type TreeInspection struct {
	File
	Features    int        `json:"features"`
	Config      rfm.Config `json:"config"`
	Tree        Tree       `json:"tree"`
	TopFeatures []Feature  `json:"top_features"` // diag(M) of the leaves weighted by their rows
	Figures     []string   `json:"figures,omitempty"`

	file *predictor.Model
	task rfm.Task
}

func inspectTree(lm *predictor.Model, opt InspectOptions) (Inspection, error) {
	return inspectTreeModel(lm, lm.Fitted.(*tree.Model), opt)
}

func inspectTreeModel(lm *predictor.Model, tm *tree.Model, opt InspectOptions) (*TreeInspection, error) {
	names := FeatureNames(lm)
	res := &TreeInspection{File: NewFile(lm), Features: tm.D, Config: tm.Config, Tree: SummarizeTree(tm, names, lm.Target, 5),
		file: lm, task: tm.Task}
	diag := tm.FeatureDiagonal()
	res.TopFeatures = rankFeatures(diag, names, opt.Top)
	if opt.Plots != "" {
		if opt.ImageShape != nil {
			return nil, &OptionError{"--image-shape: the figures of a tree are its global feature ranking only"}
		}
		if err := os.MkdirAll(opt.Plots, 0o755); err != nil {
			return nil, fmt.Errorf("--plots %s: %w", opt.Plots, err)
		}
		path := filepath.Join(opt.Plots, "features.png")
		k := min(40, len(diag))
		if err := plot.FeatureBars(path, names, diag, k, "diag(M), leaves weighted by rows", filepath.Base(lm.Name)+": features ranked over the tree's leaves"); err != nil {
			return nil, fmt.Errorf("figure %s: %w", path, err)
		}
		res.Figures = append(res.Figures, path)
	}
	return res, nil
}

// WriteText prints the inspection of a tree.
func (r *TreeInspection) WriteText(w io.Writer) error {
	var b strings.Builder
	tw := fileHeader(&b, r.file)
	fmt.Fprintf(tw, "leaves\t%s\n", Config(r.Config))
	tw.Flush()
	b.WriteString("\n")
	WriteTree(&b, &r.Tree, r.task)
	fmt.Fprintf(&b, "\nfeatures ranked over the leaves (diag(M) weighted by leaf rows):\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, f := range r.TopFeatures {
		fmt.Fprintf(tw, "%d\t%s\t%.4g\t%.3f\n", f.Rank, f.Name, f.Diag, f.Relative)
	}
	tw.Flush()
	for _, f := range r.Figures {
		fmt.Fprintf(&b, "figure %s\n", f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ForestInspection is the inspection of a forest: its trees share the
// configuration, so the first one stands for them (the JSON is the first
// tree's).
type ForestInspection struct {
	*TreeInspection
	Trees int `json:"-"`
}

func inspectForest(lm *predictor.Model, opt InspectOptions) (Inspection, error) {
	f := lm.Fitted.(*tree.Forest)
	first, err := inspectTreeModel(lm, f.Trees[0], opt)
	if err != nil {
		return nil, err
	}
	return &ForestInspection{TreeInspection: first, Trees: len(f.Trees)}, nil
}

// WriteText prints the inspection of a forest: its size, then its first
// tree.
func (r *ForestInspection) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "forest of %d trees (the mean of their outputs); the first tree:\n\n", r.Trees)
	return r.TreeInspection.WriteText(w)
}

// EnsembleInspection is the inspection of an ensemble: a line per member,
// then the first (best) member inspected as an RFM.
type EnsembleInspection struct {
	File
	Kind        string               `json:"kind"`
	Features    int                  `json:"features"`
	Members     []Member             `json:"members"`
	Calibration *rfm.Calibration     `json:"calibration,omitempty"`
	Note        string               `json:"note,omitempty"`
	Validation  *ensemble.Validation `json:"validation,omitempty"`
	Best        *RFMInspection       `json:"best_member"`

	file *predictor.Model
}

// Member is an ensemble's member.
type Member struct {
	Config    rfm.Config `json:"config"`
	BestRound int        `json:"best_round"`
	Centers   int        `json:"centers"`
}

func inspectEnsemble(lm *predictor.Model, opt InspectOptions) (Inspection, error) {
	em := lm.Fitted.(*ensemble.Model)
	best := *lm
	best.Fitted = em.Members[0]
	inner, err := inspectRFM(&best, opt, false) // the file's header is above it
	if err != nil {
		return nil, err
	}
	res := &EnsembleInspection{File: NewFile(lm), Kind: "ensemble", Features: em.D, Calibration: em.Calibration, Note: em.Note,
		Validation: em.Validation, Best: inner, file: lm}
	for _, m := range em.Members {
		res.Members = append(res.Members, Member{Config: m.Config, BestRound: m.BestRound, Centers: m.N})
	}
	return res, nil
}

// WriteText prints the inspection of an ensemble.
func (r *EnsembleInspection) WriteText(w io.Writer) error {
	var b strings.Builder
	tw := fileHeader(&b, r.file)
	fmt.Fprintf(tw, "ensemble\tmean of %d RFMs' probabilities (outputs for regression)\n", len(r.Members))
	if cal := r.Calibration; cal != nil {
		fmt.Fprintf(tw, "calibration\tof the mean: %s\n", Calibration(cal))
	}
	if v := r.Validation; v != nil {
		rows := "validation rows"
		if v.Folds {
			rows = "out-of-fold rows"
		}
		fmt.Fprintf(tw, "validation\ton %d %s: the mean %.2f%% right (log-loss %.4f), the best member alone %.2f%% (%.4f), the plain kernel %.2f%% (the last two chosen on these rows)\n",
			v.Rows, rows, 100*v.Accuracy, v.LogLoss, 100*v.BestAccuracy, v.BestLogLoss, 100*v.Floor)
	}
	if r.Note != "" {
		fmt.Fprintf(tw, "note\t%s\n", r.Note)
	}
	tw.Flush()
	b.WriteString("\nmembers (best first):\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for i, m := range r.Members {
		fmt.Fprintf(tw, "%d\t%s\tround %d\t%d centres\n", i, Config(m.Config), m.BestRound, m.Centers)
	}
	tw.Flush()
	b.WriteString("\nmember 0 (the best) in detail:\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return r.Best.WriteText(w)
}
