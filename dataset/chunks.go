package dataset

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unsafe"
)

// DefaultChunkBytes is the text ReadChunks parses at a time when the caller
// gives no size: about 250 000 rows of a table of ten numbers.
const DefaultChunkBytes = 32 << 20

// ReadFileChunks reads a delimited text file (CSV, TSV, TXT, gzipped or
// not) a piece at a time, so that a file larger than memory can be
// processed row by row: fn gets a Table of the next rows, about chunkBytes
// of text (0 means DefaultChunkBytes), in file order. Error messages name
// the file's own lines. Every chunk has the file's columns; a column's kind
// is decided chunk by chunk unless opt.Numeric or opt.Categorical fix it,
// as a caller that needs the same kinds throughout (a model's inputs) must.
// Other formats are read whole and passed to fn as one Table. An error from
// fn stops the read and is returned as it is.
func ReadFileChunks(ctx context.Context, path string, opt ReadOptions, chunkBytes int, fn func(*Table) error) error {
	if format, _, err := formatFromName(path, opt.Format); err != nil {
		return err
	} else if !isDelimited(format) && format != "" {
		return readWhole(ctx, path, opt, fn)
	}
	f, err := openContext(ctx, path)
	if err != nil {
		// ReadFileContext words the error (and sees the directory case).
		return readWhole(ctx, path, opt, fn)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.IsDir() {
		return readWhole(ctx, path, opt, fn)
	}
	err = ReadChunks(ctx, f, path, opt, chunkBytes, fn)
	if errors.Is(err, ErrNotDelimited) {
		return readWhole(ctx, path, opt, fn)
	}
	return err
}

// ReadChunks is ReadFileChunks on a reader (standard input, say); name is
// used in messages and to pick the format. Another format than delimited
// text is refused with ErrNotDelimited (wrapped), before fn is called.
func ReadChunks(ctx context.Context, r io.Reader, name string, opt ReadOptions, chunkBytes int, fn func(*Table) error) error {
	format, gz, err := formatFromName(name, opt.Format)
	if err != nil {
		return err
	}
	if format != "" && !isDelimited(format) {
		return fmt.Errorf("%s: %s: %w", name, format, ErrNotDelimited)
	}
	if chunkBytes <= 0 {
		chunkBytes = DefaultChunkBytes
	}
	p, err := newPlan(opt)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	lim := newLimits(ctx, opt)
	if mayBlock(r) {
		r = newCtxReader(lim.ctx, r)
	}
	br := bufio.NewReaderSize(r, 1<<16)
	if magic, _ := br.Peek(2); gz || bytes.Equal(magic, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			if ctxErr := lim.ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			return fmt.Errorf("%s: not a valid gzip stream: %w", name, err)
		}
		defer zr.Close()
		br = bufio.NewReaderSize(gzipErrors{zr, name}, 1<<16)
	}
	if format == "" {
		if format = sniffFormat(br); !isDelimited(format) {
			return ErrNotDelimited
		}
	}
	delim := opt.Delimiter
	if delim == 0 && format == formatTSV {
		delim = '\t'
	}
	c := &chunker{r: newTextChecker(br, lim, name, 0), name: name, size: chunkBytes, delim: delim, opt: opt, p: p, lim: lim, line: 1}
	return c.run(fn)
}

// ErrNotDelimited is returned by ReadChunks for an input that is not
// delimited text (Parquet, NPY, NPZ, LIBSVM): read it whole.
var ErrNotDelimited = errors.New("only delimited text (csv, tsv, txt) is read in pieces")

func isDelimited(format string) bool {
	return format == formatCSV || format == formatTSV || format == formatText
}

func readWhole(ctx context.Context, path string, opt ReadOptions, fn func(*Table) error) error {
	t, err := ReadFileContext(ctx, path, opt)
	if err != nil {
		return err
	}
	return fn(t)
}

// chunker cuts checked text into pieces of whole records.
type chunker struct {
	r     io.Reader
	name  string
	size  int
	delim rune
	opt   ReadOptions
	p     *plan
	lim   *limits
	names []string // from the header, once read
	line  int      // file line of the next piece's first line
	rows  int
}

