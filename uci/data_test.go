package uci

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

const fixtureDir = "testdata/uci"

func TestReadMetaAndLoad(t *testing.T) {
	m, err := ReadMeta(filepath.Join(fixtureDir, "data", "tiny-b"))
	if err != nil {
		t.Fatal(err)
	}
	want := Meta{Name: "tiny-b", D: 3, Classes: 3, Fich1: "tiny-b_R.dat", N1: 30, Fich2: "tiny-b_test_R.dat", N2: 10, NTrain: 15, NVal: 15}
	got := *m
	got.Dir = ""
	if got != want {
		t.Fatalf("meta = %+v, want %+v", got, want)
	}
	if m.InArora90() {
		t.Error("tiny-b has a separate test file: not in Arora's 90")
	}
	s, err := Load(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.X) != 30*3 || len(s.Labels) != 30 {
		t.Fatalf("loaded %d values and %d labels", len(s.X), len(s.Labels))
	}
	// Row 1 of the file is "1 <3 features> 0"; labels cycle 0, 1, 2.
	for i, l := range s.Labels {
		if l != i%3 {
			t.Fatalf("label of row %d = %d, want %d", i, l, i%3)
		}
	}
	if len(s.Select.Train) != 15 || len(s.Select.Test) != 15 || len(s.Folds) != 4 {
		t.Fatalf("splits: %d/%d, %d folds", len(s.Select.Train), len(s.Select.Test), len(s.Folds))
	}
	for _, f := range s.Folds {
		if len(f.Train) != 23 || len(f.Test) != 7 {
			t.Errorf("fold sizes %d/%d, want 23/7", len(f.Train), len(f.Test))
		}
	}
}

func TestLoadMissingData(t *testing.T) {
	m, err := ReadMeta(filepath.Join(fixtureDir, "data", "nodata"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Load(m); !errors.Is(err, ErrNoData) {
		t.Fatalf("Load = %v, want ErrNoData", err)
	}
}

// Malformed files give errors that name the file and line.
func TestMalformed(t *testing.T) {
	cases := []struct {
		set  string
		want []string // substrings of the error
	}{
		{"badfloat", []string{"badfloat_R.dat:4:", `feature 1 = "x1.5"`}},
		{"badclass", []string{"badclass_R.dat:6:", `class "2"`, "[0, 2)"}},
		{"badfields", []string{"badfields_R.dat:3:", "2 fields, want 4"}},
		{"shortfile", []string{"shortfile_R.dat:", "7 data rows", "n_patrons1= 12"}},
		{"badindex", []string{"conxuntos.dat:2:", `index "12"`, "[0, 12)"}},
		{"kfoldshort", []string{"conxuntos_kfold.dat:", "5 line(s)", "want 8"}},
		{"overlap", []string{"conxuntos.dat:2:", "also in the training line 1"}},
		{"badmeta", []string{"badmeta.txt:2:", `n_clases= "two"`}},
		{"nokey", []string{"nokey.txt", "n_patrons1= is missing"}},
		{"noequals", []string{"noequals.txt:2:", `want "key= value"`}},
	}
	for _, c := range cases {
		t.Run(c.set, func(t *testing.T) {
			m, err := ReadMeta(filepath.Join("testdata", "bad", c.set))
			if err == nil {
				_, err = Load(m)
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestDiscoverAndSelect(t *testing.T) {
	l, err := FindLayout(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	if l.SetsDir != filepath.Join(fixtureDir, "data") || l.Results != filepath.Join(fixtureDir, ResultsFile) {
		t.Fatalf("layout = %+v", l)
	}
	// Giving the data folder itself finds the table one level up.
	l2, err := FindLayout(filepath.Join(fixtureDir, "data"))
	if err != nil || l2.SetsDir != l.SetsDir || l2.Results != l.Results {
		t.Fatalf("layout from data/ = %+v, %v", l2, err)
	}
	all, err := Discover(l.SetsDir)
	if err != nil {
		t.Fatal(err)
	}
	names := func(es []Entry) string {
		var s []string
		for _, e := range es {
			n := e.Meta.Name
			if e.Skip != "" {
				n += "(skip)"
			}
			s = append(s, n)
		}
		return strings.Join(s, ",")
	}
	if got := names(all); got != "nodata(skip),tiny-a,tiny-b" {
		t.Fatalf("discovered %s", got)
	}
	cases := []struct {
		subset, want, err string
	}{
		{SubsetAll, "nodata(skip),tiny-a,tiny-b", ""},
		{"", "nodata(skip),tiny-a,tiny-b", ""},
		{SubsetArora90, "nodata(skip),tiny-a", ""},
		{"tiny-b, tiny-a,tiny-b", "tiny-a,tiny-b", ""},
		{"tiny-a,nosuch", "", `unknown data set "nosuch"`},
		{" , ", "", "names no data set"},
	}
	for _, c := range cases {
		got, err := Select(all, c.subset)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Select(%q) error = %v, want %q", c.subset, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Select(%q): %v", c.subset, err)
			continue
		}
		if n := names(got); n != c.want {
			t.Errorf("Select(%q) = %s, want %s", c.subset, n, c.want)
		}
	}
	if _, err := Discover("testdata/bad"); err == nil || !strings.Contains(err.Error(), "badmeta.txt:2:") {
		t.Errorf("Discover over malformed metadata: %v", err)
	}
}

func TestAppendFields(t *testing.T) {
	cases := []struct{ in, want string }{
		{"1\t2.5\t-3\t0", "1|2.5|-3|0"},
		{"\tf1\tf2\tclase", "f1|f2|clase"},
		{"  a  b\r", "a|b"},
		{"", ""},
	}
	for _, c := range cases {
		if got := strings.Join(appendFields(nil, c.in), "|"); got != c.want {
			t.Errorf("appendFields(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
