package nn

import (
	"slices"
	"testing"
)

// Widths and initialization scales parse from flag text; one scale is
// repeated for every layer; nonsense is refused.
func TestParseWidthsAndInitScale(t *testing.T) {
	if w, err := ParseWidths("256, 128"); err != nil || !slices.Equal(w, []int{256, 128}) {
		t.Errorf("ParseWidths = %v, %v", w, err)
	}
	if s, err := ParseInitScale("0.5", 2); err != nil || !slices.Equal(s, []float64{0.5, 0.5, 0.5}) {
		t.Errorf("ParseInitScale one = %v, %v", s, err)
	}
	if s, err := ParseInitScale("0.1,1,1", 2); err != nil || !slices.Equal(s, []float64{0.1, 1, 1}) {
		t.Errorf("ParseInitScale list = %v, %v", s, err)
	}
	for _, bad := range []string{"", "0", "256,x", "-3"} {
		if _, err := ParseWidths(bad); err == nil {
			t.Errorf("ParseWidths(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"0", "1,inf", "NaN", "-1"} {
		if _, err := ParseInitScale(bad, 1); err == nil {
			t.Errorf("ParseInitScale(%q) accepted", bad)
		}
	}
}
