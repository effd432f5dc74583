package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/predictor"
)

// ReadTable reads a data file, naming it in every error. It gives way to
// ctx (an interrupt) also while waiting on a pipe or FIFO.
func ReadTable(ctx context.Context, path string, opt dataset.ReadOptions) (*dataset.Table, error) {
	if path == "" {
		return nil, Usagef("--data is required: the table to read")
	}
	if path == "-" { // standard input: CSV unless --format says otherwise
		if opt.Format == "" {
			opt.Format = "csv"
		}
		t, err := dataset.ReadContext(ctx, os.Stdin, "<stdin>", opt)
		if err != nil {
			return nil, InFile("<stdin>", err)
		}
		return t, nil
	}
	t, err := dataset.ReadFileContext(ctx, path, opt)
	if err != nil {
		return nil, InFile(path, err)
	}
	return t, nil
}

// InFile makes sure a data error names the file: the dataset package's
// messages do, except for a few that only name a column or a count.
func InFile(path string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err // an interrupt, reported as such
	}
	var pe *dataset.ParseError
	if errors.As(err, &pe) && pe.File != "" {
		return err
	}
	msg := err.Error()
	if strings.HasPrefix(msg, path+":") || strings.HasPrefix(msg, path+"[") {
		return err
	}
	msg = strings.TrimPrefix(strings.TrimPrefix(msg, "dataset: "), "predictor: ")
	return fmt.Errorf("%s: %s", path, msg)
}

// ChooseTarget resolves --target: the named column, or by default a column
// called "label" (LIBSVM files) or "y" (NPZ archives).
func ChooseTarget(t *dataset.Table, name, path string) (string, error) {
	if name != "" {
		if _, err := t.TargetColumn(name); err != nil {
			return "", InFile(path, err)
		}
		return name, nil
	}
	for _, guess := range []string{"label", "y"} {
		if _, ok := t.Column(guess); ok {
			return guess, nil
		}
	}
	return "", Usagef("--target is required: name the column to predict (%s has %s)", path, QuoteNames(t.Names()))
}

func QuoteNames(names []string) string {
	const most = 12
	q := make([]string, 0, most+1)
	for i, n := range names {
		if i == most {
			q = append(q, fmt.Sprintf("... %d more", len(names)-most))
			break
		}
		q = append(q, fmt.Sprintf("%q", n))
	}
	return strings.Join(q, ", ")
}

// FitEncoding fits the target encoding and the feature pipeline (with the
// given scaling of numeric columns) on the training table.
func FitEncoding(t *dataset.Table, path, target, task string, scaling dataset.Scaling) (*dataset.Target, *dataset.Pipeline, error) {
	tg, p, err := predictor.FitEncoding(t, target, task, scaling)
	if err != nil {
		return nil, nil, InFile(path, err)
	}
	return tg, p, nil
}

// EncodeRows turns a table into the engine's numeric dataset with a fitted
// pipeline and target.
func EncodeRows(t *dataset.Table, path string, p *dataset.Pipeline, tg *dataset.Target) (*rfm.Dataset, error) {
	ds, err := predictor.Encode(t, p, tg)
	if err != nil {
		return nil, InFile(path, err)
	}
	return ds, nil
}

// ReadRows reads a table of rows to predict or score with the model's read
// options. The reader reports a column that the options name but the file
// lacks as, e.g., `numeric column "age" not found`; roles says what each
// such column is to the user ("input column of the model", "target column",
// "--keep column") so the message can say that instead.
func ReadRows(ctx context.Context, path string, opt dataset.ReadOptions, roles map[string]string) (*dataset.Table, error) {
	t, err := ReadTable(ctx, path, opt)
	if err != nil {
		return nil, RowsError(path, err, roles)
	}
	return t, nil
}

