package dataset

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

// npyBytes builds an NPY file the way numpy.save lays it out: magic,
// version, little-endian header length, a dict literal padded with spaces
// to a multiple of 64 bytes and ended by '\n', then the raw data.
func npyBytes(major byte, descr string, fortran bool, shape string, data []byte) []byte {
	pre := 10
	if major >= 2 {
		pre = 12
	}
	f := "False"
	if fortran {
		f = "True"
	}
	hdr := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", descr, f, shape)
	pad := (64 - (pre+len(hdr)+1)%64) % 64
	hdr += strings.Repeat(" ", pad) + "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY")
	b.WriteByte(major)
	b.WriteByte(0)
	if major >= 2 {
		binary.Write(&b, binary.LittleEndian, uint32(len(hdr)))
	} else {
		binary.Write(&b, binary.LittleEndian, uint16(len(hdr)))
	}
	b.WriteString(hdr)
	b.Write(data)
	return b.Bytes()
}

// raw encodes values with the given byte order and Go type.
func raw(order binary.ByteOrder, vals any) []byte {
	var b bytes.Buffer
	if err := binary.Write(&b, order, vals); err != nil {
		panic(err)
	}
	return b.Bytes()
}

var le, be = binary.LittleEndian, binary.BigEndian

func TestReadNPY(t *testing.T) {
	want23 := [][]float64{{1, 4}, {2, 5}, {3, 6}} // columns of [[1 2 3] [4 5 6]]
	cases := []struct {
		name string
		data []byte
		want [][]float64 // by column; NaN = missing
	}{
		{"f8 C", npyBytes(1, "<f8", false, "(2, 3)", raw(le, []float64{1, 2, 3, 4, 5, 6})), want23},
		{"f8 Fortran", npyBytes(1, "<f8", true, "(2, 3)", raw(le, []float64{1, 4, 2, 5, 3, 6})), want23},
		{"f4 big-endian", npyBytes(1, ">f4", false, "(2, 3)", raw(be, []float32{1, 2, 3, 4, 5, 6})), want23},
		{"i8", npyBytes(1, "<i8", false, "(2, 3)", raw(le, []int64{1, 2, 3, 4, 5, 6})), want23},
		{"i4 big-endian Fortran", npyBytes(1, ">i4", true, "(2, 3)", raw(be, []int32{1, 4, 2, 5, 3, 6})), want23},
		{"i2 negative", npyBytes(1, "<i2", false, "(2, 1)", raw(le, []int16{-300, 7})), [][]float64{{-300, 7}}},
		{"i1", npyBytes(1, "|i1", false, "(2,)", []byte{0xff, 5}), [][]float64{{-1, 5}}},
		{"u1 1-D", npyBytes(1, "|u1", false, "(3,)", []byte{0, 200, 255}), [][]float64{{0, 200, 255}}},
		{"u8", npyBytes(1, "<u8", false, "(1, 1)", raw(le, []uint64{1 << 40})), [][]float64{{1 << 40}}},
		{"bool", npyBytes(1, "|b1", false, "(2,)", []byte{1, 0}), [][]float64{{1, 0}}},
		{"version 2", npyBytes(2, "<f8", false, "(2, 3)", raw(le, []float64{1, 2, 3, 4, 5, 6})), want23},
		{"version 3", npyBytes(3, "<f8", false, "(2, 3)", raw(le, []float64{1, 2, 3, 4, 5, 6})), want23},
		{"python2 longs", npyBytes(1, "<f8", false, "(2L, 3L)", raw(le, []float64{1, 2, 3, 4, 5, 6})), want23},
		{"NaN is missing", npyBytes(1, "<f8", false, "(2,)", raw(le, []float64{math.NaN(), 2})), [][]float64{{math.NaN(), 2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := Read(bytes.NewReader(tc.data), "a.npy", ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := tab.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(tab.Columns) != len(tc.want) {
				t.Fatalf("got %d columns, want %d", len(tab.Columns), len(tc.want))
			}
			for j, w := range tc.want {
				c := tab.Columns[j]
				if c.Name != fmt.Sprintf("x%d", j) || c.Kind != Numeric {
					t.Errorf("column %d is %q %v", j, c.Name, c.Kind)
				}
				for i := range w {
					if math.IsNaN(w[i]) != c.IsMissing(i) || (!math.IsNaN(w[i]) && w[i] != c.Num[i]) {
						t.Errorf("column %d = %v, want %v", j, c.Num, w)
						break
					}
				}
			}
		})
	}
}

func TestReadNPYErrors(t *testing.T) {
	f8 := raw(le, []float64{1, 2, 3, 4, 5, 6, 7, 8})
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"bad magic", []byte("NUMPY is not here"), `a.npy: not an NPY file (it does not start with \x93NUMPY)`},
		{"object", npyBytes(1, "|O", false, "(2,)", make([]byte, 16)), `a.npy: object arrays (dtype "|O") are not supported; save a numeric array, for example X.astype(float)`},
		{"3-D", npyBytes(1, "<f8", false, "(2, 2, 2)", f8), `a.npy: the array has 3 dimensions, shape (2, 2, 2); only 1-D or 2-D arrays are supported (reshape it to (2, 4))`},
		{"scalar", npyBytes(1, "<f8", false, "()", f8[:8]), `a.npy: the array is a scalar (shape ()); save a 1-D or 2-D array`},
		{"structured", []byte(strings.Replace(string(npyBytes(1, "<f8", false, "(1,)", f8[:8])), "'<f8'", "[('a', '<f8')]", 1)), `a.npy: structured (record) arrays are not supported`},
		{"unicode dtype", npyBytes(1, "<U3", false, "(1,)", make([]byte, 12)), `a.npy: unsupported dtype "<U3"`},
		{"truncated", npyBytes(1, "<f8", false, "(3, 3)", f8), `a.npy: truncated data: shape (3, 3) of <f8 needs more than the 64 bytes present`},
		{"extra data", npyBytes(1, "<f8", false, "(3,)", f8), `a.npy: data is 64 bytes but shape (3,) of <f8 needs 24`},
		{"huge shape", npyBytes(1, "<f8", false, "(4611686018427387904, 4)", f8), `a.npy: truncated data`},
		{"version 4", append([]byte("\x93NUMPY\x04\x00"), make([]byte, 10)...), `a.npy: unsupported NPY format version 4.0`},
		{"header too long", []byte("\x93NUMPY\x01\x00\xff\xff{}"), `a.npy: truncated NPY header`},
		{"no rows", npyBytes(1, "<f8", false, "(0, 3)", nil), `a.npy: the array has shape (0, 3); it needs at least one row and one column`},
		{"infinity", npyBytes(1, "<f8", false, "(2, 1)", raw(le, []float64{1, math.Inf(-1)})), `a.npy: row 2, column 1 ("x0"): value is -Inf`},
		{"bad header", npyBytes(1, "<f8", false, "(2, oops)", f8[:16]), `a.npy: malformed NPY header`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.data), "a.npy", ReadOptions{})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}

