package metrics

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func handNamedTable() *Table {
	return &Table{
		Datasets:    []string{"d1", "d2", "d3"},
		Classifiers: []string{"A", "B", "C", "D"},
		Acc:         handTable(),
	}
}

func TestSummarize(t *testing.T) {
	// Numbers from bench_test.go's hand-worked table.
	s, err := Summarize(handNamedTable(), SkipMissing)
	if err != nil {
		t.Fatal(err)
	}
	want := []Summary{
		{"A", 3, 200.0 / 3, 7.0 / 3, 100 * 2.8 / 3, 200.0 / 3, 200.0 / 3, 200.0 / 3},
		{"B", 2, 66, 7.0 / 3, 100 * (82.0/90 + 1) / 2, 100, 50, 80},
		{"C", 3, 69, 2, 100 * (82.0/90 + 2) / 3, 100, 200.0 / 3, 260.0 / 3},
		{"D", 2, 65, 10.0 / 3, 100 * (70.0/90 + 0.8) / 2, 0, 0, 0},
	}
	for j, w := range want {
		g := s[j]
		if g.Classifier != w.Classifier || g.Sets != w.Sets {
			t.Errorf("row %d = %s/%d sets, want %s/%d", j, g.Classifier, g.Sets, w.Classifier, w.Sets)
		}
		gv := []float64{g.Average, g.FriedmanRank, g.PMA, g.P90, g.P95, g.ADTM}
		wv := []float64{w.Average, w.FriedmanRank, w.PMA, w.P90, w.P95, w.ADTM}
		for m, name := range []string{"average", "friedman", "pma", "p90", "p95", "adtm"} {
			if !near(gv[m], wv[m], handTol) {
				t.Errorf("%s %s = %.12g, want %.12g", w.Classifier, name, gv[m], wv[m])
			}
		}
	}

	// Sorting: C has the best rank; A and B tie at 7/3 and A wins on
	// average accuracy (66.67 > 66); D is last.
	SortByFriedman(s)
	if got := names(s); !slices.Equal(got, []string{"C", "A", "B", "D"}) {
		t.Errorf("SortByFriedman order = %v", got)
	}
	SortByAverage(s)
	if got := names(s); !slices.Equal(got, []string{"C", "A", "B", "D"}) {
		t.Errorf("SortByAverage order = %v (averages 69, 66.7, 66, 65)", got)
	}
	// Average ties fall back to the Friedman rank, then the name.
	tie := []Summary{{Classifier: "z", Average: 1, FriedmanRank: 2}, {Classifier: "y", Average: 1, FriedmanRank: 2}, {Classifier: "x", Average: 1, FriedmanRank: 1}}
	SortByAverage(tie)
	if got := names(tie); !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Errorf("SortByAverage tie order = %v", got)
	}

	b, err := json.Marshal(s[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"classifier":"C"`, `"sets":3`, `"average_accuracy":69`, `"friedman_rank":2`, `"pma":`, `"p90":100`, `"p95":`, `"adtm":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}

	var out strings.Builder
	if err := WriteSummary(&out, s); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 || !strings.HasPrefix(strings.TrimSpace(lines[1]), "1  C  ") || !strings.Contains(lines[1], "69.00") {
		t.Errorf("WriteSummary:\n%s", out.String())
	}
}

