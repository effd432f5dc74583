package linalg

// TriSolve overwrites B (n×nrhs) by L⁻¹B, or by L⁻ᵀB with trans, for the
// lower-triangular L of Cholesky (its strict upper triangle is not read).
//
// A few right-hand sides at large n (the Nyström preconditioner's solves:
// m up to tens of thousands, one column per output) go through
// triSolveFew; the rest to the backend's trsm.
func TriSolve[T Float](trans bool, n, nrhs int, l []T, ldl int, b []T, ldb int) {
	if n == 0 || nrhs == 0 {
		return
	}
	if nrhs > triFewCols || n < triFewMin {
		trsm(trans, n, nrhs, l, ldl, b, ldb)
		return
	}
	triSolveFew(trans, n, nrhs, l, ldl, b, ldb)
}

// CholSolve overwrites B (n×nrhs) by (L·Lᵀ)⁻¹B, L from Cholesky.
func CholSolve[T Float](n, nrhs int, l []T, ldl int, b []T, ldb int) {
	TriSolve(false, n, nrhs, l, ldl, b, ldb)
	TriSolve(true, n, nrhs, l, ldl, b, ldb)
}

const (
	// triFewCols and triFewMin bound where triSolveFew replaces trsm.
	// With OpenBLAS 0.3.21, n = 10 000 (a factor of 400 MB): trsm took
	// 85–145 ms a solve for 1, 2 or 4 columns, about 4 GB/s of the factor;
	// triSolveFew 27–38 ms with blocks of 256 rows. At 16 columns 46–69 ms
	// against 98–104, at 32 columns 69–103 against 117–136 (its diagonal
	// blocks, solved in scalar Go, grow with the columns). With gonum
	// (pure Go): 35–71 ms against 200–227 for 1 or 4 columns, 157–178
	// against 327–338 at 16.
	triFewCols = 16
	triFewMin  = 1024
	// triBlock is triSolveFew's block of rows: the lower half of a
	// 256×256 diagonal block (256 KB in float64) stays in a core's
	// level-2 cache while its columns are solved one by one.
	triBlock = 256
)

// triSolveFew solves with the right-hand sides transposed (nrhs×n, each
// column made a contiguous row) by blocks of triBlock rows, so that the
// factor is read once, a block of whole rows at a time, by GEMMs that
// stream it: without trans, each block's right-hand sides first take the
// product of the solved part by the block's rows left of the diagonal
// (left-looking, X·Lᵀ: the block's rows are contiguous); with trans,
// blocks are solved from the bottom and each solved block updates the
// rest at once (right-looking, X·L over the block's rows). Only the
// diagonal blocks are solved element by element.
func triSolveFew[T Float](trans bool, n, nrhs int, l []T, ldl int, b []T, ldb int) {
	xt := make([]T, nrhs*n)
	Transpose(n, nrhs, b, ldb, xt, n)
	if !trans {
		for s := 0; s < n; s += triBlock {
			e := min(s+triBlock, n)
			if s > 0 {
				Gemm(false, true, nrhs, e-s, s, -1, xt, n, l[s*ldl:], ldl, 1, xt[s:], n)
			}
			for k := 0; k < nrhs; k++ {
				x := xt[k*n:]
				for i := s; i < e; i++ {
					row := l[i*ldl : i*ldl+i+1]
					v := x[i]
					for j := s; j < i; j++ {
						v -= row[j] * x[j]
					}
					x[i] = v / row[i]
				}
			}
		}
	} else {
		for e := n; e > 0; e -= triBlock {
			s := max(0, e-triBlock)
			for k := 0; k < nrhs; k++ {
				x := xt[k*n:]
				for i := e - 1; i >= s; i-- {
					row := l[i*ldl : i*ldl+i+1]
					x[i] /= row[i]
					v := x[i]
					for j := s; j < i; j++ {
						x[j] -= row[j] * v
					}
				}
			}
			if s > 0 {
				Gemm(false, false, nrhs, s, e-s, -1, xt[s:], n, l[s*ldl:], ldl, 1, xt, n)
			}
		}
	}
	Transpose(nrhs, n, xt, n, b, ldb)
}

// Transpose writes the transpose of a (rows×cols, leading dimension lda)
// to dst (cols×rows, leading dimension ldd).
func Transpose[T Float](rows, cols int, a []T, lda int, dst []T, ldd int) {
	for i := 0; i < rows; i++ {
		for k, v := range a[i*lda : i*lda+cols] {
			dst[k*ldd+i] = v
		}
	}
}
