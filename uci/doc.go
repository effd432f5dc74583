// Package uci reproduces the UCI-121 benchmark of the RFM papers
// (Radhakrishnan et al., Science 2024; SPEC §5) on the 121 data sets of
// Fernández-Delgado et al. (JMLR 2014) with their fixed splits.
//
// It reads the benchmark's own file formats (the <name>.txt metadata, the
// z-scored *_R.dat file and the conxuntos.dat / conxuntos_kfold.dat index
// files), selects data sets (Arora et al.'s 90, all, or by name), runs a
// protocol (the authors' "paper" protocol, a leakage-free "clean" variant,
// or a "tuned" richer grid), and compares RFM and the Laplace kernel with
// the 179 classifiers of the original study by average accuracy, Friedman
// rank, P90, P95, PMA and ADTM.
//
// Run does the work and writes results.tsv (resumable), summary.md,
// summary.json and a plot into an output folder; the `rfm bench uci`
// command line (flags, signals, progress and report printing) lives in
// cmd/rfm, not here.
//
// The package only wires the engine (packages rfm, kernel, solve) to the
// benchmark's files and protocols; it implements no learning itself except
// a fixed-M kernel ridge fit for the evaluation splits, which the engine
// does not expose yet.
package uci
