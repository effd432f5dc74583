package nfa

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/dataset"
)

// FromTable holds out a seeded fifth of the rows, one-hot encodes a
// classification target, and refuses a table too small to split.
func TestFromTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("x1,x2,colour,label\n")
	for i := range 20 {
		fmt.Fprintf(&b, "%d,%g,%s,%s\n", i, float64(i)/3, []string{"red", "blue"}[i%2], []string{"a", "b", "c"}[i%3])
	}
	tab, err := dataset.ReadContext(context.Background(), strings.NewReader(b.String()), "t.csv", dataset.ReadOptions{Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	tr, te, classes, err := FromTable(tab, "t.csv", "label", 1)
	if err != nil {
		t.Fatal(err)
	}
	if tr.N != 16 || te.N != 4 || classes != 3 || tr.K != 3 || len(tr.Y) != 16*3 || tr.D != te.D || tr.D < 3 {
		t.Fatalf("train %d×%d (K %d), test %d, classes %d", tr.N, tr.D, tr.K, te.N, classes)
	}
	again, _, _, _ := FromTable(tab, "t.csv", "label", 1)
	other, _, _, _ := FromTable(tab, "t.csv", "label", 2)
	if fmt.Sprint(again.X) != fmt.Sprint(tr.X) || fmt.Sprint(other.X) == fmt.Sprint(tr.X) {
		t.Error("the split is not a function of the seed")
	}
	small, err := tab.SelectRows([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := FromTable(small, "t.csv", "label", 1); err == nil || !strings.Contains(err.Error(), "t.csv: 2 rows are too few") {
		t.Errorf("two rows: %v", err)
	}
}

// The default sweep is the paper's size; CheckData refuses a balance whose
// dataset cannot be drawn before any measurement.
func TestReversingDefaultsAndCheck(t *testing.T) {
	o := DefaultReversingOptions()
	if o.N != 1024 || o.D != 1024 || o.Width != 1024 || o.Eps1 == 0 || o.Eps2 == 0 {
		t.Fatalf("defaults %+v", o)
	}
	o.Balances = []float64{0.5, 1}
	if err := o.CheckData(); err != nil {
		t.Errorf("valid balances refused: %v", err)
	}
	o.Balances = []float64{0.5, 1.5}
	if err := o.CheckData(); err == nil {
		t.Error("balance 1.5 accepted")
	}
}
