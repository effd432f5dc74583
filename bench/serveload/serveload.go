package serveload

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
	"sync"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/predictor"
	"github.com/rfmkit/rfm/serve"
	"github.com/rfmkit/rfm/synth"
)

// Phase is one load phase of 'rfm bench serve'.
type Phase struct {
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

// Result is what Run measured: the model, offline prediction speed and one
// Phase per request size.
type Result struct {
	Model          string         `json:"model"`
	Centers        int            `json:"centers"`
	Inputs         int            `json:"inputs"`
	OfflineRowsSec float64        `json:"offline_rows_per_second"`
	OfflineRows    int            `json:"offline_rows"`
	Runs           []Phase        `json:"runs"`
	Options        map[string]any `json:"options"`
}

// ModelSource is the model a bench serves.
type ModelSource struct {
	// Model is the model file served; "" fits one round of an RFM on a
	// synthetic classification table of Centers rows and Inputs numeric
	// columns first (Centers ≥ 10, Inputs ≥ 6), recording Version as the
	// writer's ('rfm VERSION').
	Model           string
	Centers, Inputs int
	Version         string
}

// load fits the synthetic model if there is none (in a temporary folder
// that cleanup removes; fitting and fitted report its start and end) and
// loads the model, which must have a column pipeline.
func (ms ModelSource) load(ctx context.Context, fitting func(), fitted func(time.Duration)) (path string, lm *predictor.Model, cleanup func(), err error) {
	cleanup = func() {}
	path = ms.Model
	if path == "" {
		dir, err := os.MkdirTemp("", "rfm-bench-serve-")
		if err != nil {
			return "", nil, cleanup, err
		}
		cleanup = func() { os.RemoveAll(dir) }
		path = filepath.Join(dir, "synthetic.rfm")
		fitting()
		start := time.Now()
		if err := fitSynthetic(ctx, path, ms.Centers, ms.Inputs, ms.Version); err != nil {
			return "", nil, cleanup, err
		}
		fitted(time.Since(start))
	}
	if lm, err = predictor.Load(path); err == nil {
		err = lm.NeedPipeline()
	}
	return path, lm, cleanup, err
}

// Options say what to serve and how to load it.
type Options struct {
	ModelSource

	Clients int // concurrent clients (≥ 1)
	// Duration is the measured time per request size, after Warmup of
	// unmeasured load.
	Duration, Warmup time.Duration
	Sizes            []int // rows per request, one phase each
	// BatchWait and BatchRows are the server's (serve.Options: a negative
	// BatchWait waits for nothing).
	BatchWait time.Duration
	BatchRows int
	// CPUProfile, if set, receives a CPU profile of the load phases (the
	// server and the clients).
	CPUProfile io.Writer
	// Progress, if set, is told what is starting and how long the fit took.
	Progress func(Event)
}

// Event is a step of Run: the synthetic model's fit starting (Fitting) or
// done (Fitted, its duration), or a load phase starting (Phase: its rows
// per request).
type Event struct {
	Fitting bool
	Fitted  time.Duration
	Phase   int
}

// Check reports options Run cannot use.
func (o *Options) Check() error {
	switch {
	case o.Duration <= 0 || o.Warmup < 0:
		return fmt.Errorf("serveload: duration %s must be positive and warm-up %s not negative", o.Duration, o.Warmup)
	case o.Clients < 1:
		return fmt.Errorf("serveload: %d clients: must be at least 1", o.Clients)
	case o.Model == "" && (o.Centers < 10 || o.Inputs < 6):
		return fmt.Errorf("serveload: the synthetic model needs at least 10 centres and 6 inputs")
	case len(o.Sizes) == 0:
		return fmt.Errorf("serveload: no request sizes")
	}
	for _, n := range o.Sizes {
		if n < 1 {
			return fmt.Errorf("serveload: request size %d: must be at least 1", n)
		}
	}
	return nil
}

// Run fits the synthetic model if there is none, times offline prediction,
// starts an in-process server on loopback and loads it with each request
// size in turn.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	model, lm, cleanup, err := o.ModelSource.load(ctx, func() { o.progress(Event{Fitting: true}) }, func(d time.Duration) { o.progress(Event{Fitted: d}) })
	defer cleanup()
	if err != nil {
		return nil, err
	}
	// Request rows: numbers at the training mean plus noise, the levels
	// of categories in turn.
	pool, err := requestRows(lm, 4096)
	if err != nil {
		return nil, err
	}
	offline, offRows, err := offlineRowsPerSec(ctx, lm, pool)
	if err != nil {
		return nil, err
	}
	res := &Result{Model: model, Inputs: len(lm.Pipeline.Inputs), OfflineRowsSec: offline, OfflineRows: offRows, Centers: lm.Centers(),
		Options: map[string]any{"batch_wait": o.BatchWait.String(), "batch_rows": o.BatchRows, "duration": o.Duration.String(), "warmup": o.Warmup.String()}}
	if res.Runs, err = o.load(ctx, model, pool, offline); err != nil {
		return nil, err
	}
	return res, nil
}

