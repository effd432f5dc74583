package main

import (
	"context"
	"encoding/json"
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
	"github.com/rfmkit/rfm/tree"
)

// Model file sections written by the CLI next to the engine's state.
const (
	extraPipeline = "pipeline" // *dataset.Pipeline: raw columns → features
	extraTarget   = "target"   // *dataset.Target: class labels or target scaling
	extraTraining = "training" // trainingInfo: where the model came from
)

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

// predictChunked predicts n rows of x a chunk at a time so that a progress
// bar (on a terminal, unless quiet) moves during long predictions. Each
// chunk is a multiple of the kernel's 128-row bands and a row's prediction
// depends only on the row, so the numbers are those of one Predict call.
func predictChunked(e *env, lm *loadedModel, x []float64, n int, quiet bool, verb string) ([]float64, error) {
	bar := newProgress(e.stderr, e.tty(), quiet)
	defer bar.Abort() // the caller prints its own summary
	return predictRows(e.ctx, lm, x, n, func(r0, r1 int) {
		bar.Update(float64(r0)/float64(n), fmt.Sprintf("%s rows %d-%d of %d", verb, r0+1, r1, n))
	})
}

// predictRows predicts n rows of x in chunks of predictChunkRows (a tree's
// treePredictChunkRows), telling each chunk's rows to started (may be nil).
func predictRows(ctx context.Context, lm *loadedModel, x []float64, n int, started func(r0, r1 int)) ([]float64, error) {
	chunk := predictChunkRows
	if lm.tree != nil {
		// A tree splits each chunk among its leaves: a chunk a few leaves'
		// worth of rows would leave each leaf a handful.
		chunk = treePredictChunkRows
	}
	d, m := lm.d(), lm.predictor()
	out := make([]float64, 0, n*lm.outputs())
	for r0 := 0; r0 < n; r0 += chunk {
		r1 := min(r0+chunk, n)
		if started != nil {
			started(r0, r1)
		}
		s, err := m.Predict(ctx, x[r0*d:r1*d], r1-r0)
		if err != nil {
			return nil, err
		}
		out = append(out, s...)
	}
	return out, nil
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
	return fmt.Errorf("%s: %s", path, strings.TrimPrefix(msg, "dataset: "))
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
	col, err := t.TargetColumn(target)
	if err != nil {
		return nil, nil, inFile(path, err)
	}
	tg, err := dataset.FitTarget(col, task)
	if err != nil {
		return nil, nil, inFile(path, err)
	}
	features := t.NamesExcept(target)
	if len(features) == 0 {
		return nil, nil, fmt.Errorf("%s: no feature columns besides the target %q", path, target)
	}
	p, err := dataset.FitPipelineScaled(t, features, scaling)
	if err != nil {
		return nil, nil, inFile(path, err)
	}
	return tg, p, nil
}

