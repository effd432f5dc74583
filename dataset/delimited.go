package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// readDelimited reads CSV-like text: RFC 4180 quoting (a field that starts
// with a double quote runs to the matching quote, "" is a literal quote),
// LF or CRLF line endings, blank lines skipped. Unlike strict RFC 4180 a
// quote inside an unquoted field is kept as text (5'11"), since such files
// are common and unambiguous. Cells are trimmed of surrounding white space
// before typing, so "1, 2" reads as two numbers and " red" equals "red".
//
// The whole input is held as one string and walked in file order: the first
// pass parses numbers for every column that still looks numeric, a second
// pass (only when needed) collects the cells of categorical columns. Cells
// are substrings, so neither pass allocates per cell.
func readDelimited(br *bufio.Reader, name string, delim rune, noHeader bool, p *plan, lim *limits) (*Table, error) {
	// The checker stops at the budget with a message naming the line; the
	// buffer's own limit only keeps its growth from overshooting it.
	buf, err := readAllBounded(newTextChecker(br, lim, name, lim.budget), lim, name, lim.budget)
	// The bytes are never written again, so the string can share them.
	text := unsafe.String(unsafe.SliceData(buf), len(buf))
	if delim == 0 {
		const sampleSize = 64 << 10
		sample := strings.TrimPrefix(text[:min(len(text), sampleSize)], "\uFEFF")
		delim = detectDelimiter([]byte(sample), err == nil && len(text) <= sampleSize)
	}
	if err != nil {
		var bad *badByteError
		if errors.As(err, &bad) {
			return nil, badByte(text, name, delim, bad)
		}
		return nil, readFailed(name, err)
	}
	text = strings.TrimPrefix(text, "\uFEFF")
	return parseDelimited(text, name, delim, frame{noHeader: noHeader}, p, lim)
}

// frame places a piece of delimited text in its file: a chunk of a file
// read in pieces (ReadChunks) has no header line of its own.
type frame struct {
	noHeader bool
	// names, when set, are the file's columns (from its header, read
	// before): every record of the text is data.
	names []string
	// line is the file line of the text's first line (0 means 1).
	line int
}

