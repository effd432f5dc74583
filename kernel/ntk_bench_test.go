package kernel

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkNTKSymmetric5000: the NTK training matrix (pure-Go element-wise
// pass, Depth arccos per entry) next to the Laplace one of the same size.
func BenchmarkNTKSymmetric5000(b *testing.B) {
	n, d := 5000, 100
	z := benchData(n, d)
	out := make([]float64, n*n)
	for _, s := range []Spec{DefaultSpec(), {Kind: NTK, Depth: 1}, {Kind: NTK, Depth: 5}} {
		b.Run(fmt.Sprint(s), func(b *testing.B) {
			for b.Loop() {
				if err := Symmetric(context.Background(), s, NewPoints(z, n, d), out, n); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNTKGradCoef: both gradient coefficient blocks (the AGOP's
// element-wise work) for 2048 evaluation rows against 5000 centres.
func BenchmarkNTKGradCoef(b *testing.B) {
	n, m, d := 5000, 2048, 100
	z := benchData(n, d)
	outA, outB := make([]float64, m*n), make([]float64, m*n)
	for _, s := range []Spec{DefaultSpec(), {Kind: NTK, Depth: 1}, {Kind: NTK, Depth: 5}} {
		b.Run(fmt.Sprint(s), func(b *testing.B) {
			for b.Loop() {
				CrossGradCoef(s, NewPoints(z, m, d), NewPoints(z, n, d), outA, outB, n)
			}
		})
	}
}
