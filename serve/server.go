package serve

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/predictor"
)

// Options configure a Server. Zero fields take the defaults in brackets.
type Options struct {
	// ModelPath is the model file to serve (required). Reload reads it again.
	ModelPath string
	// MaxBodyBytes bounds a request body [8 MiB]; a larger body gets 413.
	MaxBodyBytes int64
	// MaxRows bounds the rows of one request [10 000]; more get 413.
	MaxRows int
	// MaxInFlight bounds the predict requests being predicted at once
	// [256] (a request takes its slot once its body is read and decoded);
	// beyond it a request gets 503 with Retry-After at once, instead of
	// queueing without bound.
	MaxInFlight int
	// MemoryBudget bounds the memory, in bytes, of all the requests being
	// read, decoded and predicted together [DefaultMemoryBudget]: each
	// request is charged as its body arrives and its values are decoded
	// (an estimate of their decoded size), and refused with 503 and
	// Retry-After when the budget is held by others, or 413 when it alone
	// needs more than three quarters of it. The last quarter is kept for
	// requests that need at most 1 MiB.
	MemoryBudget int64
	// DecodeSlots bounds the requests with bodies over 64 KiB (or of
	// unknown length) that decode, encode and answer at once, oldest first
	// [GOMAXPROCS/2, at least 1]; the others wait (holding no CPU, only the
	// bytes they have sent), and requests up to 64 KiB never wait. Hundreds
	// of large bodies decoded together would otherwise delay small
	// requests for seconds in Go's scheduler. Negative: no bound.
	DecodeSlots int
	// BatchWait is how long a batch may wait for more requests while others
	// are being read [1 ms]; BatchRows bounds a batch's rows [4 096].
	BatchWait time.Duration
	BatchRows int
	// BatchSlice is the rows of a large request predicted per kernel
	// evaluation [sized by the model: about 16 M multiply-adds, at most
	// BatchRows/16]. A request of more rows is predicted a slice at a
	// time, the one with the fewest rows left first, and every evaluation
	// also serves the small requests waiting: a small request never waits
	// behind whole large ones. Negative: no slices, every request first
	// come, first served (as before; for comparisons).
	BatchSlice int
	// Timeouts of the HTTP server: reading the headers [5 s] (a client
	// that trickles them is disconnected), the whole request [30 s],
	// writing the response [60 s], an idle keep-alive connection [120 s].
	ReadHeaderTimeout, ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// ShutdownTimeout bounds how long Serve waits for in-flight requests
	// once its context is done [30 s].
	ShutdownTimeout time.Duration
	// WatchInterval, when positive, checks the model file this often and
	// reloads it when it changes (SIGHUP-free deployments).
	WatchInterval time.Duration
	// Logger receives one line per reload, failure and shutdown step
	// [slog.Default()].
	Logger *slog.Logger
	// TLSCertFile and TLSKeyFile, when set (both), make Serve answer
	// HTTPS only, with this certificate chain and key (PEM).
	TLSCertFile, TLSKeyFile string
	// Tokens, when not empty, are the bearer tokens a client must send
	// ("Authorization: Bearer TOKEN") to predict or read /v1/model;
	// others get 401. They are compared in constant time (see ReadTokens).
	Tokens []string
	// AuthProbes requires a token for /healthz, /readyz and /metrics too
	// (by default they stay open, for load balancers and scrapers).
	AuthProbes bool
	// AllowSchemaChange lets a reload swap in a model with another task,
	// other input columns or other classes; by default such a file is
	// refused (logged and counted) and the serving model stays, since
	// every client would otherwise start getting 400s.
	AllowSchemaChange bool
}

func (o *Options) defaults() {
	def := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 8 << 20
	}
	if o.MaxRows <= 0 {
		o.MaxRows = 10000
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 256
	}
	if o.MemoryBudget <= 0 {
		o.MemoryBudget = DefaultMemoryBudget()
	}
	if o.DecodeSlots == 0 {
		o.DecodeSlots = max(runtime.GOMAXPROCS(0)/2, 1)
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 4096
	}
	def(&o.BatchWait, time.Millisecond)
	def(&o.ReadHeaderTimeout, 5*time.Second)
	def(&o.ReadTimeout, 30*time.Second)
	def(&o.WriteTimeout, 60*time.Second)
	def(&o.IdleTimeout, 120*time.Second)
	def(&o.ShutdownTimeout, 30*time.Second)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// loaded is the model being served and when it was loaded.
type loaded struct {
	m  *predictor.Model
	at time.Time
}

