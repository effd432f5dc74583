// Package complete completes matrices with the neural tangent kernel of an
// infinitely wide fully connected network (Radhakrishnan's thesis, ch. 3,
// Theorem 5; SPEC §8).
//
// A network f_Z(W) = W_{d+1} C φ(… W_2 C φ(W_1 Z)) maps a fixed feature
// prior Z (p × n, one unit-norm column z_j per column of the matrix Y) to an
// m × n matrix and is trained on the observed cells. As the widths grow,
// training becomes kernel regression with
//
//	K((i,j), (i',j')) = κ_d(z_jᵀz_j')  if i = i',  0 otherwise,
//
// so every row of Y is a separate regression over its observed columns S_i
// with the column kernel G = κ_d(ZᵀZ):
//
//	Ŷ[i, :] = G[:, S_i] (G[S_i, S_i] + λI)⁻¹ Y[i, S_i].
//
// κ_d is built from the normalized dual activation φ̌ and its derivative:
// the ReLU's come from package kernel (SPEC §6); leaky ReLU, linear and
// absolute value (the other degree-1 homogeneous activations) have their
// own closed forms here (Activation).
//
// Priors (Prior): OneHot (Z = I; the prediction of a missing cell is then
// the constant OneHotConstant times the row's observed mean, SI appendix D,
// Proposition 8), FromFeatures (column metadata, e.g. read by ReadMetadata
// through package dataset's pipeline), ObservedPrior (each column's own
// observed entries); Concat joins them, WithBias appends a constant
// coordinate.
//
// Solving (Complete). Rows with the same observed pattern share one
// Cholesky factorization and are solved together; an entirely missing
// column (a new drug / cell type) therefore costs nothing extra when the
// rest of the matrix is complete: one factorization for all rows. Rows
// with different patterns S = U ∖ M (U the columns observed anywhere) can
// instead be served by one shared inverse H = (G[U,U] + λI)⁻¹: the solution
// on S is the solution on U with a correction supported on M, found from
// the Schur complement H[M,M] (r = |M| unknowns). A pattern then costs
// r³/3 instead of |S|³/3 flops, plus GEMMs batched over rows. StrategyAuto
// chooses per pattern by flop count and keeps the shared inverse only when
// it pays for itself; a Schur-served group whose relative residual exceeds 1e-10 is
// re-solved directly. The memory plan is checked before anything large is
// allocated (ErrTooLarge with the figure).
//
// Holdouts (HoldoutEntries, HoldoutColumns), scores (Score: RMSE, MAE, R²,
// Pearson, and the thesis's drug-screening metrics of SI appendix G) and
// baselines (RowMean, ColumnMean, SVDImpute) make the comparisons of
// docs/completion.md.
package complete
