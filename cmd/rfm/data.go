package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/predictor"
)

// Model file sections written by the CLI next to the engine's state.
const ()

// commonFlags are shared by the commands that compute.
type commonFlags struct {
	quiet   bool
	json    bool
	threads int
}

func (c *commonFlags) register(f *flagSet, withJSON bool) {
	if withJSON {
		f.Bool(&c.json, "json", false, "print the result as JSON on stdout")
	}
	f.Bool(&c.quiet, "quiet", false, "no progress bar or summary on stderr")
	f.Int(&c.threads, "threads", 0, "threads for the linear algebra (`N`; 0 = one per CPU, at most 256)")
}

// apply sets the thread count for the backend and the Go scheduler.
func (c *commonFlags) apply() error {
	if err := linalg.CheckThreads(c.threads); err != nil {
		return usagef("--threads %d: %v", c.threads, err)
	}
	if c.threads > 0 {
		runtime.GOMAXPROCS(c.threads)
		linalg.SetThreads(c.threads)
	}
	return nil
}

// registerScoringInput adds the Input section of the commands that apply a
// model to a table (eval, predict): --model, --data (also the one
// positional argument; dataHelp says what the table holds) and the read
// flags.
func registerScoringInput(f *flagSet, model, data *string, dataHelp string, read *readFlags) {
	f.positional = "data"
	f.Section("Input")
	f.String(model, "model", "", "model `FILE` written by 'rfm fit'")
	f.String(data, "data", "", "table `FILE` "+dataHelp+" (\"-\": standard input, CSV unless --format)")
	read.register(f, false)
}

// parseDataArgs starts the commands that score rows of a table: it parses
// args (the table may be the one positional argument), requires --data
// (what says what the table is for) and applies the common flags.
func parseDataArgs(e *env, f *flagSet, args []string, data *string, what string, c *commonFlags) error {
	if err := f.ParsePositional(args, e.stdout, data); err != nil {
		return err
	}
	if *data == "" {
		return usagef("--data is required: %s", what)
	}
	return c.apply()
}

// readFlags say how to parse an input file.
type readFlags struct {
	format    string
	delimiter string
	noHeader  bool
	na        listFlag
}

// register adds the format flags; full adds the ones that only make sense
// at fit time (the model remembers them for prediction).
func (r *readFlags) register(f *flagSet, full bool) {
	f.String(&r.format, "format", "", "input format `FMT`: csv, tsv, txt, parquet, npy, npz, libsvm (default: from the extension)")
	f.String(&r.delimiter, "delimiter", "", "field delimiter `C` of text files: one character or \"tab\" (default: detected)")
	if full {
		f.Bool(&r.noHeader, "no-header", false, "the first line of a text file is data; columns are named c0, c1, ...")
		f.List(&r.na, "na", "cell texts read as missing, comma-separated `TOKENS` (default: NA,N/A,NaN,nan,null,NULL,?)")
	}
}

func (r *readFlags) apply(opt *dataset.ReadOptions) error {
	d, err := parseDelimiter(r.delimiter)
	if err != nil {
		return err
	}
	opt.Delimiter = d
	if r.format != "" {
		opt.Format = r.format
	}
	if r.noHeader {
		opt.NoHeader = true
	}
	if len(r.na) > 0 {
		opt.MissingTokens = slices.Clone(r.na)
	}
	return nil
}

// columnFlags override column typing at fit time.
type columnFlags struct {
	categorical listFlag
	numeric     listFlag
	ignore      listFlag
}

func (c *columnFlags) register(f *flagSet) {
	f.List(&c.categorical, "categorical", "treat these `COLS` as categorical (one-hot), comma-separated")
	f.List(&c.numeric, "numeric", "treat these `COLS` as numeric: a cell that is not a number is an error")
	f.List(&c.ignore, "ignore", "leave these `COLS` out (ids, leaks, free text)")
}

// readTable reads a data file, naming it in every error. It gives way to
// ctx (an interrupt) also while waiting on a pipe or FIFO.
func readTable(ctx context.Context, path string, opt dataset.ReadOptions) (*dataset.Table, error) {
	if path == "" {
		return nil, usagef("--data is required: the table to read")
	}
	if path == "-" { // standard input: CSV unless --format says otherwise
		if opt.Format == "" {
			opt.Format = "csv"
		}
		t, err := dataset.ReadContext(ctx, os.Stdin, "<stdin>", opt)
		if err != nil {
			return nil, inFile("<stdin>", err)
		}
		return t, nil
	}
	t, err := dataset.ReadFileContext(ctx, path, opt)
	if err != nil {
		return nil, inFile(path, err)
	}
	return t, nil
}

