package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// ReadOptions controls how a file becomes a Table. The zero value detects
// everything.
type ReadOptions struct {
	// Format is one of "csv", "tsv", "txt" (delimited text), "parquet",
	// "npy", "npz", "libsvm". Empty means: from the file extension (a ".gz"
	// suffix is stripped first), else from the file's first bytes, else
	// delimited text.
	Format string
	// Delimiter of delimited text; 0 detects it among , \t ; | from the
	// header and first lines ("tsv" means \t).
	Delimiter rune
	// NoHeader: the first line of delimited text is data; columns are named
	// c0, c1, ...
	NoHeader bool
	// Categorical and Numeric force the kind of the named columns. A cell of
	// a forced-numeric column that is not a number is an error.
	Categorical []string
	Numeric     []string
	// Ignore drops the named columns.
	Ignore []string
	// MissingTokens are the cell texts (after trimming spaces) read as
	// missing in text cells; empty means DefaultMissingTokens. An empty cell
	// is always missing.
	MissingTokens []string
	// MemoryBudget caps in bytes what a read may hold: the input text (or
	// bytes of a binary format) plus the table's cells, each charged as
	// cellCost bytes. 0 means DefaultMemoryBudget.
	MemoryBudget uint64
}

// The recognised formats.
const (
	formatCSV     = "csv"
	formatTSV     = "tsv"
	formatText    = "txt"
	formatParquet = "parquet"
	formatNPY     = "npy"
	formatNPZ     = "npz"
	formatLIBSVM  = "libsvm"
)

var extFormats = map[string]string{
	".csv": formatCSV, ".tsv": formatTSV, ".tab": formatTSV, ".txt": formatText,
	".dat": formatText, ".data": formatText,
	".parquet": formatParquet, ".pq": formatParquet,
	".npy": formatNPY, ".npz": formatNPZ,
	".libsvm": formatLIBSVM, ".svm": formatLIBSVM,
}

// ReadFile reads a table from a file; see ReadOptions for the formats.
func ReadFile(path string, opt ReadOptions) (*Table, error) {
	return ReadFileContext(context.Background(), path, opt)
}

