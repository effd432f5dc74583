package dataset

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// RecordsTable builds a table of the pipeline's input columns from records,
// one map per row keyed by column name, as a JSON request decodes them.
// Every record must hold every input column and nothing else (a misspelt
// name is an error, not a silently missing value); nil is a missing cell.
// Values are checked as a reader checks cells (see RowsTable), and every
// error names the row (1-based) and the column.
func (p *Pipeline) RecordsTable(source string, recs []map[string]any) (*Table, error) {
	b, err := p.newCellBuilder(source, len(recs))
	if err != nil {
		return nil, err
	}
	for i, rec := range recs {
		for k := range p.Inputs {
			v, ok := rec[p.Inputs[k].Name]
			if !ok {
				return nil, b.keysError(i, rec)
			}
			if err := b.set(i, k, 0, v); err != nil {
				return nil, err
			}
		}
		if len(rec) != len(p.Inputs) {
			return nil, b.keysError(i, rec)
		}
	}
	return b.table(), nil
}

// RowsTable builds a table from column names and rows of values (the
// "columns" and "data" layout of a JSON request). names must be exactly the
// pipeline's input columns, in any order; each row has one value per name.
//
// Numeric columns take numbers (float64, float32, any integer type,
// json.Number), nil or a missing token of the pipeline (such as "NA") for
// a missing cell; NaN, ±Inf and numbers beyond float64 are errors, as in a
// file. Categorical columns take strings (a missing token is missing),
// numbers (as their shortest text, or the level of equal value) and
// booleans ("true", "false").
func (p *Pipeline) RowsTable(source string, names []string, rows [][]any) (*Table, error) {
	b, err := p.newCellBuilder(source, len(rows))
	if err != nil {
		return nil, err
	}
	pos := make([]int, len(p.Inputs)) // input k → position in names
	for k := range pos {
		pos[k] = -1
	}
	for j, name := range names {
		k, ok := b.index[name]
		if !ok {
			return nil, fmt.Errorf("%s: column %d, %q, is not an input column of the model; the inputs are %s", b.source, j+1, name, listNames(p.InputColumns()))
		}
		if pos[k] >= 0 {
			return nil, fmt.Errorf("%s: column %q is named twice (columns %d and %d)", b.source, name, pos[k]+1, j+1)
		}
		pos[k] = j
	}
	for k, j := range pos {
		if j < 0 {
			return nil, fmt.Errorf("%s: input column %q is missing from the columns; the model needs %s", b.source, p.Inputs[k].Name, listNames(p.InputColumns()))
		}
	}
	for i, row := range rows {
		if len(row) != len(names) {
			return nil, b.rowError(i, 0, "", "the row has %d values but there are %d columns", len(row), len(names))
		}
		for k, j := range pos {
			if err := b.set(i, k, j+1, row[j]); err != nil {
				return nil, err
			}
		}
	}
	return b.table(), nil
}

// cellBuilder fills the columns of a table from values of a request.
type cellBuilder struct {
	p       *Pipeline
	source  string
	index   map[string]int // input name → position in p.Inputs
	cols    []*Column
	ms      *missingSet
	byValue []map[float64]string // categorical input → numeric levels by value
}

func (p *Pipeline) newCellBuilder(source string, n int) (*cellBuilder, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if source == "" {
		source = "request"
	}
	b := &cellBuilder{p: p, source: source, index: make(map[string]int, len(p.Inputs)),
		ms: newMissingSet(p.MissingTokens), byValue: make([]map[float64]string, len(p.Inputs))}
	for k, in := range p.Inputs {
		b.index[in.Name] = k
		c := &Column{Name: in.Name, Kind: in.Kind, Missing: make([]bool, n), source: source}
		if in.Kind == Numeric {
			c.Num = make([]float64, n)
		} else {
			c.Str = make([]string, n)
		}
		b.cols = append(b.cols, c)
	}
	return b, nil
}

// keysError says what is wrong with the keys of record i: a name that is
// not an input (likely misspelt) first, else an input it lacks.
func (b *cellBuilder) keysError(i int, rec map[string]any) error {
	var stray []string
	for name := range rec {
		if _, ok := b.index[name]; !ok {
			stray = append(stray, name)
		}
	}
	if len(stray) > 0 {
		slices.Sort(stray) // the same message for the same request
		return b.rowError(i, 0, stray[0], "%q is not an input column of the model; the inputs are %s", stray[0], listNames(b.p.InputColumns()))
	}
	for _, in := range b.p.Inputs {
		if _, ok := rec[in.Name]; !ok {
			return b.rowError(i, 0, in.Name, "the record lacks input column %q; send null for a missing value", in.Name)
		}
	}
	return b.rowError(i, 0, "", "the record's keys do not match the model's inputs")
}

