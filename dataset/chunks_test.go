package dataset

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chunkCSV is a table with what makes cutting text into pieces hard: quoted
// fields holding delimiters, quotes and line breaks, blank lines, CRLF,
// missing cells.
func chunkCSV(rows int) string {
	var b strings.Builder
	b.WriteString("\uFEFFid,x,color,note\r\n")
	for i := 0; i < rows; i++ {
		note := fmt.Sprintf("plain %d", i)
		switch i % 7 {
		case 1:
			note = fmt.Sprintf("\"a, quoted\nnote %d\"", i)
		case 3:
			note = fmt.Sprintf("\"say \"\"hi\"\" %d\"", i)
		case 5:
			note = "5'11\""
		}
		x := fmt.Sprintf("%g", float64(i)*0.25-3)
		if i%11 == 4 {
			x = "NA"
		}
		fmt.Fprintf(&b, "%d,%s,%s,%s\n", i, x, []string{"red", "green", "blue"}[i%3], note)
		if i%13 == 0 {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Reading in pieces of any size gives the rows, values, missing cells and
// line numbers of the whole-file read.
func TestReadChunksMatchesWhole(t *testing.T) {
	text := chunkCSV(4000)
	opt := ReadOptions{Numeric: []string{"id", "x"}, Categorical: []string{"color", "note"}}
	whole, err := Read(strings.NewReader(text), "t.csv", opt)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{1, 7, 64, 1000, 1 << 20} {
		var got []*Table
		err := ReadChunks(context.Background(), strings.NewReader(text), "t.csv", opt, size, func(t *Table) error {
			got = append(got, t)
			return nil
		})
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if size == 1000 && len(got) < 5 {
			t.Errorf("size %d: %d pieces; want several", size, len(got))
		}
		row := 0
		for _, piece := range got {
			for i := 0; i < piece.NRows(); i++ {
				for k, wc := range whole.Columns {
					pc := piece.Columns[k]
					if pc.Name != wc.Name || pc.Kind != wc.Kind {
						t.Fatalf("size %d: column %d is %s/%v, want %s/%v", size, k, pc.Name, pc.Kind, wc.Name, wc.Kind)
					}
					if pc.IsMissing(i) != wc.IsMissing(row) || pc.Line(i) != wc.Line(row) {
						t.Fatalf("size %d, row %d, %s: missing %v line %d; want %v, %d", size, row, wc.Name, pc.IsMissing(i), pc.Line(i), wc.IsMissing(row), wc.Line(row))
					}
					if wc.IsMissing(row) {
						continue
					}
					if wc.Kind == Numeric && pc.Num[i] != wc.Num[row] && !(math.IsNaN(pc.Num[i]) && math.IsNaN(wc.Num[row])) {
						t.Fatalf("size %d, row %d, %s: %v, want %v", size, row, wc.Name, pc.Num[i], wc.Num[row])
					}
					if wc.Kind == Categorical && pc.Str[i] != wc.Str[row] {
						t.Fatalf("size %d, row %d, %s: %q, want %q", size, row, wc.Name, pc.Str[i], wc.Str[row])
					}
				}
				row++
			}
		}
		if row != whole.NRows() {
			t.Errorf("size %d: %d rows, want %d", size, row, whole.NRows())
		}
	}
}

// Errors name the file's own line and column, in any piece; an empty or
// header-only input and a forced column the file lacks are refused as the
// whole-file read refuses them; an error from the callback stops the read.
func TestReadChunksErrors(t *testing.T) {
	text := chunkCSV(4000)
	lines := strings.Split(text, "\n")
	bad := len(lines) - 20
	for !strings.Contains(lines[bad], ",plain ") { // a whole record
		bad--
	}
	lines[bad] = "7,seven,red,x"
	badText := strings.Join(lines, "\n")
	opt := ReadOptions{Numeric: []string{"id", "x"}, Categorical: []string{"color", "note"}}
	_, wholeErr := Read(strings.NewReader(badText), "t.csv", opt)
	err := ReadChunks(context.Background(), strings.NewReader(badText), "t.csv", opt, 200, func(*Table) error { return nil })
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != bad+1 || pe.Column != "x" {
		t.Errorf("bad cell at line %d: got %v", bad+1, err)
	}
	if wholeErr == nil || err == nil || wholeErr.Error() != err.Error() {
		t.Errorf("messages differ:\nwhole:  %v\npieces: %v", wholeErr, err)
	}
	for _, tc := range []struct{ text, want string }{
		{"", "file is empty"},
		{"id,x,color,note\n", "header only"},
		{"id,color,note\n1,red,a\n", `numeric column "x" not found`},
		{"id,x,color,note\n1,2,red\n", "3 fields, but the header has 4"},
	} {
		err := ReadChunks(context.Background(), strings.NewReader(tc.text), "t.csv", opt, 8, func(*Table) error { return nil })
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "t.csv") {
			t.Errorf("%q: got %v, want an error naming t.csv and saying %q", tc.text, err, tc.want)
		}
	}
	stop := errors.New("enough")
	calls := 0
	err = ReadChunks(context.Background(), strings.NewReader(text), "t.csv", opt, 100, func(*Table) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("callback error: got %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ReadChunks(ctx, strings.NewReader(text), "t.csv", opt, 100, func(*Table) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

// A gzipped file is read in pieces; a binary format is read whole.
func TestReadFileChunks(t *testing.T) {
	dir := t.TempDir()
	text := chunkCSV(4000)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	zw.Write([]byte(text))
	zw.Close()
	gz := filepath.Join(dir, "t.csv.gz")
	if err := os.WriteFile(gz, zb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	opt := ReadOptions{Numeric: []string{"id", "x"}, Categorical: []string{"color", "note"}}
	rows, pieces := 0, 0
	if err := ReadFileChunks(context.Background(), gz, opt, 20000, func(t *Table) error { rows += t.NRows(); pieces++; return nil }); err != nil {
		t.Fatal(err)
	}
	if rows != 4000 || pieces < 3 {
		t.Errorf("gzip: %d rows in %d pieces; want 4000 in several", rows, pieces)
	}
	if err := ReadFileChunks(context.Background(), filepath.Join(dir, "none.csv"), opt, 500, func(*Table) error { return nil }); err == nil || !strings.Contains(err.Error(), "none.csv") {
		t.Errorf("missing file: %v", err)
	}
}
