package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/bench/tabular"
	"github.com/rfmkit/rfm/internal/testutil"
)

// tabularFixture writes a benchmark folder with one tiny regression task.
func tabularFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	fmt.Fprintln(&b, "a,b,y")
	for i := range 150 {
		a, c := float64(i%17)/17, float64(i%5)/5
		fmt.Fprintf(&b, "%g,%g,%g\n", a, c, 2*a-c+0.01*float64(i%3))
	}
	testutil.WriteGzip(t, filepath.Join(dir, "reg_num", "toy.csv.gz"), []byte(b.String()))
	return dir
}

func TestBenchTabularCommand(t *testing.T) {
	data := tabularFixture(t)
	cases := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no data", []string{}, 2, "rfm bench tabular: --data DIR is required"},
		{"bad protocol", []string{"--data", data, "--protocol", "nope"}, 2, `--protocol "nope"`},
		{"bad size", []string{"--data", data, "--size", "huge"}, 2, `--size "huge"`},
		{"trials without tuned", []string{"--data", data, "--trials", "5"}, 2, "--trials applies to --protocol tuned only"},
		{"budget without tuned", []string{"--data", data, "--budget", "5m"}, 2, "--budget applies to --protocol tuned only"},
		{"bad budget", []string{"--data", data, "--protocol", "tuned", "--budget", "soon"}, 2, `--budget "soon"`},
		{"unknown task", []string{"--data", data, "--tasks", "reg_num/nope"}, 2, `"reg_num/nope" matches no task`},
		{"bad jobs", []string{"--data", data, "--jobs", "0"}, 2, "--jobs 0"},
		{"missing dir", []string{"--data", filepath.Join(data, "none")}, 1, "no task files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runInProcess(append([]string{"bench", "tabular"}, c.args...)...)
			if r.code != c.code {
				t.Errorf("exit %d, want %d (stderr %s)", r.code, c.code, r.stderr)
			}
			if !strings.Contains(r.stderr, c.err) {
				t.Errorf("stderr %q lacks %q", r.stderr, c.err)
			}
		})
	}
	t.Run("run", func(t *testing.T) {
		out := t.TempDir()
		r := runInProcess("bench", "tabular", "--data", data, "--out", out, "--json", "--quiet", "--threads", "1")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var rep tabular.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("--json output: %v\n%s", err, r.stdout)
		}
		if rep.Computed != 1 || len(rep.Results) != 1 || rep.Results[0].Repeats != 5 || !(rep.Results[0].Score > 0.9) {
			t.Fatalf("report: %+v", rep)
		}
		again := runInProcess("bench", "tabular", "--data", data, "--out", out, "--report-only", "--quiet")
		if again.code != 0 || !strings.Contains(again.stdout, "0 computed in this run, 1 reused") {
			t.Fatalf("--report-only: exit %d\n%s%s", again.code, again.stdout, again.stderr)
		}
	})
}
