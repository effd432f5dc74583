package dataset

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

func TestReadFixture(t *testing.T) {
	tab := readMixed(t, ReadOptions{})
	if got, want := tab.Names(), []string{"id", "age", "color", "income", "city", "zip", "y"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("names %v, want %v", got, want)
	}
	if tab.NRows() != 6 {
		t.Fatalf("NRows = %d, want 6", tab.NRows())
	}
	kinds := map[string]Kind{"id": Numeric, "age": Numeric, "color": Categorical, "income": Numeric, "city": Categorical, "zip": Numeric, "y": Categorical}
	for name, k := range kinds {
		c, _ := tab.Column(name)
		if c.Kind != k {
			t.Errorf("column %q kind %v, want %v", name, c.Kind, k)
		}
	}
	age, _ := tab.Column("age")
	if !age.Missing[1] || !age.Missing[5] || age.Missing[0] || !math.IsNaN(age.Num[1]) || age.Num[3] != 51 {
		t.Errorf("age = %v missing %v", age.Num, age.Missing)
	}
	color, _ := tab.Column("color")
	if !color.Missing[2] || color.Str[2] != "" || color.Str[0] != "red" {
		t.Errorf("color = %q missing %v", color.Str, color.Missing)
	}
	city, _ := tab.Column("city")
	if city.Str[2] != "New York, NY" {
		t.Errorf("quoted field = %q", city.Str[2])
	}
	if age.Line(0) != 2 || age.Line(5) != 7 {
		t.Errorf("lines %d %d, want 2 7", age.Line(0), age.Line(5))
	}
}

// textCase reads inline text and checks the resulting columns.
type textCase struct {
	name string
	in   string
	file string // name passed to Read; "data.csv" when empty
	opt  ReadOptions
	want map[string]any // column -> []float64 (NaN = missing) or []string ("" = missing)
}

func TestReadDelimited(t *testing.T) {
	nan := math.NaN()
	cases := []textCase{
		{name: "comma", in: "a,b\n1,x\n2,y\n", want: map[string]any{"a": []float64{1, 2}, "b": []string{"x", "y"}}},
		{name: "BOM and CRLF", in: "\uFEFFa,b\r\n1,2\r\n3,4\r\n", want: map[string]any{"a": []float64{1, 3}, "b": []float64{2, 4}}},
		{name: "semicolon detected", in: "a;b;c\n1,5;2;x\n3,5;4;y\n", want: map[string]any{"a": []string{"1,5", "3,5"}, "c": []string{"x", "y"}}},
		{name: "tab detected", in: "a\tb\n1\t2\n", want: map[string]any{"b": []float64{2}}},
		{name: "pipe detected", in: "a|b\n1|2\n", want: map[string]any{"a": []float64{1}}},
		{name: "tsv extension", file: "d.tsv", in: "a,b\tc\n1,2\t3\n", want: map[string]any{"a,b": []string{"1,2"}, "c": []float64{3}}},
		{name: "explicit delimiter", opt: ReadOptions{Delimiter: ';'}, in: "a,b;c\n1;2\n", want: map[string]any{"a,b": []float64{1}}},
		{name: "quoted newline and quote", in: "a,b\n\"x\ny\",1\n\"say \"\"hi\"\"\",2\n", want: map[string]any{"a": []string{"x\ny", "say \"hi\""}, "b": []float64{1, 2}}},
		{name: "empty header name", in: ",b\n1,2\n", want: map[string]any{"c0": []float64{1}, "b": []float64{2}}},
		{name: "no header", opt: ReadOptions{NoHeader: true}, in: "1,a\n2,b\n", want: map[string]any{"c0": []float64{1, 2}, "c1": []string{"a", "b"}}},
		{name: "spaces trimmed", in: "a, b\n 1 , red \n2,blue\n", want: map[string]any{"a": []float64{1, 2}, "b": []string{"red", "blue"}}},
		{name: "missing tokens", in: "a,b\nNA,?\n1,x\nnull,\n", want: map[string]any{"a": []float64{nan, 1, nan}, "b": []string{"", "x", ""}}},
		{name: "custom missing tokens", opt: ReadOptions{MissingTokens: []string{"-"}}, in: "a,b\n-,NA\n1,x\n", want: map[string]any{"a": []float64{nan, 1}, "b": []string{"NA", "x"}}},
		{name: "forced categorical keeps text", opt: ReadOptions{Categorical: []string{"zip"}}, in: "zip\n007\n1.50\n", want: map[string]any{"zip": []string{"007", "1.50"}}},
		{name: "forced numeric", opt: ReadOptions{Numeric: []string{"a"}}, in: "a\n1\nNA\n", want: map[string]any{"a": []float64{1, nan}}},
		{name: "ignore", opt: ReadOptions{Ignore: []string{"b"}}, in: "a,b\n1,x\n", want: map[string]any{"a": []float64{1}}},
		{name: "hex and underscores are text", in: "a\n0x10\n1_0\n", want: map[string]any{"a": []string{"0x10", "1_0"}}},
		{name: "inf among text is a level", in: "a\ninf\nabc\n", want: map[string]any{"a": []string{"inf", "abc"}}},
		{name: "underflow reads as zero", in: "a\n1e-400\n2\n", want: map[string]any{"a": []float64{0, 2}}},
		{name: "all missing is numeric", in: "a,b\n,1\nNA,2\n", want: map[string]any{"a": []float64{nan, nan}}},
		{name: "single column", in: "a\n1\n2\n", want: map[string]any{"a": []float64{1, 2}}},
		{name: "blank lines skipped", in: "a,b\n1,2\n\n\r\n3,4", want: map[string]any{"a": []float64{1, 3}}},
		{name: "quote inside unquoted field", in: "h,b\n5'11\",1\n", want: map[string]any{"h": []string{"5'11\""}}},
		{name: "quoted CRLF and trailing delimiter", in: "a,b,c\r\n\"x\",\"1\",\r\n", want: map[string]any{"a": []string{"x"}, "b": []float64{1}, "c": []float64{math.NaN()}}},
		{name: "multibyte delimiter", opt: ReadOptions{Delimiter: '¦'}, in: "a¦b\n1¦x\n", want: map[string]any{"a": []float64{1}, "b": []string{"x"}}},
		{name: "explicit format txt", file: "data.weird", opt: ReadOptions{Format: "txt"}, in: "a;b\n1;2\n", want: map[string]any{"b": []float64{2}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkText(t, tc) })
	}
}

