// Package tabular reproduces the second tabular benchmark of the RFM paper
// (Radhakrishnan et al., arXiv 2212.13881, figure 5, tables 2–5, appendices
// D and E): the curated tasks of Grinsztajn, Oyallon and Varoquaux (2022),
// read from the folder layout of ../shared/data/tabular-benchmark (one
// gzipped CSV per task in clf_num, clf_cat, reg_num and reg_cat, target in
// the last column).
//
// It makes the benchmark's splits (Splits: the training rows are
// min(70%, max_train) of the task, the rest 30/70 validation/test with each
// capped at 50 000, and 1–5 seeded splits by test size), encodes each
// split's rows with a dataset.Pipeline fitted on its training rows only
// (categorical columns one-hot), runs a protocol (ProtocolPaper: the paper's
// grid; ProtocolTuned: the search of package tune scored on the validation
// rows), and scores accuracy or R² on the test rows. Every choice is made on
// validation rows; test rows reach only the final scores.
//
// Run writes results.json (rewritten after each task, so an interrupted run
// resumes), the split indices (splits/, for the XGBoost script
// scripts/xgboost_tabular.py), summary.md, summary.json and a figure. The
// summaries put our RFM beside the paper's RFM and its published baselines
// (Reference, transcribed from the paper's tables 2–5) and compute average
// score, Friedman rank, PMA and ADTM (package metrics) over the tasks
// present. The `rfm bench tabular` command (cmd/rfm) is the command line.
package tabular
