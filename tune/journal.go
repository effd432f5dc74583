package tune

import (
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/atomicfile"
)

// ReadTrials reads the trials table (Columns) a resumed search continues
// from, as Options.Cache; a missing file is an empty table. Only a regular
// file is read: a named pipe (whose open would wait, beyond any interrupt,
// for a writer) or a device is refused at once.
func ReadTrials(path string) (map[string]Trial, error) {
	fh, err := atomicfile.OpenRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]Trial{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	c, err := ReadCache(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Journal appends each trial to the trials table as it ends (Options.Done),
// so that an interrupted search can be resumed (ReadTrials). Each row goes
// out in one write. The first error is kept (Err) and later rows dropped.
type Journal struct {
	fh             *os.File
	classification bool
	err            error
}

// OpenJournal starts the trials table at path: a new table with its header,
// or (appendRows) rows added to the one a resumed search read. Only a
// regular file (or a new one) is opened: a named pipe (whose open would wait
// for a reader beyond any interrupt) or a device is refused at once.
func OpenJournal(path string, appendRows, classification bool) (*Journal, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendRows {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	fh, err := atomicfile.OpenRegularFile(path, flags, 0o644)
	if err != nil {
		return nil, err
	}
	j := &Journal{fh: fh, classification: classification}
	if !appendRows {
		if err := j.write(Columns); err != nil {
			fh.Close()
			return nil, err
		}
	}
	return j, nil
}

func (j *Journal) write(rec []string) error {
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write(rec)
	w.Flush()
	_, err := j.fh.WriteString(b.String())
	return err
}

// Add appends the trial's row (after the first error, nothing).
func (j *Journal) Add(t *Trial) {
	if j.err == nil {
		j.err = j.write(t.Record(j.classification))
	}
}

// Err is the first error of a write.
func (j *Journal) Err() error { return j.err }

// Close closes the table's file.
func (j *Journal) Close() error { return j.fh.Close() }

// LargeTableDefaults sets opt's MaxRows and FinalCenters to LargeMaxRows
// (at least MinRows) and LargeCenters when SolverAuto would fit a table of
// n rows and the given shape by a tree (which a search does not produce),
// and returns why auto chose the tree ("" when it sets nothing). It leaves
// them when the caller gave either (given), with class weights (exact
// solves only), or on fewer rows than the centres: the table is then
// refused by the search's plan.
func LargeTableDefaults(opt *Options, n int, shape rfm.FitShape, given bool) string {
	if given || opt.Base.ClassWeight == rfm.ClassWeightBalanced || n <= LargeCenters {
		return ""
	}
	s, why := rfm.ChooseSolver(opt.Base, shape)
	if s != rfm.SolverTree {
		return ""
	}
	opt.MaxRows, opt.FinalCenters = max(LargeMaxRows, opt.MinRows), LargeCenters
	return "--solver auto would fit a tree (" + why + ")"
}