// Server serves one model file over HTTP. See the package documentation
// for the endpoints.
type Server struct {
	opt      Options
	log      *slog.Logger
	model    atomic.Pointer[loaded]
	reloadMu sync.Mutex
	batch    *batcher
	inflight chan struct{}
	gate     *cpuGate // large requests decoding or encoding (DecodeSlots)
	budget   budget
	tls      *tls.Config
	tokens   tokenSet
	ready    atomic.Bool
	reg      *prometheus.Registry
	met      *metrics
	handler  http.Handler
	// kernel evaluations and their rows, for Batches
	evals, evalRows atomic.Int64
	// fileStat is the model file as last loaded (for the watcher).
	statMu   sync.Mutex
	fileStat os.FileInfo
}

// Batches returns how many kernel evaluations the server has run and how
// many rows they predicted: rows/evaluations is the mean coalesced batch.
func (s *Server) Batches() (evaluations, rows int64) { return s.evals.Load(), s.evalRows.Load() }

// New loads the model file and prepares a server; it fails when the file
// cannot be served (unreadable, damaged, or without a column pipeline).
func New(opt Options) (*Server, error) {
	opt.defaults()
	if opt.ModelPath == "" {
		return nil, errors.New("serve: a model file is required")
	}
	m, err := loadModel(opt.ModelPath)
	if err != nil {
		return nil, err
	}
	s := &Server{opt: opt, log: opt.Logger, inflight: make(chan struct{}, opt.MaxInFlight), reg: prometheus.NewRegistry()}
	s.budget.limit = opt.MemoryBudget
	if opt.DecodeSlots > 0 {
		s.gate = newCPUGate(opt.DecodeSlots)
	}
	if s.tls, err = loadTLS(opt.TLSCertFile, opt.TLSKeyFile); err != nil {
		return nil, err
	}
	s.tokens = newTokenSet(opt.Tokens)
	s.met = newMetrics(s.reg, s)
	s.batch = newBatcher(opt.BatchWait, opt.BatchRows, opt.BatchSlice, func(rows, jobs int) {
		s.evals.Add(1)
		s.evalRows.Add(int64(rows))
		s.met.batchRows.Observe(float64(rows))
		s.met.batchRequests.Observe(float64(jobs))
	})
	s.model.Store(&loaded{m: m, at: time.Now()})
	s.met.setModel(m)
	s.ready.Store(true)
	s.handler = s.routes()
	s.fileStat, _ = os.Stat(opt.ModelPath)
	return s, nil
}

// Close stops the batching of predictions once the requests already
// queued are answered; a predict request after it gets 503. Serve closes
// the server when it returns; a program that only uses Handler calls it.
func (s *Server) Close() { s.batch.close() }

func loadModel(path string) (*predictor.Model, error) {
	m, err := predictor.Load(path)
	if err != nil {
		return nil, err
	}
	if err := m.NeedPipeline(); err != nil {
		return nil, err
	}
	return m, nil
}

// Model is the model being served.
func (s *Server) Model() *predictor.Model { return s.model.Load().m }

// Handler is the server's HTTP handler (for tests and embedding; Serve
// runs it with the timeouts of the options).
func (s *Server) Handler() http.Handler { return s.handler }

// Reload reads the model file again and, when it loads and checks (its
// checksum, version and sections), swaps it in atomically: requests already
// encoding rows finish on the model they started with. A file that fails
// leaves the old model serving; the failure is logged, counted in
// /metrics and returned.
func (s *Server) Reload() error {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	st, _ := os.Stat(s.opt.ModelPath)
	s.statMu.Lock()
	s.fileStat = st // a failed file is not retried until it changes again
	s.statMu.Unlock()
	m, err := loadModel(s.opt.ModelPath)
	if err != nil {
		s.met.reloads.WithLabelValues("error").Inc()
		s.met.reloadFailed.Set(1)
		s.log.Error("reload failed; the previous model keeps serving", "file", s.opt.ModelPath, "error", err.Error(), "serving", s.Model().Checksum)
		return err
	}
	if why := schemaChange(s.Model(), m); why != "" && !s.opt.AllowSchemaChange {
		s.met.reloads.WithLabelValues("refused").Inc()
		s.met.reloadFailed.Set(1)
		err := fmt.Errorf("reload refused: %s (clients of the serving model would get 400s; restart, or allow it with --allow-schema-change)", why)
		s.log.Error("reload refused; the previous model keeps serving", "file", s.opt.ModelPath, "checksum", m.Checksum, "error", err.Error(), "serving", s.Model().Checksum)
		return err
	}
	old := s.model.Swap(&loaded{m: m, at: time.Now()})
	s.met.reloads.WithLabelValues("ok").Inc()
	s.met.reloadFailed.Set(0)
	s.met.setModel(m)
	s.log.Info("model reloaded", "file", s.opt.ModelPath, "checksum", m.Checksum, "previous", old.m.Checksum)
	return nil
}

