package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/predictor"
)

// trainCSV is a mixed table: two numbers (x2 with missing cells), a colour
// and a class (or, with regression, a value) that depend on all three.
func trainCSV(n int, seed uint64, regression bool) string {
	r := rand.New(rand.NewPCG(seed, 3))
	var b strings.Builder
	b.WriteString("x1,x2,color,y\n")
	colors := []string{"red", "green", "blue"}
	for i := 0; i < n; i++ {
		x1, x2, c := r.NormFloat64(), r.NormFloat64(), r.IntN(3)
		var y string
		if regression {
			y = fmt.Sprint(2*x1 + x2 + float64(c))
		} else if x1+0.5*x2+float64(c)-1 > 0 {
			y = "yes"
		} else {
			y = "no"
		}
		x2s := fmt.Sprint(x2)
		if i%13 == 5 {
			x2s = "NA"
		}
		fmt.Fprintf(&b, "%v,%s,%s,%s\n", x1, x2s, colors[c], y)
	}
	return b.String()
}

// writeModel fits a model on trainCSV(rows, seed) and writes it to path.
func writeModel(t testing.TB, path string, rows int, seed uint64, regression bool) {
	t.Helper()
	tab, err := dataset.Read(strings.NewReader(trainCSV(rows, seed, regression)), "train.csv", dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 1
	m, err := predictor.Train(context.Background(), tab, predictor.TrainOptions{Target: "y", Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
}

// testServer runs a server on a loopback listener until the test ends.
type testServer struct {
	*Server
	url    string
	cancel context.CancelFunc
	done   chan error
	reload chan struct{}
	logs   *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startServer(t *testing.T, opt Options) *testServer {
	t.Helper()
	logs := &syncBuffer{}
	opt.Logger = slog.New(slog.NewTextHandler(logs, nil))
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ts := &testServer{Server: s, url: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan error, 1), reload: make(chan struct{}), logs: logs}
	go func() { ts.done <- s.Serve(ctx, ln, ts.reload) }()
	t.Cleanup(func() {
		cancel()
		if err := <-ts.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

type answer struct {
	status int
	body   []byte
	resp   predictResponse
	err    string
}

// post sends a body to url (the predict endpoint, with a query maybe).
func post(t testing.TB, url, contentType, body string) answer {
	t.Helper()
	r, err := http.Post(url, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	a := answer{status: r.StatusCode, body: b}
	if r.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, &a.resp); err != nil {
			t.Fatalf("answer is not JSON: %v\n%s", err, b)
		}
	} else {
		var e struct{ Error string }
		if err := json.Unmarshal(b, &e); err != nil || e.Error == "" {
			t.Fatalf("status %d without a JSON error: %s", r.StatusCode, b)
		}
		a.err = e.Error
	}
	return a
}

// testRows returns n rows of the table in the three layouts.
func testRows(n int, seed uint64) (records []map[string]any, csvText string, columnsBody string) {
	text := trainCSV(n, seed, false)
	lines := strings.Split(strings.TrimSpace(text), "\n")
	var csvb strings.Builder
	csvb.WriteString("color,x1,x2\n")
	var data [][]any
	for _, line := range lines[1:] {
		f := strings.Split(line, ",")
		var x1, x2 any
		var v float64
		fmt.Sscan(f[0], &v)
		x1 = v
		if f[1] != "NA" {
			fmt.Sscan(f[1], &v)
			x2 = v
		}
		records = append(records, map[string]any{"x1": x1, "x2": x2, "color": f[2]})
		data = append(data, []any{f[2], x1, x2})
		fmt.Fprintf(&csvb, "%s,%s,%s\n", f[2], f[0], f[1])
	}
	cb, _ := json.Marshal(map[string]any{"columns": []string{"color", "x1", "x2"}, "data": data, "proba": true})
	return records, csvb.String(), string(cb)
}

// Single rows, batches and the three body layouts answer exactly what the
// library computes, with the checksum of the model that answered.
func TestPredictEqualsLibrary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.rfm")
	writeModel(t, path, 500, 1, false)
	ts := startServer(t, Options{ModelPath: path})
	lib, err := predictor.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	records, csvText, columnsBody := testRows(120, 9)
	want, err := lib.PredictRecords(context.Background(), "", records)
	if err != nil {
		t.Fatal(err)
	}
	check := func(label string, a answer, lo, n int) {
		t.Helper()
		if a.status != 200 || a.resp.Model != lib.Checksum || a.resp.Rows != n || a.resp.Task != "classification" {
			t.Fatalf("%s: status %d %s", label, a.status, a.body)
		}
		preds := a.resp.Predictions.([]any)
		for i := 0; i < n; i++ {
			if preds[i] != want.Labels[lo+i] {
				t.Fatalf("%s: row %d is %v, library says %v", label, i, preds[i], want.Labels[lo+i])
			}
			if a.resp.Probabilities != nil {
				for k, p := range a.resp.Probabilities[i] {
					if math.Float64bits(p) != math.Float64bits(want.Proba[(lo+i)*2+k]) {
						t.Fatalf("%s: row %d probability %d is %v, library says %v", label, i, k, p, want.Proba[(lo+i)*2+k])
					}
				}
			}
		}
	}
	for i := 0; i < 5; i++ {
		b, _ := json.Marshal(map[string]any{"rows": records[i : i+1], "proba": true})
		a := post(t, ts.url+"/v1/predict", "application/json", string(b))
		check(fmt.Sprintf("single row %d", i), a, i, 1)
		if len(a.resp.Probabilities) != 1 || len(a.resp.Classes) != 2 {
			t.Fatalf("no probabilities: %s", a.body)
		}
	}
	b, _ := json.Marshal(records)
	check("bare array", post(t, ts.url+"/v1/predict", "application/json", string(b)), 0, 120)
	check("columns+data", post(t, ts.url+"/v1/predict", "application/json", columnsBody), 0, 120)
	a := post(t, ts.url+"/v1/predict?proba=true", "text/csv; charset=utf-8", csvText)
	check("csv", a, 0, 120)
	if len(a.resp.Probabilities) != 120 {
		t.Errorf("csv with proba=true: %d probability rows", len(a.resp.Probabilities))
	}
}

// metricValue reads one sample of the server's /metrics ("" labels: the
// first sample of the name).
func metricValue(t *testing.T, url, series string) float64 {
	t.Helper()
	r, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	sc := bufio.NewScanner(r.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, series+" ") {
			var v float64
			fmt.Sscan(strings.TrimPrefix(line, series+" "), &v)
			return v
		}
	}
	t.Fatalf("/metrics has no %s", series)
	return 0
}

// Concurrent requests are coalesced into shared kernel evaluations, and
// every client still gets exactly its own rows' answers.
func TestConcurrentRequestsAreCoalesced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 500, 1, false)
	ts := startServer(t, Options{ModelPath: path, BatchWait: 20 * time.Millisecond})
	lib := ts.Model()
	records, _, _ := testRows(300, 4)
	want, err := lib.PredictRecords(context.Background(), "", records)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Parallel(t, 32, func(g int) error {
		for rep := 0; rep < 4; rep++ {
			lo, n := (g*7+rep*31)%250, 1+(g%5)*10
			b, _ := json.Marshal(map[string]any{"rows": records[lo : lo+n], "proba": true})
			a := post(t, ts.url+"/v1/predict", "application/json", string(b))
			if a.status != 200 {
				return fmt.Errorf("client %d: %d %s", g, a.status, a.body)
			}
			for i, row := range a.resp.Probabilities {
				for k, p := range row {
					if p != want.Proba[(lo+i)*2+k] {
						return fmt.Errorf("client %d: row %d: %v, library %v", g, lo+i, p, want.Proba[(lo+i)*2+k])
					}
				}
			}
		}
		return nil
	})
	batches := metricValue(t, ts.url, "rfm_batch_requests_count")
	requests := metricValue(t, ts.url, "rfm_batch_requests_sum")
	if requests != 128 || batches >= requests {
		t.Errorf("%v requests in %v kernel evaluations: nothing was coalesced", requests, batches)
	}
	sent := 0
	for g := 0; g < 32; g++ {
		sent += 4 * (1 + (g%5)*10)
	}
	if rows := metricValue(t, ts.url, "rfm_rows_predicted_total"); rows != float64(sent) {
		t.Errorf("rows predicted %v, sent %d", rows, sent)
	}
}

// writeAtomic replaces path's content the way deployments should (and
// rfm fit does): a new file renamed over the old.
func writeAtomic(t *testing.T, path string, b []byte) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// A reload under load drops no request: each answer comes whole from the
// old or the new model (its checksum says which), and after the reload the
// new one answers. A corrupt replacement leaves the old model serving, and
// says so in the log and in /metrics.
func TestReloadUnderLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.rfm")
	writeModel(t, path, 400, 1, false)
	next := filepath.Join(dir, "next.rfm")
	writeModel(t, next, 400, 2, false) // another fit: other numbers
	ts := startServer(t, Options{ModelPath: path})
	oldLib := ts.Model()
	newLib, err := predictor.Load(next)
	if err != nil {
		t.Fatal(err)
	}
	records, _, _ := testRows(40, 5)
	wantOld, _ := oldLib.PredictRecords(context.Background(), "", records)
	wantNew, _ := newLib.PredictRecords(context.Background(), "", records)
	body, _ := json.Marshal(map[string]any{"rows": records, "proba": true})

	var stop atomic.Bool
	var wg sync.WaitGroup
	var answered, sawNew atomic.Int64
	errs := make(chan string, 16)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				a := post(t, ts.url+"/v1/predict", "application/json", string(body))
				if a.status != 200 {
					errs <- fmt.Sprintf("status %d: %s", a.status, a.body)
					return
				}
				want := wantOld
				switch a.resp.Model {
				case oldLib.Checksum:
				case newLib.Checksum:
					want = wantNew
					sawNew.Add(1)
				default:
					errs <- "unknown checksum " + a.resp.Model
					return
				}
				for i, row := range a.resp.Probabilities {
					if row[1] != want.Proba[2*i+1] {
						errs <- fmt.Sprintf("row %d: %v from model %s, which says %v", i, row[1], a.resp.Model[:8], want.Proba[2*i+1])
						return
					}
				}
				answered.Add(1)
			}
		}()
	}
	time.Sleep(200 * time.Millisecond)
	b, _ := os.ReadFile(next)
	writeAtomic(t, path, b)
	ts.reload <- struct{}{} // as SIGHUP does
	deadline := time.Now().Add(5 * time.Second)
	for ts.Model().Checksum != newLib.Checksum && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	// A damaged replacement: one flipped byte.
	b[len(b)/2] ^= 0x10
	writeAtomic(t, path, b)
	if err := ts.Reload(); err == nil || !strings.Contains(err.Error(), "corrupted") {
		t.Errorf("reload of a damaged file: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if ts.Model().Checksum != newLib.Checksum || sawNew.Load() == 0 || answered.Load() < 20 {
		t.Errorf("serving %s; %d answers, %d from the new model", ts.Model().Checksum[:8], answered.Load(), sawNew.Load())
	}
	if v := metricValue(t, ts.url, `rfm_model_reloads_total{result="error"}`); v != 1 {
		t.Errorf("reload errors counted: %v", v)
	}
	if v := metricValue(t, ts.url, `rfm_model_reloads_total{result="ok"}`); v != 1 {
		t.Errorf("reloads counted: %v", v)
	}
	if v := metricValue(t, ts.url, "rfm_model_last_reload_failed"); v != 1 {
		t.Errorf("last reload failed: %v", v)
	}
	if v := metricValue(t, ts.url, `rfm_model_info{checksum="`+newLib.Checksum+`",kind="rfm"}`); v != 1 {
		t.Errorf("model info: %v", v)
	}
	if !strings.Contains(ts.logs.String(), "reload failed; the previous model keeps serving") {
		t.Errorf("log:\n%s", ts.logs.String())
	}
	if a := post(t, ts.url+"/v1/predict", "application/json", string(body)); a.status != 200 || a.resp.Model != newLib.Checksum {
		t.Errorf("after the failed reload: %d %s", a.status, a.body)
	}
}

