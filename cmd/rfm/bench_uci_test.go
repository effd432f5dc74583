package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/uci"
)

// uciFixture is package uci's tiny benchmark folder.
const uciFixture = "../../uci/testdata/uci"

func TestBenchUCICommand(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no data", []string{}, 2, "rfm bench uci: --data DIR is required"},
		{"bad protocol", []string{"--data", uciFixture, "--protocol", "nope"}, 2, `--protocol "nope"`},
		{"bad jobs", []string{"--data", uciFixture, "--jobs", "0"}, 2, "--jobs 0"},
		{"bad refine", []string{"--data", uciFixture, "--refine", "-1"}, 2, "--refine -1: must be ≥ 0"},
		{"bad name", []string{"--data", uciFixture, "--subset", "tiny-a,zzz"}, 2, `unknown data set "zzz"`},
		{"extra arg", []string{"--data", uciFixture, "extra"}, 2, `unexpected argument "extra"`},
		{"bad flag", []string{"--jbos", "2"}, 2, "unknown flag --jbos; did you mean --jobs?"},
		{"given twice", []string{"--data", uciFixture, "--out", "a", "--out", "b"}, 2, `--out given twice ("a", then "b")`},
		{"missing dir", []string{"--data", "testdata/none"}, 1, "data directory"},
		{"combine and run flags", []string{"--data", uciFixture, "--combine", "a", "--protocol", "tuned"}, 2, "--protocol: --combine computes nothing"},
		{"combine missing file", []string{"--data", uciFixture, "--combine", "testdata/none.tsv", "--out", "testdata/never"}, 1, "testdata/none.tsv: no such file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runInProcess(append([]string{"bench", "uci"}, c.args...)...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d (stderr %s)", r.code, c.code, r.stderr)
			}
			if !strings.Contains(r.stderr, c.err) || strings.Count(r.stderr, "\n") != 1 {
				t.Errorf("stderr %q lacks %q or is not one line", r.stderr, c.err)
			}
		})
	}
	t.Run("help", func(t *testing.T) {
		r := runInProcess("bench", "uci", "-h")
		if r.code != 0 || !strings.Contains(r.stdout, "Usage: rfm bench uci") || !strings.Contains(r.stdout, "--refine K") {
			t.Errorf("exit %d:\n%s", r.code, r.stdout)
		}
	})
	t.Run("run", func(t *testing.T) {
		out := t.TempDir()
		r := runInProcess("bench", "uci", "--data", uciFixture, "--subset", "all", "--out", out, "--json", "--threads", "1")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var rep uci.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("--json output: %v\n%s", err, r.stdout)
		}
		if rep.OK != 2 || rep.Skipped != 1 {
			t.Errorf("report: %d ok, %d skipped", rep.OK, rep.Skipped)
		}
		// Not a terminal: one line per finished data set.
		if n := strings.Count(r.stderr, "\n"); n != 2 || !strings.Contains(r.stderr, "[2/2] tiny-b done") {
			t.Errorf("progress lines:\n%s", r.stderr)
		}
		r = runInProcess("bench", "uci", "--data", uciFixture, "--subset", "all", "--out", out, "--quiet")
		if r.code != 0 {
			t.Fatalf("rerun exit %d: %s", r.code, r.stderr)
		}
		if r.stderr != "" || !strings.Contains(r.stdout, "0 computed now, 2 reused") {
			t.Errorf("quiet rerun: stdout %q, stderr %q", r.stdout, r.stderr)
		}
		both := t.TempDir()
		r = runInProcess("bench", "uci", "--data", uciFixture, "--combine", out, "--out", both)
		if r.code != 0 || !strings.Contains(r.stdout, "subset combined: 2 data sets") || !strings.Contains(r.stdout, "note: 2 data sets computed under paper") {
			t.Errorf("--combine: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

// An interrupted bench run says where its results are and exits 130; any
// other error, or a cancellation the user did not ask for, passes through.
func TestBenchStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var stderr strings.Builder
	e := &env{ctx: ctx, stderr: &stderr}
	err := benchStopped(e, "tabular", "out/results.json", fmt.Errorf("split 2: %w", context.Canceled))
	if code, ok := err.(exitCode); !ok || code != exitInterrupt {
		t.Errorf("interrupted: %v, want exit code %d", err, exitInterrupt)
	}
	if want := "rfm bench tabular: interrupted; results so far are in out/results.json"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	other := errors.New("disk full")
	if err := benchStopped(e, "uci", "r.tsv", other); err != other {
		t.Errorf("other error: %v, want it unchanged", err)
	}
	e.ctx = context.Background()
	if err := benchStopped(e, "uci", "r.tsv", context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("cancellation not asked for: %v, want it unchanged", err)
	}
}