func npzBytes(t *testing.T, method uint16, arrays map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range arrays {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestReadNPZ(t *testing.T) {
	x := npyBytes(1, "<f4", false, "(3, 2)", raw(le, []float32{1, 2, 3, 4, 5, 6}))
	y := npyBytes(1, "<i8", false, "(3,)", raw(le, []int64{0, 1, 0}))
	y2 := npyBytes(1, "<i8", false, "(3, 1)", raw(le, []int64{0, 1, 0}))
	short := npyBytes(1, "<i8", false, "(2,)", raw(le, []int64{0, 1}))

	tab, err := Read(bytes.NewReader(npzBytes(t, zip.Deflate, map[string][]byte{"X.npy": x, "y.npy": y, "meta.npy": y})), "d.npz", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Names(); !reflect.DeepEqual(got, []string{"x0", "x1", "y"}) {
		t.Fatalf("names %v", got)
	}
	yc, _ := tab.Column("y")
	x1, _ := tab.Column("x1")
	if !reflect.DeepEqual(yc.Num, []float64{0, 1, 0}) || !reflect.DeepEqual(x1.Num, []float64{2, 4, 6}) {
		t.Errorf("y %v x1 %v", yc.Num, x1.Num)
	}

	for name, arrays := range map[string]map[string][]byte{
		"single array": {"arr_0.npy": x},
		"lower-case x": {"x.npy": x, "y.npy": y2},
	} {
		tab, err := Read(bytes.NewReader(npzBytes(t, zip.Store, arrays)), "d.npz", ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tab.NRows() != 3 || tab.Columns[0].Name != "x0" {
			t.Errorf("%s: %v rows %d", name, tab.Names(), tab.NRows())
		}
	}

	errCases := []struct {
		name   string
		arrays map[string][]byte
		want   string
	}{
		{"ambiguous", map[string][]byte{"a.npy": x, "b.npy": x}, `d.npz: the archive holds arrays "a", "b"; name the features "X" (and the target "y")`},
		{"row mismatch", map[string][]byte{"X.npy": x, "y.npy": short}, `d.npz: "y" has 2 rows but "X" has 3`},
		{"2-D y", map[string][]byte{"X.npy": x, "y.npy": x}, `d.npz: target array "y" has shape (3, 2); it must be 1-D (one value per row)`},
		{"bad member", map[string][]byte{"X.npy": []byte("junk")}, `d.npz[X]: not an NPY file`},
		{"empty", map[string][]byte{}, `d.npz: the archive holds no arrays`},
	}
	for _, tc := range errCases {
		_, err := Read(bytes.NewReader(npzBytes(t, zip.Store, tc.arrays)), "d.npz", ReadOptions{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant %s", tc.name, err, tc.want)
		}
	}
	if _, err := Read(strings.NewReader("PK\x03\x04 not really"), "d.npz", ReadOptions{}); err == nil || !strings.HasPrefix(err.Error(), "d.npz: not a valid .npz (zip) archive") {
		t.Errorf("corrupt zip: %v", err)
	}
}

func TestParsePyLiteral(t *testing.T) {
	v, err := parsePyLiteral(`{'descr': '<f8', "fortran_order": False, 'shape': (3,), 'x': [1, -2], 'n': None, 'ok': True,}`)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"descr": "<f8", "fortran_order": false, "shape": []any{3}, "x": []any{1, -2}, "n": nil, "ok": true}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %#v", v)
	}
	for _, bad := range []string{"", "{", "{'a' 1}", "{'a': 1", "(1 2)", "'abc", "{1: 2}", "{'a': 1} x", "99999999999999999999999", strings.Repeat("(", 100)} {
		if _, err := parsePyLiteral(bad); err == nil {
			t.Errorf("parsePyLiteral(%q) accepted", bad)
		}
	}
}
