package linalg

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRadialEval measures the element-wise Laplace pass alone on a
// 2000×20000 block (the pass the issue wants cheaper than its GEMM).
func BenchmarkRadialEval(b *testing.B) {
	rows, cols := 2000, 20000
	r := rand.New(rand.NewPCG(1, 1))
	g := make([]float64, rows*cols)
	for i := range g {
		g[i] = r.Float64()
	}
	na, nb := make([]float64, rows), make([]float64, cols)
	for i := range na {
		na[i] = 3
	}
	for i := range nb {
		nb[i] = 3
	}
	work := make([]float64, len(g))
	b.SetBytes(int64(8 * len(g)))
	for b.Loop() {
		copy(work, g)
		RadialEval(Block[float64]{G: work, Rows: rows, Cols: cols, LD: cols, NA: na, NB: nb}, RadialOp{C: 0.1, P: 0.5})
	}
}
