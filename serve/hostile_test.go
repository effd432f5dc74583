package serve

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hostile requests of issue 42, at small sizes: each is refused while
// it is read, before its rows are decoded, so what it was charged stays
// far below its body; the budget is given back after every request.
func TestHostileRequestsAreRefusedWhileRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, false)
	ts := startServer(t, Options{ModelPath: path, MaxBodyBytes: 4 << 20, MemoryBudget: 64 << 20})
	ok := `{"x1": 0.5, "x2": 1, "color": "red"}`
	wideRow := `{"columns": ["x1", "x2", "color"], "data": [[` + strings.TrimSuffix(strings.Repeat("1,", 500000), ",") + `]]}`
	var keys strings.Builder
	keys.WriteString(`{"rows": [{`)
	for i := range 100000 {
		fmt.Fprintf(&keys, `"k%d": 1,`, i)
	}
	keys.WriteString(`"x1": 1}]}`)
	longKey := `{"rows": [{"` + strings.Repeat("k", 7000) + `": 1}]}`
	wideCSV := "x1,x2,color\n" + strings.TrimSuffix(strings.Repeat("1,", 500000), ",") + "\n"
	wideHeader := strings.TrimSuffix(strings.Repeat("x1,", 500000), ",") + "\n1\n"
	for _, c := range []struct {
		name, ctype, body string
		status            int
		want              string
		maxCharge         int64 // [256 KiB]
	}{
		{"wide data row", "application/json", wideRow, 400, `row 1 of "data" has more than 3 values`, 0},
		{"unknown keys", "application/json", keys.String(), 400, `row 1: "k0" is not an input column of the model`, 0},
		{"long unknown key", "application/json", longKey, 400, `… (7000 bytes) is not an input column`, 0},
		{"long unknown field", "application/json", `{"` + strings.Repeat("f", 7000) + `": 1}`, 400, `unknown field "fff`, 0},
		{"duplicate key in a row", "application/json", `{"rows": [{"x1": 1, "x2": 1, "x1": 2, "color": "red"}]}`, 400, `row 1: key "x1" is given twice`, 0},
		{"duplicate column", "application/json", `{"columns": ["x1", "x2", "x1"], "data": [[1, 2, 3]]}`, 400, `column "x1" is named twice (columns 1 and 3)`, 0},
		{"unknown column", "application/json", `{"columns": ["x1", "zz"], "data": [[1, 2]]}`, 400, `column 2, "zz", is not an input column`, 0},
		{"data before columns, too wide", "application/json", `{"data": [[1, 2, 3, 4]], "columns": ["x1", "x2", "color"]}`, 400, `has more than 3 values`, 0},
		{"nested cell", "application/json", `{"rows": [{"x1": [1, 2], "x2": 1, "color": "red"}]}`, 400, `row 1, column "x1": got an array`, 0},
		{"wide csv row", "text/csv", wideCSV, 400, "line 2 has more than 19 fields, and the model has 3 input columns", 0},
		// The first line is read to its end (to see which delimiter splits
		// it), but no table is built: twice the bytes, the reader's buffer.
		{"wide csv header", "text/csv", wideHeader, 400, "line 1 has more than 19 fields, and the model has 3 input columns", 2*int64(len(wideHeader)) + 256<<10},
	} {
		ts.budget.peak.Store(0)
		a := post(t, ts.url+"/v1/predict", c.ctype, c.body)
		if a.status != c.status || !strings.Contains(a.err, c.want) {
			t.Errorf("%s: %d %.300q, want %d with %q", c.name, a.status, a.err, c.status, c.want)
		}
		if len(a.body) > 2*maxErrorBytes {
			t.Errorf("%s: the error body has %d bytes; client input is echoed without bound", c.name, len(a.body))
		}
		// Refused early: charged far less than the body's bytes (the
		// reader's buffers and the values before the refusal).
		if c.maxCharge == 0 {
			c.maxCharge = 256 << 10
		}
		if peak := ts.budget.peak.Load(); peak > c.maxCharge {
			t.Errorf("%s: %d bytes charged for a %d-byte body refused at its start", c.name, peak, len(c.body))
		}
		if used := ts.MemoryInUse(); used != 0 {
			t.Errorf("%s: %d bytes of the budget still held after the answer", c.name, used)
		}
	}
	if a := post(t, ts.url+"/v1/predict", "application/json", `[`+ok+`]`); a.status != 200 {
		t.Errorf("after the hostile requests: %d %s", a.status, a.body)
	}
}