// Serve answers requests on ln until ctx is done, then stops accepting,
// reports not ready, and waits (up to ShutdownTimeout) for the requests in
// flight to finish before it returns. reload, when not nil, triggers
// Reload on each receive (the CLI feeds it SIGHUP).
func (s *Server) Serve(ctx context.Context, ln net.Listener, reload <-chan struct{}) error {
	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.opt.ReadHeaderTimeout,
		ReadTimeout:       s.opt.ReadTimeout,
		WriteTimeout:      s.opt.WriteTimeout,
		IdleTimeout:       s.opt.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	// Batches are spread over the cores by the kernel's own tasks; the
	// backend's threads would only spin between them.
	defer linalg.HoldSerial()()
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	go s.watch(watchCtx, reload)

	s.warnIfExposed(ln.Addr())
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	s.log.Info("serving", "addr", ln.Addr().String(), "tls", s.tls != nil, "auth", len(s.tokens) > 0, "model", s.opt.ModelPath, "checksum", s.Model().Checksum)
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
		s.ready.Store(false)
		s.log.Info("shutting down: finishing the requests in flight", "timeout", s.opt.ShutdownTimeout.String())
		sctx, cancel := context.WithTimeout(context.Background(), s.opt.ShutdownTimeout)
		err = srv.Shutdown(sctx)
		cancel()
		if err != nil {
			srv.Close()
			err = fmt.Errorf("shutdown: %w (requests still in flight were cut)", err)
		}
		<-served
	}
	stopWatch()
	s.Close()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	if err == nil {
		s.log.Info("stopped")
	}
	return err
}

// watch reloads on each receive from reload and, with a WatchInterval,
// when the model file changes (sameVersion).
func (s *Server) watch(ctx context.Context, reload <-chan struct{}) {
	var tick <-chan time.Time
	if s.opt.WatchInterval > 0 {
		t := time.NewTicker(s.opt.WatchInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-reload:
			s.Reload()
		case <-tick:
			st, err := os.Stat(s.opt.ModelPath)
			if err != nil {
				continue // being replaced; look again at the next tick
			}
			s.statMu.Lock()
			last := s.fileStat
			s.statMu.Unlock()
			if last != nil && sameVersion(st, last) {
				continue
			}
			s.Reload()
		}
	}
}

// sameVersion reports whether two looks at the model file saw the same
// contents: the same file, size, modification time and (where the system
// gives it) status-change time, which catches an in-place copy that keeps
// the old modification time (cp -p).
func sameVersion(a, b os.FileInfo) bool {
	if !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
		return false
	}
	ca, oka := changeTime(a)
	cb, okb := changeTime(b)
	return oka == okb && ca.Equal(cb)
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	probe := func(h http.Handler) http.Handler {
		if s.opt.AuthProbes {
			return s.authorize(h)
		}
		return h
	}
	mux.Handle("/v1/predict", s.instrument("predict", s.authorize(http.HandlerFunc(s.predict))))
	mux.Handle("/v1/model", s.instrument("model", s.authorize(http.HandlerFunc(s.modelInfo))))
	mux.Handle("/healthz", s.instrument("healthz", probe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}))))
	mux.Handle("/readyz", s.instrument("readyz", probe(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.ready.Load() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "shutting down"})
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "model": s.Model().Checksum})
	}))))
	mux.Handle("/metrics", probe(promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{})))
	mux.Handle("/", s.instrument("other", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, &httpError{http.StatusNotFound, fmt.Sprintf("no endpoint %s; the endpoints are POST /v1/predict, GET /v1/model, /healthz, /readyz, /metrics", r.URL.Path)})
	})))
	return mux
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// instrument counts and times a handler, and turns a panic into a JSON 500
// (logged with its stack, never sent to the client).
func (s *Server) instrument(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("internal error", "handler", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeError(sw, &httpError{http.StatusInternalServerError, "internal error; it is logged on the server"})
				}
			}
			code := sw.status
			if code == 0 {
				code = http.StatusOK
			}
			s.met.requests.WithLabelValues(name, fmt.Sprint(code)).Inc()
			s.met.latency.WithLabelValues(name).Observe(time.Since(start).Seconds())
		}()
		h.ServeHTTP(sw, r)
	})
}

