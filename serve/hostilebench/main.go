// Command hostilebench measures 'rfm serve' under the hostile clients of
// issue 42: for each kind, a fresh server is started, 256 clients send
// that request in a loop (or 300 connections trickle bodies at 1 byte/s)
// while a few ordinary clients send one-row predictions, and it reports
// the server's peak resident set (VmHWM), the ordinary clients' latency
// percentiles and status codes, against the same clients with no hostile
// load.
//
//	go run ./serve/hostilebench --rfm ./rfm --model m.rfm [--seconds 15] [--json out.json]
//
// The model needs a column pipeline (any 'rfm fit' model). Linux only
// (the peak is read from /proc).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

type phase struct {
	Kind          string         `json:"kind"`
	Hostile       int            `json:"hostile_clients"`
	HostileCodes  map[string]int `json:"hostile_status"`
	PeakRSSMB     float64        `json:"server_peak_rss_mb"`
	ServerCPU     float64        `json:"server_cpu_seconds"`
	Requests      int            `json:"ordinary_requests"`
	P50ms         float64        `json:"ordinary_p50_ms"`
	P99ms         float64        `json:"ordinary_p99_ms"`
	OrdinaryCodes map[string]int `json:"ordinary_status"`
}

func main() {
	rfmBin := flag.String("rfm", "rfm", "the rfm binary")
	model := flag.String("model", "", "model file (required)")
	seconds := flag.Float64("seconds", 15, "seconds per phase")
	hostile := flag.Int("hostile", 256, "hostile clients per phase")
	slow := flag.Int("slow", 300, "slow-body connections")
	ordinary := flag.Int("ordinary", 4, "ordinary clients")
	kinds := flag.String("kinds", "none,wide-row,unknown-keys,csv-wide,max-rows,slow-body", "phases to run")
	extra := flag.String("serve-flags", "", "extra flags for rfm serve (space-separated)")
	out := flag.String("json", "", "write the figures here as JSON")
	flag.Parse()
	if *model == "" {
		fmt.Fprintln(os.Stderr, "--model is required")
		os.Exit(2)
	}
	dur := time.Duration(*seconds * float64(time.Second))
	var phases []phase
	for _, kind := range strings.Split(*kinds, ",") {
		p, err := runPhase(*rfmBin, *model, kind, dur, *hostile, *slow, *ordinary, strings.Fields(*extra))
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", kind, err)
			os.Exit(1)
		}
		fmt.Printf("%-13s hostile=%-4d peak RSS %7.1f MB  server CPU %5.1f s  ordinary: %5d requests p50 %6.2f ms p99 %7.2f ms %v  hostile answers %v\n",
			p.Kind, p.Hostile, p.PeakRSSMB, p.ServerCPU, p.Requests, p.P50ms, p.P99ms, p.OrdinaryCodes, p.HostileCodes)
		phases = append(phases, p)
	}
	if *out != "" {
		b, _ := json.MarshalIndent(map[string]any{"args": os.Args[1:], "phases": phases}, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

// server starts rfm serve on a free port and returns its URL.
func server(rfmBin, model string, extra []string) (*exec.Cmd, string, error) {
	args := append([]string{"serve", "--model", model, "--addr", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(rfmBin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	re := regexp.MustCompile(`msg=serving addr=(\S+)`)
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return cmd, "http://" + m[1], nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, "", fmt.Errorf("the server did not start")
}

// cpuSeconds is the process's user and system time so far.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / 100 // clock ticks
}

func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// modelInputs asks the server for the model's inputs and their kinds.
func modelInputs(url string) ([]string, []string, error) {
	r, err := http.Get(url + "/v1/model")
	if err != nil {
		return nil, nil, err
	}
	defer r.Body.Close()
	var info struct {
		Inputs []struct{ Name, Kind string }
	}
	if err := json.NewDecoder(r.Body).Decode(&info); err != nil {
		return nil, nil, err
	}
	var names, kinds []string
	for _, in := range info.Inputs {
		names = append(names, in.Name)
		kinds = append(kinds, in.Kind)
	}
	return names, kinds, nil
}

// okRow is one valid row object.
func okRow(names, kinds []string) string {
	var b strings.Builder
	b.WriteString("{")
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		v := "0.5"
		if kinds[i] != "numeric" {
			v = `null`
		}
		fmt.Fprintf(&b, "%q: %s", n, v)
	}
	b.WriteString("}")
	return b.String()
}

// hostileBody builds the 8 MiB (or max-rows) body of a kind.
func hostileBody(kind string, names, kinds []string) (body []byte, ctype string) {
	const size = 8<<20 - 64
	var b bytes.Buffer
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	switch kind {
	case "wide-row":
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
		row := okRow(names, kinds)
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

func runPhase(rfmBin, model, kind string, dur time.Duration, hostile, slow, ordinary int, extra []string) (phase, error) {
	cmd, url, err := server(rfmBin, model, extra)
	if err != nil {
		return phase{}, err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	names, kinds, err := modelInputs(url)
	if err != nil {
		return phase{}, err
	}
	p := phase{Kind: kind, HostileCodes: map[string]int{}, OrdinaryCodes: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	count := func(m map[string]int, k string) {
		mu.Lock()
		m[k]++
		mu.Unlock()
	}
	switch kind {
	case "none":
	case "slow-body":
		p.Hostile = slow
		row := []byte(`{"rows": [` + okRow(names, kinds) + `]}`)
		for range slow {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil { // reconnect when cut
					conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
					if err != nil {
						count(p.HostileCodes, "dial error")
						time.Sleep(100 * time.Millisecond)
						continue
					}
					fmt.Fprintf(conn, "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(row))
					for i := 0; i < len(row) && ctx.Err() == nil; i++ {
						if _, err := conn.Write(row[i : i+1]); err != nil {
							count(p.HostileCodes, "cut")
							break
						}
						select {
						case <-ctx.Done():
						case <-time.After(time.Second):
						}
					}
					conn.Close()
				}
			}()
		}
	default:
		body, ctype := hostileBody(kind, names, kinds)
		if body == nil {
			return phase{}, fmt.Errorf("unknown kind %q", kind)
		}
		p.Hostile = hostile
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: hostile, MaxConnsPerHost: 0}}
		for range hostile {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/predict", bytes.NewReader(body))
					req.Header.Set("Content-Type", ctype)
					r, err := hc.Do(req)
					if err != nil {
						if ctx.Err() == nil {
							count(p.HostileCodes, "transport error")
							time.Sleep(10 * time.Millisecond)
						}
						continue
					}
					io.Copy(io.Discard, r.Body)
					r.Body.Close()
					count(p.HostileCodes, strconv.Itoa(r.StatusCode))
				}
			}()
		}
	}
	// Ordinary clients, after a second for the hostile load to build up.
	time.Sleep(time.Second)
	row := []byte(`{"rows": [` + okRow(names, kinds) + `]}`)
	var lat []float64
	var done atomic.Int64
	oc := &http.Client{Timeout: 30 * time.Second}
	var owg sync.WaitGroup
	for range ordinary {
		owg.Add(1)
		go func() {
			defer owg.Done()
			for ctx.Err() == nil {
				start := time.Now()
				r, err := oc.Post(url+"/v1/predict", "application/json", bytes.NewReader(row))
				if err != nil {
					if ctx.Err() == nil {
						count(p.OrdinaryCodes, "transport error")
					}
					continue
				}
				io.Copy(io.Discard, r.Body)
				r.Body.Close()
				ms := float64(time.Since(start).Microseconds()) / 1000
				mu.Lock()
				lat = append(lat, ms)
				p.OrdinaryCodes[strconv.Itoa(r.StatusCode)]++
				mu.Unlock()
				done.Add(1)
			}
		}()
	}
	owg.Wait()
	p.PeakRSSMB = peakRSS(cmd.Process.Pid)
	p.ServerCPU = cpuSeconds(cmd.Process.Pid)
	wg.Wait()
	if rss := peakRSS(cmd.Process.Pid); rss > p.PeakRSSMB {
		p.PeakRSSMB = rss
	}
	slices.Sort(lat)
	p.Requests = len(lat)
	if len(lat) > 0 {
		p.P50ms = lat[len(lat)/2]
		p.P99ms = lat[min(len(lat)-1, len(lat)*99/100)]
	}
	return p, nil
}
