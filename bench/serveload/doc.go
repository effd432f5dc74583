// Package serveload is the load test of 'rfm bench serve': a bounded
// benchmark of package serve on loopback. Run starts an in-process server
// for a model file (or a synthetic model it fits first), and for each
// request size lets concurrent clients send requests back to back for a
// measured duration after an unmeasured warm-up. It reports throughput,
// latency percentiles, status counts and the server's mean batch, and
// compares the served rows/s with offline prediction of the same model
// (predictor.Model.Predict on 20 480 rows: the pipeline and the kernel).
//
// The name keeps it apart from package serve, which it drives. It is a
// benchmark, not a load-testing tool for servers elsewhere: the server is
// always in process, the clients on loopback.
package serveload
