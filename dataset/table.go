package dataset

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"
)

// Kind is the type of a column.
type Kind int

const (
	// Numeric columns hold float64 values (NaN where missing).
	Numeric Kind = iota
	// Categorical columns hold the raw cell text of each row.
	Categorical
)

// String returns "numeric" or "categorical".
func (k Kind) String() string {
	switch k {
	case Numeric:
		return "numeric"
	case Categorical:
		return "categorical"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// MarshalText encodes the kind by name so model files stay readable.
func (k Kind) MarshalText() ([]byte, error) {
	if k != Numeric && k != Categorical {
		return nil, fmt.Errorf("dataset: invalid column kind %d", int(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText accepts "numeric" or "categorical".
func (k *Kind) UnmarshalText(b []byte) error {
	switch string(b) {
	case "numeric":
		*k = Numeric
	case "categorical":
		*k = Categorical
	default:
		return fmt.Errorf("dataset: unknown column kind %q (want \"numeric\" or \"categorical\")", b)
	}
	return nil
}

// Column is one named column of a Table.
//
// Exactly one of Num (Numeric) and Str (Categorical) is used. Missing is
// either nil (no missing cells; convenient for hand-built columns) or has one
// entry per row; readers always fill it. For missing categorical cells Str
// holds "".
type Column struct {
	Name    string
	Kind    Kind
	Num     []float64 // Numeric: value per row, NaN where missing
	Str     []string  // Categorical: value per row (the cell text, trimmed of surrounding spaces)
	Missing []bool    // true where the cell was missing (both kinds)

	// Where the cells came from, for error messages. Readers of line-based
	// formats set lines (shared by all columns of a table); field is the
	// 1-based position of the column in the source file, 0 when unknown.
	source string
	lines  []int
	field  int
}

// Len returns the number of rows of the column.
func (c *Column) Len() int {
	if c.Kind == Categorical {
		return len(c.Str)
	}
	return len(c.Num)
}

// IsMissing reports whether row i is missing: flagged in Missing or, for a
// numeric column, NaN.
func (c *Column) IsMissing(i int) bool {
	if c.Missing != nil && c.Missing[i] {
		return true
	}
	return c.Kind == Numeric && math.IsNaN(c.Num[i])
}

// Line returns the 1-based source line of row i, or 0 when the column was not
// read from a line-based file (Parquet, NPY, built in code).
func (c *Column) Line(i int) int {
	if i >= 0 && i < len(c.lines) {
		return c.lines[i]
	}
	return 0
}

// cellError builds a ParseError located at row i of the column.
func (c *Column) cellError(i int, format string, args ...any) *ParseError {
	return &ParseError{
		File:   c.source,
		Line:   c.Line(i),
		Row:    i + 1,
		Col:    c.field,
		Column: c.Name,
		Msg:    fmt.Sprintf(format, args...),
	}
}

// Table is a set of equally long named columns.
type Table struct {
	Source  string // file name or the name given to Read; used in messages
	Columns []*Column

	missingTokens []string // as read; FitPipeline carries them into the model
	noHeader      bool

	// index maps a name to its position in Columns, built on first use so
	// that looking up every column of a wide table is linear, not quadratic.
	// Columns is exported and may change under it, so a hit is checked
	// against Columns and a miss falls back to a scan (which rebuilds it).
	index atomic.Pointer[map[string]int]
}

// NRows returns the number of rows (0 for a table without columns).
func (t *Table) NRows() int {
	if len(t.Columns) == 0 || t.Columns[0] == nil {
		return 0
	}
	return t.Columns[0].Len()
}

// Column returns the column with the given name (the first, if names
// repeat). It is safe for concurrent use while Columns does not change.
func (t *Table) Column(name string) (*Column, bool) {
	if m := t.index.Load(); m != nil {
		if j, ok := (*m)[name]; ok && j < len(t.Columns) && t.Columns[j] != nil && t.Columns[j].Name == name {
			return t.Columns[j], true
		}
	}
	found := -1
	for j, c := range t.Columns {
		if c != nil && c.Name == name {
			found = j
			break
		}
	}
	if found < 0 && t.index.Load() != nil {
		return nil, false // a miss: no need to rebuild an index that may well be current
	}
	m := make(map[string]int, len(t.Columns))
	for j, c := range t.Columns {
		if c == nil {
			continue
		}
		if _, dup := m[c.Name]; !dup {
			m[c.Name] = j
		}
	}
	t.index.Store(&m)
	if found < 0 {
		return nil, false
	}
	return t.Columns[found], true
}

// Names returns the column names in table order.
func (t *Table) Names() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// TargetColumn returns the named column for use as the target, with an
// error listing the available columns when there is none.
func (t *Table) TargetColumn(name string) (*Column, error) {
	if c, ok := t.Column(name); ok {
		return c, nil
	}
	return nil, fmt.Errorf("%s: target column %q not found; the columns are %s", t.name(), name, listNames(t.Names()))
}

// NamesExcept returns the column names in table order without the given
// ones; typically the feature columns: t.NamesExcept(target).
func (t *Table) NamesExcept(exclude ...string) []string {
	var names []string
	for _, c := range t.Columns {
		if !slices.Contains(exclude, c.Name) {
			names = append(names, c.Name)
		}
	}
	return names
}

// Validate checks that the table is rectangular, that names are unique and
// non-empty, and that kinds are valid. Readers always return valid tables; it
// is meant for tables built in code.
func (t *Table) Validate() error {
	n := t.NRows()
	seen := make(map[string]int, len(t.Columns))
	for j, c := range t.Columns {
		if c == nil {
			return fmt.Errorf("%s: column %d is nil", t.name(), j+1)
		}
		if c.Name == "" {
			return fmt.Errorf("%s: column %d has an empty name", t.name(), j+1)
		}
		if k, dup := seen[c.Name]; dup {
			return fmt.Errorf("%s: duplicate column name %q (columns %d and %d)", t.name(), c.Name, k+1, j+1)
		}
		seen[c.Name] = j
		switch c.Kind {
		case Numeric:
			if c.Str != nil {
				return fmt.Errorf("%s: numeric column %q has Str values; use Num", t.name(), c.Name)
			}
		case Categorical:
			if c.Num != nil {
				return fmt.Errorf("%s: categorical column %q has Num values; use Str", t.name(), c.Name)
			}
		default:
			return fmt.Errorf("%s: column %q has invalid kind %d", t.name(), c.Name, int(c.Kind))
		}
		if c.Len() != n {
			return fmt.Errorf("%s: column %q has %d rows, column %q has %d", t.name(), c.Name, c.Len(), t.Columns[0].Name, n)
		}
		if c.Missing != nil && len(c.Missing) != n {
			return fmt.Errorf("%s: column %q has %d missing flags for %d rows", t.name(), c.Name, len(c.Missing), n)
		}
	}
	return nil
}

func (t *Table) name() string {
	if t.Source == "" {
		return "table"
	}
	return t.Source
}

// SelectRows returns a new table holding the given rows, in the given order
// (indices may repeat). It is how callers split a table into training and
// validation parts before fitting a Pipeline on the training part.
func (t *Table) SelectRows(rows []int) (*Table, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	n := t.NRows()
	for _, r := range rows {
		if r < 0 || r >= n {
			return nil, fmt.Errorf("%s: row index %d out of range [0, %d)", t.name(), r, n)
		}
	}
	out := &Table{Source: t.Source, missingTokens: t.missingTokens, noHeader: t.noHeader, Columns: make([]*Column, len(t.Columns))}
	var lines []int
	for _, c := range t.Columns {
		if len(c.lines) == n {
			lines = make([]int, len(rows))
			for i, r := range rows {
				lines[i] = c.lines[r]
			}
			break
		}
	}
	for j, c := range t.Columns {
		nc := &Column{Name: c.Name, Kind: c.Kind, source: c.source, field: c.field}
		if len(c.lines) == n {
			nc.lines = lines
		}
		if c.Kind == Numeric {
			nc.Num = make([]float64, len(rows))
			for i, r := range rows {
				nc.Num[i] = c.Num[r]
			}
		} else {
			nc.Str = make([]string, len(rows))
			for i, r := range rows {
				nc.Str[i] = c.Str[r]
			}
		}
		if c.Missing != nil {
			nc.Missing = make([]bool, len(rows))
			for i, r := range rows {
				nc.Missing[i] = c.Missing[r]
			}
		}
		out.Columns[j] = nc
	}
	return out, nil
}
