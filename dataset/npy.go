package dataset

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// npyArray is a decoded 1-D or 2-D numeric NPY array, stored by column.
type npyArray struct {
	shape []int
	rows  int
	cols  [][]float64
	need  uint64 // headerOnly: the file's length from its header
}

// readNPY reads one .npy array as columns x0..x{d-1}.
func readNPY(b []byte, name string, lim *limits) (*Table, error) {
	a, err := decodeNPY(b, name, lim, 0, false)
	if err != nil {
		return nil, err
	}
	t := &Table{Source: name}
	if err := addArrayColumns(t, a, "x", name); err != nil {
		return nil, err
	}
	return t, nil
}

// memberLabel names array key of the archive name in messages,
// "f.npz[X]"; a key with characters that do not print (a zip entry name
// can hold any byte) is quoted, so a message stays on one line.
func memberLabel(name, key string) string {
	for _, r := range key {
		if !unicode.IsPrint(r) {
			return name + "[" + strconv.Quote(key) + "]"
		}
	}
	return name + "[" + key + "]"
}

// readNPZ reads a NumPy .npz archive: features from array "X" (or "x"),
// plus an optional target "y"; an archive with a single array is that array.
func readNPZ(b []byte, name string, lim *limits) (*Table, error) {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("%s: not a valid .npz (zip) archive: %w", name, err)
	}
	files := map[string]*zip.File{}
	var arrays []string
	for _, f := range zr.File {
		key := strings.TrimSuffix(f.Name, ".npy")
		if _, dup := files[key]; dup || strings.HasSuffix(f.Name, "/") {
			continue
		}
		files[key] = f
		arrays = append(arrays, key)
	}
	sort.Strings(arrays)
	// held counts the archive and the arrays decoded so far against the
	// budget: a small archive can inflate to any size.
	held := uint64(len(b))
	load := func(key string) (*npyArray, error) {
		zf := files[key]
		if lim.budget > 0 && (held > lim.budget || zf.UncompressedSize64 > lim.budget-held) {
			return nil, lim.budgetError(name, fmt.Sprintf("array %q (%d bytes uncompressed)", key, zf.UncompressedSize64))
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, fmt.Errorf("%s: array %q: %w", name, key, err)
		}
		defer rc.Close()
		var max uint64
		if lim.budget > 0 {
			max = lim.budget - held
		}
		data, err := readAllBounded(rc, lim, name, max)
		if err != nil {
			if isCtxErr(err) {
				return nil, err
			}
			var pe *ParseError
			if errors.As(err, &pe) {
				return nil, lim.budgetError(name, fmt.Sprintf("array %q (more than %d bytes uncompressed)", key, max))
			}
			return nil, fmt.Errorf("%s: array %q: %w", name, key, err)
		}
		a, err := decodeNPY(data, memberLabel(name, key), lim, held, false)
		if err == nil {
			held += uint64(len(data)) + uint64(a.rows)*uint64(len(a.cols))*cellCost
		}
		return a, err
	}

	xKey := ""
	switch {
	case files["X"] != nil:
		xKey = "X"
	case files["x"] != nil:
		xKey = "x"
	case len(arrays) == 1:
		xKey = arrays[0]
	case len(arrays) == 0:
		return nil, fmt.Errorf("%s: the archive holds no arrays", name)
	default:
		return nil, fmt.Errorf("%s: the archive holds arrays %s; name the features \"X\" (and the target \"y\")", name, listNames(arrays))
	}
	x, err := load(xKey)
	if err != nil {
		return nil, err
	}
	t := &Table{Source: name}
	if err := addArrayColumns(t, x, "x", memberLabel(name, xKey)); err != nil {
		return nil, err
	}
	if xKey != "y" && files["y"] != nil {
		y, err := load("y")
		if err != nil {
			return nil, err
		}
		if len(y.cols) != 1 {
			return nil, fmt.Errorf("%s: target array \"y\" has shape %s; it must be 1-D (one value per row)", name, shapeString(y.shape))
		}
		if y.rows != x.rows {
			return nil, fmt.Errorf("%s: \"y\" has %d rows but %q has %d", name, y.rows, xKey, x.rows)
		}
		if err := addArrayColumns(t, y, "y", name+"[y]"); err != nil {
			return nil, err
		}
		t.Columns[len(t.Columns)-1].Name = "y"
	}
	return t, nil
}

