package memory

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/mnist"
)

func TestFromTable(t *testing.T) {
	csv := "t,seq,a,b\n2,x,1,2\n1,x,3,4\n1,y,5,6\n2,y,7,8\n"
	tab, err := dataset.Read(strings.NewReader(csv), "p.csv", dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Autoencode: the order column is still not a value.
	s, err := FromTable(tab, TableOptions{Order: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 4 || s.D != 2 || s.Sequential() || !slices.Equal(s.Example(1), []float64{3, 4}) {
		t.Errorf("autoencode set: N %d D %d sequential %v", s.N, s.D, s.Sequential())
	}
	s, err = FromTable(tab, TableOptions{Order: "t", Group: "seq", Sequence: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Cycles) != 2 || s.Next(1) != 0 {
		t.Errorf("sequences %v; next of row 2 is %d, want row 1", s.Cycles, s.Next(1))
	}
	s, err = FromTable(tab, TableOptions{Features: []string{"b"}})
	if err != nil || s.D != 1 {
		t.Fatalf("features b: %v", err)
	}
	for _, c := range []TableOptions{{Features: []string{"nope"}}, {Features: []string{"seq"}}, {Order: "seq", Sequence: true}} {
		if _, err := FromTable(tab, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestFromMNIST(t *testing.T) {
	train := &mnist.Set{N: 5, D: 1, H: 1, W: 1, X: []float64{0.1, 0.2, 0.3, 0.4, 0.5}, Y: []int{3, 1, 3, 1, 7}}
	d, err := FromMNIST(train, [][]int{{3, 1}, {3, 7}}, true)
	if err != nil {
		t.Fatal(err)
	}
	// The first unused image of each class, in turn.
	if !slices.Equal(d.Set.X, []float64{0.1, 0.2, 0.3, 0.5}) || !slices.Equal(d.Labels, []string{"3", "1", "3", "7"}) {
		t.Errorf("X %v labels %v", d.Set.X, d.Labels)
	}
	if len(d.Set.Cycles) != 2 || d.Height != 1 || d.Name != "mnist" {
		t.Errorf("cycles %v height %d", d.Set.Cycles, d.Height)
	}
	d, err = FromMNIST(train, [][]int{{3, 1, 7}}, false)
	if err != nil || d.Set.Sequential() || d.Set.N != 3 {
		t.Fatalf("autoencode: %v", err)
	}
	if _, err := FromMNIST(train, [][]int{{7, 7}}, false); err == nil || !strings.Contains(err.Error(), "only 1 images of digit 7") {
		t.Errorf("too few images: %v", err)
	}
}

func TestCountStoredAndStripStarts(t *testing.T) {
	s, err := NewSet([][]float64{{0, 0}, {1, 0}, {0, 1}, {5, 5}}, [][]int{{0, 1}, {2}, {3}})
	if err != nil {
		t.Fatal(err)
	}
	v := []Example{{Index: 0, Cycle: 0, Stored: true}, {Index: 1, Cycle: 0}, {Index: 2, Cycle: 1, Stored: true}, {Index: 3, Cycle: 2, Stored: true}}
	if st, ok := CountStored(s, v); st != 3 || ok != 2 {
		t.Errorf("CountStored = %d, %d; want 3, 2", st, ok)
	}
	// Limits near examples 1, 0 (same cycle), NaN, 3: one start per cycle
	// first (0 and 3), then the first others (1).
	nan := math.NaN()
	limits := []float64{1, 0.1, 0, 0.1, nan, nan, 5, 4.9}
	if got := StripStarts(s, limits, 3); !slices.Equal(got, []int{0, 3, 1}) {
		t.Errorf("StripStarts = %v, want [0 3 1]", got)
	}
}