// parseDelimited makes a Table of delimited text held in memory (see
// readDelimited).
func parseDelimited(text, name string, delim rune, fr frame, p *plan, lim *limits) (*Table, error) {
	noHeader := fr.noHeader
	// The text is held whole; the cells are charged as they are parsed.
	held := uint64(len(text))
	var cells uint64
	s := &csvScanner{text: text, delim: string(delim), name: name, line: fr.line}

	var (
		ncols     = -1
		names     []string
		keep      []int // field index of each kept column
		cols      []*textState
		firstLine int
		lines     []int // source line of each data row
	)
	if fr.names != nil {
		// A chunk: the columns are known and every record is data.
		ncols, names, firstLine, noHeader = len(fr.names), fr.names, max(1, fr.line), true
		for j, n := range names {
			if !p.ignore[n] {
				keep = append(keep, j)
				cols = append(cols, &textState{force: p.force[n], bad: -1})
			}
		}
	}
	err := s.records(func(line int, rec []string) error {
		if ncols < 0 {
			// The first record: the header, or data named c0, c1, ...
			var err error
			ncols, firstLine = len(rec), line
			if ncols > MaxColumns {
				return &ParseError{File: name, Line: line, Msg: fmt.Sprintf("%d fields; at most %d columns are supported", ncols, MaxColumns)}
			}
			if names, err = header(rec, name, line, noHeader); err != nil {
				return err
			}
			if err := p.checkNames(name, names); err != nil {
				return err
			}
			for j, n := range names {
				if !p.ignore[n] {
					keep = append(keep, j)
					cols = append(cols, &textState{force: p.force[n], bad: -1})
				}
			}
			if !noHeader {
				return nil
			}
		}
		if len(rec) != ncols {
			what := "the header has"
			if noHeader && fr.names == nil {
				what = fmt.Sprintf("line %d has", firstLine)
			}
			return &ParseError{File: name, Line: line,
				Msg: fmt.Sprintf("%d fields, but %s %d; check the delimiter (%q) and quoting", len(rec), what, ncols, delim)}
		}
		row := len(lines)
		// Each row costs its line number and its kept cells.
		cells += uint64(len(keep)) + 1
		if row%64 == 0 {
			if err := lim.ctx.Err(); err != nil {
				return err
			}
			if !lim.cellsFit(held, cells) {
				e := lim.budgetError(name, fmt.Sprintf("the table (%d rows of %d columns so far)", row, len(keep))).(*ParseError)
				e.Line = line
				return e
			}
		}
		for k, j := range keep {
			cols[k].add(row, strings.TrimSpace(rec[j]), p.ms)
		}
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ncols < 0 {
		return nil, &ParseError{File: name, Msg: "file is empty; expected a header line and data rows"}
	}
	if len(lines) == 0 {
		return nil, &ParseError{File: name, Line: firstLine, Msg: "header only, no data rows"}
	}

	t := &Table{Source: name, Columns: make([]*Column, len(keep))}
	var first *ParseError
	var text2 []int // positions in keep of categorical columns
	for k, j := range keep {
		st := cols[k]
		c := &Column{Name: names[j], source: name, lines: lines, field: j + 1, Missing: st.missing}
		t.Columns[k] = c
		if st.strayText() {
			if first == nil || st.textRow < first.Row-1 {
				first = c.cellError(st.textRow, "%q is not a number, but %d of the column's %d other values are; fix the cell, make it a missing-value token (rfm: add it to --na) or read the column as categorical (rfm: --categorical %s)",
					st.textCellValue, st.nNum, st.nNum+st.nText-1, names[j])
			}
			continue
		}
		if st.categorical() {
			c.Kind = Categorical
			c.Missing = make([]bool, len(lines))
			c.Str = make([]string, 0, len(lines))
			st.intern = map[string]string{}
			text2 = append(text2, k)
			continue
		}
		c.Kind, c.Num = Numeric, st.num
		// Report the earliest bad cell of the file among numeric columns.
		if st.bad >= 0 && (first == nil || st.bad < first.Row-1) {
			first = c.cellError(st.bad, "%s", numberError(st.badText, st.badCls))
		}
	}
	if first != nil {
		return nil, first
	}
	if len(text2) > 0 {
		skipHeader := !noHeader && fr.names == nil
		// Same text, same records: this pass cannot fail where the first did not.
		err := s.records(func(_ int, rec []string) error {
			if skipHeader {
				skipHeader = false
				return nil
			}
			for _, k := range text2 {
				c, st := t.Columns[k], cols[k]
				v := strings.TrimSpace(rec[keep[k]])
				if p.ms.has(v) {
					c.Missing[len(c.Str)] = true
					v = ""
				} else {
					v = st.keepText(v)
				}
				c.Str = append(c.Str, v)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return t, nil
}

// textState accumulates one column during the first pass over a text file.
type textState struct {
	force   forced
	num     []float64
	missing []bool
	isText  bool // saw a cell that is not a number

	// Counts of an inferred column's number and text cells, and its first
	// text cell: a column of numbers with a stray word is an error (see
	// strayText), not silently categorical.
	nNum, nText   int
	textRow       int
	textCellValue string

	bad     int // first row with a rejected cell, -1 if none
	badCls  cellClass
	badText string

	intern map[string]string // categorical: shared copies of level strings
}

func (st *textState) categorical() bool {
	return st.force == forceCategorical || (st.isText && st.force != forceNumeric)
}

func (st *textState) add(row int, v string, ms *missingSet) {
	if st.force == forceCategorical {
		return // typed as categorical; the second pass collects the text
	}
	if ms.has(v) {
		if !st.isText {
			st.num = append(st.num, math.NaN())
			st.missing = append(st.missing, true)
		}
		return
	}
	x, cls := parseCell(v)
	if st.force == inferKind {
		if cls == cellText {
			if st.nText == 0 {
				st.textRow, st.textCellValue = row, strings.Clone(v)
			}
			st.nText++
		} else {
			st.nNum++
		}
	}
	if st.isText && st.force == inferKind {
		return // categorical now: only the counts go on
	}
	st.num = append(st.num, x)
	st.missing = append(st.missing, false)
	switch cls {
	case cellNumber:
		return
	case cellText:
		if st.force == inferKind {
			st.isText, st.num, st.missing = true, nil, nil
			return
		}
		st.isText = true // forced numeric: an error, reported below
	}
	if st.bad < 0 {
		st.bad, st.badCls, st.badText = row, cls, strings.Clone(v)
	}
}

// strayText reports an inferred column that reads as numbers but for a few
// words (at most 5% of its non-missing cells, and at least 20 cells): most
// likely a typo or an unlisted missing-value marker, which would otherwise
// turn a numeric feature silently into a categorical one.
func (st *textState) strayText() bool {
	total := st.nNum + st.nText
	return st.force == inferKind && st.nText > 0 && total >= 20 && 20*st.nText <= total
}

// keepText copies a level string (shared between equal cells) so the
// column does not pin the whole input text in memory.
func (st *textState) keepText(v string) string {
	if c, ok := st.intern[v]; ok {
		return c
	}
	c := strings.Clone(v)
	if len(st.intern) < maxInterned {
		st.intern[c] = c
	}
	return c
}

// lineBreak returns the length of the line break at pos (1 or 2), or 0.
func lineBreak(text string, pos int) int {
	switch {
	case text[pos] == '\n':
		return 1
	case text[pos] == '\r' && pos+1 < len(text) && text[pos+1] == '\n':
		return 2
	}
	return 0
}

// badByte locates a bad byte found at the end of text (all that was read
// before it): its line, and its field (counting delimiters outside quotes
// from the start of the line), named from the header when the header
// itself is complete and valid.
func badByte(text, name string, delim rune, bad *badByteError) *ParseError {
	start := strings.LastIndexByte(text, '\n') + 1
	col, quoted := 1, false
	for _, r := range text[start:] {
		switch {
		case r == '"':
			quoted = !quoted
		case r == delim && !quoted:
			col++
		}
	}
	e := &ParseError{File: name, Line: bad.line, Col: col, Msg: bad.msg()}
	if end := strings.IndexByte(text, '\n'); end > 0 && start > 0 {
		hdr := strings.TrimPrefix(strings.TrimRight(text[:end], "\r"), "\uFEFF")
		if f := strings.Split(hdr, string(delim)); col <= len(f) {
			e.Column = strings.Trim(strings.TrimSpace(f[col-1]), `"`)
		}
	}
	return e
}

// csvScanner parses fields of delimited text held in memory.
type csvScanner struct {
	text  string
	delim string
	name  string
	line  int // the file line of the text's first line (0 means 1)
}

// records calls fn with the fields of each non-blank record, in order. The
// slice is reused between calls; the strings are substrings of the text.
func (s *csvScanner) records(fn func(line int, rec []string) error) error {
	text := s.text
	var rec []string
	for pos, line := 0, max(1, s.line); pos < len(text); {
		if n := lineBreak(text, pos); n > 0 { // blank line
			pos += n
			line++
			continue
		}
		recLine := line
		rec = rec[:0]
		for {
			v, next, nl, err := s.field(pos)
			if err != nil {
				return &ParseError{File: s.name, Line: line, Msg: err.Error()}
			}
			rec = append(rec, v)
			line += nl
			pos = next
			if pos < len(text) && text[pos] == s.delim[0] && (len(s.delim) == 1 || strings.HasPrefix(text[pos:], s.delim)) {
				pos += len(s.delim)
				continue
			}
			if pos < len(text) { // at '\n'
				pos++
				line++
			}
			break
		}
		if err := fn(recLine, rec); err != nil {
			return err
		}
	}
	return nil
}

// field parses the field starting at pos. It returns the value (a substring
// of the text unless it had escaped quotes), the offset just past the field
// (at a delimiter, a '\n' or the end), and the number of line breaks inside
// a quoted field.
func (s *csvScanner) field(pos int) (val string, next, nl int, err error) {
	text := s.text
	if pos < len(text) && text[pos] == '"' {
		i, escaped := pos+1, false
		for {
			j := strings.IndexByte(text[i:], '"')
			if j < 0 {
				return "", 0, 0, fmt.Errorf("quoted field has no closing quote; write a quote inside a quoted field as \"\"")
			}
			i += j
			if i+1 < len(text) && text[i+1] == '"' {
				i += 2
				escaped = true
				continue
			}
			break
		}
		val = text[pos+1 : i]
		nl = strings.Count(val, "\n")
		if escaped {
			val = strings.ReplaceAll(val, `""`, `"`)
		}
		next = i + 1
		switch {
		case next == len(text), text[next] == '\n', strings.HasPrefix(text[next:], s.delim):
		case text[next] == '\r' && (next+1 == len(text) || text[next+1] == '\n'):
			next++
		default:
			return "", 0, 0, fmt.Errorf("text after the closing quote of a quoted field; quote the whole field and write inner quotes as \"\"")
		}
		return val, next, nl, nil
	}
	i := pos
	if len(s.delim) == 1 {
		d := s.delim[0]
		for i < len(text) && text[i] != d && text[i] != '\n' {
			i++
		}
	} else {
		for i < len(text) && text[i] != '\n' && !strings.HasPrefix(text[i:], s.delim) {
			i++
		}
	}
	val = text[pos:i]
	if (i == len(text) || text[i] == '\n') && strings.HasSuffix(val, "\r") {
		val = val[:len(val)-1]
	}
	return val, i, 0, nil
}

// header names the columns from the first record's fields.
func header(rec []string, file string, line int, noHeader bool) ([]string, error) {
	names := make([]string, len(rec))
	seen := make(map[string]int, len(rec))
	for j, v := range rec {
		h := ""
		if !noHeader {
			h = strings.TrimSpace(v)
		}
		if h == "" {
			h = "c" + strconv.Itoa(j)
		}
		if k, dup := seen[h]; dup {
			return nil, &ParseError{File: file, Line: line,
				Msg: fmt.Sprintf("duplicate column name %q (columns %d and %d); rename one of them", h, k+1, j+1)}
		}
		seen[h] = j
		names[j] = strings.Clone(h)
	}
	return names, nil
}

// detectDelimiter picks the candidate that splits the header into the most
// fields while splitting the following lines into the same number. If no
// candidate is consistent (a ragged file), the one giving the header the
// most fields wins, so the ragged-row error names the real problem line.
// complete says the sample holds the whole input.
func detectDelimiter(sample []byte, complete bool) rune {
	best, bestFields, bestConsistent := ',', 1, false
	for _, d := range []byte{',', '\t', ';', '|'} {
		counts := recordFieldCounts(sample, d, 50, complete)
		if len(counts) == 0 || counts[0] < 2 {
			continue
		}
		consistent := true
		for _, c := range counts[1:] {
			if c != counts[0] {
				consistent = false
				break
			}
		}
		better := false
		switch {
		case consistent && !bestConsistent:
			better = true
		case consistent == bestConsistent:
			better = counts[0] > bestFields
		}
		if better {
			best, bestFields, bestConsistent = rune(d), counts[0], consistent
		}
	}
	return best
}

// recordFieldCounts counts fields per record for delimiter d, honouring
// double quotes, for at most max non-empty records. An incomplete last
// record (sample cut mid-record) is dropped.
func recordFieldCounts(sample []byte, d byte, max int, complete bool) []int {
	var counts []int
	fields, empty, inQuote := 1, true, false
	for _, b := range sample {
		switch {
		case b == '"':
			inQuote = !inQuote // "" inside quotes toggles twice: no net change
			empty = false
		case inQuote:
		case b == d:
			fields++
			empty = false
		case b == '\n':
			if !empty {
				counts = append(counts, fields)
				if len(counts) == max {
					return counts
				}
			}
			fields, empty = 1, true
		case b != '\r':
			empty = false
		}
	}
	if complete && !empty && !inQuote {
		counts = append(counts, fields)
	}
	return counts
}
