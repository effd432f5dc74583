// Package onnx exports a model file to an ONNX graph, so that programs in
// Python, C#, Java or JavaScript can compute its predictions with ONNX
// Runtime, without rfm.
//
// The graph takes the model's raw columns (numbers as one double tensor,
// categories as one string tensor; see Export) and computes the pipeline,
// the M^½ map, the kernel against the centres, the coefficients and the
// probabilities in float64, agreeing with rfm predict to rounding. It is
// written with the protobuf wire format directly (the subset of onnx.proto
// it needs), so the package has no dependency on generated ONNX code.
//
// It does not export trees of RFMs, the ntk and nngp kernels, or isotonic
// calibration, and it does not run graphs.
package onnx