func (b *cellBuilder) table() *Table {
	return &Table{Source: b.source, Columns: b.cols, missingTokens: b.p.MissingTokens}
}

func (b *cellBuilder) rowError(i, col int, name, format string, args ...any) *ParseError {
	return &ParseError{File: b.source, Row: i + 1, Col: col, Column: name, Msg: fmt.Sprintf(format, args...)}
}

// set stores value v as row i of input k (col is its 1-based position in
// the request, 0 when it has none).
func (b *cellBuilder) set(i, k, col int, v any) error {
	c := b.cols[k]
	bad := func(format string, args ...any) error { return b.rowError(i, col, c.Name, format, args...) }
	if c.Kind == Numeric {
		x, missing, err := numericValue(v, b.ms)
		if err != "" {
			return bad("%s; the column is numeric: send a finite number, or null for a missing value", err)
		}
		if missing {
			c.Num[i], c.Missing[i] = math.NaN(), true
		} else {
			c.Num[i] = x
		}
		return nil
	}
	s, missing, err := b.levelText(k, v)
	if err != "" {
		return bad("%s; the column is categorical: send a string, or null for a missing value", err)
	}
	c.Str[i], c.Missing[i] = s, missing
	return nil
}

// numericValue converts a request value for a numeric column; err is the
// reason it cannot be one ("" when it can).
func numericValue(v any, ms *missingSet) (x float64, missing bool, err string) {
	switch t := v.(type) {
	case nil:
		return 0, true, ""
	case float64:
		x = t
	case float32:
		x = float64(t)
	case int, int8, int16, int32, int64:
		// Only these exact types reach here (a named integer type is
		// refused below), and float64 of their int64 value is float64 of
		// the value.
		x = float64(reflect.ValueOf(t).Int())
	case uint, uint8, uint16, uint32, uint64:
		x = float64(reflect.ValueOf(t).Uint())
	case json.Number:
		f, perr := strconv.ParseFloat(string(t), 64)
		if perr != nil {
			return 0, false, fmt.Sprintf("%s is beyond the float64 range", t)
		}
		x = f
	case string:
		if ms.has(strings.TrimSpace(t)) {
			return 0, true, ""
		}
		return 0, false, fmt.Sprintf("got the string %s", quoteCell(t))
	default:
		return 0, false, fmt.Sprintf("got %s", DescribeValue(v))
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, false, fmt.Sprintf("%v is not a finite number", x)
	}
	return x, false, ""
}

// levelText converts a request value for categorical input k.
func (b *cellBuilder) levelText(k int, v any) (s string, missing bool, err string) {
	var num float64
	switch t := v.(type) {
	case nil:
		return "", true, ""
	case string:
		s = strings.TrimSpace(t)
		return s, b.ms.has(s), ""
	case bool:
		return strconv.FormatBool(t), false, ""
	case json.Number:
		f, perr := strconv.ParseFloat(string(t), 64)
		if perr != nil {
			return string(t), false, ""
		}
		s, num = string(t), f
	default:
		f, _, e := numericValue(v, b.ms)
		if e != "" {
			return "", false, e
		}
		num = f
		s = strconv.FormatFloat(f, 'g', -1, 64)
	}
	// A number matches a level by its text or, failing that, by value
	// ("3.0" is the level "3"), as Transform matches numeric cells.
	in := &b.p.Inputs[k]
	for _, l := range in.Levels {
		if l == s {
			return s, false, ""
		}
	}
	if b.byValue[k] == nil {
		m := map[float64]string{}
		for _, l := range in.Levels {
			if f, cls := parseCell(l); cls == cellNumber {
				if _, dup := m[f]; !dup {
					m[f] = l
				}
			}
		}
		b.byValue[k] = m
	}
	if l, ok := b.byValue[k][num]; ok {
		return l, false, ""
	}
	return s, false, ""
}

// DescribeValue names the kind of a value decoded from JSON ("null", "a
// number", "an object", ...) for messages about requests.
func DescribeValue(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64, float32, int, int64:
		return "a number"
	case string:
		return "a string"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a value of type %T", v)
}
