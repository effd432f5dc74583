package dataset

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestReadLIBSVM(t *testing.T) {
	in := "# a comment line\n" +
		"+1 1:0.5 3:2 # trailing comment\n" +
		"\n" +
		"-1 qid:7 2:1e3\t4:-1\n" +
		"1\n"
	tab, err := Read(strings.NewReader(in), "d.svm", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := tab.Names(); !reflect.DeepEqual(got, []string{"label", "f1", "f2", "f3", "f4"}) {
		t.Fatalf("names %v", got)
	}
	want := map[string][]float64{
		"label": {1, -1, 1},
		"f1":    {0.5, 0, 0},
		"f2":    {0, 1000, 0},
		"f3":    {2, 0, 0},
		"f4":    {0, -1, 0},
	}
	for name, w := range want {
		c, _ := tab.Column(name)
		if c.Kind != Numeric || !reflect.DeepEqual(c.Num, w) {
			t.Errorf("%s = %v %v, want %v", name, c.Kind, c.Num, w)
		}
	}
	f2, _ := tab.Column("f2")
	if f2.Line(1) != 4 || f2.IsMissing(0) {
		t.Errorf("line of row 2 = %d, missing %v", f2.Line(1), f2.Missing)
	}

	// Text labels become categorical; options apply like for other formats.
	tab, err = Read(strings.NewReader("cat 1:1\ndog 2:1\n"), "d.libsvm", ReadOptions{Ignore: []string{"f1"}, Categorical: []string{"f2"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tab.Names(); !reflect.DeepEqual(got, []string{"label", "f2"}) {
		t.Fatalf("names %v", got)
	}
	if l, _ := tab.Column("label"); l.Kind != Categorical || !reflect.DeepEqual(l.Str, []string{"cat", "dog"}) {
		t.Errorf("label %v %q", l.Kind, l.Str)
	}
	if f, _ := tab.Column("f2"); f.Kind != Categorical || !reflect.DeepEqual(f.Str, []string{"0", "1"}) {
		t.Errorf("f2 %v %q", f.Kind, f.Str)
	}
	// Format by option, CRLF line ends.
	tab, err = Read(strings.NewReader("0 1:1\r\n1 1:2\r\n"), "data.txt", ReadOptions{Format: "svm"})
	if err != nil || tab.NRows() != 2 {
		t.Fatalf("format option: %v", err)
	}
}

func TestReadLIBSVMErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want string
		line int
	}{
		{"empty", "# nothing\n\n", `d.svm: no data lines; expected "label index:value ..."`, 0},
		{"no colon", "1 1:2\n1 3\n", `d.svm: line 2: token "3" is not index:value`, 2},
		{"bad index", "1 a:2\n", `d.svm: line 1: index in "a:2" is not an integer`, 1},
		{"zero index", "1 0:2\n", `d.svm: line 1: index 0 in "0:2": indices are 1-based and must be at least 1`, 1},
		{"negative index", "1 2:1 -1:2\n", `d.svm: line 1: index -1 in "-1:2": indices are 1-based and must be at least 1`, 1},
		{"duplicate", "1 1:1\n0 2:1 2:3\n", `d.svm: line 2: duplicate index 2`, 2},
		{"descending", "1 3:1 2:1\n", `d.svm: line 1: index 2 after 3: indices must be ascending`, 1},
		{"bad value", "1 1:x\n", `d.svm: line 1: index 1: "x" is not a number`, 1},
		{"overflow", "1 1:1e999\n", `d.svm: line 1: index 1: "1e999" overflows float64`, 1},
		{"inf value", "1 1:inf\n", `d.svm: line 1: index 1: "inf" is not a finite number; use a finite value or mark the cell missing (for example NA)`, 1},
		{"huge index", "1 999999999:1\n", `d.svm: line 1: index 999999999 is too large: at most 262144 features can be densified`, 1},
		{"invalid utf8", "1 1:1\n\xff 1:2\n", `d.svm: line 2: invalid UTF-8; save the file as UTF-8 (byte 1 of the line)`, 2},
		{"label inf", "inf 1:1\n", `d.svm: line 1, column 1 ("label"): "inf" is not a finite number; use a finite value or mark the cell missing (for example NA)`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in), "d.svm", ReadOptions{})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != tc.line {
				t.Errorf("ParseError line: %+v, want %d", pe, tc.line)
			}
		})
	}
}

func TestReadLIBSVMDenseLimit(t *testing.T) {
	defer func(c int) { maxDenseCells = c }(maxDenseCells)
	maxDenseCells = 10
	_, err := Read(strings.NewReader("1 4:1\n1 1:1\n1 1:1\n"), "d.svm", ReadOptions{})
	if err == nil || err.Error() != "d.svm: 3 rows × 4 features is too large to densify (limit 10 cells)" {
		t.Errorf("got %v", err)
	}
}
