package cli

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"slices"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/predictor"
)

// PredictOptions say what PredictCSV reads and writes.
type PredictOptions struct {
	// Read are the options of the table (predictor.RowReadOptions with the
	// format flags); Roles say what each column the model needs is to the
	// user (InputRoles), for messages.
	Read  dataset.ReadOptions
	Roles map[string]string
	// Keep names a column (an id) copied from the input first ("": none);
	// Proba adds one probability column per class.
	Keep  string
	Proba bool
	// PieceBytes is the text read at a time (ReadPieces).
	PieceBytes int
	// Started, when set, is told the rows (1-based, inclusive) of each
	// chunk before it is predicted.
	Started func(first, last int)
}

// PredictCSV predicts the rows of the table at path with the model and
// writes them to w as CSV with a header: the Keep column if asked, then
// "prediction" (the class label or the value), then with Proba one
// "proba_<class>" column per class. The table is read, predicted and
// written a piece at a time, so a file larger than memory streams through.
// It returns the rows written.
func PredictCSV(ctx context.Context, w io.Writer, lm *predictor.Model, path string, o PredictOptions) (int, error) {
	opt, roles := o.Read, o.Roles
	if o.Keep != "" {
		// Keep the id's text as written ("007" stays "007"), unless it is
		// also a numeric input of the model, whose kind is fixed.
		if !slices.Contains(opt.Numeric, o.Keep) && !slices.Contains(opt.Categorical, o.Keep) {
			opt.Categorical = append(opt.Categorical, o.Keep)
		}
		roles[o.Keep] = "--keep column"
	}
	textCols := 1
	if o.Proba {
		textCols += lm.Outputs()
	}
	header := lm.PredictionHeader(o.Proba)
	if o.Keep != "" {
		textCols++
		header = append([]string{o.Keep}, header...)
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return 0, fmt.Errorf("write predictions: %w", err)
	}
	defer BoundStreamHeap(lm.Name, o.PieceBytes)()
	n := 0
	err := ReadPieces(ctx, path, opt, roles, o.PieceBytes, func(t *dataset.Table) error {
		rows, err := predictPiece(ctx, lm, t, path, o, textCols, n)
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
		return n, err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return n, fmt.Errorf("write predictions: %w", err)
	}
	return n, nil
}

// predictPiece predicts one piece of the input (rows done before it came
// first) and formats its output rows.
func predictPiece(ctx context.Context, lm *predictor.Model, t *dataset.Table, path string, o PredictOptions, textCols, done int) ([][]string, error) {
	if err := lm.PlanPredict(t.NRows(), textCols); err != nil {
		return nil, err
	}
	x, n, _, err := lm.Pipeline.Transform(t)
	if err != nil {
		return nil, InFile(path, err)
	}
	var keepCol *dataset.Column
	if o.Keep != "" {
		c, ok := t.Column(o.Keep)
		if !ok {
			return nil, fmt.Errorf("%s: --keep column %q not found; the columns are %s", path, o.Keep, QuoteNames(t.Names()))
		}
		keepCol = c
	}
	scores, err := lm.PredictFeatures(ctx, x, n, func(r0, r1 int) {
		if o.Started != nil {
			o.Started(done+r0+1, done+r1)
		}
	})
	if err != nil {
		return nil, err
	}
	p, err := lm.Decode(scores, n)
	if err != nil {
		return nil, err
	}
	rows := p.Rows(o.Proba)
	if keepCol != nil {
		for i := range rows {
			rows[i] = append([]string{cellText(keepCol, i)}, rows[i]...)
		}
	}
	return rows, nil
}

// cellText is a cell as text: the level, the number, or "" when missing.
func cellText(c *dataset.Column, i int) string {
	if c.IsMissing(i) {
		return ""
	}
	if c.Kind == dataset.Categorical {
		return c.Str[i]
	}
	return predictor.FormatFloat(c.Num[i])
}

// Evaluate reads the table at path a piece at a time (see ReadPieces),
// predicts its rows and keeps only the outputs and true targets
// (predictor.Tally), then scores them: memory grows with rows × outputs,
// not with the table. It returns a *metrics.Classification or
// *metrics.Regression and the rows. started is told each chunk's rows.
func Evaluate(ctx context.Context, lm *predictor.Model, path string, o PredictOptions) (any, int, error) {
	tally := &predictor.Tally{Target: lm.Target}
	defer BoundStreamHeap(lm.Name, o.PieceBytes)()
	err := ReadPieces(ctx, path, o.Read, o.Roles, o.PieceBytes, func(t *dataset.Table) error {
		if err := lm.PlanPredict(t.NRows(), 0); err != nil {
			return err
		}
		ds, err := EncodeRows(t, path, lm.Pipeline, lm.Target)
		if err != nil {
			return err
		}
		s, err := lm.PredictFeatures(ctx, ds.X, ds.N, func(r0, r1 int) {
			if o.Started != nil {
				o.Started(tally.N+r0+1, tally.N+r1)
			}
		})
		if err != nil {
			return err
		}
		tally.Add(t, ds, s)
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	report, err := tally.Score(lm.Calibration(), lm.Outputs())
	return report, tally.N, err
}
