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
	"os/exec"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/sysmem"
	"github.com/rfmkit/rfm/serve"
)

// HostileKinds are the hostile loads of issue 42 that HostileRun knows:
// an 8 MiB JSON row of ~4 M values, a row object of ~700 000 unknown
// keys, a CSV row of ~4 M fields, valid requests of 10 000 rows (heavy
// but legitimate), and connections that send a body at 1 byte/s.
var HostileKinds = []string{"wide-row", "unknown-keys", "csv-wide", "max-rows", "slow-body"}

// HostileEnv names the environment variable that makes 'rfm bench serve'
// the hostile load generator of HostileRun (its value: the childSpec as
// JSON); see RunHostileChild.
const HostileEnv = "RFM_BENCH_SERVE_HOSTILE"

// HostilePhase is the ordinary clients' view of the server while one kind
// of hostile load runs ("none": the unloaded baseline of the same run).
type HostilePhase struct {
	Kind string `json:"kind"`
	// Scheduling is "fair" (the server's: large requests decoded a few at
	// a time, predicted in slices, small ones first) or "fcfs" (first
	// come, first served, no bound on decoding: the server before).
	Scheduling     string         `json:"scheduling"`
	HostileClients int            `json:"hostile_clients"`
	HostileStatus  map[string]int `json:"hostile_status,omitempty"`
	Requests       int            `json:"ordinary_requests"`
	Status         map[string]int `json:"ordinary_status"`
	P50ms          float64        `json:"ordinary_p50_ms"`
	P99ms          float64        `json:"ordinary_p99_ms"`
	// P99Ratio is P99ms over the same run's unloaded p99 (of the same
	// scheduling).
	P99Ratio float64 `json:"p99_over_unloaded"`
	// PeakRSSMB is the peak resident set of this process (the server and
	// the ordinary clients) during the phase.
	PeakRSSMB float64 `json:"server_peak_rss_mb"`
	// CPUSeconds is this process's CPU time in the measured part; the
	// kernel evaluations and the rows they predicted, the same.
	CPUSeconds  float64 `json:"server_cpu_seconds"`
	Evaluations int64   `json:"kernel_evaluations"`
	KernelRows  int64   `json:"kernel_rows"`
}

// HostileResult is what HostileRun measured.
type HostileResult struct {
	Model   string         `json:"model"`
	Centers int            `json:"centers"`
	Inputs  int            `json:"inputs"`
	CPUs    string         `json:"cpus"` // where the server and the generator ran
	Phases  []HostilePhase `json:"phases"`
	Options map[string]any `json:"options"`
}

// HostileOptions say what HostileRun serves and how hard it is attacked.
type HostileOptions struct {
	ModelSource
	Kinds          []string
	Hostile, Slow  int // hostile clients per kind; slow-body connections
	Ordinary       int // ordinary clients, each sending one-row requests back to back
	Duration, Warm time.Duration
	BatchWait      time.Duration
	BatchRows      int
	// CompareFCFS runs every phase a second time with first come, first
	// served scheduling (serve.Options BatchSlice and DecodeSlots -1).
	CompareFCFS     bool
	Progress        func(kind, scheduling string)
	generatorBinary string // tests: the program started as generator (default: this one)
}

// childSpec is the hostile generator's task.
type childSpec struct {
	URL     string  `json:"url"`
	Kind    string  `json:"kind"`
	Clients int     `json:"clients"`
	Seconds float64 `json:"seconds"`
	CPUs    []int   `json:"cpus,omitempty"`
	Names   []string
	Kinds   []string
}

