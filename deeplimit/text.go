package deeplimit

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/predictor"
)

// WriteConstants prints the activation's line of the taxonomy: its scale,
// A, A', B', the case and α.
func (d *Dual) WriteConstants(w io.Writer) {
	alpha := "—"
	if !math.IsNaN(d.Alpha) {
		alpha = fmt.Sprintf("%.6g", d.Alpha)
	}
	fmt.Fprintf(w, "\n%s (scaled by %.6g to E[φ²] = 1): A = %.6g, A' = %.6g, B' = %.6g → case %d, %s; α = %s\n",
		d.Act.Name, d.Scale, d.A, d.A1, d.B1, int(d.Case), d.Case, alpha)
}

// WriteSweep prints a depth sweep (Sweep's rows) as a table: per depth,
// the agreement with majority vote, 1-NN and the singular kernel smoother
// of order ref, the test error and how K_n was solved.
func WriteSweep(w io.Writer, rows []DepthRow, ref float64) {
	fmt.Fprintf(w, "  %8s  %9s  %9s  %14s  %10s  %s\n", "depth L", "majority", "1-NN", fmt.Sprintf("singular α=%.3g", ref), "test error", "K_n")
	for _, r := range rows {
		kn := "solved"
		switch {
		case r.Identity:
			kn = "identity to working precision"
		case r.Ridge > 0:
			kn = fmt.Sprintf("solved with ridge %g (numerically singular)", r.Ridge)
		}
		depth := strconv.Itoa(r.Depth)
		if r.Depth == 0 {
			depth = "∞"
		}
		fmt.Fprintf(w, "  %8s  %8.1f%%  %8.1f%%  %13.1f%%  %9.1f%%  %s\n", depth, 100*r.Majority, 100*r.Nearest, 100*r.Singular, 100*r.TestError, kn)
	}
}

// WriteConsistency prints the consistency experiment's table: the test
// error of each column (ConsistencyColumns) per training size.
func WriteConsistency(w io.Writer, rows []ConsistencyRow, names []string, nTest, depth int) {
	fmt.Fprintf(w, "test error on %d rows, depth L = %d:\n  %7s", nTest, depth, "n")
	for _, nm := range names {
		fmt.Fprintf(w, "  %17s", nm)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		fmt.Fprintf(w, "  %7d", r.N)
		for _, nm := range names {
			fmt.Fprintf(w, "  %16.2f%%", 100*r.Errors[nm])
		}
		fmt.Fprintln(w)
	}
}

// ConsistencyFigure draws the test error of every column but the Bayes
// classifier against the training size, with the Bayes error as a line,
// to path (PNG).
func ConsistencyFigure(path string, rows []ConsistencyRow, names []string, bayes float64, depth int, task string) error {
	xs := make([]float64, len(rows))
	series := map[string][]float64{}
	bayesName := fmt.Sprintf("Bayes error %.3f", bayes)
	for i, r := range rows {
		xs[i] = float64(r.N)
		for _, nm := range names {
			if nm == "bayes-classifier" {
				continue
			}
			series[nm] = append(series[nm], r.Errors[nm])
		}
		series[bayesName] = append(series[bayesName], bayes)
	}
	return plot.Curve(path, xs, series, "training rows n", "test error",
		fmt.Sprintf("Deep-limit NTK (L = %d) on the %s task", depth, task))
}

// FromTable encodes a table with a two-class target column (numbers as
// they are, categories one-hot) and splits it on the sphere's positive
// orthant (SplitOrthant: min-max scaling, then x/‖x‖; a seeded shuffle,
// then nTrain training and nTest test rows). dim is the dimension of the
// sphere's ambient space less one (the data's dimension); name is the
// table's name in errors.
func FromTable(t *dataset.Table, name, target string, nTrain, nTest int, seed uint64) (train Points, y []float64, test Points, yTest []float64, dim int, err error) {
	tg, p, err := predictor.FitEncoding(t, target, dataset.TaskClassification, dataset.ScaleNone)
	if err != nil {
		return
	}
	if tg.NumClasses() != 2 {
		err = fmt.Errorf("%s: target %q has %d classes: the deep-limit classifiers need two", name, target, tg.NumClasses())
		return
	}
	ds, err := predictor.Encode(t, p, tg)
	if err != nil {
		return
	}
	if ds.N < nTrain+nTest {
		err = &TooFewRowsError{Name: name, Rows: ds.N, Want: nTrain + nTest}
		return
	}
	all := Points{X: ds.X, N: ds.N, D: ds.D}
	if train, y, test, yTest, err = SplitOrthant(all, ds.Labels, nTrain, nTest, seed); err != nil {
		err = fmt.Errorf("%s: %w", name, err)
		return
	}
	return train, y, test, yTest, ds.D - 1, nil
}

// TooFewRowsError is FromTable's error for a table with fewer rows than
// the training and test rows asked for.
type TooFewRowsError struct {
	Name       string
	Rows, Want int
}

func (e *TooFewRowsError) Error() string {
	return fmt.Sprintf("%s has only %d rows, %d asked for", e.Name, e.Rows, e.Want)
}

// ParseDuals builds the dual activation of each activation name
// (ParseActivation's names, e.g. relu, hermite:2, cor2:2).
func ParseDuals(names []string) ([]*Dual, error) {
	var duals []*Dual
	for _, name := range names {
		act, err := ParseActivation(name)
		if err != nil {
			return nil, err
		}
		d, err := NewDual(act)
		if err != nil {
			return nil, err
		}
		duals = append(duals, d)
	}
	return duals, nil
}

// ActivationList names the activations for help texts: their names, then
// how a parameter is given.
func ActivationList() string {
	var names []string
	for _, s := range ActivationNames() {
		n, _, _ := strings.Cut(s, ":")
		names = append(names, n)
	}
	return strings.Join(names, ", ") + " (NAME:PARAM where a parameter applies)"
}