// watchedServer serves dir/m.rfm with a 20 ms watch, and writes another
// model of the same inputs to next for the test to swap in.
func watchedServer(t *testing.T) (ts *testServer, dir, path, next, first string) {
	dir = t.TempDir()
	path = filepath.Join(dir, "m.rfm")
	writeModel(t, path, 300, 1, false)
	next = filepath.Join(dir, "next.rfm")
	writeModel(t, next, 300, 3, false)
	ts = startServer(t, Options{ModelPath: path, WatchInterval: 20 * time.Millisecond})
	return ts, dir, path, next, ts.Model().Checksum
}

// The file watcher reloads a replaced file without a signal.
func TestWatchReloads(t *testing.T) {
	ts, _, path, next, first := watchedServer(t)
	b, _ := os.ReadFile(next)
	time.Sleep(50 * time.Millisecond)
	writeAtomic(t, path, b)
	deadline := time.Now().Add(5 * time.Second)
	for ts.Model().Checksum == first && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if ts.Model().Checksum == first {
		t.Fatal("the replaced file was not reloaded")
	}
}

// A copy over the model file that keeps its size and modification time
// (cp -p writes in place, then restores the time) is still seen: here the
// same model copied over itself, which the watcher reloads (counted).
func TestWatchInPlaceCopy(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the status-change time is read on Linux only")
	}
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, false)
	b, _ := os.ReadFile(path)
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Options{ModelPath: path, WatchInterval: 20 * time.Millisecond})
	time.Sleep(60 * time.Millisecond)
	if v := metricValue(t, ts.url, `rfm_model_reloads_total{result="ok"}`); v != 0 {
		t.Fatalf("%v reloads of an untouched file", v)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil { // in place: same inode
		t.Fatal(err)
	}
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(path)
	if !os.SameFile(before, after) || after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatal("the copy did not keep the file, its size and its time")
	}
	deadline := time.Now().Add(5 * time.Second)
	for metricValue(t, ts.url, `rfm_model_reloads_total{result="ok"}`) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if v := metricValue(t, ts.url, `rfm_model_reloads_total{result="ok"}`); v != 1 {
		t.Fatalf("an in-place copy keeping size and time: %v reloads, want 1", v)
	}
}

