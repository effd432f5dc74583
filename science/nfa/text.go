package nfa

import (
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"text/tabwriter"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/predictor"
	"github.com/rfmkit/rfm/synth"
)

// FromTable splits a table into training and test Data for Run: a seeded
// 20% of the rows (at least one) is the test split, the column pipeline
// (standardized numbers, one-hot categories) and the target encoding are
// fitted on the training rows only, and a classification target becomes
// one-hot outputs (classes is then their number; 0 for regression). name
// is the table's name in errors.
func FromTable(t *dataset.Table, name, target string, seed uint64) (tr, te *Data, classes int, err error) {
	n := t.NRows()
	nTest := max(1, n/5)
	if n-nTest < 2 {
		return nil, nil, 0, fmt.Errorf("%s: %d rows are too few", name, n)
	}
	perm := rand.New(rand.NewPCG(seed, 0x7e57)).Perm(n)
	trT, err := t.SelectRows(perm[nTest:])
	if err != nil {
		return nil, nil, 0, err
	}
	teT, err := t.SelectRows(perm[:nTest])
	if err != nil {
		return nil, nil, 0, err
	}
	tg, p, err := predictor.FitEncoding(trT, target, "auto", dataset.ScaleStandard)
	if err != nil {
		return nil, nil, 0, err
	}
	encode := func(tab *dataset.Table) (*Data, error) {
		ds, err := predictor.Encode(tab, p, tg)
		if err != nil {
			return nil, err
		}
		out := &Data{X: ds.X, Y: ds.Y, N: ds.N, D: ds.D, K: 1}
		if tg.IsClassification() {
			out.K = tg.NumClasses()
			if out.Y, err = tg.OneHot(ds.Labels); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if tr, err = encode(trT); err != nil {
		return nil, nil, 0, err
	}
	if te, err = encode(teT); err != nil {
		return nil, nil, 0, err
	}
	if tg.IsClassification() {
		classes = tg.NumClasses()
	}
	return tr, te, classes, nil
}

// WriteText prints the result: the data and network, a table of the
// measurements (epoch, step, layer, losses, UC- and C-NFA correlations)
// and the final comparisons.
func (res *Result) WriteText(w io.Writer) {
	fmt.Fprintf(w, "data     %s: %d train / %d test rows, %d inputs\n", res.Data, res.Rows, res.Test, res.Inputs)
	fmt.Fprintf(w, "network  widths %v, %s, bias %v, init scale %v, %s lr %g, batch %d (%.1fs)\n\n",
		res.Network.Widths, res.Network.Activation, res.Network.Bias, res.Network.InitScale, res.Network.Optimizer, res.Network.LR, res.Network.BatchSize, res.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "epoch\tstep\tlayer\ttrain MSE\ttest MSE\tUC-NFA ρ\tC-NFA ρ\tUC top-eig\tC top-eig\t")
	for _, r := range res.Records {
		cn, ce := "-", "-"
		if r.CNFA != nil {
			cn, ce = fmt.Sprintf("%.3f", r.CNFA.Cosine), fmt.Sprintf("%.3f", r.CNFA.TopEig)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.4g\t%.4g\t%.3f\t%s\t%.3f\t%s\t\n", r.Epoch, r.Step, r.Layer, r.TrainLoss, r.TestLoss, r.NFA.Cosine, cn, r.NFA.TopEig, ce)
	}
	tw.Flush()
	if len(res.Final) == 0 {
		return
	}
	fmt.Fprintln(w)
	keys := make([]string, 0, len(res.Final))
	for k := range res.Final {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		c := res.Final[k].(nn.Comparison)
		fmt.Fprintf(w, "%-14s ρ %.3f  pearson %.3f  top-eig %.3f  diag %.3f\n", k, c.Cosine, c.Pearson, c.TopEig, c.Diag)
	}
}

// WriteText prints the alignment reversing sweep: its settings, the
// predicted and observed correlation per balance γ and their mean gap.
func (res *ReversingResult) WriteText(w io.Writer) {
	fmt.Fprintf(w, "alignment reversing: n %d, d %d, width %d, x-scale %g, %d data seeds, %d networks (%s, %.1fs)\n\n",
		res.N, res.D, res.Width, res.Scale, res.DataSeeds, res.NetSeeds, res.Backend, res.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "γ\tpredicted\tobserved\t|gap|\t")
	for _, s := range res.Summary {
		fmt.Fprintf(tw, "%g\t%.4f\t%.4f\t%.4f\t\n", s.Balance, s.Predicted, s.Observed, s.Gap)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nmean |predicted − observed| over γ: %.4f\n", res.MeanGap)
}

// DefaultReversingOptions is the paper's figure-3 sweep: n = d = width =
// 1 024 and synth's variance parameters; the balances, seeds and scale
// are the caller's.
func DefaultReversingOptions() ReversingOptions {
	def := synth.DefaultReversing(1)
	return ReversingOptions{N: def.N, D: def.D, Width: def.D, Eps1: def.Eps1, Eps2: def.Eps2}
}

// CheckData reports the first balance whose dataset synth cannot draw
// with these sizes, scale and variances (before any work is done).
func (o ReversingOptions) CheckData() error {
	for _, g := range o.Balances {
		so := synth.DefaultReversing(g)
		so.N, so.D, so.Scale, so.Eps1, so.Eps2 = o.N, o.D, o.Scale, o.Eps1, o.Eps2
		if err := so.Validate(); err != nil {
			return err
		}
	}
	return nil
}
