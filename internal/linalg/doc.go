// Package linalg is the only place in the project that knows which dense
// linear-algebra backend is in use and how the element-wise kernel passes are
// vectorized.
//
// Two backends are chosen at build time and expose the same functions:
//
//   - the default, pure Go, built on gonum (portable, no cgo);
//   - OpenBLAS and LAPACKE through cgo, selected with the build tag
//     "openblas" (go build -tags openblas); its element-wise passes are C
//     loops that the compiler vectorizes (AVX2 / AVX-512 clones picked at run
//     time).
//
// All matrices are dense, row-major, with an explicit leading dimension (the
// row stride), in float32 or float64. The package does no input validation
// beyond what is needed to avoid memory corruption: callers (kernel, solve,
// agop) own the shapes. It is not a general matrix library: it offers exactly
// the operations the kernel machines need (GEMM, SYRK, in-place Cholesky and
// the triangular solves that go with it, and the fused distance → kernel
// element-wise transforms).
package linalg
