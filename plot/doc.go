// Package plot draws the figures of `rfm inspect` and of the benchmark
// reports as PNG files.
//
// Every function takes the output path first, validates its input (empty
// slices, mismatched lengths, NaN or infinite values are errors, never
// panics), renders at 120 dpi on top of gonum.org/v1/plot and writes the file
// atomically: the PNG goes to a temporary file in the destination directory
// that is then renamed over the path, so a reader never sees a half-written
// figure. The path must end in ".png"; its directory must exist.
//
// The figures:
//
//   - FeatureBars: horizontal bars of the top-K features by value (diag(M)),
//     largest at the top, each value printed at the end of its bar; the
//     figure grows in height with K, so names never overlap.
//   - Spectrum: the eigenvalues of M sorted in descending order against their
//     rank, on a log axis when they span more than three decades, with
//     round-off values clamped and counted in a note.
//   - Eigenvectors: a grid of horizontal bar panels, one per top eigenvector,
//     showing its largest entries by magnitude.
//   - Image and ImageGrid: vectors drawn as heat maps with colour bars, for
//     image inputs (diag(M) and eigenvectors of an MNIST model).
//   - Curve: lines with a legend under the title (validation metric by
//     round).
//   - Scatter: points with labels that never overlap and an optional y = x
//     line (RFM against Laplace error per data set).
//
// Colours: heat maps of signed data use a diverging blue–grey–red map centred
// on zero, non-negative data a sequential black-body map (black, red, yellow,
// white). Bars of signed data (eigenvectors) are red when positive and blue
// when negative, like the heat maps; bars of non-negative data are one
// neutral blue. Text is Liberation Sans.
//
// Figures whose text would not fit shrink their title font and, past that,
// cut the text with an ellipsis; long feature names are cut the same way.
//
// The package knows nothing about models or data files: callers pass plain
// slices. It is not a general plotting library; each function makes one kind
// of figure with fixed, readable styling.
package plot
