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
// A Forest averages the outputs of a few trees grown with other seeds
// (FitForest; a forest of one is its tree), saved as kind "rfm.Forest".
// Probe grows a few root-to-leaf paths of a tree and scores candidate leaf
// configurations on the validation rows those leaves receive: what rfm
// tune compares configurations on for a large table (package tune,
// TreeFinal).
//
// It does not read tables or know about the command line.
package tree
