package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// checkParquetFraming checks what the library would otherwise trust: the
// "PAR1" magic at both ends and a footer length that fits in the file. A
// corrupt length made it allocate gigabytes before failing.
func checkParquetFraming(ra io.ReaderAt, size int64) error {
	const magic = "PAR1"
	if size < 12 {
		return fmt.Errorf("%d bytes is too short for a Parquet file", size)
	}
	var head [4]byte
	var tail [8]byte
	if _, err := ra.ReadAt(head[:], 0); err != nil {
		return err
	}
	if _, err := ra.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	if string(head[:]) != magic || string(tail[4:]) != magic {
		return fmt.Errorf("no PAR1 magic at the start and end of the file")
	}
	footer := int64(binary.LittleEndian.Uint32(tail[:4]))
	if footer > size-12 {
		return fmt.Errorf("footer length %d exceeds the file (%d bytes): the file is truncated or corrupt", footer, size)
	}
	return nil
}

// checkParquetLayout checks the footer's sizes and counts before any page is
// decoded: every column chunk lies inside the file, the row groups' row
// counts add up to the file's, each chunk has one value per row (the
// columns are flat), and the cells fit the memory budget. A mutated footer
// otherwise sends the decoder after data that is not there.
func checkParquetLayout(md *format.FileMetaData, size int64, ncols int, lim *limits, name string) error {
	if ncols > MaxColumns {
		return fmt.Errorf("%d columns; at most %d are supported", ncols, MaxColumns)
	}
	if md.NumRows < 0 {
		return fmt.Errorf("negative row count %d", md.NumRows)
	}
	var rows, uncompressed int64
	for g, rg := range md.RowGroups {
		if rg.NumRows < 0 || rg.NumRows > md.NumRows-rows {
			return fmt.Errorf("row group %d has %d rows, more than the file's %d", g+1, rg.NumRows, md.NumRows)
		}
		rows += rg.NumRows
		if len(rg.Columns) != ncols {
			return fmt.Errorf("row group %d has %d column chunks for %d columns", g+1, len(rg.Columns), ncols)
		}
		for j, cc := range rg.Columns {
			m := cc.MetaData
			if cc.FilePath != "" {
				return fmt.Errorf("column %d refers to another file (%q); only self-contained files are supported", j+1, cc.FilePath)
			}
			if m.NumValues != rg.NumRows {
				return fmt.Errorf("row group %d, column %d: %d values for %d rows", g+1, j+1, m.NumValues, rg.NumRows)
			}
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			if start < 4 || m.TotalCompressedSize < 0 || m.TotalCompressedSize > size-start {
				return fmt.Errorf("row group %d, column %d: data at bytes %d..%d+%d is outside the file (%d bytes)", g+1, j+1, start, start, m.TotalCompressedSize, size)
			}
			if m.TotalUncompressedSize < 0 {
				return fmt.Errorf("row group %d, column %d: negative size %d", g+1, j+1, m.TotalUncompressedSize)
			}
			uncompressed += min(m.TotalUncompressedSize, 1<<62-uncompressed)
		}
	}
	if rows != md.NumRows {
		return fmt.Errorf("the row groups hold %d rows, the footer says %d", rows, md.NumRows)
	}
	if !lim.cellsFit(uint64(size)+uint64(uncompressed), uint64(rows)*uint64(ncols)) {
		return lim.budgetError(name, fmt.Sprintf("%d rows × %d columns (%d bytes of pages uncompressed)", rows, ncols, uncompressed))
	}
	return nil
}