// Bad requests get a 4xx with a JSON message naming what is wrong, and
// leave the server healthy.
func TestBadRequests(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, false)
	ts := startServer(t, Options{ModelPath: path, MaxBodyBytes: 4096, MaxRows: 20})
	ok := `{"x1": 0.5, "x2": 1, "color": "red"}`
	many := "[" + strings.TrimSuffix(strings.Repeat(ok+",", 21), ",") + "]"
	for _, c := range []struct {
		name, ctype, body string
		status            int
		want              string
	}{
		{"malformed", "application/json", `{"rows": [{"x1": 1,}]}`, 400, "malformed JSON at byte"},
		{"truncated", "application/json", `{"rows": [{"x1": 1`, 400, "malformed JSON"},
		{"NaN literal", "application/json", `{"rows": [{"x1": NaN, "x2": 1, "color": "red"}]}`, 400, "malformed JSON at byte"},
		{"two values", "application/json", `{"rows": [` + ok + `]} {}`, 400, "more data after the request's JSON value"},
		{"empty", "application/json", ``, 400, "the body is empty"},
		{"no rows", "application/json", `{"rows": []}`, 400, "the request has no rows"},
		{"unknown field", "application/json", `{"row": [` + ok + `]}`, 400, `unknown field "row"`},
		{"rows not array", "application/json", `{"rows": 3}`, 400, `field "rows" is a number, not an array`},
		{"scalar body", "application/json", `"hello"`, 400, "the body is a string"},
		{"trailing brace", "application/json", `{"rows": [` + ok + `]}}`, 400, "malformed JSON at byte"},
		{"duplicate field", "application/json", `{"rows": [` + ok + `], "rows": null}`, 400, `field "rows" is given twice`},
		{"field case", "application/json", `{"ROWS": [` + ok + `]}`, 400, `unknown field "ROWS"`},
		{"row not an object", "application/json", `[` + ok + `, 7]`, 400, "request: row 2 is a number; each row is an object"},
		{"data row not an array", "application/json", `{"columns": ["x1"], "data": [[1], {"x1": 1}]}`, 400, `row 2 of "data" is an object`},
		{"null row", "application/json", `{"rows": [null]}`, 400, "row 1 is null"},
		{"wrong type", "application/json", `{"rows": [` + ok + `, {"x1": "a", "x2": 1, "color": "red"}]}`, 400, `request: row 2, column "x1": got the string "a"`},
		{"Inf", "application/json", `{"rows": [{"x1": 1e999, "x2": 1, "color": "red"}]}`, 400, `row 1, column "x1": 1e999 is beyond the float64 range`},
		{"missing column", "application/json", `{"rows": [{"x1": 1, "color": "red"}]}`, 400, `the record lacks input column "x2"`},
		{"extra column", "application/json", `{"rows": [{"x1": 1, "x2": 2, "color": "red", "y": "yes"}]}`, 400, `"y" is not an input column of the model`},
		{"data without columns", "application/json", `{"data": [[1, 2, "red"]]}`, 400, `"data" needs "columns"`},
		{"both layouts", "application/json", `{"rows": [` + ok + `], "columns": ["x1"], "data": []}`, 400, "not both"},
		{"short row", "application/json", `{"columns": ["x1", "x2", "color"], "data": [[1, 2]]}`, 400, "row 1: the row has 2 values but there are 3 columns"},
		{"proba not bool", "application/json", `{"rows": [` + ok + `], "proba": "yes"}`, 400, `field "proba" is a string, not a boolean`},
		{"too many rows", "application/json", many, 413, "the request has more than 20 rows; at most 20"},
		{"too large", "application/json", `{"rows": [` + strings.Repeat(" ", 5000) + ok + `]}`, 413, "over the 4096-byte limit"},
		{"csv bad cell", "text/csv", "x1,x2,color\n1,2,red\n1,abc,red\n", 400, `request: line 3, column 2 ("x2"): "abc" is not a number`},
		{"csv NaN", "text/csv", "x1,x2,color\ninf,2,red\n", 400, "not a finite number"},
		{"csv extra column", "text/csv", "x1,x2,color,id\n1,2,red,7\n", 400, `column 4, "id", is not an input column of the model; remove it`},
		{"csv missing column", "text/csv", "x1,color\n1,red\n", 400, `the model's input column "x2" not found; the columns are "x1", "color"`},
		{"content type", "application/xml", `<rows/>`, 415, `Content-Type "application/xml" is not supported`},
	} {
		a := post(t, ts.url+"/v1/predict", c.ctype, c.body)
		if a.status != c.status || !strings.Contains(a.err, c.want) {
			t.Errorf("%s: %d %q, want %d with %q", c.name, a.status, a.err, c.status, c.want)
		}
	}
	if a := post(t, ts.url+"/v1/predict?proba=maybe", "application/json", `[`+ok+`]`); a.status != 400 || !strings.Contains(a.err, `proba="maybe"`) {
		t.Errorf("bad proba query: %d %s", a.status, a.err)
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{{"GET", "/v1/predict", 405}, {"POST", "/v1/model", 405}, {"GET", "/v2/predict", 404}} {
		req, _ := http.NewRequest(c.method, ts.url+c.path, nil)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		if r.StatusCode != c.status || !bytes.Contains(b, []byte(`"error"`)) {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.StatusCode, b)
		}
	}
	if a := post(t, ts.url+"/v1/predict", "application/json", `[`+ok+`]`); a.status != 200 {
		t.Errorf("after the bad requests: %d %s", a.status, a.body)
	}
	if v := metricValue(t, ts.url, `rfm_http_requests_total{code="400",handler="predict"}`); v < 20 {
		t.Errorf("400s counted: %v", v)
	}
}

