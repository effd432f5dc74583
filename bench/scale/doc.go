// Package scale is the benchmark of 'rfm bench scale': the solvers beyond
// one exact kernel matrix on large tables. For each data set it fits an
// exact RFM on a seeded subset, the Nyström solver and the tree of RFMs on
// all training rows (and, optionally, XGBoost through a Python script), each
// in a child process so that its peak RSS is its own, predicts the test rows
// in another child, and records the fit time, the peak memory, the
// prediction speed and the test score.
//
// Sets: "synth" (the low-rank regression of package synth in d = 20 at each
// size, tested on 20 000 rows), "ijcnn1", "kdd" and "flights" (the large
// tables of ../shared/data/large, split as their standard splits say).
//
// Bench runs it all and writes results.tsv (a rerun reuses what is there),
// summary.md, summary.json and the curves of time and MSE against n. The
// children are an rfm binary (Options.Exe): its 'rfm fit' and 'rfm predict'
// are what is measured, and its 'rfm bench _peak' runs RunMeasured, which a
// fresh process needs to report a child's peak RSS alone.
//
// It is a benchmark harness: it measures the command-line tools as a user
// runs them, so it is not the way to fit models from Go (see package rfm).
package scale