// ReadFileContext is ReadFile that gives up with ctx.Err() when ctx is done,
// including while waiting for a writer to open a named pipe (FIFO) or for
// data to arrive from one.
func ReadFileContext(ctx context.Context, path string, opt ReadOptions) (*Table, error) {
	f, err := openContext(ctx, path)
	if err != nil {
		if isCtxErr(err) {
			return nil, err
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, fmt.Errorf("%s: cannot open: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", path, err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a data file", path)
	}
	format, gz, err := formatFromName(path, opt.Format)
	if err != nil {
		return nil, err
	}
	if format == formatParquet && !gz && st.Mode().IsRegular() {
		// Parquet needs random access; an *os.File avoids loading it whole.
		plan, err := newPlan(opt)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return readParquet(f, st.Size(), path, plan, opt, newLimits(ctx, opt))
	}
	var hint int64
	if st.Mode().IsRegular() && !gz {
		hint = st.Size()
	}
	return readContext(ctx, f, path, opt, hint)
}

// openContext opens a file for reading. Opening a named pipe blocks until a
// writer opens it too, so that open runs aside and gives way to ctx.
func openContext(ctx context.Context, path string) (*os.File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type result struct {
		f   *os.File
		err error
	}
	done := make(chan result, 1)
	go func() {
		f, err := os.Open(path)
		done <- result{f, err}
	}()
	select {
	case r := <-done:
		return r.f, r.err
	case <-ctx.Done():
		// Release the blocked open: open the pipe for writing without
		// blocking (a reader is waiting, so this succeeds) and close it;
		// the abandoned open then returns and its file is closed.
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		go func() {
			if r := <-done; r.f != nil {
				r.f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// Read reads a table from r. name is used in messages and, unless
// opt.Format is set, to pick the format by extension.
func Read(r io.Reader, name string, opt ReadOptions) (*Table, error) {
	return ReadContext(context.Background(), r, name, opt)
}

// ReadContext is Read that gives up with ctx.Err() when ctx is done, also
// while a read from r (a pipe, a terminal) waits for data.
func ReadContext(ctx context.Context, r io.Reader, name string, opt ReadOptions) (*Table, error) {
	var hint int64
	switch v := r.(type) { // in-memory readers know their length
	case *bytes.Reader:
		hint = int64(v.Len())
	case *strings.Reader:
		hint = int64(v.Len())
	case *bytes.Buffer:
		hint = int64(v.Len())
	}
	return readContext(ctx, r, name, opt, hint)
}

// readContext is ReadContext with the input's size when it is known (a
// regular file), so that it is read into one buffer of the right size.
func readContext(ctx context.Context, r io.Reader, name string, opt ReadOptions, sizeHint int64) (*Table, error) {
	format, gz, err := formatFromName(name, opt.Format)
	if err != nil {
		return nil, err
	}
	plan, err := newPlan(opt)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	lim := newLimits(ctx, opt)
	lim.sizeHint = sizeHint
	if mayBlock(r) {
		r = newCtxReader(lim.ctx, r)
	}
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); gz || bytes.Equal(magic, gzipMagic) {
		isGzip := bytes.Equal(magic, gzipMagic)
		if err := lim.ctx.Err(); err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			if ctxErr := lim.ctx.Err(); ctxErr != nil {
				return nil, ctxErr
			}
			if isGzip && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
				return nil, fmt.Errorf("%s: truncated gzip stream: the file ends inside the gzip header", name)
			}
			return nil, fmt.Errorf("%s: not a valid gzip stream: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(gzipErrors{zr, name}, 1<<16)
		lim.gzipped = true
	}
	if format == "" {
		format = sniffFormat(br)
	}
	if err := lim.ctx.Err(); err != nil {
		return nil, err
	}
	var t *Table
	switch format {
	case formatCSV, formatText, formatTSV:
		delim := opt.Delimiter
		if delim == 0 && format == formatTSV {
			delim = '\t'
		}
		t, err = readDelimited(br, name, delim, opt.NoHeader, plan, lim)
	case formatLIBSVM:
		t, err = readLIBSVM(br, name, plan, lim)
	case formatParquet, formatNPY, formatNPZ:
		// Refuse what is plainly not the format (/dev/zero, a text file)
		// and an NPY array too large for the budget before reading it all.
		var need uint64
		need, err = checkMagic(br, name, format, lim)
		if err != nil {
			return nil, err
		}
		limit := lim.budget
		if need > 0 && (limit == 0 || need < limit) {
			limit = need
		}
		var b []byte
		b, err = readAllBounded(br, lim, name, limit)
		if err != nil && need > 0 && limit == need && uint64(len(b)) > need {
			return nil, fmt.Errorf("%s: the data runs past the %d bytes that the NPY header's shape and type make", name, need)
		}
		if err != nil {
			b = nil
			var pe *ParseError
			if errors.As(err, &pe) || isCtxErr(err) {
				return nil, err
			}
			return nil, fmt.Errorf("%s: read failed: %w", name, err)
		}
		switch format {
		case formatParquet:
			return readParquet(bytes.NewReader(b), int64(len(b)), name, plan, opt, lim)
		case formatNPY:
			t, err = readNPY(b, name, lim)
		default:
			t, err = readNPZ(b, name, lim)
		}
		if err == nil {
			err = plan.apply(t)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("%s: no columns left after Ignore", name)
	}
	t.missingTokens = slices.Clone(opt.MissingTokens)
	t.noHeader = opt.NoHeader
	return t, nil
}

var gzipMagic = []byte{0x1f, 0x8b}

// checkMagic looks at the first bytes of a binary format before the input
// is read whole. For NPY it also checks the shape in the header against the
// budget and returns the file's exact length (0 when unknown).
func checkMagic(br *bufio.Reader, name, format string, lim *limits) (uint64, error) {
	head, _ := br.Peek(8)
	switch format {
	case formatParquet:
		if !bytes.HasPrefix(head, []byte("PAR1")) {
			return 0, fmt.Errorf("%s: not a readable Parquet file: no PAR1 magic at the start", name)
		}
	case formatNPZ:
		if !bytes.HasPrefix(head, []byte("PK")) {
			return 0, fmt.Errorf("%s: not a valid .npz (zip) archive: it does not start with PK", name)
		}
	case formatNPY:
		if !bytes.HasPrefix(head, []byte("\x93NUMPY")) {
			return 0, fmt.Errorf("%s: not an NPY file (it does not start with \\x93NUMPY)", name)
		}
		// The header is short (numpy pads it to 64 bytes or a few times
		// that); its shape is checked now unless the whole input is already
		// in the buffer (then decoding it says best what is wrong).
		b, err := br.Peek(br.Size())
		if err != nil {
			return 0, nil
		}
		a, err := decodeNPY(b, name, lim, 0, true)
		if err != nil {
			var pe *ParseError
			if errors.As(err, &pe) {
				return 0, err // the budget or the column bound
			}
			return 0, nil
		}
		return a.need, nil
	}
	return 0, nil
}

// formatFromName resolves the format from an explicit option or the name.
// It returns "" when the extension is unknown, so the content decides.
func formatFromName(name, explicit string) (format string, gz bool, err error) {
	lower := strings.ToLower(name)
	if strings.HasSuffix(lower, ".gz") {
		gz = true
		lower = strings.TrimSuffix(lower, ".gz")
	}
	if explicit != "" {
		f := strings.ToLower(strings.TrimPrefix(explicit, "."))
		switch f {
		case "svm":
			f = formatLIBSVM
		case "text", "dat":
			f = formatText
		}
		switch f {
		case formatCSV, formatTSV, formatText, formatParquet, formatNPY, formatNPZ, formatLIBSVM:
			return f, gz, nil
		}
		return "", false, fmt.Errorf("%s: unknown format %q; use one of csv, tsv, txt, parquet, npy, npz, libsvm", name, explicit)
	}
	return extFormats[filepath.Ext(lower)], gz, nil
}

// sniffFormat looks at the first bytes for the binary formats' magic numbers.
func sniffFormat(br *bufio.Reader) string {
	magic, _ := br.Peek(6)
	switch {
	case bytes.HasPrefix(magic, []byte("PAR1")):
		return formatParquet
	case bytes.HasPrefix(magic, []byte("\x93NUMPY")):
		return formatNPY
	case bytes.HasPrefix(magic, []byte("PK\x03\x04")):
		return formatNPZ
	}
	return formatText
}

// plan is ReadOptions' column selection, checked for consistency.
type plan struct {
	opt    ReadOptions
	ignore map[string]bool
	force  map[string]forced
	ms     *missingSet
}

func newPlan(opt ReadOptions) (*plan, error) {
	p := &plan{opt: opt, ignore: map[string]bool{}, force: map[string]forced{}, ms: newMissingSet(opt.MissingTokens)}
	for _, n := range opt.Ignore {
		p.ignore[n] = true
	}
	for _, n := range opt.Categorical {
		if p.ignore[n] {
			return nil, fmt.Errorf("column %q is both ignored and forced categorical; choose one", n)
		}
		p.force[n] = forceCategorical
	}
	for _, n := range opt.Numeric {
		if p.ignore[n] {
			return nil, fmt.Errorf("column %q is both ignored and forced numeric; choose one", n)
		}
		if p.force[n] == forceCategorical {
			return nil, fmt.Errorf("column %q is forced both categorical and numeric; choose one", n)
		}
		p.force[n] = forceNumeric
	}
	if opt.Delimiter != 0 && (opt.Delimiter == '"' || opt.Delimiter == '\r' || opt.Delimiter == '\n' ||
		!utf8.ValidRune(opt.Delimiter) || opt.Delimiter == utf8.RuneError) {
		return nil, fmt.Errorf("invalid delimiter %q", opt.Delimiter)
	}
	return p, nil
}

// checkNames reports forced or ignored names that the file does not have.
func (p *plan) checkNames(source string, names []string) error {
	have := make(map[string]bool, len(names))
	for _, n := range names {
		have[n] = true
	}
	check := func(list []string, what string) error {
		for _, n := range list {
			if !have[n] {
				return &ColumnNotFoundError{Source: source, Role: what + " column", Name: n, Columns: names}
			}
		}
		return nil
	}
	if err := check(p.opt.Ignore, "ignored"); err != nil {
		return err
	}
	if err := check(p.opt.Categorical, "categorical"); err != nil {
		return err
	}
	return check(p.opt.Numeric, "numeric")
}

// apply checks the names and then drops ignored columns and converts forced
// kinds of a table from a typed (binary) format.
func (p *plan) apply(t *Table) error {
	if err := p.checkNames(t.Source, t.Names()); err != nil {
		return err
	}
	kept := t.Columns[:0]
	for _, c := range t.Columns {
		if p.ignore[c.Name] {
			continue
		}
		switch p.force[c.Name] {
		case forceCategorical:
			numericToText(c)
		case forceNumeric:
			if err := p.textToNumeric(c); err != nil {
				return err
			}
		}
		kept = append(kept, c)
	}
	clear(t.Columns[len(kept):])
	t.Columns = kept
	return nil
}

// numericToText makes a numeric column categorical, formatting each value in
// the shortest form that reads back to the same float64.
func numericToText(c *Column) {
	if c.Kind == Categorical {
		return
	}
	n := len(c.Num)
	if c.Missing == nil {
		c.Missing = make([]bool, n)
	}
	c.Str = make([]string, n)
	for i, v := range c.Num {
		if math.IsNaN(v) || c.Missing[i] {
			c.Missing[i] = true
			continue
		}
		c.Str[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	c.Num = nil
	c.Kind = Categorical
}

// textToNumeric parses a categorical column's cells as numbers.
func (p *plan) textToNumeric(c *Column) error {
	if c.Kind == Numeric {
		return nil
	}
	num := make([]float64, len(c.Str))
	if c.Missing == nil {
		c.Missing = make([]bool, len(c.Str))
	}
	for i, s := range c.Str {
		s = strings.TrimSpace(s)
		if c.Missing[i] || p.ms.has(s) {
			c.Missing[i] = true
			num[i] = math.NaN()
			continue
		}
		v, cls := parseCell(s)
		if cls != cellNumber {
			return c.cellError(i, "%s", numberError(s, cls))
		}
		num[i] = v
	}
	c.Num, c.Str, c.Kind = num, nil, Numeric
	return nil
}