// A client that trickles its headers is disconnected after the header
// timeout; the server keeps answering others.
func TestSlowClientIsCut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, false)
	ts := startServer(t, Options{ModelPath: path, ReadHeaderTimeout: 200 * time.Millisecond})
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A valid start, then one byte of a header value every 50 ms: the
	// headers never end. The server must close the connection; up to 200
	// bytes are trickled (10 s, fifty header timeouts) before giving up.
	if _, err := conn.Write([]byte("POST /v1/predict HTTP/1.1\r\nHost: x\r\nX-Slow: ")); err != nil {
		t.Fatal(err)
	}
	cut := false
	sent := 0
	for ; sent < 200 && !cut; sent++ {
		if _, err := conn.Write([]byte("a")); err != nil {
			cut = true
			break
		}
		time.Sleep(50 * time.Millisecond)
		conn.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := conn.Read(make([]byte, 1)); err != nil && !isTimeout(err) {
			cut = true
		}
	}
	if !cut {
		t.Errorf("the trickling client was not cut after %d header bytes", sent)
	}
	r, err := http.Get(ts.url + "/healthz")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("healthz after the slow client: %v %v", r, err)
	}
	r.Body.Close()
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// On shutdown a request in flight (here, one whose body is still
// arriving) is finished and answered; readiness turns off first.
func TestGracefulShutdown(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, false)
	ts := startServer(t, Options{ModelPath: path})
	pr, pw := io.Pipe()
	got := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", ts.url+"/v1/predict", pr)
		req.Header.Set("Content-Type", "application/json")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- answer{err: err.Error()}
			return
		}
		b, _ := io.ReadAll(r.Body)
		r.Body.Close()
		got <- answer{status: r.StatusCode, body: b}
	}()
	io.WriteString(pw, `{"rows": [{"x1": 0.5, `)
	time.Sleep(100 * time.Millisecond)
	ts.cancel() // SIGTERM
	time.Sleep(100 * time.Millisecond)
	if ts.ready.Load() {
		t.Error("still ready while shutting down")
	}
	io.WriteString(pw, `"x2": 1, "color": "red"}]}`)
	pw.Close()
	a := <-got
	if a.status != 200 || !bytes.Contains(a.body, []byte(`"predictions"`)) {
		t.Errorf("request in flight at shutdown: %d %s %s", a.status, a.body, a.err)
	}
	select {
	case err := <-ts.done:
		ts.done <- err // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after the request finished")
	}
	if _, err := http.Get(ts.url + "/healthz"); err == nil {
		t.Error("the server still accepts connections after shutdown")
	}
}

