// Package tree fits tree-partitioned RFMs for tables too large for one
// exact solve (SPEC §4, the idea of the xRFM library): a node with more
// than LeafSize rows is split in two along a direction — by default the
// top eigenvector of the AGOP of a plain kernel machine fitted on a seeded,
// stratified sample of the node — at the median projection (moved to the
// nearest change of value, so ties can neither loop nor send a training row
// to the other side at prediction time). Every leaf is an ordinary RFM
// fitted on its rows alone, with its own validation holdout, best round and
// refit; leaves train in parallel within a memory budget chosen by
// MakePlan. Prediction routes each row to its leaf.
//
// A tree is saved as one model file of kind "rfm.Tree" that holds the
// routing nodes and every leaf model (see modelfile/FORMAT.md).
//
// It does not read tables or know about the command line.
package tree