// HostileRun serves the model on loopback with 'rfm serve”s defaults (8
// MiB bodies, 10 000 rows, 256 slots, the memory budget of the machine)
// and measures ordinary clients' latency with no hostile load and under
// each kind in turn, a fresh server per phase. The hostile clients run in
// a child process (this program again, told by HostileEnv), so that they
// never share the ordinary clients' Go scheduler; with two CPUs or more,
// this process (server and ordinary clients) is bound to the first half of
// the CPUs and the generator to the other half, as if the hostile clients
// were on other machines, for the baseline as for the loaded phases.
func HostileRun(ctx context.Context, o HostileOptions) (*HostileResult, error) {
	if o.Duration <= 0 || o.Warm < 0 || o.Ordinary < 1 || o.Hostile < 1 || o.Slow < 1 {
		return nil, fmt.Errorf("serveload: duration %s, warm-up %s, %d ordinary, %d hostile and %d slow clients: want positive numbers", o.Duration, o.Warm, o.Ordinary, o.Hostile, o.Slow)
	}
	model, lm, cleanup, err := o.ModelSource.load(ctx, func() {}, func(time.Duration) {})
	defer cleanup()
	if err != nil {
		return nil, err
	}
	o.Model = model
	for _, k := range o.Kinds {
		if !slices.Contains(HostileKinds, k) {
			return nil, fmt.Errorf("hostile kind %q: want one of %s", k, strings.Join(HostileKinds, ", "))
		}
	}
	var names, kinds []string
	for _, in := range lm.Pipeline.Inputs {
		names = append(names, in.Name)
		kinds = append(kinds, in.Kind.String())
	}
	res := &HostileResult{Model: o.Model, Centers: lm.Centers(), Inputs: len(names), CPUs: "not bound",
		Options: map[string]any{"duration": o.Duration.String(), "warmup": o.Warm.String(), "ordinary": o.Ordinary, "hostile": o.Hostile, "slow": o.Slow,
			"batch_wait": o.BatchWait.String(), "batch_rows": o.BatchRows}}
	var serverCPUs, genCPUs []int
	if cpus, err := sysmem.ProcessCPUs(); err == nil && len(cpus) >= 2 {
		serverCPUs, genCPUs = cpus[:len(cpus)/2], cpus[len(cpus)/2:]
		if err := sysmem.PinProcess(serverCPUs); err != nil {
			return nil, err
		}
		defer sysmem.PinProcess(cpus)
		res.CPUs = fmt.Sprintf("server and ordinary clients on CPUs %v, hostile generator on %v", serverCPUs, genCPUs)
	}
	scheds := []string{"fair"}
	if o.CompareFCFS {
		scheds = append(scheds, "fcfs")
	}
	unloaded := map[string]float64{}
	for _, kind := range append([]string{"none"}, o.Kinds...) {
		for _, sched := range scheds {
			if o.Progress != nil {
				o.Progress(kind, sched)
			}
			p, err := o.phase(ctx, kind, sched, names, kinds, genCPUs)
			if err != nil {
				return nil, fmt.Errorf("%s (%s): %w", kind, sched, err)
			}
			if kind == "none" {
				unloaded[sched] = p.P99ms
			}
			p.P99Ratio = p.P99ms / unloaded[sched]
			res.Phases = append(res.Phases, p)
		}
	}
	return res, nil
}

