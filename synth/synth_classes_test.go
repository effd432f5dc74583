package synth

import (
	"slices"
	"testing"
)

func TestClasses(t *testing.T) {
	got := Classes([]float64{0.5, -0.5, 0.01, -0.01, 0.02, -0.03}, 0.02)
	if want := []int{2, 1, 0, 0, 0, 1}; !slices.Equal(got, want) {
		t.Fatalf("Classes: %v, want %v", got, want)
	}
}
