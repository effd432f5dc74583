package complete

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/dataset"
)

// ReadOptions say how a matrix or a metadata table is read (through
// package dataset: CSV/TSV, Parquet, NPY/NPZ, gzip).
type ReadOptions struct {
	dataset.ReadOptions
	// RowID names the column of a wide matrix that holds the row ids; ""
	// takes the first column when it is not numeric, else numbers the rows.
	RowID string
}

// ReadWide reads a matrix whose cells are the table's cells: one row per
// table row, one column per table column (its header is the column id).
// Missing cells (a missing token, an empty cell, NaN) are unobserved.
// Every column but the row ids must be numeric.
func ReadWide(ctx context.Context, path string, opt ReadOptions) (*Matrix, error) {
	t, err := dataset.ReadFileContext(ctx, path, opt.ReadOptions)
	if err != nil {
		return nil, err
	}
	var rowIDs []string
	cols := t.Columns
	idName := opt.RowID
	if idName == "" && len(cols) > 1 && cols[0].Kind == dataset.Categorical {
		idName = cols[0].Name
	}
	if idName != "" {
		c, ok := t.Column(idName)
		if !ok {
			return nil, fmt.Errorf("%s: row id column %q not found; the columns are %s", t.Source, idName, strings.Join(t.Names(), ", "))
		}
		rowIDs = idsOf(c)
		if err := unique(t.Source, "row id", c, rowIDs); err != nil {
			return nil, err
		}
		var rest []*dataset.Column
		for _, x := range cols {
			if x != c {
				rest = append(rest, x)
			}
		}
		cols = rest
	}
	m, n := t.NRows(), len(cols)
	if n == 0 || m == 0 {
		return nil, fmt.Errorf("%s: no matrix cells (%d rows, %d value columns)", t.Source, m, n)
	}
	y := NewMatrix(m, n)
	y.RowIDs, y.RowLabel = rowIDs, idName
	y.ColIDs = make([]string, n)
	for j, c := range cols {
		y.ColIDs[j] = c.Name
		if c.Kind != dataset.Numeric {
			for i := 0; i < m; i++ {
				if _, err := strconv.ParseFloat(c.Str[i], 64); !c.IsMissing(i) && err != nil {
					return nil, fmt.Errorf("%s: %scolumn %q holds %q, not a number (a matrix to complete must be numeric; name the row id column with --row-id)", t.Source, lineOf(c, i), c.Name, c.Str[i])
				}
			}
			continue
		}
		for i := 0; i < m; i++ {
			v := c.Num[i]
			if c.IsMissing(i) || math.IsNaN(v) {
				continue
			}
			if math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: %scolumn %q: %v is not a finite number", t.Source, lineOf(c, i), c.Name, v)
			}
			y.Values[i*n+j] = v
			y.Observed[i*n+j] = true
		}
	}
	return y, nil
}

func lineOf(c *dataset.Column, i int) string {
	if l := c.Line(i); l > 0 {
		return fmt.Sprintf("line %d, ", l)
	}
	return fmt.Sprintf("row %d, ", i+1)
}

// idsOf returns the cells of an id column as text.
func idsOf(c *dataset.Column) []string {
	ids := make([]string, c.Len())
	for i := range ids {
		switch {
		case c.IsMissing(i):
		case c.Kind == dataset.Categorical:
			ids[i] = c.Str[i]
		default:
			ids[i] = strconv.FormatFloat(c.Num[i], 'g', -1, 64)
		}
	}
	return ids
}

func unique(source, what string, c *dataset.Column, ids []string) error {
	seen := make(map[string]int, len(ids))
	for i, id := range ids {
		if id == "" {
			return fmt.Errorf("%s: %scolumn %q: the %s is missing", source, lineOf(c, i), c.Name, what)
		}
		if p, ok := seen[id]; ok {
			return fmt.Errorf("%s: %scolumn %q: %s %q repeats (first at %s)", source, lineOf(c, i), c.Name, what, id, strings.TrimSuffix(lineOf(c, p), ", "))
		}
		seen[id] = i
	}
	return nil
}

// LongOptions name the columns of a long-format table.
type LongOptions struct {
	dataset.ReadOptions
	Row, Col, Value string // defaults "row", "column", "value"
}

