package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"
)

// useProcessWorkers makes the pipelines of the test run on Prism, in this
// process, with workers in separate processes: Prism's process
// environment starts this test binary, which provisions itself as
// rfm-beam does (bootProcessWorker; see TestMain) and becomes Beam's
// worker. The binary is also the staged worker, so nothing is built.
func useProcessWorkers(t *testing.T) {
	restore, err := setProcessWorkers()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(restore)
}

func setProcessWorkers() (restore func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var undo []func()
	set := func(p *string, v string) {
		old := *p
		*p = v
		undo = append(undo, func() { *p = old })
	}
	set(jobopts.EnvironmentType, "PROCESS")
	set(jobopts.EnvironmentConfig, fmt.Sprintf(`{"command": %q}`, exe))
	set(jobopts.WorkerBinary, exe)
	return func() {
		for _, u := range undo {
			u()
		}
	}, nil
}

// submitEnv, in the environment of this test binary, makes it submit the
// fit of testSpec on GLOB to OUT ("GLOB\nOUT") with process workers, in a
// fresh process with its own Prism, and exit 1 on failure (TestMain).
const submitEnv = "RFM_BEAM_TEST_SUBMIT"

func submitFromEnv(spec string) error {
	glob, out, _ := strings.Cut(spec, "\n")
	ctx := context.Background()
	shards, err := expand(ctx, glob)
	if err != nil {
		return err
	}
	header, err := readHeader(ctx, shards[0].Path)
	if err != nil {
		return err
	}
	if _, err := setProcessWorkers(); err != nil {
		return err
	}
	return beamx.Run(ctx, fitPipeline(testSpec(), shards, header, out, testInfo))
}

// runFitWithin runs the fit pipeline, failing the test if the job has not
// ended after limit (a job that hangs on a dead worker is a failure too).
func runFitWithin(t *testing.T, limit time.Duration, spec FitSpec, glob, out string) error {
	t.Helper()
	shards, header := inputs(t, glob)
	done := make(chan error, 1)
	go func() { done <- beamx.Run(context.Background(), fitPipeline(spec, shards, header, out, testInfo)) }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("the job had not ended after %s", limit)
		return nil
	}
}

// The distributed fit with its worker in a separate process (Prism as the
// job server in this process, its process environment starting the
// worker) writes the model the in-process run writes, byte for byte, and
// fits no leaf in this process. A worker killed (SIGKILL) while it fits a
// leaf fails the job cleanly (submitted from a fresh process: see below):
// Prism does not retry a bundle, so the run exits 1 naming the lost
// worker and leaves no model file and nothing else beside the inputs.
func TestSeparateWorkerProcess(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, []int{700, 600, 500})
	spec := testSpec()
	inProcess, separate := filepath.Join(dir, "in-process.rfm"), filepath.Join(dir, "separate.rfm")
	if err := runFitWithin(t, 10*time.Minute, spec, glob, inProcess); err != nil {
		t.Fatal(err)
	}

	useProcessWorkers(t)
	before := fittedHere.Load()
	if err := runFitWithin(t, 10*time.Minute, spec, glob, separate); err != nil {
		t.Fatal(err)
	}
	if n := fittedHere.Load() - before; n != 0 {
		t.Errorf("%d leaves were fitted in this process: the worker was not separate", n)
	}
	a, _ := os.ReadFile(inProcess)
	b, _ := os.ReadFile(separate)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the model fitted by a separate worker (%d bytes) differs from the in-process one (%d bytes)", len(b), len(a))
	}

	// The killed run in a fresh process with its own Prism: in this one,
	// whose job server has run the jobs above, Prism v2.77 was seen to
	// spin for ever after the worker's death instead of failing the job.
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(dir, "killed.rfm")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(os.Environ(), submitEnv+"="+glob+"\n"+killed, killLeafEnv+"=2")
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the job whose worker was killed had not ended after 5 min:\n%s", out)
	}
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "worker disconnected") {
		t.Errorf("the job whose worker was killed: exit %d (%v), want 1 naming the lost worker; output:\n%s", code, err, out)
	}
	if _, serr := os.Stat(killed); serr == nil {
		t.Error("the failed job left a model file")
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"in-process.rfm", "part0.csv", "part1.csv", "part2.csv.gz", "separate.rfm"}
	if !slices.Equal(names, want) {
		t.Errorf("the folder holds %v after the failed job, want %v", names, want)
	}
}
