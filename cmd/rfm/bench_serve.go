package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/serve"
	"github.com/rfmkit/rfm/synth"
)

// benchServeRun is one load phase of 'rfm bench serve'.
type benchServeRun struct {
	RowsPerRequest int     `json:"rows_per_request"`
	Clients        int     `json:"clients"`
	Seconds        float64 `json:"seconds"`
	Requests       int     `json:"requests"`
	RequestsPerSec float64 `json:"requests_per_second"`
	RowsPerSec     float64 `json:"rows_per_second"`
	P50ms          float64 `json:"p50_ms"`
	P90ms          float64 `json:"p90_ms"`
	P99ms          float64 `json:"p99_ms"`
	MaxMs          float64 `json:"max_ms"`
	Status5xx      int     `json:"status_5xx"`
	Status4xx      int     `json:"status_4xx"`
	Errors         int     `json:"transport_errors"`
	MeanBatchRows  float64 `json:"mean_batch_rows"`
	OfflineRatio   float64 `json:"served_over_offline"`
}

type benchServeJSON struct {
	Model          string          `json:"model"`
	Centers        int             `json:"centers"`
	Inputs         int             `json:"inputs"`
	OfflineRowsSec float64         `json:"offline_rows_per_second"`
	OfflineRows    int             `json:"offline_rows"`
	Runs           []benchServeRun `json:"runs"`
	Options        map[string]any  `json:"options"`
}

