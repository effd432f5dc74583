package dataset

import (
	"fmt"
	"strings"
)

// ParseError reports a problem at a place in an input file or table.
//
// Its message is one line, for example
//
//	data.csv: line 7, column 3 ("age"): "abc" is not a number
//
// Line is the 1-based source line for line-based formats (delimited text,
// LIBSVM); Row is the 1-based data row, shown when Line is unknown (Parquet,
// NPY, tables built in code). Col is the 1-based field position in the file
// and Column the column name; any of them may be zero or empty.
type ParseError struct {
	File   string
	Line   int
	Row    int
	Col    int
	Column string
	Msg    string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	var loc []string
	switch {
	case e.Line > 0:
		loc = append(loc, fmt.Sprintf("line %d", e.Line))
	case e.Row > 0:
		loc = append(loc, fmt.Sprintf("row %d", e.Row))
	}
	switch {
	case e.Col > 0 && e.Column != "":
		loc = append(loc, fmt.Sprintf("column %d (%q)", e.Col, e.Column))
	case e.Col > 0:
		loc = append(loc, fmt.Sprintf("column %d", e.Col))
	case e.Column != "":
		loc = append(loc, fmt.Sprintf("column %q", e.Column))
	}
	if len(loc) > 0 {
		b.WriteString(strings.Join(loc, ", "))
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ColumnNotFoundError reports a column that read options name (forced to
// a kind, or ignored) but the file lacks. A caller that knows what the
// column is to the user (a model's input, a target) can set Role before
// showing it: "numeric column" becomes, say, "the model's input column".
type ColumnNotFoundError struct {
	Source  string
	Role    string // e.g. "numeric column"
	Name    string
	Columns []string // the file's columns
}

func (e *ColumnNotFoundError) Error() string {
	return fmt.Sprintf("%s: %s %q not found; the columns are %s", e.Source, e.Role, e.Name, listNames(e.Columns))
}

// listNames formats column names for "available columns" hints, shortened
// for wide tables so a message stays on one readable line.
func listNames(names []string) string {
	const max = 20
	q := make([]string, 0, min(len(names), max))
	for i, n := range names {
		if i == max {
			break
		}
		q = append(q, fmt.Sprintf("%q", n))
	}
	s := strings.Join(q, ", ")
	if len(names) > max {
		s += fmt.Sprintf(", ... (%d more)", len(names)-max)
	}
	if s == "" {
		s = "(none)"
	}
	return s
}

// quoteCell quotes a cell value for a message, cutting very long cells.
func quoteCell(s string) string {
	const max = 40
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 { // do not split a UTF-8 sequence
			cut--
		}
		return fmt.Sprintf("%q...", s[:cut])
	}
	return fmt.Sprintf("%q", s)
}
