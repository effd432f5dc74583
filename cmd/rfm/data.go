package main

import (
	"context"
	"runtime"
	"slices"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/predictor"
)

// commonFlags are the output and resource flags the commands share:
// --json, --quiet and --threads, each declared once here.
type commonFlags struct {
	quiet   bool
	json    bool
	threads int
}

// register adds --json (withJSON), --quiet and --threads.
func (c *commonFlags) register(f *flagSet, withJSON bool) {
	if withJSON {
		c.add(f, "json")
	}
	c.add(f, "quiet", "threads")
}

// add adds the named common flags, in that order.
func (c *commonFlags) add(f *flagSet, names ...string) {
	for _, name := range names {
		switch name {
		case "json":
			f.Bool(&c.json, "json", false, "print the result as JSON on stdout")
		case "quiet":
			f.Bool(&c.quiet, "quiet", false, "no progress bar or summary on stderr")
		case "threads":
			f.Int(&c.threads, "threads", 0, "threads for the linear algebra (`N`; 0 = one per CPU, at most 256)")
		default:
			panic("no common flag --" + name)
		}
	}
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
	d, err := cli.ParseDelimiter(r.delimiter)
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

// pieceBytes is the text predict and eval parse at a time: about 500 000 rows
// of the flights table.
var pieceBytes = dataset.DefaultChunkBytes

// rowReadOptions are the read options for rows to predict or evaluate: the
// model's column kinds and missing tokens, plus the target column's kind
// when it must be read (eval) so that labels keep their text.
func rowReadOptions(p *dataset.Pipeline, tg *dataset.Target, withTarget bool, rf *readFlags) (dataset.ReadOptions, error) {
	opt := predictor.RowReadOptions(p, tg, withTarget)
	err := rf.apply(&opt)
	return opt, err
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
