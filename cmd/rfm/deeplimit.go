package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/deeplimit"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/modelfile"
)

type deepLimitOpts struct {
	experiment   string
	activations  listFlag
	depths       listFlag
	ns           listFlag
	task         string
	data, target string
	n, nTest     int
	depth        int
	alpha        float64
	seed         uint64
	bayesSamples int
	out          string
}

func cmdDeepLimit(e *env, args []string) error {
	var o deepLimitOpts
	f := newFlagSet("deep-limit", "rfm deep-limit [--experiment taxonomy|consistency] --activation NAME[,NAME...] [flags]",
		`The NTK of an infinitely wide fully connected network as its depth L grows
(thesis chapter 4): the dual activation of any activation (Hermite series, or
bivariate Gaussian quadrature where the series converges slowly), the depth-L
NTK by its recursion in log form (stable to L = 1 000 000), and the taxonomy:
A = E[φ(z)], A' = E[φ'(z)], B' = E[φ'(z)²] for the activation scaled to
E[φ(z)²] = 1; majority vote when A ≠ 0, 1-NN when A = A' = 0, a singular kernel
‖x − x̃‖^(−α) with α = −2 log(A'²)/log(B') otherwise (Bayes optimal at α = d).

  taxonomy     print A, A', B', the case and α of each activation, then run the
               depth-L kernel machine sign(y K_n⁻¹ K(X, x)) for each --depths on a
               data set projected onto the sphere's positive orthant (min-max
               scaling, then x/‖x‖) and report its agreement with majority vote,
               1-NN and the singular kernel smoother of order α
  consistency  test error against the training size (--ns) on a synthetic task
               with known Bayes error, for each activation at depth --depth,
               beside 1-NN, majority vote and the Hilbert estimate (α = d)

Activations: `+deeplimit.ActivationList()+`.`,
		`rfm deep-limit --activation relu,hermite:2,cor2:2 --depths 1,10,100,1000,10000
rfm deep-limit --experiment consistency --task 2d --activation cor2:2,cor1:2 --out results/deep-limit`)
	f.String(&o.experiment, "experiment", "taxonomy", "`KIND`: taxonomy or consistency")
	f.List(&o.activations, "activation", "activation `NAMES`, comma-separated (e.g. relu, hermite:2, cor2:2, sine:a2=2.676)")
	f.List(&o.depths, "depths", "taxonomy: network `DEPTHS` L, comma-separated (default 1,10,100,1000,10000)")
	f.String(&o.task, "task", "2d", "synthetic `TASK`: 2d (Dirichlet on S²₊) or 3d (on S³₊); ignored with --data")
	f.String(&o.data, "data", "", "taxonomy: a table `FILE` with a two-class target instead of the synthetic task")
	f.String(&o.target, "target", "", "the target `COLUMN` of --data (default: a column named label or y)")
	f.Int(&o.n, "n", 500, "taxonomy: training rows `N`")
	f.Int(&o.nTest, "test", 500, "test rows `N` (consistency default: 2000 when left at 500)")
	f.List(&o.ns, "ns", "consistency: training sizes `SIZES`, comma-separated (default 100,200,500,1000,2000,5000,10000,20000)")
	f.Int(&o.depth, "depth", 1000, "consistency: network depth `L`")
	f.Float(&o.alpha, "alpha", 0, "taxonomy: order `A` of the reference singular kernel smoother (default: the activation's α, or the data's dimension when it has none)")
	f.Uint64(&o.seed, "seed", 1, "random `SEED` of the samples and splits")
	f.Int(&o.bayesSamples, "bayes-samples", 2_000_000, "Monte Carlo draws `N` for the synthetic task's Bayes error")
	f.String(&o.out, "out", "", "write results (JSON, markdown, and the consistency plot) to `DIR`")
	if err := f.ParseFlags(args, e.stdout); err != nil {
		return err
	}
	if len(o.activations) == 0 {
		return usagef("--activation is required: %s", deeplimit.ActivationList())
	}
	duals, err := deeplimit.ParseDuals(o.activations)
	if err != nil {
		return usagef("--activation: %s", strings.TrimPrefix(err.Error(), "deeplimit: "))
	}
	var task deeplimit.Dirichlet
	switch o.task {
	case "2d":
		task = deeplimit.Task2D
	case "3d":
		task = deeplimit.Task3D
	default:
		return usagef("--task %q: want 2d or 3d", o.task)
	}
	if o.bayesSamples < 1000 {
		return usagef("--bayes-samples %d: must be ≥ 1000", o.bayesSamples)
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
	}
	switch o.experiment {
	case "taxonomy":
		return deepTaxonomy(e, &o, duals, task)
	case "consistency":
		return deepConsistency(e, &o, duals, task)
	}
	return usagef("--experiment %q: want taxonomy or consistency", o.experiment)
}