// addArrayColumns appends the array's columns to t as prefix0, prefix1, ...;
// NaN becomes missing and ±Inf is an error, as in text files.
func addArrayColumns(t *Table, a *npyArray, prefix, source string) error {
	for j, v := range a.cols {
		c := &Column{Name: prefix + strconv.Itoa(j), Kind: Numeric, Num: v, Missing: make([]bool, len(v)), source: source, field: j + 1}
		for i, x := range v {
			if math.IsNaN(x) {
				c.Missing[i] = true
			} else if math.IsInf(x, 0) {
				return c.cellError(i, "value is %v; only finite values and NaN (missing) are allowed", x)
			}
		}
		t.Columns = append(t.Columns, c)
	}
	return nil
}

func shapeString(shape []int) string {
	s := make([]string, len(shape))
	for i, v := range shape {
		s[i] = strconv.Itoa(v)
	}
	if len(s) == 1 {
		return "(" + s[0] + ",)"
	}
	return "(" + strings.Join(s, ", ") + ")"
}

// NPYHeader is the header of an NPY array: its dtype descriptor (such as
// "|u1" or "<f8"), its storage order and its shape; Data is what follows
// the header (DecodeNPYRaw checks its length against the shape).
type NPYHeader struct {
	Descr   string
	Fortran bool
	Shape   []int
	Data    []byte
	start   int // offset of Data in the file
}

// DecodeNPYRaw parses an NPY file of any number of dimensions (versions
// 1.0 to 3.0) without converting its values: the header, and the data
// checked to be exactly the shape's size in a supported numeric dtype.
// name labels the file in errors.
func DecodeNPYRaw(b []byte, name string) (*NPYHeader, error) {
	h, err := parseNPYHeader(b, name)
	if err != nil {
		return nil, err
	}
	_, size, err := npyDtype(h.Descr)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	want := uint64(size)
	for _, s := range h.Shape {
		if s != 0 && want > (1<<62)/uint64(s) {
			return nil, fmt.Errorf("%s: shape %s is too large", name, shapeString(h.Shape))
		}
		want *= uint64(s)
	}
	if uint64(len(h.Data)) != want {
		return nil, fmt.Errorf("%s: data is %d bytes but shape %s of %s needs %d", name, len(h.Data), shapeString(h.Shape), h.Descr, want)
	}
	return h, nil
}

// parseNPYHeader reads the magic, version, header length and the Python
// dict literal of the header.
func parseNPYHeader(b []byte, name string) (*NPYHeader, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		return nil, bad("not an NPY file (it does not start with \\x93NUMPY)")
	}
	major, minor := b[6], b[7]
	var hlen, start int
	switch major {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:10])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, bad("truncated NPY header")
		}
		h := binary.LittleEndian.Uint32(b[8:12])
		if int64(h) > int64(len(b)) {
			return nil, bad("truncated NPY header (header length %d, file has %d bytes)", h, len(b))
		}
		hlen, start = int(h), 12
	default:
		return nil, bad("unsupported NPY format version %d.%d; versions 1.0 to 3.0 are supported", major, minor)
	}
	if start+hlen > len(b) {
		return nil, bad("truncated NPY header (header length %d, file has %d bytes)", hlen, len(b))
	}
	hdr, err := parsePyLiteral(string(b[start : start+hlen]))
	if err != nil {
		return nil, bad("malformed NPY header: %v", err)
	}
	dict, ok := hdr.(map[string]any)
	if !ok {
		return nil, bad("malformed NPY header: not a dict")
	}
	descr, ok := dict["descr"].(string)
	if !ok {
		if _, isList := dict["descr"].([]any); isList {
			return nil, bad("structured (record) arrays are not supported; save a plain numeric array")
		}
		return nil, bad("malformed NPY header: missing 'descr'")
	}
	fortran, ok := dict["fortran_order"].(bool)
	if !ok {
		return nil, bad("malformed NPY header: missing 'fortran_order'")
	}
	shapeAny, ok := dict["shape"].([]any)
	if !ok {
		return nil, bad("malformed NPY header: missing 'shape'")
	}
	shape := make([]int, len(shapeAny))
	for i, v := range shapeAny {
		n, ok := v.(int)
		if !ok || n < 0 {
			return nil, bad("malformed NPY header: bad shape entry %v", v)
		}
		shape[i] = n
	}
	return &NPYHeader{Descr: descr, Fortran: fortran, Shape: shape, Data: b[start+hlen:], start: start + hlen}, nil
}

