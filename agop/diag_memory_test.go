package agop

import (
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
)

// A diagonal AGOP through the Gram form allocates no d×d matrix: with many
// features (d = 100 000 in the issue) one would not fit in memory.
func TestDiagGramAllocatesNoSquare(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n, d, c := 20, 3000, 6
	p := identityPredictor(t, r, n, d, c)
	eval := allRows(n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Compute(context.Background(), p, eval, Options{Diag: true, Form: FormGram}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	square := uint64(d * d * 8)
	if got := after.TotalAlloc - before.TotalAlloc; got >= square {
		t.Errorf("a diagonal AGOP allocated %d bytes, at least a %d×%d matrix (%d)", got, d, d, square)
	}
}
