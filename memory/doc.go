// Package memory stores examples in over-parameterized networks and checks
// that they are memories: the "networks as associative memories" of
// Radhakrishnan's thesis, chapter 2 (../shared/docs/papers, SI appendices
// C–G).
//
// A Set holds N examples of D values grouped into cycles. Autoencoding
// puts each example in its own cycle and trains f(x_i) = x_i; sequence
// encoding trains f(x_i) = the next example of its cycle, the last one
// mapping back to the first (NewSet; CyclesFromOrder builds the cycles of
// a table from an order column, refusing gaps and repeats). Train and
// Resume run package nn's trainer to a loss target or a budget, with
// checkpoints.
//
// Verification (Verify): an example x_i of a cycle of length L is a fixed
// point of f^L; it is an attractor of f^L (Proposition 1 of the thesis;
// Proposition 2 for cycles) when every eigenvalue of the Jacobian
// J = J_{f^L}(x_i) has modulus below 1. The Jacobian is never formed:
// IterateJVP pushes tangents through the L applications with the
// network's forward-mode products (nn.Network.JVP), and SpectralRadii
// runs a power iteration on them. J is not symmetric, so its top
// eigenvalue may be negative or a complex pair, for which the one-step
// ratio ‖Jv‖/‖v‖ oscillates; what is computed is the growth rate
// (‖J^b v‖/‖J^a v‖)^(1/(b−a)) over the second half of the iterations
// (a = k/2, b = k), which tends to the spectral radius ρ(J) in every case
// (error of order 1/(b − a) for complex pairs, geometric in |λ₂|/ρ
// otherwise). For D ≤ MaxDense, DenseJacobian and DenseRadius give the
// exact value from gonum's nonsymmetric eigendecomposition as a check.
//
// Recovery (Starts, Iterate, Classify): starting points — noisy copies,
// masked halves, random points in the data's box or Gaussian — are
// iterated under f^P (P = Set.Period, the least common multiple of the
// cycle lengths) until ‖f^P(x) − x‖ < Tol or a cap. A limit within the
// matching tolerance of an example is that example (recovered when it is
// the start's own example or cycle); a converged limit near no example is
// a spurious attractor. BasinGrid and BasinFigure draw the basins of
// attraction of 2-D examples (thesis figure 2-3).
package memory