// ReadPieces is ReadRows a piece of the table at a time (delimited text;
// other formats come whole), so that a table larger than memory can be
// predicted: fn gets each piece in file order. Its errors come back as
// they are; the reader's are worded as ReadRows words them.
func ReadPieces(ctx context.Context, path string, opt dataset.ReadOptions, roles map[string]string, pieceBytes int, fn func(*dataset.Table) error) error {
	if path == "" {
		return Usagef("--data is required: the table to read")
	}
	var fnErr error
	call := func(t *dataset.Table) error {
		fnErr = fn(t)
		return fnErr
	}
	var err error
	name := path
	if path == "-" { // standard input: CSV unless --format says otherwise
		name = "<stdin>"
		if opt.Format == "" {
			opt.Format = "csv"
		}
		err = dataset.ReadChunks(ctx, os.Stdin, name, opt, pieceBytes, call)
		if errors.Is(err, dataset.ErrNotDelimited) {
			var t *dataset.Table
			if t, err = ReadTable(ctx, path, opt); err == nil {
				err = call(t)
			}
		}
	} else {
		err = dataset.ReadFileChunks(ctx, path, opt, pieceBytes, call)
	}
	if err == nil || (fnErr != nil && err == fnErr) {
		return err
	}
	return RowsError(name, InFile(name, err), roles)
}

// BoundStreamHeap sets a soft memory limit for predicting or scoring a
// table a piece at a time with the model in modelPath: three times the
// model file (the model, its mapped centres, the prediction blocks) plus
// 16 times a piece of text (its table, features, outputs and output
// text), at least 256 MiB. Without it the collector lets the heap grow to
// twice its live size between collections and returns pages lazily:
// predicting the 2.5 M training rows of flights with a 200 MB tree peaked
// at 4.2 GB of RSS with a live heap under 1 GB (1.07 GB, and faster,
// with the limit). It is soft: a larger live heap is not refused, only
// collected more often. A GOMEMLIMIT in the environment wins. The
// returned function restores the previous limit.
func BoundStreamHeap(modelPath string, pieceBytes int) func() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	st, err := os.Stat(modelPath)
	if err != nil {
		return func() {}
	}
	limit := max(3*st.Size()+16*int64(pieceBytes), 256<<20)
	prev := debug.SetMemoryLimit(limit)
	return func() { debug.SetMemoryLimit(prev) }
}

// RowsError words a reader's error for rows to predict or score: a missing
// column is named by its role (roles: column → role).
func RowsError(path string, err error, roles map[string]string) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var pe *dataset.ParseError
	if errors.As(err, &pe) {
		return err
	}
	var nf *dataset.ColumnNotFoundError
	if errors.As(err, &nf) {
		if role, ok := roles[nf.Name]; ok {
			return fmt.Errorf("%s: %s %q is missing; the columns are %s", path, role, nf.Name, QuoteNames(nf.Columns))
		}
	}
	return err
}

// InputRoles names the model's input columns for ReadRows.
func InputRoles(p *dataset.Pipeline) map[string]string {
	roles := map[string]string{}
	for _, name := range p.InputColumns() {
		roles[name] = "the model's input column"
	}
	return roles
}

// CheckOutPath fails early, before a long computation, when the output
// cannot be written where asked, or would overwrite an input.
func CheckOutPath(flagName, out string, inputs ...string) error {
	if out == "" {
		return nil
	}
	for _, in := range inputs {
		if in != "" && sameFile(in, out) {
			return Usagef("--%s %s would overwrite the input file; choose another path", flagName, out)
		}
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return Usagef("--%s %s is a directory; give a file path", flagName, out)
	}
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("--%s %s: directory %s does not exist", flagName, out, dir)
	}
	if err := modelfile.CheckWritable(out); err != nil {
		return fmt.Errorf("--%s %s: cannot write there: %w", flagName, out, UnwrapPath(err))
	}
	return nil
}

// UnwrapPath drops the *PathError wrapper (its path is a temporary name the
// user never chose) and keeps the reason.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA != nil || errB != nil {
		return filepath.Clean(a) == filepath.Clean(b)
	}
	return os.SameFile(sa, sb)
}
