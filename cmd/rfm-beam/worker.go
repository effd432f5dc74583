package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/container/tools"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
)

// processWorkerArgs reports whether the program was started by a runner's
// process environment (--environment_type=PROCESS): the runner passes
// only --id and --provision_endpoint, and the worker must ask the
// provision service for the rest, as Beam's container boot program does.
func processWorkerArgs(args []string) (id, endpoint string, ok bool) {
	for _, a := range args {
		if v, found := strings.CutPrefix(a, "--id="); found {
			id = strings.Trim(v, "'") // Prism quotes it
		}
		if v, found := strings.CutPrefix(a, "--provision_endpoint="); found {
			endpoint = v
		}
	}
	return id, endpoint, endpoint != ""
}

// bootProcessWorker asks the runner's provision service for the worker's
// logging and control endpoints and its pipeline options, and replaces
// this process with this program in Beam's worker mode (the same process
// id, so the runner's watch on it holds). Unlike Beam's boot program it
// fetches no staged binary: the worker is this program, which registered
// the pipeline's functions, and it writes no options file.
func bootProcessWorker(id, endpoint string) error {
	if id == "" {
		return errors.New("started as a Beam process worker without --id")
	}
	ctx := grpcx.WriteWorkerID(context.Background(), id)
	info, err := tools.ProvisionInfo(ctx, endpoint)
	if err != nil {
		return fmt.Errorf("provision service %s: %w", endpoint, err)
	}
	logging, control := info.GetLoggingEndpoint().GetUrl(), info.GetControlEndpoint().GetUrl()
	if logging == "" || control == "" {
		return fmt.Errorf("provision service %s gave no logging or control endpoint", endpoint)
	}
	options, err := tools.ProtoToJSON(info.GetPipelineOptions())
	if err != nil {
		return fmt.Errorf("pipeline options: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	env := os.Environ()
	if caps := info.GetRunnerCapabilities(); len(caps) > 0 {
		env = append(env, "RUNNER_CAPABILITIES="+strings.Join(caps, " "))
	}
	if s := info.GetStatusEndpoint().GetUrl(); s != "" {
		env = append(env, "STATUS_ENDPOINT="+s)
	}
	return syscall.Exec(exe, []string{exe, "--worker=true", "--id=" + id, "--logging_endpoint=" + logging,
		"--control_endpoint=" + control, "--options=" + options}, env)
}

// killLeafEnv, when set to a leaf's number in the environment of a
// separate worker process (tests: the runner passes its environment on),
// makes that worker kill itself (SIGKILL) as it starts fitting the leaf:
// a worker dying mid-job. A program not started as a worker ignores it.
const killLeafEnv = "RFM_BEAM_TEST_KILL_LEAF"

func killWorkerAt(leaf int) {
	v := os.Getenv(killLeafEnv)
	if v == "" || v != strconv.Itoa(leaf) || !slices.Contains(os.Args[1:], "--worker=true") {
		return
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
}
