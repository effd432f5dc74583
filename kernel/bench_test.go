package kernel

import (
	"context"
	"math/rand/v2"
	"strconv"
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

// touched allocates an output block and writes every page once, so that
// the first timed iteration measures the kernel, not the operating system
// mapping 3 GB of fresh pages.
func touched(n int) []float64 {
	out := make([]float64, n)
	for i := 0; i < n; i += 512 {
		out[i] = 1
	}
	return out
}

// laplace20000 is the data of the 20 000-row benchmarks: n, d = 100, the
// points and a touched n×n output block.
func laplace20000() (n, d int, z, out []float64) {
	n, d = 20000, 100
	return n, d, benchData(n, d), touched(n * n)
}

// BenchmarkLaplaceBlock20000 is the figure: a 20 000 × 20 000
// Laplace block with d = 100 in float64 (GEMM + fused element-wise pass).
func BenchmarkLaplaceBlock20000(b *testing.B) {
	n, d, z, out := laplace20000()
	s := DefaultSpec()
	for b.Loop() {
		Cross(s, NewPoints(z, n, d), NewPoints(z, n, d), out, n)
	}
}

// BenchmarkLaplaceSymmetric20000: the training matrix, lower triangle only.
func BenchmarkLaplaceSymmetric20000(b *testing.B) {
	n, d, z, out := laplace20000()
	s := DefaultSpec()
	for b.Loop() {
		if err := Symmetric(context.Background(), s, NewPoints(z, n, d), out, n); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLpSymmetric: a 3 000-row lp-laplace training matrix on 40
// features (a tuned UCI set's size) for the powers the search draws
// (computed with square roots) against p = 1.6 (with Pow).
func BenchmarkLpSymmetric(b *testing.B) {
	n, d := 3000, 40
	z, out := benchData(n, d), touched(n*n)
	for _, p := range []float64{1, 1.5, 0.5, 1.6} {
		b.Run("p="+strconv.FormatFloat(p, 'g', -1, 64), func(b *testing.B) {
			s := Spec{Kind: LpLaplace, Bandwidth: 2, Power: p, Exponent: min(p, 0.8)}
			for b.Loop() {
				if err := Symmetric(context.Background(), s, NewPoints(z, n, d), out, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkApplyBatch predicts 4 096 queries against 8 192 centres of 100
// features (one output) in prediction bands: "rowwise" is ApplyBatch's Gram
// product (tileOut.RowWise), "direct" the same bands with one GEMM a tile,
// the cost of predictions that do not depend on their batch.
func BenchmarkApplyBatch(b *testing.B) {
	const nq, nc, d = 4096, 8192, 100
	q, c := NewPoints(benchData(nq, d), nq, d), NewPoints(benchData(nc, d)[:nc*d], nc, d)
	alpha := benchData(nc, 1)
	s := DefaultSpec()
	for _, rowWise := range []bool{true, false} {
		name := map[bool]string{true: "rowwise", false: "direct"}[rowWise]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := apply(context.Background(), s, q, c, alpha, 1, 16, rowWise); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
