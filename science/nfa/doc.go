// Package nfa measures the Neural Feature Ansatz (SPEC §7) of a fully
// connected network along training, layer by layer ('rfm nfa'): the
// correlation of each layer's neural feature matrix WᵀW with the network's
// AGOP with respect to the layer's input, WᵀKW (the UC-NFA), and of the
// centred W̄ᵀW̄ with W̄ᵀKW̄, W̄ = W − W⁰ (the C-NFA), as the cosine, the
// Pearson correlation of the entries, the overlap of the top eigenvectors
// and the correlation of the diagonals (nn.Compare).
//
// Run trains on encoded rows (Data) and measures at log-spaced epochs; it
// can compare the first layer's matrices with a synthetic task's exact EGOP
// and with the M of an RFM fitted on the same rows. WriteFiles writes
// nfa.csv, nfa.json and the figures. Synthetic draws the rows of a task of
// package synth with its EGOP.
//
// AlignmentReversing runs the centred-NFA paper's figure 3 (no training):
// on package synth's alignment reversing data, the C-NFA at initialization
// of one-hidden-layer quadratic networks, observed from their gradients and
// predicted by the paper's free-probability formula (PredictedCNFA), against
// the balance γ; WriteReversing writes its table and figures.
//
// It is a research harness, not a model: reading tables, flags and
// printing are the command's; the network itself is package nn's.
package nfa
