// Package metrics scores predictions and aggregates benchmark results.
//
// It has three parts:
//
//   - Scores by name (Metric: accuracy, log-loss, brier, auc, mse, rmse,
//     mae, r2, loss) that know which way is better. Every choice of "the
//     best" in the module (the round a fit keeps, rfm.Best over a grid, the
//     tree's routing temperature, tune's trials and 1-SE rule, UCI's
//     averaged selection) compares through Metric.Better: strict, so a tie
//     keeps the first score seen, and a NaN is never better (Compare, Best
//     and Check refuse a NaN with an error wrapping ErrNaN). Order ranks by
//     one metric, then the next on a tie (tune: accuracy, then loss).
//   - Prediction metrics on plain slices: Accuracy, ConfusionMatrix, LogLoss,
//     AUC / MacroAUC, MSE, MAE, R2, and the Classification and Regression
//     reports that compute them all at once (the CLI's `eval --json`).
//     Classes are int indices 0..c-1; probabilities and multi-output values are
//     row-major n×c slices, the same layout the rest of the module uses.
//   - Benchmark aggregates over data sets (SPEC §5): average accuracy,
//     Friedman rank, PMA, P90/P95 and ADTM per classifier, computed from an
//     accuracy Table with NaN for missing values (the Missing policy says how
//     a classifier's own gaps count), plus a parser for the Fernández-Delgado
//     et al. (2014) results file so our own results, added with
//     Table.AddClassifier, can be ranked against the 179 published
//     classifiers.
//
// It is not a statistics package: no significance tests (Friedman χ²,
// Nemenyi, Wilcoxon), no confidence intervals, and no threshold-dependent
// metrics such as precision/recall curves. It never fits or predicts; it only
// scores numbers produced elsewhere.
//
// Errors: mismatched lengths, empty input and out-of-range classes are
// returned as errors, never panics. A metric that is mathematically undefined
// for the given input (AUC with one class present, R² of a constant target)
// returns an error wrapping ErrUndefined, so callers can tell "bad input"
// from "no answer exists" with errors.Is.
package metrics
