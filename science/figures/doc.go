// Package figures draws what a fitted RFM learned, as 'rfm inspect
// --plots' shows it: PNG files of package plot from a model's feature
// matrix M and its round history.
//
// Model writes, in this order: features.png (features ranked by diag(M)),
// spectrum.png (the eigenvalues of M), eigenvectors.png (the top four
// eigenvectors), rounds.png (the validation score by round, when the fit
// recorded one) and, for image inputs, diag_image.png and
// eigenvector_images.png (grey) or eigenvectorK_image.png (colour). A model
// that kept round 0 learned no M, and every figure of M says so.
//
// It draws; it does not read model files or decide where figures go: that
// is the caller's (package predictor loads files, the command picks the
// folder).
package figures
