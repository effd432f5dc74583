package dataset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

type pqRow struct {
	Age   *float64 `parquet:"age,optional"`
	Count int32    `parquet:"count"`
	Big   int64    `parquet:"big"`
	Small float32  `parquet:"small"`
	Flag  bool     `parquet:"flag"`
	Color *string  `parquet:"color,optional"`
	Code  string   `parquet:"code"`
	U     uint32   `parquet:"u"`
}

func ptr[T any](v T) *T { return &v }

func parquetBytes(t *testing.T, rows any) []byte {
	t.Helper()
	var buf bytes.Buffer
	var err error
	switch r := rows.(type) {
	case []pqRow:
		err = parquet.Write(&buf, r)
	case []pqInf:
		err = parquet.Write(&buf, r)
	case []pqList:
		err = parquet.Write(&buf, r)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type pqInf struct {
	X float64 `parquet:"x"`
}

type pqList struct {
	X []int32 `parquet:"x,list"`
}

func sampleParquet(t *testing.T) []byte {
	return parquetBytes(t, []pqRow{
		{Age: ptr(34.5), Count: 1, Big: 1 << 40, Small: 0.5, Flag: true, Color: ptr("red"), Code: "007", U: 4_000_000_000},
		{Age: nil, Count: -2, Big: -3, Small: 1.5, Flag: false, Color: nil, Code: "x", U: 1},
		{Age: ptr(math.NaN()), Count: 3, Big: 0, Small: 2, Flag: true, Color: ptr("blue"), Code: "12", U: 2},
	})
}

func TestReadParquet(t *testing.T) {
	data := sampleParquet(t)
	path := filepath.Join(t.TempDir(), "d.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := ReadFile(path, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Read without an extension: the PAR1 magic picks the format.
	fromStream, err := Read(bytes.NewReader(data), "stdin", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range []*Table{fromFile, fromStream} {
		if err := tab.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := tab.Names(); !reflect.DeepEqual(got, []string{"age", "count", "big", "small", "flag", "color", "code", "u"}) {
			t.Fatalf("names %v", got)
		}
		want := map[string][]float64{
			"count": {1, -2, 3}, "big": {1 << 40, -3, 0}, "small": {0.5, 1.5, 2}, "flag": {1, 0, 1}, "u": {4e9, 1, 2},
		}
		for name, w := range want {
			c, _ := tab.Column(name)
			if c.Kind != Numeric || !reflect.DeepEqual(c.Num, w) {
				t.Errorf("%s = %v %v, want %v", name, c.Kind, c.Num, w)
			}
		}
		age, _ := tab.Column("age")
		if age.Num[0] != 34.5 || !age.Missing[1] || !age.Missing[2] || age.Missing[0] {
			t.Errorf("age %v missing %v", age.Num, age.Missing)
		}
		color, _ := tab.Column("color")
		if color.Kind != Categorical || !reflect.DeepEqual(color.Str, []string{"red", "", "blue"}) || !color.Missing[1] {
			t.Errorf("color %v %q %v", color.Kind, color.Str, color.Missing)
		}
		code, _ := tab.Column("code")
		if code.Kind != Categorical || code.Str[0] != "007" {
			t.Errorf("code %v %q", code.Kind, code.Str)
		}
	}
}

func TestReadParquetOptions(t *testing.T) {
	data := sampleParquet(t)
	tab, err := Read(bytes.NewReader(data), "d.parquet", ReadOptions{
		Categorical: []string{"count"}, Ignore: []string{"big", "small"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tab.Column("big"); ok {
		t.Error("ignored column present")
	}
	c, _ := tab.Column("count")
	if c.Kind != Categorical || !reflect.DeepEqual(c.Str, []string{"1", "-2", "3"}) {
		t.Errorf("forced categorical count = %v %q", c.Kind, c.Str)
	}

	_, err = Read(bytes.NewReader(data), "d.parquet", ReadOptions{Numeric: []string{"code"}})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Row != 2 || pe.Column != "code" || err.Error() != `d.parquet: row 2, column 7 ("code"): "x" is not a number` {
		t.Errorf("forced numeric on text: %v", err)
	}
	// Text cells forced numeric honour the missing tokens.
	tab, err = Read(bytes.NewReader(data), "d.parquet", ReadOptions{Numeric: []string{"code"}, MissingTokens: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := tab.Column("code"); c.Kind != Numeric || c.Num[0] != 7 || !c.Missing[1] || c.Num[2] != 12 {
		t.Errorf("forced numeric code = %v %v %v", c.Kind, c.Num, c.Missing)
	}
	_, err = Read(bytes.NewReader(data), "d.parquet", ReadOptions{Ignore: []string{"nope"}})
	if err == nil || !strings.Contains(err.Error(), `ignored column "nope" not found`) {
		t.Errorf("unknown ignored: %v", err)
	}
}

// withFooterLength returns a copy of a Parquet file with its footer length
// field (the 4 bytes before the closing magic) set to n.
func withFooterLength(file []byte, n uint32) []byte {
	b := bytes.Clone(file)
	binary.LittleEndian.PutUint32(b[len(b)-8:], n)
	return b
}

func TestReadParquetErrors(t *testing.T) {
	good := sampleParquet(t)
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", good[:len(good)/2], "d.parquet: not a readable Parquet file"},
		{"garbage", []byte("PAR1 this is not parquet PAR1"), "d.parquet: "},
		{"infinity", parquetBytes(t, []pqInf{{1}, {math.Inf(1)}}), `d.parquet: row 2, column 1 ("x"): value is +Inf`},
		{"list column", parquetBytes(t, []pqList{{X: []int32{1, 2}}}), `d.parquet: column "x": nested (group) columns are not supported`},
		{"footer length past the file", withFooterLength(good, 1<<31), "d.parquet: not a readable Parquet file: footer length 2147483648 exceeds the file"},
		{"no magic", append([]byte("PAR0"), good[4:]...), "d.parquet: not a readable Parquet file: no PAR1 magic"},
		{"tiny", []byte("PAR1PAR1"), "d.parquet: not a readable Parquet file: 8 bytes is too short"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(bytes.NewReader(tc.data), "d.parquet", ReadOptions{})
			t.Log(err)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v, want prefix %q", err, tc.want)
			}
		})
	}
}