// phase runs one kind against a fresh server.
func (o *HostileOptions) phase(ctx context.Context, kind, sched string, names, kinds []string, genCPUs []int) (HostilePhase, error) {
	p := HostilePhase{Kind: kind, Scheduling: sched, Status: map[string]int{}}
	so := serve.Options{ModelPath: o.Model, BatchWait: o.BatchWait, BatchRows: o.BatchRows, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if sched == "fcfs" {
		so.BatchSlice, so.DecodeSlots = -1, -1
	}
	s, err := serve.New(so)
	if err != nil {
		return p, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return p, err
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- s.Serve(sctx, ln, nil) }()
	defer func() {
		stop()
		<-served
	}()
	url := "http://" + ln.Addr().String()

	var child *exec.Cmd
	var childOut bytes.Buffer
	if kind != "none" {
		spec := childSpec{URL: url, Kind: kind, Clients: o.Hostile, Seconds: (o.Warm + o.Duration + time.Second).Seconds(), CPUs: genCPUs, Names: names, Kinds: kinds}
		if kind == "slow-body" {
			spec.Clients = o.Slow
		}
		p.HostileClients = spec.Clients
		js, _ := json.Marshal(spec)
		bin := o.generatorBinary
		if bin == "" {
			if bin, err = os.Executable(); err != nil {
				return p, err
			}
		}
		child = exec.CommandContext(ctx, bin, "bench", "serve")
		child.Env = append(os.Environ(), HostileEnv+"="+string(js))
		child.Stdout, child.Stderr = &childOut, os.Stderr
		if err := child.Start(); err != nil {
			return p, fmt.Errorf("starting the hostile generator: %w", err)
		}
	}
	// The ordinary clients: warm-up (the hostile load building up), then
	// the measured time, with the peak resident set taken from its start.
	var cpu0 float64
	var e0, r0 int64
	debug.FreeOSMemory() // what earlier phases left is not this one's
	lat, codes := ordinaryLoad(ctx, url+"/v1/predict", okRow(names, kinds), o.Ordinary, o.Warm, o.Duration, func() {
		sysmem.ResetPeakRSS()
		cpu0 = processCPU()
		e0, r0 = s.Batches()
	})
	p.PeakRSSMB = float64(sysmem.PeakRSS()) / (1 << 20)
	p.CPUSeconds = processCPU() - cpu0
	e1, r1 := s.Batches()
	p.Evaluations, p.KernelRows = e1-e0, r1-r0
	p.Status = codes
	if child != nil {
		if err := child.Wait(); err != nil {
			return p, fmt.Errorf("the hostile generator: %w", err)
		}
		if err := json.Unmarshal(childOut.Bytes(), &p.HostileStatus); err != nil {
			return p, fmt.Errorf("the hostile generator's answer %q: %w", childOut.String(), err)
		}
	}
	if len(lat) == 0 {
		return p, fmt.Errorf("no ordinary request was answered (%v)", codes)
	}
	slices.Sort(lat)
	p.Requests = len(lat)
	p.P50ms, p.P99ms = lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	return p, nil
}

// ordinaryLoad runs clients sending body to url back to back for warm,
// then calls measuring and records latencies (ms) and statuses for dur.
func ordinaryLoad(ctx context.Context, url, body string, clients int, warm, dur time.Duration, measuring func()) ([]float64, map[string]int) {
	tr := &http.Transport{MaxIdleConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	var mu sync.Mutex
	var lat []float64
	codes := map[string]int{}
	start := time.Now()
	from, until := start.Add(warm), start.Add(warm+dur)
	var once sync.Once
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				t0 := time.Now()
				if t0.After(until) {
					return
				}
				if !t0.Before(from) {
					once.Do(measuring)
				}
				code := "transport error"
				r, err := hc.Post(url, "application/json", strings.NewReader(body))
				if err == nil {
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
					code = strconv.Itoa(r.StatusCode)
				}
				if t0.Before(from) {
					continue
				}
				mu.Lock()
				codes[code]++
				if err == nil {
					lat = append(lat, float64(time.Since(t0).Microseconds())/1000)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return lat, codes
}

// okRow is a one-row request body: every input at 0.5, categorical ones
// missing.
func okRow(names, kinds []string) string {
	return `{"rows": [` + okRecord(names, kinds) + `]}`
}

func okRecord(names, kinds []string) string {
	var b strings.Builder
	b.WriteString("{")
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		v := "0.5"
		if kinds[i] != dataset.Numeric.String() {
			v = "null"
		}
		fmt.Fprintf(&b, "%q: %s", n, v)
	}
	b.WriteString("}")
	return b.String()
}

// hostileBody builds the body of a kind (an 8 MiB body but for max-rows:
// 10 000 valid rows).
func hostileBody(kind string, names, kinds []string) (body []byte, ctype string) {
	const size = 8<<20 - 64
	var b bytes.Buffer
	switch kind {
	case "wide-row":
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = strconv.Quote(n)
		}
		b.WriteString(`{"columns": [` + strings.Join(quoted, ",") + `], "data": [[`)
		for b.Len() < size-4 {
			b.WriteString("1,")
		}
		b.WriteString("1]]}")
		return b.Bytes(), "application/json"
	case "unknown-keys":
		b.WriteString(`{"rows": [{`)
		for i := 0; b.Len() < size-20; i++ {
			fmt.Fprintf(&b, `"k%d":1,`, i)
		}
		b.WriteString(`"z":1}]}`)
		return b.Bytes(), "application/json"
	case "csv-wide":
		b.WriteString(strings.Join(names, ",") + "\n")
		for b.Len() < size-2 {
			b.WriteString("1,")
		}
		b.WriteString("1\n")
		return b.Bytes(), "text/csv"
	case "max-rows":
		row := okRecord(names, kinds)
		b.WriteString("[")
		for i := range 10000 {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(row)
		}
		b.WriteString("]")
		return b.Bytes(), "application/json"
	}
	return nil, ""
}

// RunHostileChild is the hostile generator HostileRun starts: spec (the
// value of HostileEnv) says the server, the kind, the clients and for how
// long; it writes the count of each answer's status to stdout as JSON.
func RunHostileChild(ctx context.Context, spec string, stdout io.Writer) error {
	var c childSpec
	if err := json.Unmarshal([]byte(spec), &c); err != nil {
		return fmt.Errorf("%s: %w", HostileEnv, err)
	}
	if c.CPUs != nil {
		if err := sysmem.PinProcess(c.CPUs); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(c.Seconds*float64(time.Second)))
	defer cancel()
	var mu sync.Mutex
	codes := map[string]int{}
	count := func(k string) {
		mu.Lock()
		codes[k]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	if c.Kind == "slow-body" {
		row := []byte(okRow(c.Names, c.Kinds))
		addr := strings.TrimPrefix(c.URL, "http://")
		for range c.Clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil { // reconnect when cut
					slowBody(ctx, addr, row, count)
				}
			}()
		}
	} else {
		body, ctype := hostileBody(c.Kind, c.Names, c.Kinds)
		if body == nil {
			return fmt.Errorf("hostile kind %q: want one of %s", c.Kind, strings.Join(HostileKinds, ", "))
		}
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.Clients}}
		for range c.Clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, "POST", c.URL+"/v1/predict", bytes.NewReader(body))
					req.Header.Set("Content-Type", ctype)
					r, err := hc.Do(req)
					if err != nil {
						if ctx.Err() == nil {
							count("transport error")
							time.Sleep(10 * time.Millisecond)
						}
						continue
					}
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
					count(strconv.Itoa(r.StatusCode))
				}
			}()
		}
	}
	wg.Wait()
	return json.NewEncoder(stdout).Encode(codes)
}

// slowBody sends one request whose body arrives at 1 byte/s.
func slowBody(ctx context.Context, addr string, row []byte, count func(string)) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		count("dial error")
		time.Sleep(100 * time.Millisecond)
		return
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(row))
	for i := 0; i < len(row) && ctx.Err() == nil; i++ {
		if _, err := conn.Write(row[i : i+1]); err != nil {
			count("cut")
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// processCPU is this process's user and system time so far, in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
