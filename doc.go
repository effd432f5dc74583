// Package rfm fits Recursive Feature Machines: kernel machines that learn
// their own features.
//
// An RFM alternates two convex steps: fit kernel ridge regression with a
// Mahalanobis kernel K_M, then replace M by the average gradient outer
// product (AGOP) of the fitted predictor. Round 0 is the plain kernel
// (M = I), every round is scored on validation data and the best round is
// kept, so an RFM is never worse on validation than its base kernel.
//
// Fit follows Radhakrishnan, Beaglehole, Pandit and Belkin (Science 2024)
// and the defaults of their papers: Laplace kernel, L = 10, λ = 1e-3,
// 5 AGOP updates on at most 20 000 points, full M, mean normalization.
//
// A fitted Model is self-contained (centres, coefficients, M, target
// encoding) and predicts without the training data; package modelfile
// stores it. The estimator works on numeric matrices: reading tables and
// encoding columns is package dataset's job.
//
// Typical use:
//
//	cfg := rfm.DefaultConfig()
//	model, err := rfm.Fit(ctx, cfg, &rfm.Dataset{X: x, N: n, D: d, Labels: y}, nil, nil)
//	classes, err := model.PredictClass(ctx, xTest, nTest)
package rfm
