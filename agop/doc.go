// Package agop computes gradients of a fitted kernel predictor
// f(x) = Σ_j α_j K_M(x, x_j) and their average gradient outer product
//
//	AGOP = (1/|S|) Σ_{x∈S} Σ_k ∇f_k(x) ∇f_k(x)ᵀ,
//
// the update that makes a kernel machine learn features.
//
// With the metric applied as a feature map z = S x (S = M^{1/2}), the
// gradient of a radial kernel predictor is ∇f_k(x_i) = S·g_ik with
//
//	g_ik = Σ_j a_ij α_jk z_j − z_i Σ_j a_ij α_jk,   a_ij = −2φ′(‖z_i − z_j‖²),
//
// so per block of evaluation points the work is one kernel-coefficient block
// and one GEMM against [α_k ∘ Z | α]. The NTK / NNGP kernels, not radial,
// have ∇K(z_i, z_j) = A_ij z_j + B_ij z_i with B ≠ −A: one more coefficient
// block and a narrow GEMM B·α. The n × |S| × c × d gradient tensor is
// never formed. Peak memory is a few blocks of ~64 MB plus d×d, whatever n,
// c and d are.
//
// It knows nothing about files, solvers or the RFM loop.
package agop
