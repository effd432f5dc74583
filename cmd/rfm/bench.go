package main

import (
	"github.com/rfmkit/rfm/bench/scale"
	"io"
	"strconv"
)

// cmdBench dispatches 'rfm bench SUITE'.
// benchSuites are the suites 'rfm bench' mounts, by name.
var benchSuites = map[string]func(*env, []string) error{
	"uci":     cmdBenchUCI,
	"scale":   cmdBenchScale,
	"serve":   cmdBenchServe,
	"inpaint": cmdBenchInpaint,
	"tabular": cmdBenchTabular,
}

func cmdBench(e *env, args []string) error {
	usage := func(w io.Writer) {
		io.WriteString(w, `Usage: rfm bench SUITE [flags]

Suites:
  uci     the UCI-121 protocol of the RFM papers and the comparison with 179
          classifiers (run 'rfm bench uci -h' for its flags)
  scale   exact, Nyström and tree fits of large tables: time, peak memory,
          prediction speed and test score (run 'rfm bench scale -h')
  serve   a load test of 'rfm serve' on loopback: throughput, latency
          percentiles and status counts (run 'rfm bench serve -h')
  inpaint CNTK image inpainting against a Laplace kernel and biharmonic
          inpainting: PSNR, SSIM, time, memory (run 'rfm bench inpaint -h')
  tabular the RFM paper's second tabular benchmark (Grinsztajn et al.) beside
          its published columns (run 'rfm bench tabular -h')

Example:
  rfm bench uci --data ../shared/data/uci121 --out results/
`)
	}
	if len(args) == 0 {
		usage(e.stderr)
		return usagef("name a suite: uci, scale, serve, inpaint or tabular")
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(e.stdout)
		return nil
	case scale.PeakCommand: // internal, run by bench scale: not listed
		return runMeasured(e, args[1:])
	}
	if run, ok := benchSuites[args[0]]; ok {
		// Messages name the suite: "rfm bench uci: ...".
		if code := e.exit("bench "+args[0], run(e, args[1:])); code != exitOK {
			return exitCode(code)
		}
		return nil
	}
	return usagef("unknown benchmark suite %q; the suites are: uci, scale, serve, inpaint, tabular", args[0])
}

// exitCode is an error whose message was already printed by a mounted
// command; it only carries the exit status.
type exitCode int

func (c exitCode) Error() string { return "exit status " + strconv.Itoa(int(c)) }