// readParquet reads a flat Parquet file: boolean, integer and floating
// columns become Numeric (booleans as 0/1, integer decimals scaled), string
// and byte-array columns Categorical, and nulls missing.
func readParquet(ra io.ReaderAt, size int64, name string, p *plan, opt ReadOptions, lim *limits) (t *Table, err error) {
	// The library can panic on corrupt input; a bad file must stay an error.
	defer func() {
		if r := recover(); r != nil {
			t, err = nil, fmt.Errorf("%s: malformed Parquet file: %v", name, r)
		}
	}()
	if err := checkParquetFraming(ra, size); err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", name, err)
	}
	if err := checkParquetFooter(ra, size); err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", name, err)
	}
	// The page index and bloom filters are not needed to read every row,
	// and skipping them leaves less of a corrupt file to trust.
	f, err := parquet.OpenFile(ra, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", name, err)
	}
	fields := f.Schema().Fields()
	if len(fields) == 0 {
		return nil, fmt.Errorf("%s: the Parquet schema has no columns", name)
	}
	decs := make([]pqDecoder, len(fields))
	cols := make([]*Column, len(fields))
	for j, fl := range fields {
		d, err := newPQDecoder(fl)
		if err != nil {
			return nil, fmt.Errorf("%s: column %q: %w", name, fl.Name(), err)
		}
		decs[j] = d
		cols[j] = &Column{Name: fl.Name(), Kind: d.kind, source: name, field: j + 1}
	}
	if len(f.Schema().Columns()) != len(fields) {
		return nil, fmt.Errorf("%s: nested Parquet schemas are not supported; flatten the columns", name)
	}
	if err := checkParquetLayout(f.Metadata(), size, len(fields), lim, name); err != nil {
		var pe *ParseError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", name, err)
	}
	if err := checkParquetPages(ra, f.Metadata(), lim); err != nil {
		if isCtxErr(err) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: not a readable Parquet file: %w", name, err)
	}

	buf := make([]parquet.Row, 256)
	row := 0
	for _, rg := range f.RowGroups() {
		rows := rg.Rows()
		for {
			if err := lim.ctx.Err(); err != nil {
				rows.Close()
				return nil, err
			}
			k, rerr := rows.ReadRows(buf)
			for _, r := range buf[:k] {
				if len(r) != len(cols) {
					rows.Close()
					return nil, fmt.Errorf("%s: row %d has %d values for %d columns; nested or repeated data is not supported", name, row+1, len(r), len(cols))
				}
				for _, v := range r {
					j := v.Column()
					if j < 0 || j >= len(cols) {
						rows.Close()
						return nil, fmt.Errorf("%s: row %d: value for unknown column %d", name, row+1, j)
					}
					if err := decs[j].add(cols[j], v); err != nil {
						rows.Close()
						return nil, err
					}
				}
				row++
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				rows.Close()
				return nil, fmt.Errorf("%s: reading rows: %w", name, rerr)
			}
		}
		rows.Close()
	}
	t = &Table{Source: name, Columns: cols, missingTokens: slices.Clone(opt.MissingTokens), noHeader: opt.NoHeader}
	if row == 0 {
		return nil, fmt.Errorf("%s: the file has no rows", name)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("malformed Parquet data: %w", err)
	}
	if err := p.apply(t); err != nil {
		return nil, err
	}
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("%s: no columns left after Ignore", name)
	}
	return t, nil
}

// pqDecoder turns the values of one Parquet column into cells.
type pqDecoder struct {
	kind     Kind
	pk       parquet.Kind
	unsigned bool
	scale    float64 // decimal scale factor, 1 otherwise
}

func newPQDecoder(fl parquet.Field) (pqDecoder, error) {
	if !fl.Leaf() {
		return pqDecoder{}, fmt.Errorf("nested (group) columns are not supported; flatten it")
	}
	if fl.Repeated() {
		return pqDecoder{}, fmt.Errorf("repeated (list) columns are not supported")
	}
	typ := fl.Type()
	d := pqDecoder{pk: typ.Kind(), scale: 1}
	var lt format.LogicalTypeValue
	if l := typ.LogicalType(); l != nil {
		lt = l.Value
	}
	switch d.pk {
	case parquet.Boolean, parquet.Float, parquet.Double:
		d.kind = Numeric
	case parquet.Int32, parquet.Int64:
		d.kind = Numeric
		switch l := lt.(type) {
		case *format.IntType:
			d.unsigned = !l.IsSigned
		case *format.DecimalType:
			d.scale = math.Pow(10, -float64(l.Scale))
		}
	case parquet.ByteArray, parquet.FixedLenByteArray:
		if _, dec := lt.(*format.DecimalType); dec {
			return d, fmt.Errorf("decimals stored as byte arrays are not supported; cast the column to double")
		}
		d.kind = Categorical
	default:
		return d, fmt.Errorf("physical type %v is not supported", d.pk)
	}
	return d, nil
}

func (d *pqDecoder) add(c *Column, v parquet.Value) error {
	missing := v.IsNull()
	c.Missing = append(c.Missing, missing)
	if d.kind == Categorical {
		s := ""
		if !missing {
			b := v.ByteArray()
			if !utf8.Valid(b) {
				return c.cellError(len(c.Str), "binary value is not UTF-8 text; only text byte arrays can be categorical")
			}
			s = string(b)
		}
		c.Str = append(c.Str, s)
		return nil
	}
	x := math.NaN()
	if !missing {
		switch d.pk {
		case parquet.Boolean:
			x = 0
			if v.Boolean() {
				x = 1
			}
		case parquet.Int32:
			if d.unsigned {
				x = float64(v.Uint32())
			} else {
				x = float64(v.Int32())
			}
		case parquet.Int64:
			if d.unsigned {
				x = float64(v.Uint64())
			} else {
				x = float64(v.Int64())
			}
		case parquet.Float:
			x = float64(v.Float())
		case parquet.Double:
			x = v.Double()
		}
		x *= d.scale
		if math.IsInf(x, 0) {
			return c.cellError(len(c.Num), "value is %v; only finite values and null (missing) are allowed", x)
		}
		if math.IsNaN(x) {
			c.Missing[len(c.Missing)-1] = true
		}
	}
	c.Num = append(c.Num, x)
	return nil
}
