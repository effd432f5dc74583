// Package solve fits kernel ridge regression exactly: α = (K + λI)⁻¹Y for
// all outputs at once, with one in-place Cholesky factorization of one
// triangle of the n×n kernel matrix.
//
// Memory is planned before anything large is allocated (Plan), the n×n
// buffer can be reused across fits (Workspace), and the factorization is
// interruptible through its context. float32 storage halves the memory and
// roughly halves the time; its solution is then polished by iterative
// refinement against float64 residuals.
//
// When K + λI is not numerically positive definite (a pivot fails, or a
// squared pivot is below 1e-13 × the diagonal, 1e-6 in float32: λ = 0 with
// duplicate rows, for instance) the solver adds a stated jitter δ·I, with δ
// growing from 1e-10 (float32: 1e-6) by factors of 100 up to 1e-2 times the
// largest diagonal entry of K, and reports the δ it used; past that it
// returns an error rather than a meaningless α (ErrNotPD). A float32 solve
// that fails so is redone in float64 when that matrix fits (Result.Float64).
// It never returns NaN or Inf.
//
// Beyond the exact limit, Nystrom fits f(x) = K(x, C)β on m centres C
// drawn from the rows (uniformly or by approximate leverage scores) by
// conjugate gradients with the Falkon preconditioner, forming K(X, C) a
// band of rows at a time on every product: memory O(n·d + m²), two m×m
// triangular factors being the large part (NystromBytes, planned before
// allocation). Its ridge λ multiplies n·K_mm: with every row a centre it
// is exact KRR with ridge λ·n.
//
// It knows nothing about RFM rounds or feature learning (the Nyström
// result only hands agop the predictor it fitted).
package solve
