package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
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
// fits no leaf in this process. (A worker killed mid-job, with
// RFM_BEAM_TEST_KILL_LEAF, is not tested here: Prism v2.77 failed such a
// job cleanly in some runs and spun for ever in others; see
// docs/distributed.md.)
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
}
