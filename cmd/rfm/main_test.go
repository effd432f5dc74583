package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/linalg"
)

// binary is the rfm command built once for the end-to-end tests, with the
// same backend as the test binary.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rfm-cli-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "rfm")
	args := []string{"build", "-o", binary}
	if linalg.Backend() == "openblas" {
		args = append(args, "-tags", "openblas")
	}
	cmd := exec.Command("go", append(args, ".")...)
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build of the rfm command failed: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// rfmCmd runs the built binary in dir.
func rfmCmd(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("rfm %s: %v", strings.Join(args, " "), err)
		}
		code = ee.ExitCode()
	}
	r := result{out.String(), errb.String(), code}
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("rfm %s panicked:\n%s", strings.Join(args, " "), r.stderr)
	}
	return r
}

// startRFM starts the built binary in dir and returns it with a pipe of
// its stderr (for tests that watch a long-running command as it goes).
func startRFM(t *testing.T, dir string, args ...string) (*exec.Cmd, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stderr
}

// mustRun runs the binary and fails the test unless it exits 0.
func mustRun(t *testing.T, dir string, args ...string) result {
	t.Helper()
	r := rfmCmd(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("rfm %s: exit %d\nstderr: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	return r
}

// runInProcess runs the command in this process (no terminal).
func runInProcess(args ...string) result {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func() bool { return false })
	return result{out.String(), errb.String(), code}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fitLowRank writes n rows of the low-rank task (d inputs, seed) to
// dir/train.csv and fits a model of iters rounds on them to dir/out.
func fitLowRank(t *testing.T, dir string, n, d, seed, iters int, out string) {
	t.Helper()
	mustRun(t, dir, "synth", "--task", "lowrank", "--n", strconv.Itoa(n), "--d", strconv.Itoa(d), "--seed", strconv.Itoa(seed), "--out", "train.csv")
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "y", "--iters", strconv.Itoa(iters), "--out", out, "--quiet")
}

// fitChurn writes 60 churn rows (seed) to dir/train.csv and fits a
// one-round classification model on them to dir/out.
func fitChurn(t *testing.T, dir string, seed uint64, out string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(60, seed))
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--iters", "1", "--out", out, "--quiet")
}

// churnCSV is a small customer table with numeric, categorical and missing
// cells. churn depends on age, plan and score; income and region are noise.
// ids have leading zeros so that copying them through must keep the text.
func churnCSV(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	plans := []string{"basic", "pro", "max"}
	shift := map[string]float64{"basic": 1.5, "pro": 0, "max": -1}
	regions := []string{"north", "south", "east", "west"}
	var b strings.Builder
	b.WriteString("id,age,plan,income,region,score,churn\n")
	for i := 0; i < n; i++ {
		age := 18 + r.IntN(63)
		plan := plans[r.IntN(3)]
		income := 50000 + 15000*r.NormFloat64()
		region := regions[r.IntN(4)]
		score := r.Float64()
		z := float64(age-50)/15 + shift[plan] + 3*(score-0.5)
		churn := "no"
		if z+0.3*r.NormFloat64() > 0 {
			churn = "yes"
		}
		ageS, planS, incS := strconv.Itoa(age), plan, fmt.Sprintf("%.2f", income)
		if i%17 == 3 {
			ageS = "NA"
		}
		if i%19 == 5 {
			planS = ""
		}
		if i%23 == 7 {
			incS = ""
		}
		fmt.Fprintf(&b, "%04d,%s,%s,%s,%s,%.4f,%s\n", i, ageS, planS, incS, region, score, churn)
	}
	return b.String()
}

// reorder rewrites a CSV with its columns in the given order (by name),
// dropping the others and appending the extra columns with a constant.
func reorder(t *testing.T, text string, order []string, extra ...string) string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	idx := map[string]int{}
	for j, h := range recs[0] {
		idx[h] = j
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	for i, rec := range recs {
		var row []string
		for _, name := range order {
			j, ok := idx[name]
			if !ok {
				t.Fatalf("no column %q", name)
			}
			row = append(row, rec[j])
		}
		for _, e := range extra {
			if i == 0 {
				row = append(row, e)
			} else {
				row = append(row, "zzz")
			}
		}
		w.Write(row)
	}
	w.Flush()
	return b.String()
}

// readCSV parses CSV output into records.
func readCSV(t *testing.T, text string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(text)).ReadAll()
	if err != nil {
		t.Fatalf("output is not CSV: %v\n%s", err, text)
	}
	return recs
}

// column returns the values of a named column of parsed CSV records.
func column(t *testing.T, recs [][]string, name string) []string {
	t.Helper()
	for j, h := range recs[0] {
		if h == name {
			out := make([]string, 0, len(recs)-1)
			for _, r := range recs[1:] {
				out = append(out, r[j])
			}
			return out
		}
	}
	t.Fatalf("no column %q in %v", name, recs[0])
	return nil
}

// listDir returns the names in dir, for checking that nothing was left behind.
func listDir(t *testing.T, dir string) map[string]bool {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name()] = true
	}
	return names
}
