package deeplimit

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The taxonomy prints each activation's case and the depth sweep (hermite:2
// is the 1-NN classifier at depth 200) and writes its JSON; the
// consistency run prints the Bayes error and writes its JSON and figure.
func TestRunTaxonomyAndConsistency(t *testing.T) {
	duals, err := ParseDuals([]string{"hermite:2", "cor1:2"})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	var logged []string
	dir := t.TempDir()
	r := &Run{Duals: duals, Text: &text, Out: dir, Command: "rfm deep-limit x", Seed: 1,
		Log: func(f string, a ...any) { logged = append(logged, f) }}
	data, err := SyntheticData(Task2D, "2d", 40, 30, 1)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := r.Taxonomy(context.Background(), data, []int{1, 200}, 0, "hermite:2_cor1:2")
	if err != nil || len(recs) != 2 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	for _, want := range []string{"synthetic Dirichlet task 2d (seed 1), 40 training and 30 test rows", "case 2, 1-NN", "case 1, singular kernel; α = 2", "identity to working precision"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, text.String())
		}
	}
	if !regexp.MustCompile(`(?m)^\s+200\s+\S+\s+100\.0%`).MatchString(text.String()) {
		t.Errorf("hermite:2 at L = 200 does not agree 100%% with 1-NN:\n%s", text.String())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "taxonomy-hermite-2_cor1-2.json")); err != nil || !strings.Contains(string(b), `"command": "rfm deep-limit x"`) {
		t.Errorf("taxonomy JSON: %v", err)
	}
	if len(logged) == 0 {
		t.Error("no progress logged")
	}
	text.Reset()
	r.Duals = duals[1:]
	rows, err := r.Consistency(context.Background(), Task2D, "2d", []int{20, 40}, 30, 50, 5000)
	if err != nil || len(rows) != 2 || !strings.Contains(text.String(), "Bayes error") {
		t.Fatalf("%d rows, %v:\n%s", len(rows), err, text.String())
	}
	for _, f := range []string{"consistency-2d.json", "consistency-2d.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// TableData reads a two-class table onto the orthant and says when it has
// too few rows.
func TestTableData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	os.WriteFile(path, []byte("a,b,label\n1,2,x\n0,3,y\n3,1,x\n2,0,y\n1,1,x\n"), 0o644)
	d, err := TableData(context.Background(), path, "", 3, 2, 1)
	if err != nil || d.Train.N != 3 || d.Test.N != 2 || d.Dim != 1 || !strings.Contains(d.Source, `(target "label", seed 1)`) {
		t.Fatalf("%+v %v", d, err)
	}
	if _, err := TableData(context.Background(), path, "", 4, 2, 1); err == nil || !strings.Contains(err.Error(), "--n 4 + --test 2 rows") {
		t.Errorf("too few rows: %v", err)
	}
}
