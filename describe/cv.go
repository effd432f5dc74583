package describe

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
)

// Stat is a metric's mean and (population) standard deviation over the
// folds where it is defined.
type Stat struct {
	Mean  float64 `json:"mean"`
	Std   float64 `json:"std"`
	Folds int     `json:"folds"`
}

// Fold is one fold of a cross-validation: its sizes, the round its model
// kept (or its leaves, a tree) and its metrics.
type Fold struct {
	Fold      int            `json:"fold"`
	TrainRows int            `json:"train_rows"`
	TestRows  int            `json:"test_rows"`
	BestRound int            `json:"best_round"`
	Leaves    int            `json:"leaves,omitempty"` // a tree fold
	Values    map[string]any `json:"metrics"`
}

// CV is what 'rfm cv --json' prints.
type CV struct {
	Data       string          `json:"data"`
	Target     string          `json:"target"`
	Task       string          `json:"task"`
	Rows       int             `json:"rows"`
	Folds      int             `json:"folds"`
	Stratified bool            `json:"stratified"`
	Config     rfm.Config      `json:"config"`
	Summary    map[string]Stat `json:"summary"`
	PerFold    []Fold          `json:"per_fold"`
	Seconds    float64         `json:"seconds"`
}

// FoldSummary is the mean ± standard deviation over the folds of each
// metric, over the folds where it is defined.
func FoldSummary(folds []Fold, names []string) map[string]Stat {
	sum := map[string]Stat{}
	for _, m := range names {
		var vals []float64
		for _, fd := range folds {
			if v, ok := fd.Values[m].(*float64); ok && v != nil {
				vals = append(vals, *v)
			}
		}
		if len(vals) > 0 {
			sum[m] = MeanStd(vals)
		}
	}
	return sum
}

// MeanStd is the mean and population standard deviation of v.
func MeanStd(v []float64) Stat {
	s := 0.0
	for _, x := range v {
		s += x
	}
	mean := s / float64(len(v))
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return Stat{Mean: mean, Std: math.Sqrt(ss / float64(len(v))), Folds: len(v)}
}

// WriteCV prints a cross-validation: the data and model, the mean ± std of
// each metric in names and, with perFold, every fold's.
func WriteCV(w io.Writer, r *CV, names []string, tg *dataset.Target, perFold bool) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	how := "random"
	if r.Stratified {
		how = "stratified"
	}
	fmt.Fprintf(tw, "data\t%s: %d rows, %d-fold cross-validation (%s, seed %d)\n", r.Data, r.Rows, r.Folds, how, r.Config.Seed)
	fmt.Fprintf(tw, "target\t%s\n", Target(tg))
	fmt.Fprintf(tw, "model\t%s\n", Config(r.Config))
	tw.Flush()
	b.WriteString("\n")
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "metric\tmean\t± std\tfolds\n")
	for _, m := range names {
		s, ok := r.Summary[m]
		if !ok {
			fmt.Fprintf(tw, "%s\tn/a\t\t0\n", m)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.4f\t± %.4f\t%d\n", m, s.Mean, s.Std, s.Folds)
	}
	tw.Flush()
	if perFold {
		b.WriteString("\n")
		tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "fold\ttrain\ttest\tbest_round\t")
		for _, m := range names {
			fmt.Fprintf(tw, "%s\t", m)
		}
		fmt.Fprint(tw, "\n")
		for _, fd := range r.PerFold {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t", fd.Fold, fd.TrainRows, fd.TestRows, fd.BestRound)
			for _, m := range names {
				if v, ok := fd.Values[m].(*float64); ok && v != nil {
					fmt.Fprintf(tw, "%.4f\t", *v)
				} else {
					fmt.Fprint(tw, "n/a\t")
				}
			}
			fmt.Fprint(tw, "\n")
		}
		tw.Flush()
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ClassMetrics and RegMetrics are the metrics of a cross-validation, the
// first being the headline.
var (
	ClassMetrics = []string{"accuracy", "log_loss", "auc"}
	RegMetrics   = []string{"mse", "rmse", "mae", "r2"}
)
