package kernel

import (
	"context"
	"math/rand/v2"
	"testing"
)

func benchData(n, d int) []float64 {
	r := rand.New(rand.NewPCG(1, 2))
	z := make([]float64, n*d)
	for i := range z {
		z[i] = r.NormFloat64() * 0.3
	}
	return z
}

// BenchmarkLaplaceBlock20000 is the figure: a 20 000 × 20 000
// Laplace block with d = 100 in float64 (GEMM + fused element-wise pass).
func BenchmarkLaplaceBlock20000(b *testing.B) {
	n, d := 20000, 100
	z := benchData(n, d)
	norms := Norms(z, n, d)
	out := make([]float64, n*n)
	s := DefaultSpec()
	for b.Loop() {
		Cross(s, z, n, norms, z, n, norms, d, out, n)
	}
}

// BenchmarkLaplaceSymmetric20000: the training matrix, lower triangle only.
func BenchmarkLaplaceSymmetric20000(b *testing.B) {
	n, d := 20000, 100
	z := benchData(n, d)
	norms := Norms(z, n, d)
	out := make([]float64, n*n)
	s := DefaultSpec()
	for b.Loop() {
		if err := Symmetric(context.Background(), s, z, n, d, norms, out, n); err != nil {
			b.Fatal(err)
		}
	}
}
