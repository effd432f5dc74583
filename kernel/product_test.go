package kernel

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/internal/testutil"
)

// denseEntries is E(Q, C) computed whole with the parallel block passes,
// the reference for Product's tiled, fused computation.
func denseEntries(s Spec, e Entries, q []float64, nq int, c []float64, nc, d int) (a, b []float64) {
	a = make([]float64, nq*nc)
	switch e {
	case Values:
		Cross(s, NewPoints(q, nq, d), NewPoints(c, nc, d), a, nc)
	default:
		b = make([]float64, nq*nc)
		CrossGradCoef(s, NewPoints(q, nq, d), NewPoints(c, nc, d), a, b, nc)
	}
	return a, b
}

// Product against E·R formed densely, with tiles, bands and R chunks forced
// small so that every edge is crossed: ragged last band and tile, R chunks
// that straddle the A/B split, generated (not stored) R, 1 and 2 threads.
func TestProductMatchesDense(t *testing.T) {
	defer func(r, c, b int) { blockRows, blockCols, rhsBytes = r, c, b }(blockRows, blockCols, rhsBytes)
	defer linalg.SetThreads(linalg.Threads())
	blockRows, blockCols = 7, 16
	rhsBytes = 8 * 16 * 3 // 3 columns of R per chunk
	r := rand.New(rand.NewPCG(11, 12))
	nq, nc, d, w, split := 30, 53, 4, 8, 5
	q, c, rm := testutil.Randn(r, nq*d), testutil.Randn(r, nc*d), testutil.Randn(r, nc*w)
	specs := []Spec{DefaultSpec(), {Kind: Gaussian, Bandwidth: 2}, {Kind: GenLaplace, Bandwidth: 3, Exponent: 1.5}, {Kind: NTK, Depth: 2}}
	generated := RHS[float64]{Gen: func(c0, c1, j0, j1 int, dst []float64) {
		ld := j1 - j0
		for i := c0; i < c1; i++ {
			copy(dst[(i-c0)*ld:(i-c0+1)*ld], rm[i*w+j0:i*w+j1])
		}
	}}
	for _, threads := range []int{1, 2} {
		linalg.SetThreads(threads)
		for _, s := range specs {
			for _, e := range []Entries{Values, GradA, GradAB} {
				for ri, rhs := range []RHS[float64]{Stored(rm), generated} {
					name := fmt.Sprintf("threads=%d/%s/entries=%d/rhs=%d", threads, s, e, ri)
					a, b := denseEntries(s, e, q, nq, c, nc, d)
					want := make([]float64, nq*w)
					for i := 0; i < nq; i++ {
						for j := 0; j < w; j++ {
							m := a
							if e == GradAB && j >= split {
								m = b
							}
							for k := 0; k < nc; k++ {
								want[i*w+j] += m[i*nc+k] * rm[k*w+j]
							}
						}
					}
					got := make([]float64, nq*w)
					err := Product(context.Background(), s, e, NewPoints(q, nq, d), NewPoints(c, nc, d), rhs, w, split, got)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					for i := range want {
						// Sums of 53 terms of size ≤ ~3 in a different order: 1e-12.
						if math.Abs(got[i]-want[i]) > 1e-12*(1+math.Abs(want[i])) {
							t.Fatalf("%s: entry %d = %v, want %v", name, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// A cancelled context stops Product before any band runs.
func TestProductCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := rand.New(rand.NewPCG(1, 1))
	q := testutil.Randn(r, 40)
	out := make([]float64, 10)
	p := NewPoints(q, 10, 4)
	err := Product(ctx, DefaultSpec(), Values, p, p, Stored(testutil.Randn(r, 10)), 1, 0, out)
	if err != context.Canceled {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// ApplyBatch gives a query row the same bits whatever its place in the
// batch: alone (padded with zero rows to a band) or among others, at
// widths and depths where OpenBLAS's query-side Gram product rounds a row
// by its place in the band on some CPUs (300 centres of 10 features on an
// AVX-512 EPYC, and more on an AVX2 one: see tileOut.RowWise).
func TestApplyBatchRowsIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	b := BatchRows()
	ctx := context.Background()
	for _, nc := range []int{300, 700, 1024, 1500} {
		for _, d := range []int{2, 10, 50} {
			nq := 3 * b
			q, c, alpha := testutil.Randn(r, nq*d), testutil.Randn(r, nc*d), testutil.Randn(r, nc*2)
			s := Spec{Kind: Laplace, Bandwidth: float64(d)}
			cp := NewPoints(c, nc, d)
			all, err := ApplyBatch(ctx, s, NewPoints(q, nq, d), cp, alpha, 2)
			if err != nil {
				t.Fatal(err)
			}
			for i := range nq {
				one := make([]float64, b*d)
				copy(one, q[i*d:i*d+d])
				got, err := ApplyBatch(ctx, s, NewPoints(one, b, d), cp, alpha, 2)
				if err != nil {
					t.Fatal(err)
				}
				if got[0] != all[2*i] || got[1] != all[2*i+1] {
					t.Fatalf("%d centres, %d features: row %d alone %v, in the batch %v", nc, d, i, got[:2], all[2*i:2*i+2])
				}
			}
		}
	}
}