// A regression model answers values in the target's units; /v1/model
// describes the model.
func TestRegressionAndModelInfo(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 400, 1, true)
	ts := startServer(t, Options{ModelPath: path})
	records, _, _ := testRows(30, 8)
	want, err := ts.Model().PredictRecords(context.Background(), "", records)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]any{"rows": records})
	a := post(t, ts.url+"/v1/predict", "application/json", string(b))
	if a.status != 200 || a.resp.Task != "regression" {
		t.Fatalf("%d %s", a.status, a.body)
	}
	for i, v := range a.resp.Predictions.([]any) {
		if v.(float64) != want.Values[i] {
			t.Fatalf("row %d: %v, library %v", i, v, want.Values[i])
		}
	}
	if a := post(t, ts.url+"/v1/predict?proba=1", "application/json", string(b)); a.status != 400 || !strings.Contains(a.err, "regression model") {
		t.Errorf("proba of a regression: %d %s", a.status, a.err)
	}
	r, err := http.Get(ts.url + "/v1/model")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var info modelJSON
	if err := json.NewDecoder(r.Body).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if info.Model != ts.Model().Checksum || info.Kind != "rfm" || info.Task != "regression" || info.Target != "y" ||
		len(info.Inputs) != 3 || info.Inputs[2].Name != "color" || info.Centers != 400 || info.Features != 6 || info.BestRound == nil {
		t.Errorf("model info: %+v", info)
	}
	for _, p := range []string{"/healthz", "/readyz"} {
		r, err := http.Get(ts.url + p)
		if err != nil || r.StatusCode != 200 {
			t.Errorf("%s: %v %v", p, r, err)
		}
		r.Body.Close()
	}
}

