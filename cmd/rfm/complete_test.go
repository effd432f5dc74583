package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/complete"
)

// completeFiles writes a small synthetic matrix (wide CSV with row ids,
// 40% of its cells missing) and a metadata table for its columns (numeric
// features and a categorical one) into dir.
func completeFiles(t *testing.T, dir string) (full *complete.Matrix) {
	t.Helper()
	s := complete.Synthetic{M: 24, N: 30, Rank: 3, MetaDim: 4, Noise: 0.05, MetaNoise: 0.1, Observed: 0.6, Seed: 3}
	y, meta, err := s.Generate()
	if err != nil {
		t.Fatal(err)
	}
	y.RowLabel = "gene"
	var b bytes.Buffer
	if err := complete.WriteCSV(&b, y); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "y.csv"), b.String())
	var m strings.Builder
	m.WriteString("drug,f0,f1,f2,f3,family\n")
	for j := 0; j < y.Cols; j++ {
		fmt.Fprintf(&m, "%s", y.ColIDs[j])
		for q := 0; q < 4; q++ {
			fmt.Fprintf(&m, ",%g", meta[j*4+q])
		}
		fmt.Fprintf(&m, ",fam%d\n", j%3)
	}
	m.WriteString("extra,1,2,3,4,fam0\n")
	writeFile(t, filepath.Join(dir, "meta.csv"), m.String())
	var l strings.Builder
	l.WriteString("gene,drug,value\n")
	for i := 0; i < y.Rows; i++ {
		for j := 0; j < y.Cols; j++ {
			if y.Observed[i*y.Cols+j] {
				fmt.Fprintf(&l, "%s,%s,%g\n", y.RowIDs[i], y.ColIDs[j], y.Values[i*y.Cols+j])
			}
		}
	}
	writeFile(t, filepath.Join(dir, "long.csv"), l.String())
	return y
}

func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

