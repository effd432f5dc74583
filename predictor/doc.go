// Package predictor applies a model file to raw rows: the way from a file
// written by rfm fit (or rfm tune, or a Go program with WriteFile) to
// predictions inside a Go service.
//
// A Model is the fitted model (any rfm.Fitted: an exact or Nyström RFM, a
// tree of them, an ensemble; whichever kind the file holds, decoded by the
// decoder its package registered with modelfile) together
// with the column pipeline fitted on its training rows (numeric scaling,
// missing-value fills, one-hot levels) and the target encoding (class
// labels, or the regression target's scale). It takes rows as a table read
// from any supported file format, as records keyed by column name, or as
// column names with rows of values, checks them as the rfm command does
// (every error names the row and the column), and returns labels and
// probabilities, or values in the target's units. rfm predict, eval and
// serve all go through it, so a service gets the command line's numbers bit
// for bit.
//
// A Model does not change once loaded and is safe for concurrent use. A
// row's prediction does not depend on the other rows of the request.
//
// Train fits a model on a table by fit.Fit (any solver); CrossValidate is
// rfm cv's k-fold cross-validation (FitFold, one fold); EncodeScalings
// encodes a table once per column scaling, as rfm tune searches them; and
// PlanPredict checks a prediction's memory before the rows are encoded.
// The solvers themselves are in package rfm and package tree. It is not a
// server (see package serve).
package predictor
