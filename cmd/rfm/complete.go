package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rfmkit/rfm/complete"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/modelfile"
)

// completeOptions are complete.Settings and the input and output flags.
type completeOptions struct {
	complete.Settings
	data, out             string
	rowCol, colCol, value string
	rowID                 string
	transpose             bool
	newColumns            listFlag
	read                  readFlags
	metaID                string
	seed                  uint64
	common                commonFlags
}

func cmdComplete(e *env, args []string) error {
	var o completeOptions
	f := helpFlagSet("complete", "rfm complete --data MATRIX [--meta TABLE] [--prior LIST] [--out FILE] [flags]")
	o.register(f)
	if err := f.ParsePositional(args, e.stdout, &o.data); err != nil {
		return err
	}
	if o.data == "" {
		return usagef("--data is required: the matrix to complete")
	}
	if err := o.common.apply(); err != nil {
		return err
	}
	o.NewColumns = o.newColumns
	opt, priors, err := o.Check(f.IsSet)
	if err != nil {
		return err
	}
	if err := checkOutPath("out", o.out, o.data, o.Meta); err != nil {
		return err
	}
	y, label, err := o.load(e.ctx)
	if err != nil {
		return err
	}
	st := &complete.Study{Priors: priors, Bias: o.Bias, Identity: o.Identity, Options: opt, Baselines: o.Baselines, SVDRank: o.SVDRank}
	if st.Meta, err = o.readMeta(e, y); err != nil {
		return err
	}
	return o.run(e, st, y, label)
}

// register declares the flags.
func (o *completeOptions) register(f *flagSet) {
	f.positional = "data"
	f.Section("Input")
	f.String(&o.data, "data", "", "the matrix `FILE` (wide, or entries with --long)")
	f.Bool(&o.Long, "long", false, "the file holds entries: one (row id, column id, value) per line")
	f.String(&o.rowCol, "row-col", "row", "with --long: the row id `COL`")
	f.String(&o.colCol, "col-col", "column", "with --long: the column id `COL`")
	f.String(&o.value, "value-col", "value", "with --long: the value `COL`")
	f.String(&o.rowID, "row-id", "", "wide matrix: the row id `COL` (default: the first column when it is not numeric)")
	f.Bool(&o.transpose, "transpose", false, "complete the transpose: rows become columns (the prior and --new-columns then describe the rows)")
	f.List(&o.newColumns, "new-columns", "add entirely missing columns with these `IDS` (they must have metadata) and predict them")
	o.read.register(f, true)
	f.Section("Prior")
	f.String(&o.Prior, "prior", "", "feature prior `LIST`: onehot, metadata, observed, comma-separated to concatenate (default: metadata with --meta, else onehot)")
	f.String(&o.Meta, "meta", "", "metadata `TABLE` with one row per column id")
	f.String(&o.metaID, "meta-id", "", "the metadata's id `COL` (default: its first column)")
	f.Float(&o.Bias, "prior-bias", 0, "append a constant coordinate `C` to each prior's embeddings before normalizing (a bias: keeps their relative norms)")
	f.Float(&o.Identity, "prior-identity", 0, "concatenate `W` times the identity to the prior (makes the kernel positive definite; the thesis uses 1.5)")
	f.Section("Model")
	f.Int(&o.Depth, "depth", 1, "hidden layers `D` of the network, 1..5")
	f.String(&o.Activation, "activation", "relu", "`ACT`: "+strings.Join(complete.ActivationNames(), ", "))
	f.Float(&o.Slope, "slope", 0.1, "negative-side `SLOPE` of leaky-relu")
	f.Float(&o.Ridge, "ridge", 0, "ridge `L` added to every kernel system (0: interpolate)")
	f.String(&o.Strategy, "strategy", "auto", "`HOW` rows with different patterns are solved: auto, direct (one factorization per pattern), schur (one shared inverse), naive (per row)")
	f.String(&o.MemoryLimit, "memory-limit", "", "refuse a completion that needs more than `SIZE`, e.g. 4G (default: 90% of available memory)")
	f.Bool(&o.Refit, "refit", false, "replace the observed cells by the model's fit too (same values when --ridge is 0)")
	f.Section("Evaluation")
	f.Float(&o.Holdout, "holdout", 0, "score on a seeded share `F` of the observed cells (0 < F < 1)")
	f.Int(&o.HoldoutColumns, "holdout-columns", 0, "score on `K` seeded, entirely held-out columns")
	f.Uint64(&o.seed, "seed", 1, "random `SEED` of the holdouts")
	f.Bool(&o.Baselines, "baselines", false, "also score row-mean, column-mean and rank-k SVD imputation on the holdouts")
	f.Int(&o.SVDRank, "svd-rank", 5, "rank `K` of the SVD-impute baseline")
	f.Section("Output")
	f.String(&o.out, "out", "", "write the completed matrix to `FILE` (CSV, atomically)")
	o.common.register(f, true)
}

