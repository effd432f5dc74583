package dataset

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/internal/sysmem"
)

// maxDenseCells and maxFeatures bound the dense table built from sparse
// LIBSVM data, so a single huge index cannot make the reader allocate
// without limit. Variables so the fuzz test can lower them.
var (
	maxDenseCells = 1 << 28
	maxFeatures   = 1 << 18
)

// readLIBSVM reads "label idx:val idx:val ... # comment" lines with 1-based,
// strictly ascending indices into a dense table: column "label" (typed like
// a text column) and numeric columns f1..fmax, where absent entries are 0.
// "qid:n" tokens (ranking data) are skipped.
func readLIBSVM(in *bufio.Reader, name string, p *plan, lim *limits) (*Table, error) {
	var (
		labels   []string
		lines    []int
		rowStart []int
		idxs     []int
		vals     []float64
		maxIdx   int
	)
	bad := func(line int, format string, args ...any) error {
		return &ParseError{File: name, Line: line, Msg: fmt.Sprintf(format, args...)}
	}
	// The checker bounds line length and rejects binary bytes; the parsed
	// entries are charged against the budget as they come.
	br := bufio.NewReaderSize(newTextChecker(in, lim, name, 0), 1<<16)
	var cells uint64
	for lineNo := 1; ; lineNo++ {
		text, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			var bb *badByteError
			if errors.As(err, &bb) {
				return nil, &ParseError{File: name, Line: bb.line, Msg: fmt.Sprintf("%s (byte %d of the line)", bb.msg(), bb.byteCol)}
			}
			return nil, readFailed(name, err)
		}
		if text == "" && err == io.EOF {
			break
		}
		if lineNo == 1 {
			text = strings.TrimPrefix(text, "\uFEFF")
		}
		// A label, a line number and a row start per line, and an index and a
		// value per entry: about two cells per entry.
		cells += 2 + 2*uint64(strings.Count(text, ":"))
		if !lim.cellsFit(0, cells) {
			e := lim.budgetError(name, fmt.Sprintf("the data (%d lines so far)", lineNo)).(*ParseError)
			e.Line = lineNo
			return nil, e
		}
		if k := strings.IndexByte(text, '#'); k >= 0 {
			text = text[:k]
		}
		toks := strings.Fields(text)
		if len(toks) > 0 {
			labels = append(labels, toks[0])
			lines = append(lines, lineNo)
			rowStart = append(rowStart, len(idxs))
			prev := 0
			for _, tok := range toks[1:] {
				is, vs, ok := strings.Cut(tok, ":")
				if !ok {
					return nil, bad(lineNo, "token %s is not index:value", quoteCell(tok))
				}
				if is == "qid" {
					continue
				}
				idx, ierr := strconv.Atoi(is)
				if ierr != nil {
					return nil, bad(lineNo, "index in %s is not an integer", quoteCell(tok))
				}
				switch {
				case idx <= 0:
					return nil, bad(lineNo, "index %d in %s: indices are 1-based and must be at least 1", idx, quoteCell(tok))
				case idx == prev:
					return nil, bad(lineNo, "duplicate index %d", idx)
				case idx < prev:
					return nil, bad(lineNo, "index %d after %d: indices must be ascending", idx, prev)
				case idx > maxFeatures:
					return nil, bad(lineNo, "index %d is too large: at most %d features can be densified", idx, maxFeatures)
				}
				v, cls := parseCell(vs)
				if cls != cellNumber {
					return nil, bad(lineNo, "index %d: %s", idx, numberError(vs, cls))
				}
				prev = idx
				idxs = append(idxs, idx)
				vals = append(vals, v)
			}
			maxIdx = max(maxIdx, prev)
		}
		if err == io.EOF {
			break
		}
	}
	n := len(labels)
	if n == 0 {
		return nil, &ParseError{File: name, Msg: "no data lines; expected \"label index:value ...\""}
	}
	if maxIdx > maxDenseCells/n {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("%d rows × %d features is too large to densify (limit %d cells)", n, maxIdx, maxDenseCells)}
	}
	if !lim.cellsFit(0, uint64(n)*uint64(maxIdx+1)) {
		return nil, &ParseError{File: name, Msg: fmt.Sprintf("%d rows × %d features is too large to densify within the memory budget for reading (%s); use fewer rows or features or raise the budget (rfm: --memory-limit)", n, maxIdx, sysmem.Human(lim.budget))}
	}
	rowStart = append(rowStart, len(idxs))

	names := make([]string, 0, maxIdx+1)
	names = append(names, "label")
	for j := 1; j <= maxIdx; j++ {
		names = append(names, "f"+strconv.Itoa(j))
	}
	if err := p.checkNames(name, names); err != nil {
		return nil, err
	}

	t := &Table{Source: name}
	if !p.ignore["label"] {
		c, _, perr := buildColumn(textColumn{name: "label", field: 1, n: n, cell: func(i int) string { return labels[i] }}, p.force["label"], p.ms, name, lines)
		if perr != nil {
			return nil, perr
		}
		t.Columns = append(t.Columns, c)
	}
	// Column j (1-based feature index) sits at position pos[j] in t.Columns,
	// or -1 when ignored.
	pos := make([]int, maxIdx+1)
	for j := 1; j <= maxIdx; j++ {
		pos[j] = -1
		if !p.ignore[names[j]] {
			pos[j] = len(t.Columns)
			t.Columns = append(t.Columns, &Column{Name: names[j], Kind: Numeric, Num: make([]float64, n),
				Missing: make([]bool, n), source: name, lines: lines})
		}
	}
	for i := 0; i < n; i++ {
		for k := rowStart[i]; k < rowStart[i+1]; k++ {
			if at := pos[idxs[k]]; at >= 0 {
				t.Columns[at].Num[i] = vals[k]
			}
		}
	}
	// Kinds forced on feature columns (the label was typed above, and
	// numericToText leaves categorical columns alone).
	for _, c := range t.Columns {
		if p.force[c.Name] == forceCategorical {
			numericToText(c)
		}
	}
	return t, nil
}