func cmdBenchServe(e *env, args []string) error {
	var (
		model, rowsList, duration, warmup, batchWait, profile string
		clients, centers, inputs, batchRows                   int
		asJSON                                                bool
		common                                                commonFlags
	)
	f := newFlagSet("bench serve", "rfm bench serve [--model FILE] [flags]",
		`A bounded load test of 'rfm serve' on loopback: an in-process server and
--clients concurrent clients, each sending requests of the given rows one after
another for --duration (after a --warmup), for each size in --rows. Reports
throughput, latency percentiles and status counts, and compares the served
rows/s with offline prediction of the same model (the library's Predict on a
20 480-row table: the pipeline and the kernel, as 'rfm predict' without its
CSV reading).

Without --model, a model is fitted first on a synthetic classification table
of --centers rows and --inputs numeric columns (one RFM round; it takes a
while for 10 000 rows). Requests are JSON objects keyed by column name.`,
		`rfm bench serve --clients 64 --duration 30s --rows 1,100
rfm bench serve --model churn.rfm --rows 1,10,100 --json`)
	f.Section("Model")
	f.String(&model, "model", "", "serve this model `FILE` (default: fit a synthetic one)")
	f.Int(&centers, "centers", 10000, "rows of the synthetic model (`N` centres)")
	f.Int(&inputs, "inputs", 50, "numeric input columns of the synthetic model (`N`)")
	f.Section("Load")
	f.Int(&clients, "clients", 64, "concurrent clients (`N`)")
	f.String(&duration, "duration", "30s", "measured time per request size (`DURATION`)")
	f.String(&warmup, "warmup", "3s", "unmeasured load before each measurement (`DURATION`)")
	f.String(&rowsList, "rows", "1,100", "rows per request (`LIST` of sizes, one run each)")
	f.String(&batchWait, "batch-wait", "1ms", "the server's --batch-wait (`DURATION`)")
	f.Int(&batchRows, "batch-rows", 4096, "the server's --batch-rows (`N`)")
	f.Section("Output")
	f.Bool(&asJSON, "json", false, "print the result as JSON on stdout")
	f.String(&profile, "cpuprofile", "", "write a CPU profile of the load phases (server and clients) to `FILE`")
	f.Int(&common.threads, "threads", 0, "threads for the linear algebra (`N`; 0 = one per CPU, at most 256)")
	if _, err := f.Parse(args, e.stderr); err != nil {
		return err
	}
	if err := common.apply(); err != nil {
		return err
	}
	dur, err1 := time.ParseDuration(duration)
	warm, err2 := time.ParseDuration(warmup)
	wait, err3 := time.ParseDuration(batchWait)
	switch {
	case err1 != nil || dur <= 0:
		return usagef("--duration %q: want a positive duration such as 30s", duration)
	case err2 != nil || warm < 0:
		return usagef("--warmup %q: want a duration such as 3s (0 for none)", warmup)
	case err3 != nil || wait < 0:
		return usagef("--batch-wait %q: want a duration such as 1ms", batchWait)
	case clients < 1:
		return usagef("--clients %d: must be at least 1", clients)
	case model == "" && (centers < 10 || inputs < 6):
		return usagef("the synthetic model needs --centers ≥ 10 and --inputs ≥ 6")
	}
	var sizes []int
	for _, s := range strings.Split(rowsList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return usagef("--rows %q: want sizes such as 1,100", rowsList)
		}
		sizes = append(sizes, n)
	}
	if wait == 0 {
		wait = -1 // serve.Options: no waiting
	}

	dir, err := os.MkdirTemp("", "rfm-bench-serve-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if model == "" {
		model = filepath.Join(dir, "synthetic.rfm")
		fmt.Fprintf(e.stderr, "bench serve: fitting a synthetic model of %d centres × %d inputs ...\n", centers, inputs)
		start := time.Now()
		if err := fitSyntheticServeModel(e.ctx, model, centers, inputs); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "bench serve: fitted in %s\n", seconds(time.Since(start)))
	}
	lm, err := loadModel(model, true)
	if err != nil {
		return err
	}
	// Request rows: held-out synthetic rows for a synthetic model, or
	// rows built from the model's inputs (numbers at the training mean
	// plus noise, the first level of categories).
	pool, err := serveRequestRows(lm, 4096)
	if err != nil {
		return err
	}
	offline, offRows, err := offlineRowsPerSec(e.ctx, lm, pool)
	if err != nil {
		return err
	}
	res := benchServeJSON{Model: model, Inputs: len(lm.Pipeline.Inputs), OfflineRowsSec: offline, OfflineRows: offRows,
		Options: map[string]any{"batch_wait": wait.String(), "batch_rows": batchRows, "duration": dur.String(), "warmup": warm.String()}}
	res.Centers = lm.Centers()

	s, err := serve.New(serve.Options{ModelPath: model, BatchWait: wait, BatchRows: batchRows, MaxInFlight: max(256, 2*clients),
		MaxRows: max(10000, slices.Max(sizes)), MaxBodyBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(e.ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, ln, nil) }()
	url := "http://" + ln.Addr().String() + "/v1/predict"
	if profile != "" {
		pf, err := os.Create(profile)
		if err != nil {
			cancel()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			cancel()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	for _, size := range sizes {
		fmt.Fprintf(e.stderr, "bench serve: %d clients × %d-row requests for %s (after %s of warm-up) ...\n", clients, size, dur, warm)
		run, err := loadPhase(e.ctx, url, pool, size, clients, warm, dur, s.Batches)
		if err != nil {
			cancel()
			<-served
			return err
		}
		run.OfflineRatio = run.RowsPerSec / offline
		res.Runs = append(res.Runs, run)
	}
	cancel()
	if err := <-served; err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(e.stdout, "model    %s: %d centres, %d inputs\noffline  %.0f rows/s (Predict on %d rows, median of 3)\nload     %d clients on loopback, in-process server, --batch-wait %s\n\n",
		res.Model, res.Centers, res.Inputs, offline, offRows, clients, wait)
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rows/req\trequests\treq/s\trows/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\t5xx\t4xx\terrors\trows/batch\tserved/offline\t")
	for _, r := range res.Runs {
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.1f\t%d\t%d\t%d\t%.0f\t%.2f\t\n", r.RowsPerRequest, r.Requests, r.RequestsPerSec, r.RowsPerSec,
			r.P50ms, r.P90ms, r.P99ms, r.MaxMs, r.Status5xx, r.Status4xx, r.Errors, r.MeanBatchRows, r.OfflineRatio)
	}
	return tw.Flush()
}

// fitSyntheticServeModel fits one RFM round on a low-rank classification
// table (the sign of y = x0·x1·1[x5 > 0] plus noise) and writes it.
func fitSyntheticServeModel(ctx context.Context, path string, n, d int) error {
	s, err := synth.Generate(synth.LowRank, n, d, 1)
	if err != nil {
		return err
	}
	t := syntheticTable(s, d)
	labels := &dataset.Column{Name: "y", Kind: dataset.Categorical, Str: make([]string, n)}
	for i, v := range s.Y {
		labels.Str[i] = "neg"
		if v > 0 {
			labels.Str[i] = "pos"
		}
	}
	t.Columns = append(t.Columns, labels)
	tg, p, err := fitEncoding(t, "synthetic", "y", "classification", dataset.ScaleStandard)
	if err != nil {
		return err
	}
	ds, err := encodeRows(t, "synthetic", p, tg)
	if err != nil {
		return err
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 1
	m, err := rfm.Fit(ctx, cfg, ds, nil, nil)
	if err != nil {
		return err
	}
	return saveModel(ctx, path, m, p, tg, trainingInfo{Data: "synthetic lowrank", Rows: n, Version: versionString()})
}

func syntheticTable(s *synth.Data, d int) *dataset.Table {
	t := &dataset.Table{Source: "synthetic"}
	for j := 0; j < d; j++ {
		c := &dataset.Column{Name: "x" + strconv.Itoa(j), Kind: dataset.Numeric, Num: make([]float64, s.N)}
		for i := range c.Num {
			c.Num[i] = s.X[i*d+j]
		}
		t.Columns = append(t.Columns, c)
	}
	return t
}

// serveRequestRows builds n request rows for the model's inputs: numbers
// drawn around each column's training centre, categories cycling through
// their levels.
func serveRequestRows(lm *loadedModel, n int) ([]map[string]any, error) {
	s, err := synth.Generate(synth.Linear, n, len(lm.Pipeline.Inputs), 99)
	if err != nil {
		return nil, err
	}
	k := len(lm.Pipeline.Inputs)
	rows := make([]map[string]any, n)
	for i := range rows {
		r := make(map[string]any, k)
		for j, in := range lm.Pipeline.Inputs {
			if in.Kind == dataset.Numeric {
				r[in.Name] = in.Mean + in.Std*s.X[i*k+j]
			} else if len(in.Levels) > 0 {
				r[in.Name] = in.Levels[i%len(in.Levels)]
			} else {
				r[in.Name] = nil
			}
		}
		rows[i] = r
	}
	return rows, nil
}

// offlineRowsPerSec times the library's Predict (pipeline and kernel) on
// about 20 000 of the rows: the median of 3 runs.
func offlineRowsPerSec(ctx context.Context, lm *loadedModel, pool []map[string]any) (float64, int, error) {
	var recs []map[string]any
	for len(recs) < 20480 {
		recs = append(recs, pool...)
	}
	recs = recs[:20480]
	t, err := lm.Pipeline.RecordsTable("bench", recs)
	if err != nil {
		return 0, 0, err
	}
	var times []float64
	for rep := 0; rep < 3; rep++ {
		start := time.Now()
		if _, err := lm.Predict(ctx, t); err != nil {
			return 0, 0, err
		}
		times = append(times, time.Since(start).Seconds())
	}
	slices.Sort(times)
	return float64(len(recs)) / times[1], len(recs), nil
}

// loadPhase runs clients that each send size-row requests back to back,
// first for warm (not measured), then for dur.
func loadPhase(ctx context.Context, url string, pool []map[string]any, size, clients int, warm, dur time.Duration, batches func() (evals, rows int64)) (benchServeRun, error) {
	bodies := make([][]byte, 0, 64)
	for k := 0; k < 64; k++ {
		lo := (k * size) % max(1, len(pool)-size)
		if size > len(pool) {
			return benchServeRun{}, fmt.Errorf("--rows %d: at most %d rows per request here", size, len(pool))
		}
		b, err := json.Marshal(map[string]any{"rows": pool[lo : lo+size]})
		if err != nil {
			return benchServeRun{}, err
		}
		bodies = append(bodies, b)
	}
	tr := &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: time.Minute}
	type tally struct {
		lat                []float64
		s5xx, s4xx, errors int
	}
	measure := func(d time.Duration, record bool) ([]tally, time.Duration) {
		tallies := make([]tally, clients)
		start := time.Now()
		deadline := start.Add(d)
		var wg sync.WaitGroup
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func(c int) {
				defer wg.Done()
				tl := &tallies[c]
				for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
					t0 := time.Now()
					resp, err := client.Post(url, "application/json", bytes.NewReader(bodies[(c*7+i)%len(bodies)]))
					if err != nil {
						tl.errors++
						continue
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					switch {
					case resp.StatusCode >= 500:
						tl.s5xx++
					case resp.StatusCode >= 400:
						tl.s4xx++
					}
					if record {
						tl.lat = append(tl.lat, time.Since(t0).Seconds()*1000)
					}
				}
			}(c)
		}
		wg.Wait()
		return tallies, time.Since(start)
	}
	if warm > 0 {
		measure(warm, false)
	}
	e0, r0 := batches()
	tallies, took := measure(dur, true)
	e1, r1 := batches()
	if err := ctx.Err(); err != nil {
		return benchServeRun{}, err
	}
	run := benchServeRun{RowsPerRequest: size, Clients: clients, Seconds: took.Seconds()}
	var lat []float64
	for _, t := range tallies {
		lat = append(lat, t.lat...)
		run.Status5xx += t.s5xx
		run.Status4xx += t.s4xx
		run.Errors += t.errors
	}
	slices.Sort(lat)
	run.Requests = len(lat)
	if len(lat) == 0 {
		return run, fmt.Errorf("no request was answered in %s", dur)
	}
	q := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	ok := float64(run.Requests - run.Status5xx - run.Status4xx)
	run.RequestsPerSec = ok / took.Seconds()
	run.RowsPerSec = ok * float64(size) / took.Seconds()
	if e1 > e0 {
		run.MeanBatchRows = float64(r1-r0) / float64(e1-e0)
	}
	run.P50ms, run.P90ms, run.P99ms, run.MaxMs = q(0.50), q(0.90), q(0.99), lat[len(lat)-1]
	return run, nil
}