func checkText(t *testing.T, tc textCase) {
	t.Helper()
	file := tc.file
	if file == "" {
		file = "data.csv"
	}
	tab, err := Read(strings.NewReader(tc.in), file, tc.opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(tc.opt.Ignore) > 0 {
		for _, n := range tc.opt.Ignore {
			if _, ok := tab.Column(n); ok {
				t.Errorf("ignored column %q present", n)
			}
		}
	}
	for name, want := range tc.want {
		c, ok := tab.Column(name)
		if !ok {
			t.Fatalf("column %q missing; have %v", name, tab.Names())
		}
		switch w := want.(type) {
		case []float64:
			if c.Kind != Numeric {
				t.Fatalf("column %q is %v, want numeric (%q)", name, c.Kind, c.Str)
			}
			if len(c.Num) != len(w) {
				t.Fatalf("column %q = %v, want %v", name, c.Num, w)
			}
			for i := range w {
				if math.IsNaN(w[i]) != c.IsMissing(i) || (!math.IsNaN(w[i]) && c.Num[i] != w[i]) {
					t.Errorf("column %q = %v (missing %v), want %v", name, c.Num, c.Missing, w)
					break
				}
			}
		case []string:
			if c.Kind != Categorical {
				t.Fatalf("column %q is %v, want categorical (%v)", name, c.Kind, c.Num)
			}
			if !reflect.DeepEqual(c.Str, w) {
				t.Errorf("column %q = %q, want %q", name, c.Str, w)
			}
			for i := range w {
				if (w[i] == "") != c.Missing[i] {
					t.Errorf("column %q missing flags %v for %q", name, c.Missing, w)
					break
				}
			}
		}
	}
}

// A column of numbers with a few words (≤ 5%, ≥ 20 cells) is an error;
// more words, or fewer cells, make it categorical; declaring the word
// missing, or the column categorical, reads it.
func TestStrayTextTyping(t *testing.T) {
	mostly := "b\n" + strings.Repeat("1\n", 19) + "oops\n"
	if _, err := Read(strings.NewReader(mostly), "x.csv", ReadOptions{}); err == nil || !strings.Contains(err.Error(), `"oops" is not a number`) {
		t.Fatalf("19 numbers and a word: error %v", err)
	}
	for _, tc := range []struct {
		name, in string
		opt      ReadOptions
		kind     Kind
		missing  int
	}{
		{"too few cells to tell", "b\n1\n2\nx\n", ReadOptions{}, Categorical, 0},
		{"many words", "b\n" + strings.Repeat("1\nx\n", 15), ReadOptions{}, Categorical, 0},
		{"word declared missing", mostly, ReadOptions{MissingTokens: append(DefaultMissingTokens(), "oops")}, Numeric, 1},
		{"column declared categorical", mostly, ReadOptions{Categorical: []string{"b"}}, Categorical, 0},
	} {
		tab, err := Read(strings.NewReader(tc.in), "x.csv", tc.opt)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		c, _ := tab.Column("b")
		n := 0
		for i := 0; i < c.Len(); i++ {
			if c.IsMissing(i) {
				n++
			}
		}
		if c.Kind != tc.kind || n != tc.missing {
			t.Errorf("%s: %v with %d missing, want %v with %d", tc.name, c.Kind, n, tc.kind, tc.missing)
		}
	}
}

func TestReadErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		opt  ReadOptions
		want string      // the whole message
		pe   *ParseError // fields to check, when the error is a ParseError
	}{
		{name: "empty", in: "", want: "data.csv: file is empty; expected a header line and data rows"},
		{name: "only BOM", in: "\uFEFF", want: "data.csv: file is empty; expected a header line and data rows"},
		{name: "header only", in: "a,b\n", want: "data.csv: line 1: header only, no data rows", pe: &ParseError{Line: 1}},
		{name: "ragged", in: "a,b,c\n1,2,3\n4,5\n", want: "data.csv: line 3: 2 fields, but the header has 3; check the delimiter (',') and quoting", pe: &ParseError{Line: 3}},
		{name: "ragged no header", opt: ReadOptions{NoHeader: true}, in: "1,2\n3\n", want: "data.csv: line 2: 1 fields, but line 1 has 2; check the delimiter (',') and quoting"},
		{name: "forced numeric text", opt: ReadOptions{Numeric: []string{"age"}}, in: "id,x,age\n1,2,3\n2,3,4\n3,4,5\n4,5,6\n5,6,7\n6,7,abc\n",
			want: `data.csv: line 7, column 3 ("age"): "abc" is not a number`, pe: &ParseError{Line: 7, Col: 3, Column: "age"}},
		{name: "overflow", in: "a,b\n1,2\n3,1e999\n", want: `data.csv: line 3, column 2 ("b"): "1e999" overflows float64`, pe: &ParseError{Line: 3, Col: 2, Column: "b"}},
		{name: "negative overflow", in: "a\n-1e400\n", want: `data.csv: line 2, column 1 ("a"): "-1e400" overflows float64`},
		{name: "inf literal", in: "a\n1\nInfinity\n", want: `data.csv: line 3, column 1 ("a"): "Infinity" is not a finite number; use a finite value or mark the cell missing (for example NA)`},
		{name: "nan not a missing token", opt: ReadOptions{MissingTokens: []string{"-"}}, in: "a\n1\nnan\n", want: `data.csv: line 3, column 1 ("a"): "nan" is not a finite number; use a finite value or mark the cell missing (for example NA)`},
		{name: "earliest error wins", in: "a,b\n1,2\n1,1e999\ninf,3\n", want: `data.csv: line 3, column 2 ("b"): "1e999" overflows float64`},
		{name: "invalid utf8", in: "a,b\n1,x\n2,\xff\xfe\n", want: `data.csv: line 3, column 2 ("b"): invalid UTF-8; save the file as UTF-8`, pe: &ParseError{Line: 3, Col: 2, Column: "b"}},
		{name: "invalid utf8 after quoted delimiter", in: "a;b;c\n\"x;y\";\xff;1\n", want: `data.csv: line 2, column 2 ("b"): invalid UTF-8; save the file as UTF-8`},
		{name: "invalid utf8 header", in: "a,\xff\n1,2\n", want: `data.csv: line 1, column 2: invalid UTF-8; save the file as UTF-8`},
		{name: "stray text in a numeric column", in: "a,b\n" + strings.Repeat("1,2\n", 30) + "3,abc\n" + strings.Repeat("4,5\n", 9),
			want: `data.csv: line 32, column 2 ("b"): "abc" is not a number, but 39 of the column's 39 other values are; fix the cell, make it a missing-value token (rfm: add it to --na) or read the column as categorical (rfm: --categorical b)`,
			pe:   &ParseError{Line: 32, Col: 2, Column: "b"}},
		{name: "unknown forced", opt: ReadOptions{Numeric: []string{"zz"}}, in: "a,b\n1,2\n", want: `data.csv: numeric column "zz" not found; the columns are "a", "b"`},
		{name: "unknown ignored", opt: ReadOptions{Ignore: []string{"zz"}}, in: "a,b\n1,2\n", want: `data.csv: ignored column "zz" not found; the columns are "a", "b"`},
		{name: "duplicate header", in: "a,b,a\n1,2,3\n", want: `data.csv: line 1: duplicate column name "a" (columns 1 and 3); rename one of them`},
		{name: "text after closing quote", in: "a,b\n1,\"x\"y\n", want: `data.csv: line 2: text after the closing quote of a quoted field; quote the whole field and write inner quotes as ""`, pe: &ParseError{Line: 2}},
		{name: "unterminated quote", in: "a,b\n1,2\n3,\"xy\n4,5\n", want: `data.csv: line 3: quoted field has no closing quote; write a quote inside a quoted field as ""`, pe: &ParseError{Line: 3}},
		{name: "conflicting force", opt: ReadOptions{Numeric: []string{"a"}, Categorical: []string{"a"}}, in: "a\n1\n", want: `data.csv: column "a" is forced both categorical and numeric; choose one`},
		{name: "ignored and forced", opt: ReadOptions{Ignore: []string{"a"}, Categorical: []string{"a"}}, in: "a\n1\n", want: `data.csv: column "a" is both ignored and forced categorical; choose one`},
		{name: "everything ignored", opt: ReadOptions{Ignore: []string{"a"}}, in: "a\n1\n", want: `data.csv: no columns left after Ignore`},
		{name: "unknown format", opt: ReadOptions{Format: "xlsx"}, in: "a\n1\n", want: `data.csv: unknown format "xlsx"; use one of csv, tsv, txt, parquet, npy, npz, libsvm`},
		{name: "bad delimiter", opt: ReadOptions{Delimiter: '"'}, in: "a\n1\n", want: `data.csv: invalid delimiter '"'`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in), "data.csv", tc.opt)
			if err == nil {
				t.Fatal("no error")
			}
			if err.Error() != tc.want {
				t.Errorf("error\n got %s\nwant %s", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("message has several lines: %q", err)
			}
			if tc.pe != nil {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("%T is not a *ParseError", err)
				}
				if pe.Line != tc.pe.Line || (tc.pe.Col != 0 && pe.Col != tc.pe.Col) || (tc.pe.Column != "" && pe.Column != tc.pe.Column) || pe.File != "data.csv" {
					t.Errorf("ParseError %+v, want %+v", pe, tc.pe)
				}
			}
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadFile(filepath.Join(dir, "nope.csv"), ReadOptions{})
	if err == nil || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "nope.csv: cannot open") {
		t.Errorf("missing file: %v", err)
	}
	_, err = ReadFile(dir, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: %v", err)
	}
}

func TestReadGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("a;b\n1;x\n2;y\n"))
	zw.Close()
	path := filepath.Join(t.TempDir(), "d.csv.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func() (*Table, error){
		func() (*Table, error) { return ReadFile(path, ReadOptions{}) },
		// No .gz in the name: the gzip magic still decides.
		func() (*Table, error) { return Read(bytes.NewReader(buf.Bytes()), "stdin", ReadOptions{}) },
	} {
		tab, err := read()
		if err != nil {
			t.Fatal(err)
		}
		if c, ok := tab.Column("b"); !ok || c.Kind != Categorical || c.Str[1] != "y" {
			t.Errorf("gzip table %v", tab.Names())
		}
	}
	_, err := Read(strings.NewReader("a,b\n1,2\n"), "x.csv.gz", ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "x.csv.gz: not a valid gzip stream") {
		t.Errorf("plain text named .gz: %v", err)
	}
}

func TestDetectDelimiter(t *testing.T) {
	cases := []struct {
		in   string
		want rune
	}{
		{"a,b,c\n1,2,3\n", ','},
		{"a;b\n1,5;2,5\n", ';'},
		{"a\tb\tc\n1\t2\t3\n", '\t'},
		{"a|b\n1|2\n", '|'},
		{"only\n1\n", ','},
		{"\"x;y\",b\n\"1;2\",3\n", ','},    // delimiters inside quotes do not count
		{"a,b;c;d\n1,2;3;4\n5;6;7\n", ';'}, // consistent beats more fields
	}
	for _, tc := range cases {
		if got := detectDelimiter([]byte(tc.in), true); got != tc.want {
			t.Errorf("detectDelimiter(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTableHelpers(t *testing.T) {
	tab := readMixed(t, ReadOptions{})
	sub, err := tab.SelectRows([]int{5, 0})
	if err != nil {
		t.Fatal(err)
	}
	age, _ := sub.Column("age")
	if sub.NRows() != 2 || !age.IsMissing(0) || age.Num[1] != 34 || age.Line(0) != 7 || age.Line(1) != 2 {
		t.Errorf("SelectRows: age %v lines %d %d", age.Num, age.Line(0), age.Line(1))
	}
	if _, err := tab.SelectRows([]int{6}); err == nil {
		t.Error("SelectRows accepted an out-of-range row")
	}
	if got := tab.NamesExcept("y", "id"); !reflect.DeepEqual(got, []string{"age", "color", "income", "city", "zip"}) {
		t.Errorf("NamesExcept = %v", got)
	}
	_, err = tab.TargetColumn("label")
	if err == nil || err.Error() != `testdata/mixed.csv: target column "label" not found; the columns are "id", "age", "color", "income", "city", "zip", "y"` {
		t.Errorf("TargetColumn: %v", err)
	}
	bad := []*Table{
		{Columns: []*Column{{Name: "a", Num: []float64{1}}, {Name: "b", Num: []float64{1, 2}}}},
		{Columns: []*Column{{Name: "a", Num: []float64{1}}, {Name: "a", Num: []float64{1}}}},
		{Columns: []*Column{{Name: "", Num: []float64{1}}}},
		{Columns: []*Column{{Name: "a", Kind: Categorical, Num: []float64{1}}}},
		{Columns: []*Column{{Name: "a", Num: []float64{1}, Missing: []bool{}}}},
		{Columns: []*Column{nil}},
	}
	for i, b := range bad {
		if err := b.Validate(); err == nil {
			t.Errorf("bad table %d validated", i)
		}
	}
}

func TestMessagesStayShort(t *testing.T) {
	var header, row []string
	for j := 0; j < 25; j++ {
		header = append(header, fmt.Sprintf("col%d", j))
		row = append(row, "1")
	}
	in := strings.Join(header, ",") + "\n" + strings.Join(row, ",") + "\n"
	_, err := Read(strings.NewReader(in), "wide.csv", ReadOptions{Ignore: []string{"nope"}})
	if err == nil || !strings.HasSuffix(err.Error(), `"col19", ... (5 more)`) {
		t.Errorf("long column list: %v", err)
	}
	long := strings.Repeat("é", 50)
	_, err = Read(strings.NewReader("a\n"+long+"\n"), "d.csv", ReadOptions{Numeric: []string{"a"}})
	if err == nil || err.Error() != `d.csv: line 2, column 1 ("a"): "`+strings.Repeat("é", 20)+`"... is not a number` {
		t.Errorf("long cell: %v", err)
	}
}

func TestSniffFormat(t *testing.T) {
	npy := npyBytes(1, "<f8", false, "(1,)", raw(le, []float64{2}))
	for name, data := range map[string][]byte{
		"npy": npy,
		"npz": npzBytes(t, 0, map[string][]byte{"X.npy": npy}),
	} {
		tab, err := Read(bytes.NewReader(data), "stdin", ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c := tab.Columns[0]; c.Name != "x0" || c.Num[0] != 2 {
			t.Errorf("%s: %v", name, tab.Names())
		}
	}
}

func TestParseErrorFormat(t *testing.T) {
	cases := []struct {
		e    ParseError
		want string
	}{
		{ParseError{File: "f.csv", Line: 7, Col: 3, Column: "age", Msg: "m"}, `f.csv: line 7, column 3 ("age"): m`},
		{ParseError{File: "f.parquet", Row: 2, Column: "age", Msg: "m"}, `f.parquet: row 2, column "age": m`},
		{ParseError{File: "f.csv", Line: 7, Row: 5, Msg: "m"}, `f.csv: line 7: m`},
		{ParseError{Col: 2, Msg: "m"}, `column 2: m`},
		{ParseError{Msg: "m"}, `m`},
	}
	for _, tc := range cases {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// wideCSV builds an n×d numeric CSV with one categorical column.
func wideCSV(n, d int) []byte {
	return testutil.CSV(n, d, "cat", func(i, j int) string {
		if j < d {
			return fmt.Sprintf("%.6g", float64(i*d+j)*0.001)
		}
		return fmt.Sprintf("k%d", i%7)
	})
}

// TestReadLarge reads 100k rows × 50 columns and checks the shape; its
// speed is measured by BenchmarkReadCSV, not asserted here.
func TestReadLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large read skipped in -short mode")
	}
	data := wideCSV(100_000, 49)
	tab, err := Read(bytes.NewReader(data), "big.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tab.NRows() != 100_000 || len(tab.Columns) != 50 {
		t.Fatalf("got %d×%d", tab.NRows(), len(tab.Columns))
	}
}

func BenchmarkReadCSV(b *testing.B) {
	data := wideCSV(100_000, 49)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), "big.csv", ReadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
