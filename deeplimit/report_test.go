package deeplimit

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestSplitOrthant(t *testing.T) {
	const n, d = 10, 3
	all := Points{X: make([]float64, n*d), N: n, D: d}
	labels := make([]int, n)
	for i := range n {
		for j := range d {
			all.X[i*d+j] = math.Sin(float64(3*i + 7*j + 1))
		}
		labels[i] = i % 2
	}
	train, y, test, yTest, err := SplitOrthant(all, labels, 6, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 6 || test.N != 3 || len(y) != 6 || len(yTest) != 3 || train.D != d {
		t.Fatalf("sizes %d %d %d %d", train.N, test.N, len(y), len(yTest))
	}
	if err := CheckOrthant(train); err != nil {
		t.Errorf("training rows off the orthant: %v", err)
	}
	if err := CheckOrthant(test); err != nil {
		t.Errorf("test rows off the orthant: %v", err)
	}
	for _, v := range append(slices.Clone(y), yTest...) {
		if v != 1 && v != -1 {
			t.Fatalf("label %v, want ±1", v)
		}
	}
	// Seeded: the same seed gives the same split, another a different one.
	train2, _, _, _, _ := SplitOrthant(all, labels, 6, 3, 5)
	train3, _, _, _, _ := SplitOrthant(all, labels, 6, 3, 6)
	if !slices.Equal(train.X, train2.X) || slices.Equal(train.X, train3.X) {
		t.Error("the split does not follow the seed")
	}
	if _, _, _, _, err := SplitOrthant(all, labels, 8, 3, 5); err == nil {
		t.Error("more rows asked than given was accepted")
	}
	if _, _, _, _, err := SplitOrthant(all, labels[:4], 2, 1, 5); err == nil {
		t.Error("a label count mismatch was accepted")
	}
}

func TestTaxonomyRecordAndColumns(t *testing.T) {
	relu, err := ParseActivation("relu")
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDual(relu)
	if err != nil {
		t.Fatal(err)
	}
	rows := []DepthRow{{Depth: 1, Majority: 0.5, Singular: math.NaN()}, {Depth: 2, Singular: 0.75}}
	rec := NewTaxonomyRecord(d, 4, rows)
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatalf("NaN must not reach JSON: %v", err)
	}
	if rec.Rows[0].Singular != nil || rec.Rows[1].Singular == nil || *rec.Rows[1].Singular != 0.75 || rec.RefAlpha != 4 {
		t.Errorf("record %s", b)
	}
	if got := d.ReferenceAlpha(3, 9); got != 3 {
		t.Errorf("given α: %v", got)
	}
	want := d.Alpha
	if math.IsNaN(want) {
		want = 9
	}
	if got := d.ReferenceAlpha(0, 9); got != want {
		t.Errorf("default α: %v, want %v", got, want)
	}
	cols := ConsistencyColumns([]*Dual{d})
	if cols[0] != "relu" || !strings.HasSuffix(strings.Join(cols, ","), "1-NN,hilbert,majority,bayes-classifier") {
		t.Errorf("columns %v", cols)
	}
}