// decodeNPY parses the NPY format (versions 1.0, 2.0, 3.0): magic, version,
// header length, a Python dict literal header, then the raw data.
// held is what the caller already holds against the budget besides b.
// With headerOnly, b may end after the header: only the shape is checked
// (against MaxColumns and the budget), before the data is read.
func decodeNPY(b []byte, name string, lim *limits, held uint64, headerOnly bool) (*npyArray, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
	}
	h, err := parseNPYHeader(b, name)
	if err != nil {
		return nil, err
	}
	descr, fortran, shape, start := h.Descr, h.Fortran, h.Shape, h.start
	conv, size, err := npyDtype(descr)
	if err != nil {
		return nil, bad("%v", err)
	}
	var rows, cols int
	switch len(shape) {
	case 0:
		return nil, bad("the array is a scalar (shape ()); save a 1-D or 2-D array")
	case 1:
		rows, cols = shape[0], 1
	case 2:
		rows, cols = shape[0], shape[1]
	default:
		flat := 1
		for _, s := range shape[1:] {
			flat *= s
		}
		return nil, bad("the array has %d dimensions, shape %s; only 1-D or 2-D arrays are supported (reshape it to (%d, %d))", len(shape), shapeString(shape), shape[0], flat)
	}
	if rows == 0 || cols == 0 {
		return nil, bad("the array has shape %s; it needs at least one row and one column", shapeString(shape))
	}
	if headerOnly {
		if cols > MaxColumns {
			return nil, bad("the array has %d columns; at most %d are supported", cols, MaxColumns)
		}
		if uint64(rows) > (1<<62)/uint64(cols)/uint64(size) ||
			!lim.cellsFit(held+uint64(start)+uint64(rows)*uint64(cols)*uint64(size), uint64(rows)*uint64(cols)) {
			return nil, lim.budgetError(name, fmt.Sprintf("the array of shape %s", shapeString(shape)))
		}
		return &npyArray{shape: shape, rows: rows, need: uint64(start) + uint64(rows)*uint64(cols)*uint64(size)}, nil
	}
	data := b[start:]
	if cols > len(data)/size/rows { // rows*cols*size > len(data), without overflow
		return nil, bad("truncated data: shape %s of %s needs more than the %d bytes present", shapeString(shape), descr, len(data))
	}
	if rows*cols*size != len(data) {
		return nil, bad("data is %d bytes but shape %s of %s needs %d", len(data), shapeString(shape), descr, rows*cols*size)
	}
	if cols > MaxColumns {
		return nil, bad("the array has %d columns; at most %d are supported", cols, MaxColumns)
	}
	if !lim.cellsFit(held+uint64(len(b)), uint64(rows)*uint64(cols)) {
		return nil, lim.budgetError(name, fmt.Sprintf("the array of shape %s", shapeString(shape)))
	}
	a := &npyArray{shape: shape, rows: rows, cols: make([][]float64, cols)}
	for j := range a.cols {
		a.cols[j] = make([]float64, rows)
	}
	off := 0 // walk the data in storage order
	if fortran {
		for _, col := range a.cols {
			for i := range col {
				col[i] = conv(data[off : off+size])
				off += size
			}
		}
	} else {
		for i := 0; i < rows; i++ {
			for _, col := range a.cols {
				col[i] = conv(data[off : off+size])
				off += size
			}
		}
	}
	return a, nil
}