func TestSummarizeErrors(t *testing.T) {
	tests := []struct {
		name string
		t    *Table
		want string
	}{
		{"classifier without results", &Table{Datasets: []string{"d"}, Classifiers: []string{"A", "B"}, Acc: [][]float64{{1, nan}}}, `classifier "B" has no results`},
		{"data set without results", &Table{Datasets: []string{"d", "e"}, Classifiers: []string{"A"}, Acc: [][]float64{{1}, {nan}}}, `data set "e" has no results`},
		{"shape", &Table{Datasets: []string{"d"}, Classifiers: []string{"A"}, Acc: [][]float64{{1, 2}}}, `data set "d" has 2 values for 1 classifiers`},
		{"rows", &Table{Datasets: []string{"d", "e"}, Classifiers: []string{"A"}, Acc: [][]float64{{1}}}, "1 rows of values for 2 data sets"},
		{"duplicate", &Table{Datasets: []string{"d", "d"}, Classifiers: []string{"A"}, Acc: [][]float64{{1}, {2}}}, `data set "d" appears twice`},
		{"bad value", &Table{Datasets: []string{"d"}, Classifiers: []string{"A"}, Acc: [][]float64{{-1}}}, `data set "d", classifier "A": accuracy -1`},
		{"empty", &Table{}, "0 data sets and 0 classifiers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Summarize(tc.t, SkipMissing); !errMatches(err, tc.want) {
				t.Errorf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}

func TestSubsetAndSelect(t *testing.T) {
	tb := handNamedTable()
	sub, err := tb.Subset([]string{"d3", "d1"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sub.Datasets, []string{"d3", "d1"}) || sub.Acc[0][0] != 50 || sub.Acc[1][1] != 82 {
		t.Errorf("Subset = %+v", sub)
	}
	// The subset is a copy: writing to it leaves the original alone.
	sub.Acc[1][0] = 0
	if tb.Acc[0][0] != 90 {
		t.Error("Subset shares rows with the original table")
	}
	if _, err := tb.Subset([]string{"d1", "nope"}); !errMatches(err, `data set "nope" is not in the table`) {
		t.Errorf("unknown: err = %v", err)
	}
	if _, err := tb.Subset([]string{"d1", "d1"}); !errMatches(err, `"d1" appears twice`) {
		t.Errorf("duplicate: err = %v", err)
	}

	sel, err := tb.SelectClassifiers([]string{"D", "A"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sel.Classifiers, []string{"D", "A"}) || sel.Acc[0][0] != 70 || sel.Acc[0][1] != 90 || !math.IsNaN(sel.Acc[2][0]) {
		t.Errorf("SelectClassifiers = %+v", sel)
	}
	if _, err := tb.SelectClassifiers([]string{"Z"}); !errMatches(err, `classifier "Z" is not in the table`) {
		t.Errorf("unknown: err = %v", err)
	}

	col, err := tb.Column("B")
	if err != nil || col[0] != 82 || !math.IsNaN(col[1]) {
		t.Errorf("Column(B) = %v, %v", col, err)
	}
	if _, err := tb.Column("Z"); err == nil {
		t.Error("Column(Z): no error")
	}
}

func TestAddClassifier(t *testing.T) {
	tb := handNamedTable()
	// Keep a view of the old first row to prove AddClassifier does not write
	// through shared memory.
	oldRow := tb.Acc[0]
	if err := tb.AddClassifier("RFM", map[string]float64{"d1": 95, "d3": 50}); err != nil {
		t.Fatal(err)
	}
	col, _ := tb.Column("RFM")
	if col[0] != 95 || !math.IsNaN(col[1]) || col[2] != 50 {
		t.Errorf("RFM column = %v, want [95 NaN 50]", col)
	}
	if len(oldRow) != 4 || len(tb.Acc[0]) != 5 {
		t.Errorf("row lengths: old view %d, new %d", len(oldRow), len(tb.Acc[0]))
	}
	// Friedman ranks with RFM (columns A B C D RFM):
	// d1 90 82 82 70 95 → A 2, B 3.5, C 3.5, D 5, RFM 1.
	// d2 60 -- 75 60 -- → B and RFM imputed with mean(60,75,60) = 65 →
	//    C 1, B/RFM 2.5, A/D 4.5.
	// d3 50 50 50 -- 50 → D imputed 50, five-way tie → 3 each.
	// RFM (1+2.5+3)/3 = 6.5/3; C (3.5+1+3)/3 = 7.5/3.
	ranks, err := FriedmanRanks(tb.Acc)
	if err != nil {
		t.Fatal(err)
	}
	if !near(ranks[4], 6.5/3, handTol) || !near(ranks[2], 7.5/3, handTol) {
		t.Errorf("ranks with RFM = %v", ranks)
	}

	errCases := []struct {
		name string
		add  string
		acc  map[string]float64
		want string
	}{
		{"duplicate name", "A", map[string]float64{"d1": 1}, `"A" is already in the table`},
		{"unknown data set", "X", map[string]float64{"d1": 1, "d9": 2}, `data set "d9" is not in the table`},
		{"negative", "X", map[string]float64{"d2": -3}, `data set "d2": accuracy -3`},
		{"empty name", "", nil, "empty name"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tb.Classifiers)
			if err := tb.AddClassifier(tc.add, tc.acc); !errMatches(err, tc.want) {
				t.Errorf("err = %v, want containing %q", err, tc.want)
			}
			if len(tb.Classifiers) != before || len(tb.Acc[0]) != before {
				t.Error("failed AddClassifier changed the table")
			}
		})
	}
}

func names(s []Summary) []string {
	out := make([]string, len(s))
	for i, r := range s {
		out[i] = r.Classifier
	}
	return out
}
