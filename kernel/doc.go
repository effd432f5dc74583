// Package kernel computes kernel matrices with a learned Mahalanobis metric.
//
// A kernel here is K_M(x, z) = k(S x, S z) with S = M^{1/2}: the metric M is
// applied once as a feature map (FeatureMap.Map, giving Points) and every block after that is a
// Euclidean computation on mapped rows, through the GEMM expansion
// ‖a−b‖² = ‖a‖² + ‖b‖² − 2aᵀb followed by a fused, vectorized element-wise
// pass. Symmetric training blocks are computed once (lower triangle).
//
// The kernels are the radial family φ(‖x−z‖²) — Laplace, generalized Laplace
// (exponent q in (0, 2]) and Gaussian — and the package also gives, for the
// AGOP, the coefficients of their gradients: ∇ₓK(x, z) = a·M(z − x) with
// a = −2φ′(s). The ReLU NTK and NNGP kernels of depth 1..5 (ntk.go) are
// dot-product kernels, evaluated from the same inner-product blocks; their
// gradients need two coefficients, ∇K = A·z + B·x (CrossGradCoef).
//
// It does not solve systems (package solve), compute the AGOP (package agop)
// or know about files.
package kernel