// encodeRows turns a table into the engine's numeric dataset with a fitted
// pipeline and target.
func encodeRows(t *dataset.Table, path string, p *dataset.Pipeline, tg *dataset.Target) (*rfm.Dataset, error) {
	x, n, d, err := p.Transform(t)
	if err != nil {
		return nil, inFile(path, err)
	}
	col, err := t.TargetColumn(tg.Name)
	if err != nil {
		return nil, inFile(path, err)
	}
	y, cls, err := tg.Encode(col)
	if err != nil {
		return nil, inFile(path, err)
	}
	ds := &rfm.Dataset{X: x, N: n, D: d}
	if tg.IsClassification() {
		ds.Labels, ds.Classes = cls, tg.NumClasses()
	} else {
		ds.Y, ds.Outputs = y, 1
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
	msg := err.Error()
	for name, role := range roles {
		for _, kind := range []string{"numeric", "categorical"} {
			key := fmt.Sprintf("%s column %q not found", kind, name)
			if i := strings.Index(msg, key); i >= 0 {
				return fmt.Errorf("%s: %s %q is missing%s", path, role, name, msg[i+len(key):])
			}
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
type trainingInfo struct {
	Data       string `json:"data"`
	Rows       int    `json:"rows"`
	Validation string `json:"validation"`
	Version    string `json:"rfm_version"`
}

// fileModel is what a model file holds: an RFM or a tree of them.
type fileModel interface {
	ToFile(extra map[string]json.RawMessage) (*modelfile.File, error)
}

// saveModel writes the model with its pipeline and target atomically.
func saveModel(ctx context.Context, path string, m fileModel, p *dataset.Pipeline, tg *dataset.Target, info trainingInfo) error {
	extra := map[string]json.RawMessage{}
	for key, v := range map[string]any{extraPipeline: p, extraTarget: tg, extraTraining: info} {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode model section %q: %w", key, err)
		}
		extra[key] = b
	}
	f, err := m.ToFile(extra)
	if err != nil {
		return err
	}
	f.CreatedBy = "rfm " + versionString()
	if p != nil && !p.Scaling.IsStandard() {
		f.FormatVersion = max(f.FormatVersion, modelfile.VersionScaledOrCalibrated)
	}
	return modelfile.WriteFileAtomicContext(ctx, path, f)
}

// loadedModel is a model file with the CLI's sections decoded. Exactly one
// of model (an RFM) and tree is set.
type loadedModel struct {
	path     string
	model    *rfm.Model
	tree     *tree.Model
	pipeline *dataset.Pipeline // nil when the file was not written by rfm fit
	target   *dataset.Target   // likewise
	training *trainingInfo
	// createdBy names the program that wrote the file.
	createdBy string
}

// loadModel reads and checks a model file. needPipeline requires the
// sections that predicting raw rows needs.
func loadModel(path string, needPipeline bool) (*loadedModel, error) {
	if path == "" {
		return nil, usagef("--model is required: the model file written by 'rfm fit'")
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a model file", path)
	}
	f, err := modelfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lm := &loadedModel{path: path, createdBy: f.CreatedBy}
	var extra map[string]json.RawMessage
	if f.Kind == tree.FileKind {
		lm.tree, extra, err = tree.FromFile(f)
	} else {
		lm.model, extra, err = rfm.FromFile(f)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	decode := func(key string, v any) (bool, error) {
		raw, ok := extra[key]
		if !ok {
			return false, nil
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return false, fmt.Errorf("%s: model section %q is damaged: %v", path, key, err)
		}
		return true, nil
	}
	var p dataset.Pipeline
	var tg dataset.Target
	var info trainingInfo
	okP, err := decode(extraPipeline, &p)
	if err != nil {
		return nil, err
	}
	okT, err := decode(extraTarget, &tg)
	if err != nil {
		return nil, err
	}
	okI, err := decode(extraTraining, &info)
	if err != nil {
		return nil, err
	}
	if okI {
		lm.training = &info
	}
	if okP && okT {
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("%s: model section %q: %s", path, extraPipeline, strings.TrimPrefix(err.Error(), "dataset: "))
		}
		if err := tg.Validate(); err != nil {
			return nil, fmt.Errorf("%s: model section %q: %s", path, extraTarget, strings.TrimPrefix(err.Error(), "dataset: "))
		}
		if w := p.Width(); w != lm.d() {
			return nil, fmt.Errorf("%s: the pipeline makes %d features but the model takes %d; the file is inconsistent", path, w, lm.d())
		}
		wantTask := rfm.Regression
		if tg.IsClassification() {
			wantTask = rfm.Classification
			if tg.NumClasses() != lm.outputs() {
				return nil, fmt.Errorf("%s: the target has %d classes but the model has %d outputs; the file is inconsistent", path, tg.NumClasses(), lm.outputs())
			}
		}
		if lm.task() != wantTask {
			return nil, fmt.Errorf("%s: the target is for %s but the model does %s; the file is inconsistent", path, tg.Task, lm.task())
		}
		lm.pipeline, lm.target = &p, &tg
	} else if needPipeline {
		return nil, fmt.Errorf("%s: the model has no column pipeline (it was not written by 'rfm fit'); predict with the Go API on numeric features instead", path)
	}
	return lm, nil
}

// predictor is what predict and eval need of a model.
type predictor interface {
	Predict(ctx context.Context, x []float64, n int) ([]float64, error)
}

func (lm *loadedModel) predictor() predictor {
	if lm.tree != nil {
		return lm.tree
	}
	return lm.model
}

// d is the number of features the model takes.
func (lm *loadedModel) d() int {
	if lm.tree != nil {
		return lm.tree.D
	}
	return lm.model.D
}

// outputs is the number of classes or regression targets.
func (lm *loadedModel) outputs() int {
	if lm.tree != nil {
		return lm.tree.Outputs
	}
	return lm.model.Outputs
}

func (lm *loadedModel) task() rfm.Task {
	if lm.tree != nil {
		return lm.tree.Task
	}
	return lm.model.Task
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

// classify turns raw class scores into the model's classes and
// probabilities in one pass, exactly as Model.PredictClass and
// Model.PredictProba do (argmax of the scores; the model's calibration
// cal, or without one the scores clipped to [ProbEps, 1−ProbEps] and
// renormalized), so a prediction file's classes and probabilities come
// from one kernel evaluation and always agree with the library.
// TestClassifyMatchesModel pins the equivalence.
func classify(cal *rfm.Calibration, scores []float64, n, c int) (classes []int, proba []float64) {
	classes = rfm.Argmax(scores, n, c)
	proba = slices.Clone(scores[:n*c])
	cal.Apply(proba, n, c)
	return classes, proba
}

// calibration is the model's map from scores to probabilities (nil: none).
func (lm *loadedModel) calibration() *rfm.Calibration {
	if lm.model != nil {
		return lm.model.Calibration
	}
	return lm.tree.Calibration
}