// predictResponse is the answer to POST /v1/predict.
type predictResponse struct {
	Model string `json:"model"` // checksum of the model file that answered
	Task  string `json:"task"`
	Rows  int    `json:"rows"`
	// Predictions are class labels (strings) or regression values.
	Predictions   any         `json:"predictions"`
	Classes       []string    `json:"classes,omitempty"`
	Probabilities [][]float64 `json:"probabilities,omitempty"`
}

func (s *Server) predict(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, &httpError{http.StatusMethodNotAllowed, fmt.Sprintf("%s /v1/predict: use POST with the rows in the body", r.Method)})
		return
	}
	if r.ContentLength > s.opt.MaxBodyBytes {
		// Before the body is read, so that a client waiting for "100
		// Continue" gets the refusal instead.
		writeError(w, readError(&http.MaxBytesError{Limit: s.opt.MaxBodyBytes}))
		return
	}
	c := &charge{b: &s.budget}
	defer c.release()
	if err := c.add(requestBaseCost); err != nil {
		s.refuse(w, err)
		return
	}
	cur := s.model.Load().m // this request's model, even across a reload
	body := newGatedReader(r.Context(), http.MaxBytesReader(w, r.Body, s.opt.MaxBodyBytes), s.gate, r.ContentLength)
	defer body.release()
	req, err := decodeRequest(r.Context(), cur, r.Header.Get("Content-Type"), r.URL.Query(), body, s.opt.MaxRows, c)
	if err != nil {
		s.refuse(w, err)
		return
	}
	// The slot is taken only now that the body is in: a slow client holds
	// only the bytes it has sent, never a slot.
	select {
	case s.inflight <- struct{}{}:
		defer func() { <-s.inflight }()
	default:
		s.refuse(w, &httpError{http.StatusServiceUnavailable, fmt.Sprintf("the server is at its limit of %d requests in flight; retry shortly", s.opt.MaxInFlight)})
		return
	}
	s.met.inflight.Inc()
	defer s.met.inflight.Dec()
	n := req.table.NRows()
	// The encoded rows, their copy into a shared batch, and the scores.
	if err := c.add(int64(n) * int64(cur.D()+cur.Outputs()) * 8 * 2); err != nil {
		s.refuse(w, err)
		return
	}
	s.batch.coming.Add(1)
	queued := false
	defer func() {
		if !queued {
			s.batch.coming.Add(-1)
		}
	}()
	// A large request keeps its CPU slot while its rows are encoded.
	if body.large() {
		if err := body.acquire(); err != nil {
			w.WriteHeader(statusClientClosed)
			return
		}
	}
	x, n, _, err := cur.Pipeline.Transform(req.table)
	body.release() // not held while waiting for the kernel
	if err != nil {
		writeError(w, badRequest("%v", err))
		return
	}
	queued = true
	s.batch.coming.Add(-1)
	scores, err := s.batch.submit(r.Context(), cur, x, n)
	if err != nil {
		var ie *rfm.InputError
		switch {
		case r.Context().Err() != nil:
			w.WriteHeader(statusClientClosed) // nobody reads it; counted as such
		case errors.Is(err, errStopped):
			writeError(w, &httpError{http.StatusServiceUnavailable, "the server is shutting down; retry on another instance"})
		case errors.As(err, &ie):
			writeError(w, badRequest("request: %v", err))
		default:
			s.log.Error("prediction failed", "error", err.Error())
			writeError(w, &httpError{http.StatusInternalServerError, "prediction failed: " + err.Error()})
		}
		return
	}
	p, err := cur.Decode(scores, n)
	if err != nil {
		writeError(w, &httpError{http.StatusInternalServerError, err.Error()})
		return
	}
	s.met.rows.Add(float64(n))
	if body.large() {
		if err := body.acquire(); err != nil { // for the answer's encoding
			w.WriteHeader(statusClientClosed)
			return
		}
	}
	resp := predictResponse{Model: cur.Checksum, Task: string(cur.Task()), Rows: n}
	if p.Labels != nil {
		resp.Predictions = p.Labels
		if req.proba {
			resp.Classes = p.Classes
			c := len(p.Classes)
			resp.Probabilities = make([][]float64, n)
			for i := range resp.Probabilities {
				resp.Probabilities[i] = p.Proba[i*c : (i+1)*c]
			}
		}
	} else {
		resp.Predictions = p.Values
	}
	writeJSON(w, http.StatusOK, resp)
}

