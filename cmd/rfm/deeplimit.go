package main

import (
	"os"
	"strings"

	"github.com/rfmkit/rfm/deeplimit"
	"github.com/rfmkit/rfm/internal/cli"
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
	task, ok := deeplimit.Tasks[o.task]
	if !ok {
		return usagef("--task %q: want 2d or 3d", o.task)
	}
	if o.bayesSamples < 1000 {
		return usagef("--bayes-samples %d: must be ≥ 1000", o.bayesSamples)
	}
	if err := cli.MkdirOut("out", o.out); err != nil {
		return err
	}
	run := &deeplimit.Run{Duals: duals, Text: e.stdout, Log: cli.Logger(e.stderr, "deep-limit: ", false), Out: o.out,
		Command: "rfm deep-limit " + strings.Join(os.Args[2:], " "), Seed: o.seed}
	switch o.experiment {
	case "taxonomy":
		return deepTaxonomy(e, &o, run, task)
	case "consistency":
		return deepConsistency(&o, run, task, e)
	}
	return usagef("--experiment %q: want taxonomy or consistency", o.experiment)
}

func deepTaxonomy(e *env, o *deepLimitOpts, run *deeplimit.Run, task deeplimit.Dirichlet) error {
	depths, err := cli.ParseInts("depths", o.depths, []int{1, 10, 100, 1000, 10000}, 1, deeplimit.MaxDepth)
	if err != nil {
		return err
	}
	if o.n < 2 || o.nTest < 1 {
		return usagef("--n %d, --test %d: need at least 2 training and 1 test rows", o.n, o.nTest)
	}
	data, err := deepData(e, o, task)
	if err != nil {
		return err
	}
	_, err = run.Taxonomy(e.ctx, data, depths, o.alpha, strings.Join(o.activations, "_"))
	return err
}

// deepData returns the taxonomy's training and test rows on the orthant:
// the synthetic task's, or --data's (min-max scaled on all its rows, then
// projected; a seeded shuffle, then the first --n rows train and the next
// --test rows test).
func deepData(e *env, o *deepLimitOpts, task deeplimit.Dirichlet) (*deeplimit.TaxonomyData, error) {
	if o.data == "" {
		return deeplimit.SyntheticData(task, o.task, o.n, o.nTest, o.seed)
	}
	return deeplimit.TableData(e.ctx, o.data, o.target, o.n, o.nTest, o.seed)
}

func deepConsistency(o *deepLimitOpts, run *deeplimit.Run, task deeplimit.Dirichlet, e *env) error {
	if o.data != "" {
		return usagef("--data: the consistency experiment needs a task with a known Bayes error (--task)")
	}
	ns, err := cli.ParseInts("ns", o.ns, []int{100, 200, 500, 1000, 2000, 5000, 10000, 20000}, 1, 50000)
	if err != nil {
		return err
	}
	if o.depth < 1 || o.depth > deeplimit.MaxDepth {
		return usagef("--depth %d: must be in 1..%d", o.depth, deeplimit.MaxDepth)
	}
	nTest := o.nTest
	if nTest == 500 {
		nTest = 2000
	}
	if nTest < 1 {
		return usagef("--test %d: must be ≥ 1", nTest)
	}
	_, err = run.Consistency(e.ctx, task, o.task, ns, nTest, o.depth, o.bayesSamples)
	return err
}
