// Package deeplimit computes the neural tangent kernel of an infinitely
// wide fully connected network (no biases) for any activation, as its depth
// L grows, and the classifiers it becomes in the limit (thesis chapter 4,
// SI appendices B–D).
//
// Dual activations. NewDual scales an Activation to E[φ(z)²] = 1 and
// computes its dual φ̌(ρ) = E[φ(u)φ(v)] (u, v standard normals with
// correlation ρ) and φ̌′(ρ) = E[φ′(u)φ′(v)]: as the Hermite series
// Σ c_k² ρ^k with the normalized probabilists' Hermite coefficients
// c_k = E[φ(z) He_k(z)/√k!] (composite Gauss–Legendre quadrature against the
// Gaussian, cut at the activation's kinks), which is the dual to rounding
// when its tails are below 1e-12 (smooth activations); otherwise (ReLU, hard
// tanh: the series converges like k^{−3/2}) the series serves |ρ| ≤ 1/4 and a
// Chebyshev interpolant in θ = arccos ρ of the nested bivariate quadrature
// the rest. Dual.Quad (nested quadrature) and Dual.GH (2-D Gauss–Hermite)
// are the cross-checks. A = E[φ], A′ = E[φ′], B′ = E[φ′²] give the case:
// majority vote (A ≠ 0), 1-NN (A = A′ = 0) or a singular kernel
// ‖x − x̃‖^{−α} with α = −2 log(A′²)/log(B′) (Theorem 7). The thesis's
// figure C-2 lists α/2 (the order in 1 − xᵀx̃). Corollary 1 and 2's
// activations are cor1:D and cor2:D; Corollary2A2 solves Corollary 2's
// equation (a² = 2.676 for d = 2; the thesis's "6.135 for d = 3" is the root
// for d = 4, 4.395 being d = 3's). The thesis writes Corollary 2's sine as
// sin(ax)/√sinh(a²), whose E[φ²] is e^{−a²}; its constants are those of the
// normalized e^{a²/2} sin(ax)/√sinh(a²), which is what NewDual uses.
//
// The depth-L NTK. With K_0 = ρ_0 = z (data on the unit sphere),
// ρ_l = φ̌(ρ_{l−1}) and K_l = ρ_l + K_{l−1} φ̌′(ρ_{l−1}) (eq. 4.5). Dual.NTK
// runs it on log ρ and log K, which is the recursion normalized by any
// constant: Theorem 7's (A′)^{2L}(L+1) is a subtraction (Dual.Normalized),
// nothing overflows for L up to MaxDepth, and below ρ = 1e-150 the dual is
// its leading term a_m ρ^m exactly. In the 1-NN case log K itself leaves
// float64 (it falls like −m^L); past −1e10 the value is held as
// log(−log K) (Val.Deep). Cosines near 1 are resolved to 1e-16 absolutely
// (distances below ~1e-7 lose relative accuracy). Dual.NTKPlain is the
// plain recursion, the reference for tests (and equal to package kernel's
// closed-form ReLU NTK, whose ReLU is the normalized √2·max(x, 0)).
//
// Classifiers. Tables tabulates K_L on a grid of the cosine (local cubic
// interpolation, ~1e-7 relative); Machine is the kernel machine
// sign(y K_n⁻¹ K(X, x)) with K_n/K_L(1) factored by Cholesky
// (internal/linalg): when that matrix is the identity to working precision
// (the deep limit of the singular and 1-NN cases) the solve is y itself,
// when it is singular (polynomial activations at small depth have
// finite-rank kernels) a ridge from 1e-12 up is added and reported.
// MajorityVote, NearestNeighbor and SingularSmoother are the three
// reference classifiers; ProjectOrthant is the thesis's min-max scaling
// followed by projection onto the sphere. Sweep compares the machine with
// them across depths; Consistency measures test error against n on a
// Dirichlet task (Task2D, Task3D) whose Bayes error is estimated by Monte
// Carlo.
package deeplimit
