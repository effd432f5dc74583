package main

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/rfmkit/rfm/bench/serveload"
	"github.com/rfmkit/rfm/internal/testutil"
	"time"
)

// rfm serve end to end, as a process: it answers what rfm predict writes,
// survives a damaged file on SIGHUP, and stops cleanly on SIGTERM.
func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "synth", "--task", "lowrank", "--n", "400", "--d", "6", "--seed", "3", "--out", "train.csv")
	mustRun(t, dir, "synth", "--task", "lowrank", "--n", "50", "--d", "6", "--seed", "4", "--out", "test.csv")
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "y", "--iters", "1", "--out", "m.rfm", "--quiet")
	want := mustRun(t, dir, "predict", "--model", "m.rfm", "--data", "test.csv", "--quiet")

	cmd, stderr := startRFM(t, dir, "serve", "--model", "m.rfm", "--addr", "127.0.0.1:0")
	defer cmd.Process.Kill()
	logs := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs <- sc.Text()
		}
		close(logs)
	}()
	waitLog := func(pattern string) []string {
		t.Helper()
		re := regexp.MustCompile(pattern)
		timeout := time.After(10 * time.Second)
		for {
			select {
			case line, ok := <-logs:
				if !ok {
					t.Fatalf("the server ended before logging %q", pattern)
				}
				if m := re.FindStringSubmatch(line); m != nil {
					return m
				}
			case <-timeout:
				t.Fatalf("no log line %q", pattern)
			}
		}
	}
	url := "http://" + waitLog(`msg=serving addr=(\S+)`)[1]

	// The test table minus its target, as CSV: the answers are predict's.
	text := readFile(t, filepath.Join(dir, "test.csv"))
	var body strings.Builder
	for i, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Split(line, ",")
		body.WriteString(strings.Join(f[:len(f)-1], ","))
		body.WriteByte('\n')
		if i == 0 && f[len(f)-1] != "y" {
			t.Fatalf("the target is not the last column: %s", line)
		}
	}
	predict := func() (string, []float64) {
		t.Helper()
		r, err := http.Post(url+"/v1/predict", "text/csv", strings.NewReader(body.String()))
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		b, _ := io.ReadAll(r.Body)
		var resp struct {
			Model       string
			Predictions []float64
		}
		if r.StatusCode != 200 || json.Unmarshal(b, &resp) != nil {
			t.Fatalf("%d %s", r.StatusCode, b)
		}
		return resp.Model, resp.Predictions
	}
	sum, got := predict()
	lines := strings.Split(strings.TrimSpace(want.stdout), "\n")[1:]
	if len(got) != len(lines) {
		t.Fatalf("%d predictions, predict wrote %d", len(got), len(lines))
	}
	for i, line := range lines {
		v, _ := strconv.ParseFloat(line, 64)
		if math.Float64bits(v) != math.Float64bits(got[i]) {
			t.Fatalf("row %d: served %v, rfm predict %v", i+1, got[i], v)
		}
	}

	// A damaged file on SIGHUP: logged, and the old model keeps answering.
	b, _ := os.ReadFile(filepath.Join(dir, "m.rfm"))
	b[len(b)/3] ^= 4
	os.WriteFile(filepath.Join(dir, "m.rfm"), b, 0o644)
	cmd.Process.Signal(syscall.SIGHUP)
	waitLog(`reload failed; the previous model keeps serving.*corrupted`)
	if again, _ := predict(); again != sum {
		t.Errorf("after a failed reload, model %s answers instead of %s", again, sum)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	waitLog(`msg="shutting down`)
	waitLog(`msg=stopped`)
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
}

// Bad serve flags are refused before anything is loaded or bound.
func TestServeBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"serve"}, 2, "--model is required"},
		{[]string{"serve", "--model", "m.rfm", "--max-body", "lots"}, 2, `--max-body "lots"`},
		{[]string{"serve", "--model", "m.rfm", "--batch-wait", "soon"}, 2, `--batch-wait "soon"`},
		{[]string{"serve", "--model", "m.rfm", "--max-rows", "0"}, 2, "--max-rows 0: must be at least 1"},
		{[]string{"serve", "--model", "none.rfm"}, 1, "none.rfm"},
	} {
		r := runInProcess(append(c.args[:1:1], append(c.args[1:], "--addr", "127.0.0.1:0")...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, r.code, r.stderr)
		}
	}
}

// bench serve runs its load phases against an in-process server and
// reports every request answered, none with an error status.
func TestBenchServeSmall(t *testing.T) {
	r := runInProcess("bench", "serve", "--centers", "300", "--inputs", "6", "--clients", "4", "--duration", "300ms", "--warmup", "0", "--rows", "1,7", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res serveload.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Centers != 300 || res.Inputs != 6 || res.OfflineRowsSec <= 0 || len(res.Runs) != 2 {
		t.Fatalf("%+v", res)
	}
	for _, run := range res.Runs {
		if run.Requests == 0 || run.Status5xx+run.Status4xx+run.Errors != 0 || run.P50ms <= 0 || run.P99ms < run.P50ms || run.MeanBatchRows < float64(run.RowsPerRequest) {
			t.Errorf("%+v", run)
		}
	}
	if r := runInProcess("bench", "serve", "--rows", "0"); r.code != 2 || !strings.Contains(r.stderr, `--rows "0"`) {
		t.Errorf("--rows 0: exit %d %s", r.code, r.stderr)
	}
}

// A named pipe given as the model is refused at once by every command
// that reads a model (open(2) of a FIFO would wait, beyond Ctrl-C, for a
// writer).
func TestModelFIFORefused(t *testing.T) {
	dir := t.TempDir()
	fifo := testutil.FIFO(t, dir, "m.rfm")
	data := filepath.Join(dir, "d.csv")
	writeFile(t, data, "x,y\n1,2\n3,4\n")
	for _, args := range [][]string{
		{"predict", "--model", fifo, "--data", data},
		{"eval", "--model", fifo, "--data", data},
		{"inspect", "--model", fifo},
		{"export", "--model", fifo, "--format", "onnx", "--out", filepath.Join(dir, "m.onnx")},
		{"serve", "--model", fifo, "--addr", "127.0.0.1:0"},
	} {
		done := make(chan result, 1)
		go func() { done <- runInProcess(args...) }()
		select {
		case r := <-done:
			if r.code == 0 || !strings.Contains(r.stderr, "is a named pipe (FIFO)") {
				t.Errorf("rfm %s: exit %d, stderr %q", args[0], r.code, r.stderr)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("rfm %s --model FIFO blocked", args[0])
		}
	}
}

// The security and budget flags refuse what cannot work before serving.
func TestServeFlagErrors(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.rfm")
	writeFile(t, model, "not read: the flags fail first")
	short := filepath.Join(dir, "tokens")
	writeFile(t, short, "abc\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--memory-budget", "10K"}, "--memory-budget \"10K\": want auto or a size of at least 1M"},
		{[]string{"--auth-probes"}, "--auth-probes needs --auth-tokens"},
		{[]string{"--auth-tokens", short}, "too short"},
		{[]string{"--auth-tokens", filepath.Join(dir, "none")}, "no such file"},
	} {
		r := runInProcess(append([]string{"serve", "--model", model, "--addr", "127.0.0.1:0"}, c.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
