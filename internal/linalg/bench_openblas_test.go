//go:build openblas

package linalg

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

func benchSPD(n int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	d := 50
	x := testutil.Randn(r, n*d)
	a := make([]float64, n*n)
	SyrkLower(n, d, 1.0/float64(d), x, d, 0, a, n)
	for i := 0; i < n; i++ {
		a[i*n+i] += 1
	}
	return a
}

// BenchmarkCholeskyBlocked8000 vs BenchmarkCholeskyLAPACK8000: the cost of
// making the factorization interruptible.
func BenchmarkCholeskyBlocked8000(b *testing.B) {
	a0 := benchSPD(8000)
	a := make([]float64, len(a0))
	for b.Loop() {
		copy(a, a0)
		if bad, _ := CholeskyCtx(context.Background(), 8000, a, 8000); bad >= 0 {
			b.Fatal("not PD")
		}
	}
}

func BenchmarkCholeskyLAPACK8000(b *testing.B) {
	a0 := benchSPD(8000)
	a := make([]float64, len(a0))
	for b.Loop() {
		copy(a, a0)
		if bad := lapackCholesky(8000, a, 8000); bad >= 0 {
			b.Fatal("not PD")
		}
	}
}
