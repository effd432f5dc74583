package scale

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// ParseLists fills the options from the flags' lists and names the flag
// at fault.
func TestParseLists(t *testing.T) {
	o := Options{ExactRows: 100}
	if err := o.ParseLists("synth,a9a", "exact,tree", "100, 2000", "90s"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(o.Sets, []string{"synth", "a9a"}) || !slices.Equal(o.Methods, []string{"exact", "tree"}) || !slices.Equal(o.Sizes, []int{100, 2000}) || o.TuneTime != 90*time.Second {
		t.Errorf("%+v", o)
	}
	for _, c := range [][5]string{
		{"100", "synth", "exact", "99", `--sizes "99"`},
		{"99", "synth", "exact", "100", "--exact-rows 99"},
		{"100", "mnist", "exact", "100", `unknown set "mnist"`},
		{"100", "synth", "svm", "100", `unknown method "svm"`},
	} {
		o := Options{ExactRows: 100}
		if c[0] == "99" {
			o.ExactRows = 99
		}
		if err := o.ParseLists(c[1], c[2], c[3], "1m"); err == nil || !strings.Contains(err.Error(), c[4]) {
			t.Errorf("%v: %v", c, err)
		}
	}
	if err := (&Options{ExactRows: 100}).ParseLists("synth", "exact", "100", "0s"); err == nil || !strings.Contains(err.Error(), "--tune-time") {
		t.Errorf("tune time 0: %v", err)
	}
}