func (o *Options) progress(e Event) {
	if o.Progress != nil {
		o.Progress(e)
	}
}

// load serves the model on loopback and runs the load phases.
func (o *Options) load(ctx context.Context, model string, pool []map[string]any, offline float64) ([]Phase, error) {
	s, err := serve.New(serve.Options{ModelPath: model, BatchWait: o.BatchWait, BatchRows: o.BatchRows, MaxInFlight: max(256, 2*o.Clients),
		MaxRows: max(10000, slices.Max(o.Sizes)), MaxBodyBytes: 64 << 20, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- s.Serve(sctx, ln, nil) }()
	url := "http://" + ln.Addr().String() + "/v1/predict"
	if o.CPUProfile != nil {
		if err := pprof.StartCPUProfile(o.CPUProfile); err != nil {
			cancel()
			<-served
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	var runs []Phase
	for _, size := range o.Sizes {
		o.progress(Event{Phase: size})
		run, err := loadPhase(ctx, url, pool, size, o.Clients, o.Warmup, o.Duration, s.Batches)
		if err != nil {
			cancel()
			<-served
			return nil, err
		}
		run.OfflineRatio = run.RowsPerSec / offline
		runs = append(runs, run)
	}
	cancel()
	return runs, <-served
}

// fitSynthetic fits one RFM round on a low-rank classification
// table (the sign of y = x0·x1·1[x5 > 0] plus noise) and writes it.
func fitSynthetic(ctx context.Context, path string, n, d int, version string) error {
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
	tg, err := dataset.FitTarget(labels, "classification")
	if err != nil {
		return err
	}
	p, err := dataset.FitPipelineScaled(t, t.NamesExcept("y"), dataset.ScaleStandard)
	if err != nil {
		return err
	}
	ds, err := predictor.Encode(t, p, tg)
	if err != nil {
		return err
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 1
	m, err := rfm.Fit(ctx, cfg, ds, nil, nil)
	if err != nil {
		return err
	}
	return predictor.WriteFile(ctx, path, m, p, tg, &predictor.TrainingInfo{Data: "synthetic lowrank", Rows: n, Version: version}, "rfm "+version)
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

// requestRows builds n request rows for the model's inputs: numbers
// drawn around each column's training centre, categories cycling through
// their levels.
func requestRows(lm *predictor.Model, n int) ([]map[string]any, error) {
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
func offlineRowsPerSec(ctx context.Context, lm *predictor.Model, pool []map[string]any) (float64, int, error) {
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
func loadPhase(ctx context.Context, url string, pool []map[string]any, size, clients int, warm, dur time.Duration, batches func() (evals, rows int64)) (Phase, error) {
	bodies := make([][]byte, 0, 64)
	for k := 0; k < 64; k++ {
		lo := (k * size) % max(1, len(pool)-size)
		if size > len(pool) {
			return Phase{}, fmt.Errorf("--rows %d: at most %d rows per request here", size, len(pool))
		}
		b, err := json.Marshal(map[string]any{"rows": pool[lo : lo+size]})
		if err != nil {
			return Phase{}, err
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
		return Phase{}, err
	}
	run := Phase{RowsPerRequest: size, Clients: clients, Seconds: took.Seconds()}
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
