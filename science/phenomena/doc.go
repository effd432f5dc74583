// Package phenomena reproduces two feature-learning phenomena on MNIST-like
// digits with a network and an RFM side by side ('rfm phenomena', issue 13),
// both on the raw pixels in [0, 1]:
//
//   - Marker (grokking-like): a small imbalanced two-class set (10%
//     positives) of random digits whose label only a faint two-pixel marker
//     in the corner gives away. Both models jump in test accuracy once their
//     feature matrix concentrates on the marker.
//   - Halves (simplicity bias): 28×56 images whose left half is a 0 or a 1
//     (simple) and whose right half is a 3 or a 5 (harder), both predictive;
//     the feature matrices weigh the simple half, and scrambling it (the
//     control accuracy) costs far more than the right half is worth.
//
// Run measures both models along training (epochs of the network, rounds
// of the RFM): accuracies and the share of the diagonal of the feature
// matrix (W̄₁ᵀW̄₁, the RFM's M) on the marker or the simple half. WriteFiles
// draws the figures and writes phenomena.json.
//
// It is a research harness, not a model: it takes loaded digit sets
// (package mnist) and returns the measurements; reading the MNIST folder,
// flags and printing are the command's.
package phenomena