// A file the server cannot serve is refused at start with its reason.
func TestNewRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(Options{ModelPath: filepath.Join(dir, "none.rfm")}); err == nil || !strings.Contains(err.Error(), "none.rfm") {
		t.Errorf("missing file: %v", err)
	}
	junk := filepath.Join(dir, "junk.rfm")
	os.WriteFile(junk, []byte("hello"), 0o644)
	if _, err := New(Options{ModelPath: junk}); err == nil || !strings.Contains(err.Error(), "not an rfm model file") {
		t.Errorf("junk file: %v", err)
	}
}

// A row the model cannot compute (far beyond the training range: its map
// by M^½ overflows) is a 400 naming the row, and requests coalesced with
// it still get their answers; a regression never answers 200 without a
// body.
func TestUncomputableRowFailsOnlyItsRequest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, true)
	ts := startServer(t, Options{ModelPath: path, BatchWait: 100 * time.Millisecond})
	records, _, _ := testRows(20, 3)
	want, err := ts.Model().PredictRecords(context.Background(), "", records)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := json.Marshal(map[string]any{"rows": records})
	bad := `{"rows": [{"x1": 1, "x2": 1, "color": "red"}, {"x1": -1.7e308, "x2": 1, "color": "red"}]}`
	var wg sync.WaitGroup
	answers := make([]answer, 6)
	for i := range answers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			body := string(good)
			if i == 0 {
				body = bad
			}
			answers[i] = post(t, ts.url+"/v1/predict", "application/json", body)
		}(i)
	}
	wg.Wait()
	if a := answers[0]; a.status != 400 || !strings.Contains(a.err, "request: row 2: the prediction is") {
		t.Errorf("the bad request: %d %q", a.status, a.err)
	}
	for _, a := range answers[1:] {
		if a.status != 200 {
			t.Fatalf("a good request coalesced with the bad one: %d %s", a.status, a.body)
		}
		for i, v := range a.resp.Predictions.([]any) {
			if v.(float64) != want.Values[i] {
				t.Fatalf("row %d: %v, library %v", i, v, want.Values[i])
			}
		}
	}
}