// npyDtype returns a converter to float64 and the item size for a dtype
// descriptor such as "<f8", ">i4" or "|u1".
func npyDtype(descr string) (func([]byte) float64, int, error) {
	var order binary.ByteOrder = binary.LittleEndian
	d := descr
	if d != "" {
		switch d[0] {
		case '>':
			order = binary.BigEndian
			d = d[1:]
		case '<', '|', '=': // '=' is native; every platform we target is little-endian
			d = d[1:]
		}
	}
	switch d {
	case "f8":
		return func(b []byte) float64 { return math.Float64frombits(order.Uint64(b)) }, 8, nil
	case "f4":
		return func(b []byte) float64 { return float64(math.Float32frombits(order.Uint32(b))) }, 4, nil
	case "i8":
		return func(b []byte) float64 { return float64(int64(order.Uint64(b))) }, 8, nil
	case "i4":
		return func(b []byte) float64 { return float64(int32(order.Uint32(b))) }, 4, nil
	case "i2":
		return func(b []byte) float64 { return float64(int16(order.Uint16(b))) }, 2, nil
	case "i1":
		return func(b []byte) float64 { return float64(int8(b[0])) }, 1, nil
	case "u8":
		return func(b []byte) float64 { return float64(order.Uint64(b)) }, 8, nil
	case "u4":
		return func(b []byte) float64 { return float64(order.Uint32(b)) }, 4, nil
	case "u2":
		return func(b []byte) float64 { return float64(order.Uint16(b)) }, 2, nil
	case "u1", "b1":
		return func(b []byte) float64 { return float64(b[0]) }, 1, nil
	case "O":
		return nil, 0, fmt.Errorf("object arrays (dtype %q) are not supported; save a numeric array, for example X.astype(float)", descr)
	}
	return nil, 0, fmt.Errorf("unsupported dtype %q; supported are float64, float32, int8..int64, uint8..uint64 and bool", descr)
}

// parsePyLiteral parses the subset of Python literals used by NPY headers:
// dicts, tuples, lists, strings, integers (with an optional L suffix),
// True, False and None.
func parsePyLiteral(s string) (any, error) {
	p := &pyParser{s: s}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.s) {
		return nil, fmt.Errorf("unexpected %q at offset %d", p.s[p.i], p.i)
	}
	return v, nil
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) value(depth int) (any, error) {
	if depth > 16 {
		return nil, fmt.Errorf("nested too deeply")
	}
	p.space()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("unexpected end")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		m := map[string]any{}
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return m, nil
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			key, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("dict key is not a string")
			}
			p.space()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, fmt.Errorf("expected ':' after key %q", key)
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			m[key] = v
			if err := p.sep('}'); err != nil {
				return nil, err
			}
		}
	case c == '(' || c == '[':
		end := byte(')')
		if c == '[' {
			end = ']'
		}
		p.i++
		var list []any
		for {
			p.space()
			if p.i < len(p.s) && p.s[p.i] == end {
				p.i++
				if list == nil {
					list = []any{}
				}
				return list, nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
			if err := p.sep(end); err != nil {
				return nil, err
			}
		}
	case c == '\'' || c == '"':
		j := strings.IndexByte(p.s[p.i+1:], c)
		if j < 0 {
			return nil, fmt.Errorf("unterminated string")
		}
		v := p.s[p.i+1 : p.i+1+j]
		p.i += j + 2
		return v, nil
	case c == '-' || (c >= '0' && c <= '9'):
		j := p.i + 1
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		n, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			return nil, fmt.Errorf("bad integer %q", p.s[p.i:j])
		}
		p.i = j
		if p.i < len(p.s) && p.s[p.i] == 'L' { // Python 2 long
			p.i++
		}
		return n, nil
	}
	for _, w := range []struct {
		word string
		v    any
	}{{"True", true}, {"False", false}, {"None", nil}} {
		if strings.HasPrefix(p.s[p.i:], w.word) {
			p.i += len(w.word)
			return w.v, nil
		}
	}
	return nil, fmt.Errorf("unexpected %q at offset %d", p.s[p.i], p.i)
}

// sep consumes a ',' or sees the closing bracket.
func (p *pyParser) sep(end byte) error {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == ',' {
		p.i++
		return nil
	}
	if p.i < len(p.s) && p.s[p.i] == end {
		return nil
	}
	return fmt.Errorf("expected ',' or %q at offset %d", end, p.i)
}