func TestCompleteEndToEnd(t *testing.T) {
	dir := t.TempDir()
	y := completeFiles(t, dir)
	r := rfmCmd(t, dir, "complete", "--data", "y.csv", "--meta", "meta.csv", "--prior-bias", "3", "--depth", "2", "--out", "out.csv", "--quiet")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	recs := readCSVFile(t, filepath.Join(dir, "out.csv"))
	if len(recs) != y.Rows+1 || len(recs[0]) != y.Cols+1 || recs[0][0] != "gene" || recs[0][1] != y.ColIDs[0] {
		t.Fatalf("output is %d lines, header %v", len(recs), recs[0])
	}
	for i := 0; i < y.Rows; i++ {
		if recs[i+1][0] != y.RowIDs[i] {
			t.Fatalf("line %d: row id %q, want %q", i+2, recs[i+1][0], y.RowIDs[i])
		}
		for j := 0; j < y.Cols; j++ {
			cell := recs[i+1][j+1]
			if cell == "" {
				t.Fatalf("cell (%d,%d) left empty", i, j)
			}
			if y.Observed[i*y.Cols+j] && cell != fmt.Sprint(y.Values[i*y.Cols+j]) {
				t.Fatalf("observed cell (%d,%d) changed: %s, was %v", i, j, cell, y.Values[i*y.Cols+j])
			}
		}
	}

	// Scores as JSON, with the baselines; long input gives the same scores.
	args := []string{"--meta", "meta.csv", "--prior-bias", "3", "--holdout", "0.2", "--holdout-columns", "4", "--baselines", "--svd-rank", "3", "--json"}
	r = rfmCmd(t, dir, append([]string{"complete", "--data", "y.csv"}, args...)...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	type holdout struct {
		Cells     int                        `json:"cells"`
		Columns   []string                   `json:"columns"`
		NTK       complete.Scores            `json:"ntk"`
		Baselines map[string]complete.Scores `json:"baselines"`
	}
	var rep struct {
		Holdout        *holdout `json:"holdout"`
		HoldoutColumns *holdout `json:"holdout_columns"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Holdout == nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if hc := rep.HoldoutColumns; hc == nil || len(hc.Columns) != 4 || hc.NTK.N != hc.Cells || !(hc.NTK.RMSE < hc.Baselines["row_mean"].RMSE) {
		t.Fatalf("holdout_columns: %s", r.stdout)
	}
	h := rep.Holdout
	if h.Cells < 50 || h.NTK.N != h.Cells || !(h.NTK.R2 > 0.5) || h.Baselines["row_mean"].N != h.Cells || h.Baselines["svd_rank3"].N != h.Cells {
		t.Errorf("holdout report: %+v", h)
	}
	r2 := rfmCmd(t, dir, append([]string{"complete", "--data", "long.csv", "--long", "--row-col", "gene", "--col-col", "drug"}, args...)...)
	if r2.code != 0 {
		t.Fatalf("long: exit %d: %s", r2.code, r2.stderr)
	}
	var rep2 struct {
		Holdout struct {
			NTK complete.Scores `json:"ntk"`
		} `json:"holdout"`
	}
	if err := json.Unmarshal([]byte(r2.stdout), &rep2); err != nil {
		t.Fatal(err)
	}
	// Long input orders rows and columns by first appearance: the same
	// matrix up to an order the holdout's seed sees differently, so compare
	// loosely — both must be a useful completion.
	if !(rep2.Holdout.NTK.R2 > 0.5) {
		t.Errorf("long input: holdout R² %v", rep2.Holdout.NTK.R2)
	}

	// A new column known only by its metadata, and the transpose.
	r = rfmCmd(t, dir, "complete", "--data", "y.csv", "--meta", "meta.csv", "--new-columns", "extra", "--out", "new.csv", "--quiet")
	if r.code != 0 {
		t.Fatalf("new column: exit %d: %s", r.code, r.stderr)
	}
	recs = readCSVFile(t, filepath.Join(dir, "new.csv"))
	if recs[0][len(recs[0])-1] != "extra" || recs[1][len(recs[1])-1] == "" {
		t.Errorf("new column not predicted: header %v, first row %v", recs[0], recs[1])
	}
	r = rfmCmd(t, dir, "complete", "--data", "y.csv", "--transpose", "--prior", "observed", "--out", "t.csv", "--quiet")
	if r.code != 0 {
		t.Fatalf("transpose: exit %d: %s", r.code, r.stderr)
	}
	if recs := readCSVFile(t, filepath.Join(dir, "t.csv")); len(recs) != y.Rows+1 || len(recs[0]) != y.Cols+1 {
		t.Errorf("transpose output is %d×%d", len(recs), len(recs[0]))
	}
}

func TestCompleteBadInput(t *testing.T) {
	dir := t.TempDir()
	completeFiles(t, dir)
	writeFile(t, filepath.Join(dir, "empty.csv"), "g,a,b\nx,NA,\ny,,NA\n")
	writeFile(t, filepath.Join(dir, "full.csv"), "g,a,b,c\nx,1,2,3\ny,4,5,7\nz,1,0,1\nw,2,2,1\n")
	writeFile(t, filepath.Join(dir, "ragged.csv"), "g,a,b\nx,1,2\ny,3\n")
	writeFile(t, filepath.Join(dir, "text.csv"), "g,a,b\nx,1,2\ny,3,high\n")
	writeFile(t, filepath.Join(dir, "inf.csv"), "g,a,b\nx,1,NA\ny,3,Inf\n")
	writeFile(t, filepath.Join(dir, "longnan.csv"), "row,column,value\nx,a,1\nx,b,NaN\n")
	writeFile(t, filepath.Join(dir, "longdup.csv"), "row,column,value\nx,a,1\ny,a,2\nx,a,3\n")
	writeFile(t, filepath.Join(dir, "meta2.csv"), "id,f\na,1\n")
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"nothing observed", []string{"--data", "empty.csv"}, 1, []string{"no entry", "observed"}},
		{"everything observed", []string{"--data", "full.csv"}, 1, []string{"nothing to complete"}},
		{"ragged", []string{"--data", "ragged.csv"}, 1, []string{"ragged.csv", "line 3"}},
		{"not a number", []string{"--data", "text.csv"}, 1, []string{"line 3", `"b"`, `"high"`}},
		{"inf", []string{"--data", "inf.csv"}, 1, []string{"line 3", `"b"`, "not a finite number"}},
		{"NaN value in long", []string{"--data", "longnan.csv", "--long"}, 1, []string{"line 3", `"value"`, "required"}},
		{"repeated entry", []string{"--data", "longdup.csv", "--long"}, 1, []string{"line 4", "repeats", "line 2"}},
		{"metadata missing an id", []string{"--data", "y.csv", "--meta", "meta2.csv"}, 1, []string{"meta2.csv", "no metadata row", `"c0"`}},
		{"column never seen", []string{"--data", "y.csv", "--meta", "meta.csv", "--new-columns", "zzz"}, 1, []string{`"zzz"`, "never seen"}},
		{"unknown prior", []string{"--data", "y.csv", "--prior", "magic"}, 2, []string{`"magic"`, "onehot"}},
		{"unknown activation", []string{"--data", "y.csv", "--activation", "gelu"}, 2, []string{`"gelu"`, "relu"}},
		{"metadata prior without table", []string{"--data", "y.csv", "--prior", "metadata"}, 2, []string{"--meta"}},
		{"depth", []string{"--data", "y.csv", "--depth", "7"}, 2, []string{"--depth 7"}},
		{"holdout share", []string{"--data", "y.csv", "--holdout", "1.5"}, 2, []string{"--holdout 1.5"}},
		{"memory", []string{"--data", "y.csv", "--memory-limit", "1K"}, 1, []string{"not enough memory", "needs"}},
	}
	for _, c := range cases {
		r := rfmCmd(t, dir, append(append([]string{"complete"}, c.args...), "--out", "bad.csv")...)
		if r.code != c.code {
			t.Errorf("%s: exit %d, want %d: %s", c.name, r.code, c.code, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%s: %q does not say %q", c.name, strings.TrimSpace(r.stderr), w)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "bad.csv")); err == nil {
			t.Fatalf("%s: a failed run wrote its output", c.name)
		}
	}
	// Everything observed, but a holdout asked: scored, with a note.
	r := rfmCmd(t, dir, "complete", "--data", "full.csv", "--holdout", "0.25", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to complete") || !strings.Contains(r.stdout, `"rmse"`) {
		t.Errorf("everything observed with a holdout: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
