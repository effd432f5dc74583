package uci

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realDir is the shared benchmark folder, relative to this package.
const realDir = "../../shared/data/uci121"

func realLayout(t *testing.T) *Layout {
	t.Helper()
	l, err := FindLayout(realDir)
	if err != nil {
		t.Fatalf("the real benchmark folder is required for this test: %v", err)
	}
	if l.Results == "" {
		t.Fatalf("%s: %s not found", realDir, ResultsFile)
	}
	return l
}

// Arora's filter selects exactly 90 data sets; all 121 folders have
// metadata and 3 of them lack their _R.dat file.
func TestRealSubsets(t *testing.T) {
	l := realLayout(t)
	all, err := Discover(l.SetsDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 121 {
		t.Errorf("discovered %d data sets, want 121", len(all))
	}
	var skipped []string
	for _, e := range all {
		if e.Skip != "" {
			skipped = append(skipped, e.Meta.Name)
		}
	}
	if got := strings.Join(skipped, ","); got != "connect-4,miniboone,musk-2" {
		t.Errorf("skipped = %s, want connect-4,miniboone,musk-2", got)
	}
	a90, err := Select(all, SubsetArora90)
	if err != nil {
		t.Fatal(err)
	}
	if len(a90) != 90 {
		t.Errorf("arora90 selects %d data sets, want 90", len(a90))
	}
	for _, e := range a90 {
		if e.Skip != "" || e.Meta.N1 > 5000 || e.Meta.N2 != 0 {
			t.Errorf("arora90 holds %s (n1=%d, n2=%d, skip=%q)", e.Meta.Name, e.Meta.N1, e.Meta.N2, e.Skip)
		}
	}
	// Cross-check with the in_arora90 column of datasets.tsv.
	data, err := os.ReadFile(filepath.Join(realDir, "datasets.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Split(line, "\t")
		if i > 0 && len(f) > 9 && f[9] == "yes" {
			want[f[0]] = true
		}
	}
	if len(want) != 90 {
		t.Fatalf("datasets.tsv marks %d sets in_arora90", len(want))
	}
	for _, e := range a90 {
		if !want[e.Meta.Name] {
			t.Errorf("%s selected but not in_arora90 in datasets.tsv", e.Meta.Name)
		}
	}
}

// A few real files load with the sizes their metadata announce.
func TestRealLoad(t *testing.T) {
	l := realLayout(t)
	for _, name := range []string{"iris", "balance-scale", "abalone"} {
		m, err := ReadMeta(filepath.Join(l.SetsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Load(m)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.X) != s.N1*s.D || len(s.Labels) != s.N1 {
			t.Errorf("%s: %d values, %d labels for n=%d, d=%d", name, len(s.X), len(s.Labels), s.N1, s.D)
		}
		if len(s.Select.Train) != m.NTrain || len(s.Select.Test) != m.NVal {
			t.Errorf("%s: conxuntos sizes %d/%d, metadata %d/%d", name, len(s.Select.Train), len(s.Select.Test), m.NTrain, m.NVal)
		}
		if len(s.Folds) != 4 {
			t.Errorf("%s: %d folds", name, len(s.Folds))
		}
		for _, f := range s.Folds {
			if len(f.Train)+len(f.Test) != s.N1 {
				t.Errorf("%s: fold of %d+%d rows, n=%d", name, len(f.Train), len(f.Test), s.N1)
			}
		}
	}
}
