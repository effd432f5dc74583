package deeplimit

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/dataset"
)

func readCSV(t *testing.T, text string) *dataset.Table {
	t.Helper()
	tab, err := dataset.ReadContext(context.Background(), strings.NewReader(text), "t.csv", dataset.ReadOptions{Format: "csv"})
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// FromTable puts a two-class table's rows on the positive orthant of the
// unit sphere, refuses three classes, and says how many rows a table too
// small for the split has.
func TestFromTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("a,b,y\n")
	for i := range 12 {
		fmt.Fprintf(&b, "%d,%d,%d\n", i, 12-i, i%2)
	}
	train, y, test, yTest, dim, err := FromTable(readCSV(t, b.String()), "t.csv", "y", 8, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 8 || test.N != 4 || len(y) != 8 || len(yTest) != 4 || dim != train.D-1 {
		t.Fatalf("train %d, test %d, dim %d", train.N, test.N, dim)
	}
	for i := range train.N {
		s := 0.0
		for _, v := range train.Row(i) {
			if v < 0 {
				t.Fatalf("row %d off the orthant: %v", i, train.Row(i))
			}
			s += v * v
		}
		if s < 1-1e-9 || s > 1+1e-9 {
			t.Fatalf("row %d has norm² %g", i, s)
		}
	}
	var few *TooFewRowsError
	if _, _, _, _, _, err := FromTable(readCSV(t, b.String()), "t.csv", "y", 10, 4, 1); !errors.As(err, &few) || few.Rows != 12 {
		t.Errorf("too few rows: %v", err)
	}
	three := strings.ReplaceAll(b.String(), "11,1,1", "11,1,2")
	if _, _, _, _, _, err := FromTable(readCSV(t, three), "t.csv", "y", 8, 4, 1); err == nil || !strings.Contains(err.Error(), "3 classes") {
		t.Errorf("three classes: %v", err)
	}
}

// The sweep table writes ∞ for the infinitely deep limit and says how
// K_n was solved.
func TestWriteSweep(t *testing.T) {
	var b strings.Builder
	WriteSweep(&b, []DepthRow{{Depth: 10, Majority: 0.5}, {Depth: 0, Identity: true}, {Depth: 100, Ridge: 1e-9}}, 2)
	got := b.String()
	for _, want := range []string{"singular α=2", "      10      50.0%", "       ∞", "identity to working precision", "solved with ridge 1e-09"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

// ParseDuals builds one dual per name and refuses an unknown activation;
// the help's list names every activation once.
func TestParseDuals(t *testing.T) {
	duals, err := ParseDuals([]string{"relu", "hermite:2"})
	if err != nil || len(duals) != 2 || duals[0].Act.Name != "relu" {
		t.Fatalf("%v, %v", duals, err)
	}
	if _, err := ParseDuals([]string{"relu", "frobnicate"}); err == nil {
		t.Error("an unknown activation accepted")
	}
	if l := ActivationList(); !strings.HasPrefix(l, "relu") && !strings.Contains(l, "relu, ") || strings.Contains(l, ":2") {
		t.Errorf("ActivationList = %q", l)
	}
}
