package deeplimit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/cli"
)

// Run is one experiment of rfm deep-limit, with what it prints and
// writes: Taxonomy and Consistency run it.
type Run struct {
	Duals []*Dual
	// Text receives the report as it is made; Log, when set, the progress
	// lines.
	Text io.Writer
	Log  func(format string, args ...any)
	// Out, when set, is the folder of the result files; Command is the
	// command line recorded in them.
	Out, Command string
	Seed         uint64
}

func (r *Run) logf(format string, args ...any) {
	if r.Log != nil {
		r.Log(format, args...)
	}
}

// Tasks are the synthetic tasks by name.
var Tasks = map[string]Dirichlet{"2d": Task2D, "3d": Task3D}

// TaxonomyData is the taxonomy's training and test rows on the orthant,
// the data's dimension and a description of where they come from.
type TaxonomyData struct {
	Train, Test Points
	Y, YTest    []float64
	Dim         int
	Source      string
}

// SyntheticData draws n training and nTest test rows of the task (the test
// rows with another seed).
func SyntheticData(task Dirichlet, name string, n, nTest int, seed uint64) (*TaxonomyData, error) {
	d := &TaxonomyData{Dim: task.Dim(), Source: fmt.Sprintf("synthetic Dirichlet task %s (seed %d)", name, seed)}
	var err error
	if d.Train, d.Y, err = task.Sample(n, seed); err != nil {
		return nil, err
	}
	if d.Test, d.YTest, err = task.Sample(nTest, seed+1_000_003); err != nil {
		return nil, err
	}
	return d, nil
}

// TableData reads a table with a two-class target column (target ""
// chooses a column named label or y) and splits it on the orthant
// (FromTable: n training and nTest test rows after a seeded shuffle).
func TableData(ctx context.Context, path, target string, n, nTest int, seed uint64) (*TaxonomyData, error) {
	t, err := cli.ReadTable(ctx, path, dataset.ReadOptions{})
	if err != nil {
		return nil, err
	}
	if target, err = cli.ChooseTarget(t, target, path); err != nil {
		return nil, err
	}
	d := &TaxonomyData{Source: fmt.Sprintf("%s (target %q, seed %d)", path, target, seed)}
	d.Train, d.Y, d.Test, d.YTest, d.Dim, err = FromTable(t, path, target, n, nTest, seed)
	var few *TooFewRowsError
	if errors.As(err, &few) {
		return nil, cli.Usagef("--n %d + --test %d rows: %s has only %d", n, nTest, path, few.Rows)
	} else if err != nil {
		return nil, cli.InFile(path, err)
	}
	return d, nil
}

// Taxonomy prints each activation's constants and runs the depth-L kernel
// machine for each of depths on data, beside majority vote, 1-NN and the
// singular kernel smoother of order alpha (0: the activation's α, or the
// data's dimension); with Out, it writes taxonomy-NAME.json there, name
// being the activations' names.
func (r *Run) Taxonomy(ctx context.Context, data *TaxonomyData, depths []int, alpha float64, name string) ([]TaxonomyRecord, error) {
	fmt.Fprintf(r.Text, "data: %s, %d training and %d test rows on the positive orthant of S^%d\n", data.Source, data.Train.N, data.Test.N, data.Train.D-1)
	var recs []TaxonomyRecord
	for _, d := range r.Duals {
		ref := d.ReferenceAlpha(alpha, data.Dim)
		d.WriteConstants(r.Text)
		start := time.Now()
		rows, err := Sweep(ctx, d, depths, data.Train, data.Y, data.Test, data.YTest, ref, func(s string) { r.logf("%s: %s", d.Act.Name, s) })
		if err != nil {
			return nil, err
		}
		WriteSweep(r.Text, rows, ref)
		r.logf("%s took %s", d.Act.Name, time.Since(start).Round(time.Millisecond))
		recs = append(recs, NewTaxonomyRecord(d, ref, rows))
	}
	if r.Out == "" {
		return recs, nil
	}
	doc := map[string]any{"command": r.Command, "data": data.Source, "train_rows": data.Train.N, "test_rows": data.Test.N, "activations": recs}
	return recs, cli.WriteJSONFile(ctx, filepath.Join(r.Out, "taxonomy-"+FileName(name)+".json"), doc)
}

// FileName replaces the characters of activation specs that do not belong
// in a file name by '-'.
func FileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ':' || r == '=' || r == '/' || r == ' ' {
			return '-'
		}
		return r
	}, s)
}

// Consistency measures the test error against the training sizes ns of
// the task (named name) at depth L, nTest test rows, beside 1-NN, majority
// vote, the Hilbert estimate and the Bayes error (bayesSamples Monte Carlo
// draws); with Out, it writes consistency-NAME.json and .png there.
func (r *Run) Consistency(ctx context.Context, task Dirichlet, name string, ns []int, nTest, L, bayesSamples int) ([]ConsistencyRow, error) {
	for _, d := range r.Duals {
		d.WriteConstants(r.Text)
	}
	bayes, se, err := task.BayesError(bayesSamples, r.Seed+7)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(r.Text, "\ntask %s: Dirichlet %v vs %v, prior %g, data dimension %d; Bayes error %.4f ± %.4f (Monte Carlo, %d draws)\n",
		name, task.Pos, task.Neg, task.Prior, task.Dim(), bayes, se, bayesSamples)
	start := time.Now()
	rows, err := Consistency(ctx, task, r.Duals, ns, nTest, L, r.Seed, func(s string) {
		r.logf("%s (%s)", s, time.Since(start).Round(time.Second))
	})
	if err != nil {
		return nil, err
	}
	names := ConsistencyColumns(r.Duals)
	WriteConsistency(r.Text, rows, names, nTest, L)
	if r.Out == "" {
		return rows, nil
	}
	base := filepath.Join(r.Out, "consistency-"+name)
	if err := ConsistencyFigure(base+".png", rows, names, bayes, L, name); err != nil {
		return nil, err
	}
	doc := map[string]any{"command": r.Command, "task": name,
		"dirichlet_pos": task.Pos, "dirichlet_neg": task.Neg, "prior": task.Prior, "dimension": task.Dim(),
		"bayes_error": bayes, "bayes_error_se": se, "bayes_samples": bayesSamples, "test_rows": nTest,
		"depth": L, "seed": r.Seed, "rows": rows, "plot": filepath.Base(base + ".png")}
	if err := cli.WriteJSONFile(ctx, base+".json", doc); err != nil {
		return nil, err
	}
	r.logf("wrote %s.json and %s.png", base, base)
	return rows, nil
}