// inFile makes sure a data error names the file: the dataset package's
// messages do, except for a few that only name a column or a count.
func inFile(path string, err error) error {
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

// chooseTarget resolves --target: the named column, or by default a column
// called "label" (LIBSVM files) or "y" (NPZ archives).
func chooseTarget(t *dataset.Table, name, path string) (string, error) {
	if name != "" {
		if _, err := t.TargetColumn(name); err != nil {
			return "", inFile(path, err)
		}
		return name, nil
	}
	for _, guess := range []string{"label", "y"} {
		if _, ok := t.Column(guess); ok {
			return guess, nil
		}
	}
	return "", usagef("--target is required: name the column to predict (%s has %s)", path, quoteNames(t.Names()))
}

func quoteNames(names []string) string {
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

// fitEncoding fits the target encoding and the feature pipeline (with the
// given scaling of numeric columns) on the training table.
func fitEncoding(t *dataset.Table, path, target, task string, scaling dataset.Scaling) (*dataset.Target, *dataset.Pipeline, error) {
	tg, p, err := predictor.FitEncoding(t, target, task, scaling)
	if err != nil {
		return nil, nil, inFile(path, err)
	}
	return tg, p, nil
}

// encodeRows turns a table into the engine's numeric dataset with a fitted
// pipeline and target.
func encodeRows(t *dataset.Table, path string, p *dataset.Pipeline, tg *dataset.Target) (*rfm.Dataset, error) {
	ds, err := predictor.Encode(t, p, tg)
	if err != nil {
		return nil, inFile(path, err)
	}
	return ds, nil
}

// readRows reads a table of rows to predict or score with the model's read
// options. The reader reports a column that the options name but the file
// lacks as, e.g., `numeric column "age" not found`; roles says what each
// such column is to the user ("input column of the model", "target column",
// "--keep column") so the message can say that instead.
func readRows(ctx context.Context, path string, opt dataset.ReadOptions, roles map[string]string) (*dataset.Table, error) {
	t, err := readTable(ctx, path, opt)
	if err != nil {
		return nil, rowsError(path, err, roles)
	}
	return t, nil
}

// readPieces is readRows a piece of the table at a time (delimited text;
// other formats come whole), so that a table larger than memory can be
// predicted: fn gets each piece in file order. Its errors come back as
// they are; the reader's are worded as readRows words them.
func readPieces(ctx context.Context, path string, opt dataset.ReadOptions, roles map[string]string, fn func(*dataset.Table) error) error {
	if path == "" {
		return usagef("--data is required: the table to read")
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
			if t, err = readTable(ctx, path, opt); err == nil {
				err = call(t)
			}
		}
	} else {
		err = dataset.ReadFileChunks(ctx, path, opt, pieceBytes, call)
	}
	if err == nil || (fnErr != nil && err == fnErr) {
		return err
	}
	return rowsError(name, inFile(name, err), roles)
}

// pieceBytes is the text readPieces parses at a time: about 500 000 rows
// of the flights table.
var pieceBytes = dataset.DefaultChunkBytes

// boundStreamHeap sets a soft memory limit for predicting or scoring a
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
func boundStreamHeap(modelPath string) func() {
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

// rowsError words a reader's error for rows to predict or score: a missing
// column is named by its role (roles: column → role).
func rowsError(path string, err error, roles map[string]string) error {
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
			return fmt.Errorf("%s: %s %q is missing; the columns are %s", path, role, nf.Name, quoteNames(nf.Columns))
		}
	}
	return err
}

// inputRoles names the model's input columns for readRows.
func inputRoles(p *dataset.Pipeline) map[string]string {
	roles := map[string]string{}
	for _, name := range p.InputColumns() {
		roles[name] = "the model's input column"
	}
	return roles
}

// rowReadOptions are the read options for rows to predict or evaluate: the
// model's column kinds and missing tokens, plus the target column's kind
// when it must be read (eval) so that labels keep their text.
func rowReadOptions(p *dataset.Pipeline, tg *dataset.Target, withTarget bool, rf *readFlags) (dataset.ReadOptions, error) {
	opt := p.ReadOptions()
	if withTarget && tg != nil {
		if tg.IsClassification() {
			opt.Categorical = append(opt.Categorical, tg.Name)
		} else {
			opt.Numeric = append(opt.Numeric, tg.Name)
		}
	}
	if err := rf.apply(&opt); err != nil {
		return opt, err
	}
	return opt, nil
}

// trainingInfo is the CLI's record of how a model was trained.
type trainingInfo = predictor.TrainingInfo

// saveModel writes the model with its pipeline and target atomically.
func saveModel(ctx context.Context, path string, m modelfile.Model, p *dataset.Pipeline, tg *dataset.Target, info trainingInfo) error {
	return predictor.WriteFile(ctx, path, m, p, tg, &info, "rfm "+versionString())
}

// loadedModel is a model file with its pipeline and target decoded.
type loadedModel = predictor.Model

// loadModel reads and checks a model file. needPipeline requires the
// sections that predicting raw rows needs.
func loadModel(path string, needPipeline bool) (*loadedModel, error) {
	if path == "" {
		return nil, usagef("--model is required: the model file written by 'rfm fit'")
	}
	lm, err := predictor.Load(path)
	if err != nil {
		return nil, err
	}
	if needPipeline {
		if err := lm.NeedPipeline(); err != nil {
			return nil, err
		}
	}
	return lm, nil
}

// checkOutPath fails early, before a long computation, when the output
// cannot be written where asked, or would overwrite an input.
func checkOutPath(flagName, out string, inputs ...string) error {
	if out == "" {
		return nil
	}
	for _, in := range inputs {
		if in != "" && sameFile(in, out) {
			return usagef("--%s %s would overwrite the input file; choose another path", flagName, out)
		}
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return usagef("--%s %s is a directory; give a file path", flagName, out)
	}
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return fmt.Errorf("--%s %s: directory %s does not exist", flagName, out, dir)
	}
	if err := modelfile.CheckWritable(out); err != nil {
		return fmt.Errorf("--%s %s: cannot write there: %w", flagName, out, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the *PathError wrapper (its path is a temporary name the
// user never chose) and keeps the reason.
func unwrapPath(err error) error {
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
