package main

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/modelfile"
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
	f := helpFlagSet("predict", "rfm predict --model FILE --data FILE [--out FILE] [flags]")
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
	// The table is read, predicted and written a piece at a time, so a
	// file larger than memory streams through.
	bar := newProgress(e.stderr, e.tty(), o.common.quiet)
	defer bar.Abort()
	po := cli.PredictOptions{Read: opt, Roles: cli.InputRoles(lm.Pipeline), Keep: o.keep, Proba: o.proba, PieceBytes: pieceBytes,
		Started: func(first, last int) { bar.Update(0, fmt.Sprintf("predict rows %d-%d", first, last)) }}
	n := 0
	write := func(w io.Writer) (err error) {
		n, err = cli.PredictCSV(e.ctx, w, lm, o.data, po)
		return err
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