func deepTaxonomy(e *env, o *deepLimitOpts, duals []*deeplimit.Dual, task deeplimit.Dirichlet) error {
	depths, err := cli.ParseInts("depths", o.depths, []int{1, 10, 100, 1000, 10000}, 1, deeplimit.MaxDepth)
	if err != nil {
		return err
	}
	if o.n < 2 || o.nTest < 1 {
		return usagef("--n %d, --test %d: need at least 2 training and 1 test rows", o.n, o.nTest)
	}
	train, y, test, yTest, dim, source, err := deepData(e, o, task)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "data: %s, %d training and %d test rows on the positive orthant of S^%d\n", source, train.N, test.N, train.D-1)
	var recs []deeplimit.TaxonomyRecord
	for _, d := range duals {
		ref := d.ReferenceAlpha(o.alpha, dim)
		d.WriteConstants(e.stdout)
		start := time.Now()
		rows, err := deeplimit.Sweep(e.ctx, d, depths, train, y, test, yTest, ref, func(s string) {
			fmt.Fprintf(e.stderr, "deep-limit: %s: %s\n", d.Act.Name, s)
		})
		if err != nil {
			return err
		}
		deeplimit.WriteSweep(e.stdout, rows, ref)
		fmt.Fprintf(e.stderr, "deep-limit: %s took %s\n", d.Act.Name, time.Since(start).Round(time.Millisecond))
		recs = append(recs, deeplimit.NewTaxonomyRecord(d, ref, rows))
	}
	if o.out == "" {
		return nil
	}
	name := "taxonomy-" + sanitize(strings.Join(o.activations, "_"))
	doc := map[string]any{"command": "rfm deep-limit " + strings.Join(os.Args[2:], " "), "data": source,
		"train_rows": train.N, "test_rows": test.N, "activations": recs}
	return writeJSONFile(e, filepath.Join(o.out, name+".json"), doc)
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ':' || r == '=' || r == '/' || r == ' ' {
			return '-'
		}
		return r
	}, s)
}

// deepData returns the taxonomy's training and test rows on the orthant:
// the synthetic task's, or --data's (min-max scaled on all its rows, then
// projected; a seeded shuffle, then the first --n rows train and the next
// --test rows test).
func deepData(e *env, o *deepLimitOpts, task deeplimit.Dirichlet) (train deeplimit.Points, y []float64, test deeplimit.Points, yTest []float64, dim int, source string, err error) {
	if o.data == "" {
		train, y, err = task.Sample(o.n, o.seed)
		if err == nil {
			test, yTest, err = task.Sample(o.nTest, o.seed+1_000_003)
		}
		return train, y, test, yTest, task.Dim(), fmt.Sprintf("synthetic Dirichlet task %s (seed %d)", o.task, o.seed), err
	}
	t, err := readTable(e.ctx, o.data, dataset.ReadOptions{})
	if err != nil {
		return
	}
	target, err := cli.ChooseTarget(t, o.target, o.data)
	if err != nil {
		return
	}
	train, y, test, yTest, dim, err = deeplimit.FromTable(t, o.data, target, o.n, o.nTest, o.seed)
	var few *deeplimit.TooFewRowsError
	if errors.As(err, &few) {
		err = usagef("--n %d + --test %d rows: %s has only %d", o.n, o.nTest, o.data, few.Rows)
	} else if err != nil {
		err = cli.InFile(o.data, err)
	}
	if err != nil {
		return
	}
	return train, y, test, yTest, dim, fmt.Sprintf("%s (target %q, seed %d)", o.data, target, o.seed), nil
}

func writeJSONFile(e *env, path string, v any) error {
	return modelfile.WriteAtomicContext(e.ctx, path, func(w io.Writer) error { return writeJSON(w, v) })
}

func deepConsistency(e *env, o *deepLimitOpts, duals []*deeplimit.Dual, task deeplimit.Dirichlet) error {
	if o.data != "" {
		return usagef("--data: the consistency experiment needs a task with a known Bayes error (--task)")
	}
	ns, err := cli.ParseInts("ns", o.ns, []int{100, 200, 500, 1000, 2000, 5000, 10000, 20000}, 1, 50000)
	if err != nil {
		return err
	}
	if err := checkDepthFlag(o.depth); err != nil {
		return err
	}
	nTest := o.nTest
	if nTest == 500 {
		nTest = 2000
	}
	if nTest < 1 {
		return usagef("--test %d: must be ≥ 1", nTest)
	}
	for _, d := range duals {
		d.WriteConstants(e.stdout)
	}
	bayes, se, err := task.BayesError(o.bayesSamples, o.seed+7)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\ntask %s: Dirichlet %v vs %v, prior %g, data dimension %d; Bayes error %.4f ± %.4f (Monte Carlo, %d draws)\n",
		o.task, task.Pos, task.Neg, task.Prior, task.Dim(), bayes, se, o.bayesSamples)
	start := time.Now()
	rows, err := deeplimit.Consistency(e.ctx, task, duals, ns, nTest, o.depth, o.seed, func(s string) {
		fmt.Fprintf(e.stderr, "deep-limit: %s (%s)\n", s, time.Since(start).Round(time.Second))
	})
	if err != nil {
		return err
	}
	names := deeplimit.ConsistencyColumns(duals)
	deeplimit.WriteConsistency(e.stdout, rows, names, nTest, o.depth)
	if o.out == "" {
		return nil
	}
	base := filepath.Join(o.out, "consistency-"+o.task)
	if err := deeplimit.ConsistencyFigure(base+".png", rows, names, bayes, o.depth, o.task); err != nil {
		return err
	}
	doc := map[string]any{"command": "rfm deep-limit " + strings.Join(os.Args[2:], " "), "task": o.task,
		"dirichlet_pos": task.Pos, "dirichlet_neg": task.Neg, "prior": task.Prior, "dimension": task.Dim(),
		"bayes_error": bayes, "bayes_error_se": se, "bayes_samples": o.bayesSamples, "test_rows": nTest,
		"depth": o.depth, "seed": o.seed, "rows": rows, "plot": filepath.Base(base + ".png")}
	if err := writeJSONFile(e, base+".json", doc); err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "deep-limit: wrote %s.json and %s.png\n", base, base)
	return nil
}

func checkDepthFlag(L int) error {
	if L < 1 || L > deeplimit.MaxDepth {
		return usagef("--depth %d: must be in 1..%d", L, deeplimit.MaxDepth)
	}
	return nil
}