// rawRequest opens a connection and sends a predict request's headers
// and the first part of its body.
func rawRequest(t *testing.T, url string, length int, head string, extra string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /v1/predict HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s", length, extra, head)
	return conn
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// Bodies that never finish hold neither a slot nor more memory than they
// sent: with 2 slots and 6 stalled bodies, others are still served; a
// large request that would eat the reserve is refused with 503 while the
// stalled ones hold most of the budget, and a small one still goes through.
func TestSlowBodiesHoldNoSlots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, false)
	ts := startServer(t, Options{ModelPath: path, MaxInFlight: 2, MemoryBudget: 1 << 20})
	ok := `{"x1": 0.5, "x2": 1, "color": "red"}`
	for range 6 {
		rawRequest(t, ts.url, 100000, `{"rows": [`+ok, "")
	}
	waitFor(t, "the stalled bodies to be charged", func() bool { return ts.MemoryInUse() >= 6*requestBaseCost })
	if a := post(t, ts.url+"/v1/predict", "application/json", `[`+ok+`]`); a.status != 200 {
		t.Fatalf("with 6 stalled bodies and 2 slots: %d %s", a.status, a.body)
	}
	// One stalled body that has sent 700 KiB of a string: it holds most
	// of the budget.
	big := `{"rows": [{"color": "` + strings.Repeat("a", 700<<10)
	rawRequest(t, ts.url, len(big)+100000, big, "")
	waitFor(t, "the large body to be charged", func() bool { return ts.MemoryInUse() > 700<<10 })
	mid := "[" + strings.TrimSuffix(strings.Repeat(ok+",", 250), ",") + "]" // about 10 KB, 100 KB decoded
	a := post(t, ts.url+"/v1/predict", "application/json", mid)
	if a.status != http.StatusServiceUnavailable || !strings.Contains(a.err, "memory budget") {
		t.Errorf("a 10 KB request while the budget is held: %d %q, want 503", a.status, a.err)
	}
	if a := post(t, ts.url+"/v1/predict", "application/json", `[`+ok+`]`); a.status != 200 {
		t.Errorf("a small request while the budget is held: %d %s", a.status, a.body)
	}
	if v := metricValue(t, ts.url, "rfm_predict_requests_rejected_total"); v < 1 {
		t.Errorf("the 503 was not counted: %v", v)
	}
	if v := metricValue(t, ts.url, "rfm_request_memory_bytes"); v < 700<<10 {
		t.Errorf("rfm_request_memory_bytes = %v while a body holds 700 KiB", v)
	}
	if v := metricValue(t, ts.url, "rfm_request_memory_budget_bytes"); v != 1<<20 {
		t.Errorf("rfm_request_memory_budget_bytes = %v", v)
	}
	// Alone, a request over three quarters of the budget is 413.
	huge := "[" + strings.TrimSuffix(strings.Repeat(ok+",", 9000), ",") + "]"
	ts2 := startServer(t, Options{ModelPath: path, MemoryBudget: 1 << 20, MaxRows: 100000})
	if a := post(t, ts2.url+"/v1/predict", "application/json", huge); a.status != 413 || !strings.Contains(a.err, "needs more than") {
		t.Errorf("a request over the per-request budget: %d %q, want 413", a.status, a.err)
	}
	if used := ts2.MemoryInUse(); used != 0 {
		t.Errorf("%d bytes still held", used)
	}
}

// A client that declares a body over the limit and waits for "100
// Continue" gets 413 instead, before it sends the body.
func TestExpectContinueOverLimit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, false)
	ts := startServer(t, Options{ModelPath: path, MaxBodyBytes: 4096})
	conn := rawRequest(t, ts.url, 1<<20, "", "Expect: 100-continue\r\n")
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	r, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "over the 4096-byte limit") {
		t.Errorf("got %d %s, want 413", r.StatusCode, b)
	}
}

// The budget is charged through every decoder: a CSV or JSON body that
// needs more than a request may hold is refused with 413 (not a parse
// error), and one that others' holdings leave no room for with 503; the
// charge is all given back.
func TestBudgetThroughDecoders(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.rfm")
	writeModel(t, path, 300, 1, false)
	m, err := loadModel(path)
	if err != nil {
		t.Fatal(err)
	}
	csvBody := "x1,x2,color\n" + strings.Repeat("1,2,red\n", 20000)
	jsonBody := "[" + strings.TrimSuffix(strings.Repeat(`{"x1": 1, "x2": 2, "color": "red"},`, 2000), ",") + "]"
	for _, c := range []struct {
		ctype, body string
	}{{"text/csv", csvBody}, {"application/json", jsonBody}} {
		b := &budget{limit: 1 << 20}
		ch := &charge{b: b}
		_, err := decodeRequest(context.Background(), m, c.ctype, nil, strings.NewReader(c.body), 100000, ch)
		var he *httpError
		if !errors.As(err, &he) || he.status != http.StatusRequestEntityTooLarge || !strings.Contains(he.msg, "needs more than") {
			t.Errorf("%s over the per-request share: %v", c.ctype, err)
		}
		ch.release()
		b.used.Store(b.limit - 8<<10) // others hold all but 8 KiB
		ch = &charge{b: b}
		_, err = decodeRequest(context.Background(), m, c.ctype, nil, strings.NewReader(c.body), 100000, ch)
		if !errors.As(err, &he) || he.status != http.StatusServiceUnavailable {
			t.Errorf("%s with the budget held: %v", c.ctype, err)
		}
		ch.release()
		if got := b.used.Load(); got != b.limit-8<<10 {
			t.Errorf("%s: %d bytes used after release, want the others' %d", c.ctype, got, b.limit-8<<10)
		}
	}
}