// load reads the matrix, transposes it and adds the new columns as asked;
// label is the row label of the matrix as read.
func (o *completeOptions) load(ctx context.Context) (y *complete.Matrix, label string, err error) {
	if y, err = o.readMatrix(ctx); err != nil {
		return nil, "", err
	}
	label = y.RowLabel
	if o.transpose {
		y = y.Transpose()
	}
	if len(o.newColumns) > 0 {
		if y, err = complete.AddColumns(y, o.newColumns); err != nil {
			return nil, "", usagef("--new-columns: %v", err)
		}
	}
	if err := y.Validate(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", o.data, err)
	}
	return y, label, nil
}

// readMeta reads the metadata prior of y's columns (nil without --meta).
func (o *completeOptions) readMeta(e *env, y *complete.Matrix) (*complete.Prior, error) {
	if o.Meta == "" {
		return nil, nil
	}
	// The metadata's own format and delimiter; the missing tokens apply.
	mo := complete.MetaOptions{ID: o.metaID}
	mo.MissingTokens = o.read.na
	meta, extra, err := complete.ReadMetadata(e.ctx, o.Meta, y.ColIDs, mo)
	if err != nil {
		var me *complete.MissingIDsError
		if errors.As(err, &me) {
			for _, id := range me.IDs {
				if slices.Contains(o.newColumns, id) {
					return nil, fmt.Errorf("--new-columns: column id %q was never seen: it is not a column of %s and %s has no row for it", id, o.data, o.Meta)
				}
			}
		}
		return nil, err
	}
	if extra > 0 && !o.common.quiet && !o.common.json {
		fmt.Fprintf(e.stderr, "rfm complete: %s has %d rows for ids that are not columns of the matrix; ignored\n", o.Meta, extra)
	}
	return meta, nil
}

// run scores the holdouts, completes and writes the matrix as asked, and
// prints the report.
func (o *completeOptions) run(e *env, st *complete.Study, y *complete.Matrix, label string) error {
	prog := newProgress(e.stderr, e.tty(), o.common.quiet || o.common.json)
	st.Options.Progress = func(stage string, f float64) { prog.Update(f, stage) }
	ro := complete.RunOptions{Data: o.data, Holdout: o.Holdout, HoldoutColumns: o.HoldoutColumns, Seed: o.seed, Out: o.out}
	if o.out != "" {
		ro.Write = func(m *complete.Matrix) error { return o.write(e.ctx, m, label) }
	}
	report, err := st.Run(e.ctx, y, ro)
	if err != nil {
		prog.Abort()
		return err
	}
	prog.Finish(report.Summary())
	if o.common.json {
		return writeJSON(e.stdout, report)
	}
	if !o.common.quiet {
		report.WriteText(e.stdout)
	}
	return nil
}

// write writes the completed matrix to --out (transposed back as read).
func (o *completeOptions) write(ctx context.Context, out *complete.Matrix, label string) error {
	out.RowLabel = label
	if o.transpose {
		out = out.Transpose()
		out.RowLabel = "column"
	}
	return modelfile.WriteAtomicContext(ctx, o.out, func(w io.Writer) error { return complete.WriteCSV(w, out) })
}

func (o *completeOptions) readMatrix(ctx context.Context) (*complete.Matrix, error) {
	var ro dataset.ReadOptions
	if err := o.read.apply(&ro); err != nil {
		return nil, usagef("%v", err)
	}
	if o.Long {
		return complete.ReadLong(ctx, o.data, complete.LongOptions{ReadOptions: ro, Row: o.rowCol, Col: o.colCol, Value: o.value})
	}
	return complete.ReadWide(ctx, o.data, complete.ReadOptions{ReadOptions: ro, RowID: o.rowID})
}