// ReadLong reads entries (row id, column id, value), one per table row,
// into a matrix whose rows and columns are the ids in order of first
// appearance. A repeated (row, column) pair, a missing id, and a missing
// or non-finite value are errors naming the line.
func ReadLong(ctx context.Context, path string, opt LongOptions) (*Matrix, error) {
	if opt.Row == "" {
		opt.Row = "row"
	}
	if opt.Col == "" {
		opt.Col = "column"
	}
	if opt.Value == "" {
		opt.Value = "value"
	}
	ro := opt.ReadOptions
	ro.Categorical = append(append([]string(nil), ro.Categorical...), opt.Row, opt.Col)
	ro.Numeric = append(append([]string(nil), ro.Numeric...), opt.Value)
	t, err := dataset.ReadFileContext(ctx, path, ro)
	if err != nil {
		return nil, err
	}
	rc, _ := t.Column(opt.Row)
	cc, _ := t.Column(opt.Col)
	vc, _ := t.Column(opt.Value)
	rows, cols := idsOf(rc), idsOf(cc)
	rowIdx, colIdx := map[string]int{}, map[string]int{}
	var rowIDs, colIDs []string
	for i := range rows {
		for _, x := range []struct {
			id  string
			c   *dataset.Column
			idx map[string]int
			ids *[]string
		}{{rows[i], rc, rowIdx, &rowIDs}, {cols[i], cc, colIdx, &colIDs}} {
			if x.id == "" {
				return nil, fmt.Errorf("%s: %scolumn %q: the id is missing", t.Source, lineOf(x.c, i), x.c.Name)
			}
			if _, ok := x.idx[x.id]; !ok {
				x.idx[x.id] = len(*x.ids)
				*x.ids = append(*x.ids, x.id)
			}
		}
		if vc.IsMissing(i) || math.IsNaN(vc.Num[i]) || math.IsInf(vc.Num[i], 0) {
			return nil, fmt.Errorf("%s: %scolumn %q: the value of an entry is required, got %s (leave the entry out instead)", t.Source, lineOf(vc, i), vc.Name, describe(vc, i))
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no entries", t.Source)
	}
	y := NewMatrix(len(rowIDs), len(colIDs))
	y.RowIDs, y.ColIDs, y.RowLabel = rowIDs, colIDs, opt.Row
	first := make(map[int]int, len(rows))
	for i := range rows {
		k := rowIdx[rows[i]]*y.Cols + colIdx[cols[i]]
		if p, ok := first[k]; ok {
			return nil, fmt.Errorf("%s: %sentry (%q, %q) repeats (first at %s)", t.Source, lineOf(rc, i), rows[i], cols[i], strings.TrimSuffix(lineOf(rc, p), ", "))
		}
		first[k] = i
		y.Values[k] = vc.Num[i]
		y.Observed[k] = true
	}
	return y, nil
}

func describe(c *dataset.Column, i int) string {
	if c.IsMissing(i) {
		return "a missing cell"
	}
	return strconv.FormatFloat(c.Num[i], 'g', -1, 64)
}

// MetaOptions say how a metadata table is read.
type MetaOptions struct {
	dataset.ReadOptions
	ID string // the id column ("" is the first column)
	// Scaling of numeric metadata ("" is standard); categorical columns
	// are one-hot encoded (package dataset's pipeline).
	Scaling dataset.Scaling
}

// ReadMetadata reads a table with one row per id (a column of the matrix,
// or a row with a transposed matrix) and encodes its other columns through
// package dataset's pipeline, numeric scaled and categorical one-hot. It
// returns the prior of ids (in their order); an id without a metadata row
// is an error naming it. Metadata rows for other ids are ignored (their
// count is returned).
func ReadMetadata(ctx context.Context, path string, ids []string, opt MetaOptions) (*Prior, int, error) {
	ro := opt.ReadOptions
	t, err := dataset.ReadFileContext(ctx, path, ro)
	if err != nil {
		return nil, 0, err
	}
	if len(t.Columns) < 2 {
		return nil, 0, fmt.Errorf("%s: a metadata table needs an id column and at least one feature column; it has %d column(s)", t.Source, len(t.Columns))
	}
	idc := t.Columns[0]
	if opt.ID != "" {
		c, ok := t.Column(opt.ID)
		if !ok {
			return nil, 0, fmt.Errorf("%s: id column %q not found; the columns are %s", t.Source, opt.ID, strings.Join(t.Names(), ", "))
		}
		idc = c
	}
	metaIDs := idsOf(idc)
	if err := unique(t.Source, "id", idc, metaIDs); err != nil {
		return nil, 0, err
	}
	pipe, err := dataset.FitPipelineScaled(t, t.NamesExcept(idc.Name), opt.Scaling)
	if err != nil {
		return nil, 0, err
	}
	x, rows, d, err := pipe.Transform(t)
	if err != nil {
		return nil, 0, err
	}
	at := make(map[string]int, rows)
	for i, id := range metaIDs {
		at[id] = i
	}
	var missing []string
	pr := &Prior{N: len(ids), P: d, E: make([]float64, len(ids)*d)}
	for j, id := range ids {
		i, ok := at[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		copy(pr.E[j*d:(j+1)*d], x[i*d:(i+1)*d])
		delete(at, id)
	}
	if len(missing) > 0 {
		return nil, 0, &MissingIDsError{Source: t.Source, IDColumn: idc.Name, IDs: missing}
	}
	return pr, len(at), nil
}

// MissingIDsError: the metadata has no row for some ids of the matrix.
type MissingIDsError struct {
	Source, IDColumn string
	IDs              []string
}

func (e *MissingIDsError) Error() string {
	q := make([]string, 0, 10)
	for _, id := range e.IDs[:min(len(e.IDs), 10)] {
		q = append(q, strconv.Quote(id))
	}
	more := ""
	if len(e.IDs) > 10 {
		more = fmt.Sprintf(" and %d more", len(e.IDs)-10)
	}
	return fmt.Sprintf("%s: no metadata row for the matrix's id %s%s (id column %q)", e.Source, strings.Join(q, ", "), more, e.IDColumn)
}
