package complete

import (
	"context"
	"fmt"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
)

// The baselines the NTK completion is measured against.

// rowMeans returns each row's observed mean (0 for a row without data) and
// the global observed mean.
func rowMeans(y *Matrix) ([]float64, float64) {
	m, n := y.Rows, y.Cols
	means := make([]float64, m)
	var all float64
	var count int
	for i := 0; i < m; i++ {
		var s float64
		var c int
		for j := 0; j < n; j++ {
			if y.Observed[i*n+j] {
				s += y.Values[i*n+j]
				c++
			}
		}
		all += s
		count += c
		if c > 0 {
			means[i] = s / float64(c)
		}
	}
	if count > 0 {
		all /= float64(count)
	}
	return means, all
}

// RowMean fills every missing cell with its row's observed mean (the
// "mean over cell type" baseline when rows are the genes of one cell type
// and columns its drugs).
func RowMean(y *Matrix) *Matrix {
	means, _ := rowMeans(y)
	out := filled(y)
	for k, o := range y.Observed {
		if !o {
			out.Values[k] = means[k/y.Cols]
		}
	}
	return out
}

// ColumnMean fills every missing cell with its column's observed mean, or
// the global mean for a column without data.
func ColumnMean(y *Matrix) *Matrix {
	t := y.Transpose()
	means, all := rowMeans(t)
	out := filled(y)
	for k, o := range y.Observed {
		if !o {
			j := k % y.Cols
			v := all
			for i := 0; i < y.Rows; i++ {
				if y.Observed[i*y.Cols+j] {
					v = means[j]
					break
				}
			}
			out.Values[k] = v
		}
	}
	return out
}

func filled(y *Matrix) *Matrix {
	out := y.Clone()
	for k := range out.Observed {
		out.Observed[k] = true
	}
	return out
}

// SVDImpute is iterative hard-impute: the row means are removed, the
// missing cells start at 0, and the rank-k truncated SVD of the filled
// residual replaces the missing cells until they change by less than tol
// (relative) or maxIter rounds pass; the row means are added back.
// Observed cells are kept. The top-k left singular subspace is tracked by
// one warm-started subspace iteration per round (it starts from the exact
// one of the first round), so a round costs O(m·n·k), not an SVD. It
// returns the completion and the rounds run.
func SVDImpute(ctx context.Context, y *Matrix, rank, maxIter int, tol float64) (*Matrix, int, error) {
	m, n := y.Rows, y.Cols
	if rank < 1 || rank > min(m, n) {
		return nil, 0, fmt.Errorf("svd rank %d: must be 1..%d", rank, min(m, n))
	}
	means, _ := rowMeans(y)
	a := make([]float64, m*n)
	for k, o := range y.Observed {
		if o {
			a[k] = y.Values[k] - means[k/n]
		}
	}
	// Start: the exact top-k eigenvectors of A·Aᵀ.
	gram := make([]float64, m*m)
	linalg.Gemm(false, true, m, m, n, 1, a, n, a, n, 0, gram, m)
	_, vecs, ok := linalg.EigSym(m, gram)
	if !ok {
		return nil, 0, fmt.Errorf("svd impute: the eigensolver did not converge")
	}
	q := make([]float64, m*rank)
	for r := 0; r < m; r++ {
		for c := 0; c < rank; c++ {
			q[r*rank+c] = vecs[r*m+m-1-c]
		}
	}
	gram = nil
	low := make([]float64, m*n)
	b := make([]float64, n*rank)
	iter := 0
	for iter < maxIter {
		if err := ctx.Err(); err != nil {
			return nil, iter, err
		}
		iter++
		if iter > 1 { // one subspace iteration: Q ← orth(A·Aᵀ·Q)
			linalg.Gemm(true, false, n, rank, m, 1, a, n, q, rank, 0, b, rank)
			linalg.Gemm(false, false, m, rank, n, 1, a, n, b, rank, 0, q, rank)
			orthonormalize(q, m, rank)
		}
		linalg.Gemm(true, false, n, rank, m, 1, a, n, q, rank, 0, b, rank) // B = AᵀQ
		linalg.Gemm(false, true, m, n, rank, 1, q, rank, b, rank, 0, low, n)
		var change, size float64
		for k, o := range y.Observed {
			if !o {
				d := low[k] - a[k]
				change += d * d
				size += low[k] * low[k]
				a[k] = low[k]
			}
		}
		if change <= tol*tol*max(size, 1e-300) {
			break
		}
	}
	out := filled(y)
	for k, o := range y.Observed {
		if !o {
			out.Values[k] = a[k] + means[k/n]
		}
	}
	for _, v := range out.Values {
		if math.IsNaN(v) {
			return nil, iter, fmt.Errorf("svd impute produced NaN")
		}
	}
	return out, iter, nil
}

// orthonormalize runs modified Gram–Schmidt on the k columns of q (m×k,
// row-major); a column that vanishes is left at zero.
func orthonormalize(q []float64, m, k int) {
	for c := 0; c < k; c++ {
		for p := 0; p < c; p++ {
			var d float64
			for r := 0; r < m; r++ {
				d += q[r*k+p] * q[r*k+c]
			}
			for r := 0; r < m; r++ {
				q[r*k+c] -= d * q[r*k+p]
			}
		}
		var s float64
		for r := 0; r < m; r++ {
			s += q[r*k+c] * q[r*k+c]
		}
		if s > 0 {
			inv := 1 / math.Sqrt(s)
			for r := 0; r < m; r++ {
				q[r*k+c] *= inv
			}
		}
	}
}