// refuse answers an error and closes the connection, counting a 503 (the budget or the slots
// being held by others) in rfm_predict_requests_rejected_total and
// telling the client when to retry.
func (s *Server) refuse(w http.ResponseWriter, err error) {
	// The rest of a refused body is not worth reading (or draining).
	w.Header().Set("Connection", "close")
	var he *httpError
	if errors.As(err, &he) && he.status == http.StatusServiceUnavailable {
		s.met.rejected.Inc()
		w.Header().Set("Retry-After", "1")
	}
	writeError(w, err)
}

// withoutPaths is t with its data path cut to the file's base name.
func withoutPaths(t *predictor.TrainingInfo) *predictor.TrainingInfo {
	if t == nil {
		return nil
	}
	c := *t
	var names []string
	for _, p := range strings.Split(c.Data, ",") {
		names = append(names, filepath.Base(strings.TrimSpace(p)))
	}
	c.Data = strings.Join(names, ",")
	return &c
}

// MemoryInUse is how much of the memory budget the requests being read,
// decoded and predicted hold now, in bytes.
func (s *Server) MemoryInUse() int64 { return s.budget.used.Load() }

// modelJSON is the answer to GET /v1/model.
type modelJSON struct {
	Model         string                  `json:"model"` // checksum
	LoadedAt      time.Time               `json:"loaded_at"`
	CreatedBy     string                  `json:"created_by,omitempty"`
	FormatVersion int                     `json:"format_version"`
	Kind          string                  `json:"kind"` // "rfm", "tree" or "ensemble"
	Task          string                  `json:"task"`
	Target        string                  `json:"target"`
	Classes       []string                `json:"classes,omitempty"`
	Inputs        []dataset.InputColumn   `json:"inputs"`
	Features      int                     `json:"features"`
	Centers       int                     `json:"centers"`
	Leaves        int                     `json:"leaves,omitempty"`
	Members       int                     `json:"members,omitempty"`
	Config        any                     `json:"config"`
	Rounds        any                     `json:"rounds,omitempty"`
	BestRound     *int                    `json:"best_round,omitempty"`
	Calibration   string                  `json:"calibration,omitempty"`
	Training      *predictor.TrainingInfo `json:"training,omitempty"`
	Limits        map[string]any          `json:"limits"`
}

func (s *Server) modelInfo(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, &httpError{http.StatusMethodNotAllowed, r.Method + " /v1/model: use GET"})
		return
	}
	l := s.model.Load()
	m := l.m
	// No file paths: neither the model's nor its training data's.
	info := modelJSON{Model: m.Checksum, LoadedAt: l.at, CreatedBy: m.CreatedBy, FormatVersion: m.FormatVersion,
		Task: string(m.Task()), Target: m.Target.Name, Classes: m.Classes(), Inputs: m.Inputs(), Features: m.D(),
		Config: m.Config(), Training: withoutPaths(m.Training),
		Limits: map[string]any{"max_body_bytes": s.opt.MaxBodyBytes, "max_rows": s.opt.MaxRows, "max_in_flight": s.opt.MaxInFlight}}
	if cal := m.Calibration(); cal != nil {
		info.Calibration = string(cal.Method)
	}
	info.Kind, info.Centers = m.Kind(), m.Centers()
	if t, ok := m.Fitted.(interface{ NumLeaves() int }); ok {
		info.Leaves = t.NumLeaves()
	}
	if e, ok := m.Fitted.(interface{ NumMembers() int }); ok {
		info.Members = e.NumMembers()
	}
	if r, ok := m.Fitted.(rfm.Rounded); ok {
		h, best := r.Rounds()
		info.Rounds, info.BestRound = h, &best
	}
	writeJSON(w, http.StatusOK, info)
}

// statusClientClosed is recorded for a request whose client left before
// its answer (nginx's convention); nothing reaches the client.
const statusClientClosed = 499

// writeJSON encodes v before it writes the status, so that a value that
// cannot be encoded is a 500 with a message, not a 200 with no body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(map[string]string{"error": "the answer could not be encoded: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(b, '\n')) // a failed write is the client's going away
}

// writeError answers with {"error": message} and the error's status (500
// for an error without one).
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var he *httpError
	if errors.As(err, &he) {
		status = he.status
	}
	if status == http.StatusRequestEntityTooLarge {
		w.Header().Set("Connection", "close") // the rest of a bad body is not worth reading
	}
	writeJSON(w, status, map[string]string{"error": clipMessage(err.Error())})
}

// maxErrorBytes bounds an error message: one that quotes client input
// (a value, a key, a line) is cut, never echoed whole.
const maxErrorBytes = 1024

func clipMessage(msg string) string {
	if len(msg) <= maxErrorBytes {
		return msg
	}
	cut := maxErrorBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + fmt.Sprintf("… (message cut; %d bytes in all)", len(msg))
}