func (c *chunker) run(fn func(*Table) error) error {
	const sampleSize = 64 << 10 // read first, to detect the delimiter
	var carry []byte
	eof := false
	size := max(c.size, sampleSize)
	for !eof || len(carry) > 0 {
		// A fresh buffer each time: the Table's strings may point into it.
		buf := make([]byte, len(carry), len(carry)+size)
		copy(buf, carry)
		for len(buf) < cap(buf) && !eof {
			n, err := c.r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err == io.EOF {
				eof = true
			} else if err != nil {
				var bad *badByteError
				if errors.As(err, &bad) {
					return c.badByte(string(buf), bad)
				}
				if isCtxErr(err) {
					return err
				}
				return readFailed(c.name, err)
			}
		}
		size = c.size
		text := unsafe.String(unsafe.SliceData(buf), len(buf))
		if c.names == nil {
			if c.delim == 0 {
				sample := strings.TrimPrefix(text[:min(len(text), sampleSize)], "\uFEFF")
				c.delim = detectDelimiter([]byte(sample), eof && len(text) <= sampleSize)
			}
			text = strings.TrimPrefix(text, "\uFEFF")
			ok, err := c.header(&text, eof)
			if err != nil {
				return err
			}
			if !ok { // the header runs on past what was read
				carry, size = []byte(text), 2*len(text)
				continue
			}
		}
		cut := len(text)
		if !eof {
			cut = wholeRecords(text, string(c.delim))
			if cut == 0 {
				// One record longer than a piece: read on, within the budget.
				if c.lim.budget > 0 && uint64(len(text)) > c.lim.budget {
					return c.lim.budgetError(c.name, fmt.Sprintf("the record at line %d", c.line))
				}
				carry, size = []byte(text), 2*len(text)
				continue
			}
		}
		piece := text[:cut]
		carry = []byte(text[cut:])
		if strings.TrimSpace(piece) != "" {
			t, err := parseDelimited(piece, c.name, c.delim, frame{names: c.names, line: c.line}, c.p, c.lim)
			if err != nil {
				return err
			}
			t.missingTokens = c.opt.MissingTokens
			t.noHeader = c.opt.NoHeader
			c.rows += t.NRows()
			if err := fn(t); err != nil {
				return err
			}
		}
		c.line += strings.Count(piece, "\n")
	}
	if c.names == nil {
		return &ParseError{File: c.name, Msg: "file is empty; expected a header line and data rows"}
	}
	if c.rows == 0 {
		return &ParseError{File: c.name, Line: 1, Msg: "header only, no data rows"}
	}
	return nil
}

// header reads the column names from the first record of text (consumed
// unless the file has no header line) and checks them against the options;
// ok is false when the record is not complete yet (more must be read).
func (c *chunker) header(text *string, eof bool) (ok bool, err error) {
	s := *text
	end := len(s)
	if !eof {
		end = wholeRecords(s, string(c.delim))
	}
	// Leading blank lines are skipped, as the whole-file reader does.
	var rec []string
	recLine := 0
	sc := &csvScanner{text: s[:end], delim: string(c.delim), name: c.name}
	stop := errors.New("stop")
	err = sc.records(func(line int, r []string) error {
		rec, recLine = append([]string(nil), r...), line
		return stop
	})
	if err != nil && err != stop {
		return false, err
	}
	if rec == nil {
		if eof {
			return false, &ParseError{File: c.name, Msg: "file is empty; expected a header line and data rows"}
		}
		if c.lim.budget > 0 && uint64(len(s)) > c.lim.budget {
			return false, c.lim.budgetError(c.name, "the header line")
		}
		return false, nil
	}
	if len(rec) > MaxColumns {
		return false, &ParseError{File: c.name, Line: recLine, Msg: fmt.Sprintf("%d fields; at most %d columns are supported", len(rec), MaxColumns)}
	}
	names, err := header(rec, c.name, recLine, c.opt.NoHeader)
	if err != nil {
		return false, err
	}
	if err := c.p.checkNames(c.name, names); err != nil {
		return false, err
	}
	c.names = names
	if !c.opt.NoHeader {
		// Drop the lines up to and including the header.
		hend := firstRecordEnd(s, string(c.delim))
		c.line += strings.Count(s[:hend], "\n")
		*text = s[hend:]
	}
	return true, nil
}

// badByte reports a bad byte met in a later piece: its line from the
// checker, its field counted in the line read so far and named from the
// header.
func (c *chunker) badByte(text string, bad *badByteError) error {
	if c.delim == 0 {
		// Met in the first piece, before the delimiter was detected: it
		// is detected from what was read, so the column is counted right.
		const sampleSize = 64 << 10
		sample := strings.TrimPrefix(text[:min(len(text), sampleSize)], "\uFEFF")
		c.delim = detectDelimiter([]byte(sample), false)
	}
	e := badByte(text, c.name, c.delim, bad)
	if c.names != nil && e.Col >= 1 && e.Col <= len(c.names) {
		e.Column = c.names[e.Col-1]
	}
	return e
}

// wholeRecords is the length of the longest prefix of text made of whole
// records, each ended by a line break (a quoted field may hold line breaks):
// where a piece of a file can be cut.
func wholeRecords(text, delim string) int {
	s := &csvScanner{text: text, delim: delim}
	cut, pos := 0, 0
	for pos < len(text) {
		if n := lineBreak(text, pos); n > 0 {
			pos += n
			cut = pos
			continue
		}
		for {
			_, next, _, err := s.field(pos)
			if err != nil {
				return cut // a quoted field not closed yet
			}
			pos = next
			if pos < len(text) && strings.HasPrefix(text[pos:], delim) {
				pos += len(delim)
				continue
			}
			break
		}
		if pos >= len(text) {
			return cut // the last record has no line break yet
		}
		pos++ // the '\n'
		cut = pos
	}
	return cut
}

// firstRecordEnd is the position just after the first non-blank record of
// text (the header) and its line break.
func firstRecordEnd(text, delim string) int {
	s := &csvScanner{text: text, delim: delim}
	pos := 0
	for pos < len(text) {
		if n := lineBreak(text, pos); n > 0 {
			pos += n
			continue
		}
		for {
			_, next, _, err := s.field(pos)
			if err != nil {
				return len(text)
			}
			pos = next
			if pos < len(text) && strings.HasPrefix(text[pos:], delim) {
				pos += len(delim)
				continue
			}
			break
		}
		return min(pos+1, len(text))
	}
	return pos
}
