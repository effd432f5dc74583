package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/predictor"
)

type predictOptions struct {
	model  string
	data   string
	out    string
	proba  bool
	keep   string
	read   readFlags
	common commonFlags
}

func predictFlags(o *predictOptions) *flagSet {
	f := newFlagSet("predict", "rfm predict --model FILE --data FILE [--out FILE] [flags]",
		`Predict the rows of a table with a model written by 'rfm fit'.

The table needs the model's input columns, by name and in any order; other
columns (the target, ids) are ignored. A missing input column is an error that
names it; a category never seen in training encodes as all zeros, a missing
number as the training mean.

The output is CSV with a header: the --keep column if asked, then "prediction"
(the class label, or the value for regression), then with --proba one column
"proba_<class>" per class. Numbers are written in the shortest form that reads
back to the same float64.

Delimited text streams through in pieces of 32 MiB, so a file larger than
memory can be predicted; with --out a failure leaves no file.`,
		`rfm predict --model churn.rfm --data new.csv --keep id --out predictions.csv
rfm predict --model churn.rfm --data new.csv --proba > probabilities.csv`)
	registerScoringInput(f, &o.model, &o.data, "of rows to predict", &o.read)
	f.Section("Output")
	f.String(&o.out, "out", "", "write the CSV to `FILE` (atomically) instead of stdout")
	f.Bool(&o.proba, "proba", false, "add one probability column per class (classification)")
	f.String(&o.keep, "keep", "", "copy column `COL` (an id) from the input to the output, first")
	f.Bool(&o.common.quiet, "quiet", false, "no summary line on stderr")
	o.common.add(f, "threads")
	return f
}

func cmdPredict(e *env, args []string) error {
	var o predictOptions
	f := predictFlags(&o)
	if err := parseDataArgs(e, f, args, &o.data, "the table of rows to predict", &o.common); err != nil {
		return err
	}
	if err := checkOutPath("out", o.out, o.data, o.model); err != nil {
		return err
	}
	start := time.Now()
	lm, err := loadModel(o.model, true)
	if err != nil {
		return err
	}
	if o.proba && !lm.Target.IsClassification() {
		return usagef("--proba needs a classification model; %s is a regression model", o.model)
	}
	opt, err := rowReadOptions(lm.Pipeline, lm.Target, false, &o.read)
	if err != nil {
		return err
	}
	keepNumeric := false
	if o.keep != "" {
		// Keep the id's text as written ("007" stays "007"), unless it is
		// also a numeric input of the model, whose kind is fixed.
		keepNumeric = slices.Contains(opt.Numeric, o.keep)
		if !keepNumeric && !slices.Contains(opt.Categorical, o.keep) {
			opt.Categorical = append(opt.Categorical, o.keep)
		}
	}
	roles := cli.InputRoles(lm.Pipeline)
	if o.keep != "" {
		roles[o.keep] = "--keep column"
	}
	textCols := 1
	if o.proba {
		textCols += lm.Outputs()
	}
	if o.keep != "" {
		textCols++
	}
	header := lm.PredictionHeader(o.proba)
	if o.keep != "" {
		header = append([]string{o.keep}, header...)
	}
	// The table is read, predicted and written a piece at a time, so a
	// file larger than memory streams through.
	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	defer bar.Abort()
	n := 0
	write := func(w io.Writer) error {
		cw := csv.NewWriter(w)
		if err := cw.Write(header); err != nil {
			return fmt.Errorf("write predictions: %w", err)
		}
		defer boundStreamHeap(o.model)()
		err := readPieces(e.ctx, o.data, opt, roles, func(t *dataset.Table) error {
			rows, err := predictPiece(e, lm, t, o, textCols, n, bar)
			if err != nil {
				return err
			}
			n += len(rows)
			if err := cw.WriteAll(rows); err != nil {
				return fmt.Errorf("write predictions: %w", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("write predictions: %w", err)
		}
		return nil
	}
	if o.out == "" {
		bw := bufio.NewWriterSize(e.stdout, 1<<16)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	if err := modelfile.WriteAtomicContext(e.ctx, o.out, write); err != nil {
		return err
	}
	bar.Finish(fmt.Sprintf("predict: %d rows → %s (%s)", n, o.out, seconds(time.Since(start))))
	return nil
}

// predictPiece predicts one piece of the input (rows done before it came
// first) and formats its output rows.
func predictPiece(e *env, lm *loadedModel, t *dataset.Table, o predictOptions, textCols, done int, bar *progress) ([][]string, error) {
	if err := planPredict(lm, t.NRows(), textCols); err != nil {
		return nil, err
	}
	x, n, _, err := lm.Pipeline.Transform(t)
	if err != nil {
		return nil, cli.InFile(o.data, err)
	}
	var keepCol *dataset.Column
	if o.keep != "" {
		c, ok := t.Column(o.keep)
		if !ok {
			return nil, fmt.Errorf("%s: --keep column %q not found; the columns are %s", o.data, o.keep, cli.QuoteNames(t.Names()))
		}
		keepCol = c
	}
	scores, err := lm.PredictFeatures(e.ctx, x, n, func(r0, r1 int) {
		bar.Update(0, fmt.Sprintf("predict rows %d-%d", done+r0+1, done+r1))
	})
	if err != nil {
		return nil, err
	}
	rows, err := predictionRows(lm, scores, n, o.proba)
	if err != nil {
		return nil, err
	}
	if keepCol != nil {
		for i := range rows {
			rows[i] = append([]string{cellText(keepCol, i)}, rows[i]...)
		}
	}
	return rows, nil
}

// predictionRows formats the model outputs: the class label (and the
// probabilities) or the regression value, per row.
func predictionRows(lm *loadedModel, scores []float64, n int, proba bool) ([][]string, error) {
	p, err := lm.Decode(scores, n)
	if err != nil {
		return nil, err
	}
	return p.Rows(proba), nil
}

// formatFloat writes the shortest text that parses back to exactly v.
func formatFloat(v float64) string { return predictor.FormatFloat(v) }

// cellText is a cell as text: the level, the number, or "" when missing.
func cellText(c *dataset.Column, i int) string {
	if c.IsMissing(i) {
		return ""
	}
	if c.Kind == dataset.Categorical {
		return c.Str[i]
	}
	return formatFloat(c.Num[i])
}
