// Package synthset turns the synthetic tasks of package synth into
// rfm.Dataset values for tests. It is apart from testutil because it
// imports the rfm package, whose own tests use testutil.
package synthset

import (
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/synth"
)

// Regression is n rows of task in d inputs from seed, as a one-output
// regression set (Outputs left 0, which means 1); it fails the test if
// synth refuses the sizes.
func Regression(t testing.TB, task synth.Task, n, d int, seed uint64) *rfm.Dataset {
	t.Helper()
	s, err := synth.Generate(task, n, d, seed)
	if err != nil {
		t.Fatal(err)
	}
	return &rfm.Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y}
}
