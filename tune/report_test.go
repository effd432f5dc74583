package tune

import (
	"strings"
	"testing"

	"github.com/rfmkit/rfm/ensemble"
)

// The ensemble lines of tune's text: the members kept, with the mean's
// validation; a short ensemble; none.
func TestEnsembleText(t *testing.T) {
	cases := []struct {
		out  Report
		want []string
	}{
		{Report{Members: []int{4, 1, 7}, Asked: 3, Validation: &ensemble.Validation{Rows: 300, Folds: true, Accuracy: 0.9, BestAccuracy: 0.91, Floor: 0.905}},
			[]string{"Ensemble: the mean of trials 4, 1, 7 (", "Ensemble on the 300 out-of-fold rows: 90.00% right", "the best alone 91.00%", "the plain kernel 90.50%"}},
		{Report{Members: []int{4, 1}, Asked: 3}, []string{"the mean of trials 4, 1: 2 of the 3 asked"}},
		{Report{Asked: 3}, []string{"only the best trial reached the top rung"}},
	}
	for i, c := range cases {
		var b strings.Builder
		c.out.WriteEnsembleText(&b)
		for _, w := range c.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("case %d lacks %q:\n%s", i, w, b.String())
			}
		}
	}
	var b strings.Builder
	(&Report{Asked: 1}).WriteEnsembleText(&b)
	if b.Len() != 0 {
		t.Errorf("--ensemble 1 printed %q", b.String())
	}
}