// Handler works without Serve (embedding), and Close stops it cleanly.
func TestHandlerWithoutServe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, false)
	s, err := New(Options{ModelPath: path, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer hs.Close()
	body := `[{"x1": 0.5, "x2": 1, "color": "red"}]`
	if a := post(t, hs.URL+"/v1/predict", "application/json", body); a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	s.Close()
	s.Close() // idempotent
	if a := post(t, hs.URL+"/v1/predict", "application/json", body); a.status != 503 || !strings.Contains(a.err, "shutting down") {
		t.Errorf("after Close: %d %s", a.status, a.body)
	}
}

// An ensemble file is served like any model: /v1/model names its kind,
// members and centres, the metric labels its kind, and /v1/predict answers
// with the ensemble's classes.
func TestServeEnsemble(t *testing.T) {
	dir := t.TempDir()
	tab, err := dataset.Read(strings.NewReader(trainCSV(300, 5, false)), "train.csv", dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var members []*rfm.Model
	var first *predictor.Model
	for _, bw := range []float64{5, 20} {
		cfg := rfm.DefaultConfig()
		cfg.Iters, cfg.Kernel.Bandwidth = 1, bw
		m, err := predictor.Train(context.Background(), tab, predictor.TrainOptions{Target: "y", Config: &cfg})
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = m
		}
		members = append(members, m.Fitted.(*rfm.Model))
	}
	e, err := ensemble.New(members)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "e.rfm")
	if err := predictor.WriteFile(context.Background(), path, e, first.Pipeline, first.Target, nil, ""); err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, Options{ModelPath: path})
	r, err := http.Get(ts.url + "/v1/model")
	if err != nil {
		t.Fatal(err)
	}
	var info modelJSON
	err = json.NewDecoder(r.Body).Decode(&info)
	r.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != "ensemble" || info.Members != 2 || info.Centers != 600 || info.BestRound != nil {
		t.Errorf("model info: %+v", info)
	}
	if v := metricValue(t, ts.url, `rfm_model_info{checksum="`+info.Model+`",kind="ensemble"}`); v != 1 {
		t.Errorf("rfm_model_info of the ensemble: %v", v)
	}
	var rows strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(trainCSV(20, 9, false)), "\n") {
		rows.WriteString(line[:strings.LastIndexByte(line, ',')] + "\n") // without the target
	}
	lm := ts.Model()
	want, err := lm.ReadTable(context.Background(), strings.NewReader(rows.String()), "rows.csv", "")
	if err != nil {
		t.Fatal(err)
	}
	wp, err := lm.Predict(context.Background(), want)
	if err != nil {
		t.Fatal(err)
	}
	a := post(t, ts.url+"/v1/predict", "text/csv", rows.String())
	if a.status != 200 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	for i, v := range a.resp.Predictions.([]any) {
		if v.(string) != wp.Labels[i] {
			t.Fatalf("row %d: %v, library %v", i, v, wp.Labels[i])
		}
	}
}
