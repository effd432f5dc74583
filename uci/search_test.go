package uci

import "testing"

// The tuned protocol's search design: folds under 1 000 rows, a holdout
// above, and a capped top rung only where the holdout's training part
// would pass searchMaxRows (none of Arora's 90 sets).
func TestSearchDesign(t *testing.T) {
	for _, c := range []struct {
		n    int
		want design
	}{
		{999, design{folds: 4, minRows: 100}},
		{1000, design{minRows: 200, maxRows: searchMaxRows}},
		{20000, design{minRows: 200, maxRows: searchMaxRows}},
	} {
		if got := searchDesign(c.n); got != c.want {
			t.Errorf("searchDesign(%d) = %+v, want %+v", c.n, got, c.want)
		}
	}
}
