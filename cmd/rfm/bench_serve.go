package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rfmkit/rfm/bench/serveload"
)

func cmdBenchServe(e *env, args []string) error {
	if spec := os.Getenv(serveload.HostileEnv); spec != "" {
		// Started by --hostile as its load generator.
		return serveload.RunHostileChild(e.ctx, spec, e.stdout)
	}
	var (
		model, rowsList, duration, warmup, batchWait, profile string
		hostile                                               string
		clients, centers, inputs, batchRows                   int
		hostileClients, slowConns, ordinary                   int
		compareFCFS                                           bool
		common                                                commonFlags
	)
	f := helpFlagSet("bench serve", "rfm bench serve [--model FILE] [flags]")
	f.Section("Model")
	f.String(&model, "model", "", "serve this model `FILE` (default: fit a synthetic one)")
	f.Int(&centers, "centers", 10000, "rows of the synthetic model (`N` centres)")
	f.Int(&inputs, "inputs", 50, "numeric input columns of the synthetic model (`N`)")
	f.Section("Load")
	f.Int(&clients, "clients", 64, "concurrent clients (`N`)")
	f.String(&duration, "duration", "30s", "measured time per request size (`DURATION`)")
	f.String(&warmup, "warmup", "3s", "unmeasured load before each measurement (`DURATION`)")
	f.String(&rowsList, "rows", "1,100", "rows per request (`LIST` of sizes, one run each)")
	f.String(&batchWait, "batch-wait", "1ms", "the server's --batch-wait (`DURATION`)")
	f.Int(&batchRows, "batch-rows", 4096, "the server's --batch-rows (`N`)")
	f.Section("Hostile clients")
	f.String(&hostile, "hostile", "", "measure the ordinary clients under these hostile `KINDS` instead (all, or a list of "+strings.Join(serveload.HostileKinds, ", ")+")")
	f.Int(&hostileClients, "hostile-clients", 256, "concurrent hostile clients per kind (`N`)")
	f.Int(&slowConns, "slow", 300, "connections sending a body at 1 byte/s, for slow-body (`N`)")
	f.Int(&ordinary, "ordinary", 4, "ordinary clients beside the hostile ones (`N`)")
	f.Bool(&compareFCFS, "compare-fcfs", false, "run every hostile phase a second time with first come, first served scheduling (the server before fair scheduling), for a same-run comparison")
	f.Section("Output")
	common.add(f, "json")
	f.String(&profile, "cpuprofile", "", "write a CPU profile of the load phases (server and clients) to `FILE`")
	common.add(f, "threads")
	if _, err := f.Parse(args, e.stderr); err != nil {
		return err
	}
	if err := common.apply(); err != nil {
		return err
	}
	dur, err1 := time.ParseDuration(duration)
	warm, err2 := time.ParseDuration(warmup)
	wait, err3 := time.ParseDuration(batchWait)
	switch {
	case err1 != nil || dur <= 0:
		return usagef("--duration %q: want a positive duration such as 30s", duration)
	case err2 != nil || warm < 0:
		return usagef("--warmup %q: want a duration such as 3s (0 for none)", warmup)
	case err3 != nil || wait < 0:
		return usagef("--batch-wait %q: want a duration such as 1ms", batchWait)
	case clients < 1:
		return usagef("--clients %d: must be at least 1", clients)
	case model == "" && (centers < 10 || inputs < 6):
		return usagef("the synthetic model needs --centers ≥ 10 and --inputs ≥ 6")
	}
	var sizes []int
	for _, s := range strings.Split(rowsList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return usagef("--rows %q: want sizes such as 1,100", rowsList)
		}
		sizes = append(sizes, n)
	}
	if wait == 0 {
		wait = -1 // serve.Options: no waiting
	}
	source := serveload.ModelSource{Model: model, Centers: centers, Inputs: inputs, Version: versionString()}
	if hostile != "" {
		return benchServeHostile(e, source, hostileRun{kinds: hostile, clients: hostileClients, slow: slowConns, ordinary: ordinary,
			compareFCFS: compareFCFS, profile: profile, json: common.json}, serveload.HostileOptions{Duration: dur, Warm: warm, BatchWait: wait, BatchRows: batchRows})
	}

	opt := serveload.Options{ModelSource: source, Clients: clients, Duration: dur, Warmup: warm,
		Sizes: sizes, BatchWait: wait, BatchRows: batchRows, Progress: func(ev serveload.Event) {
			switch {
			case ev.Fitting:
				fmt.Fprintf(e.stderr, "bench serve: fitting a synthetic model of %d centres × %d inputs ...\n", centers, inputs)
			case ev.Phase > 0:
				fmt.Fprintf(e.stderr, "bench serve: %d clients × %d-row requests for %s (after %s of warm-up) ...\n", clients, ev.Phase, dur, warm)
			default:
				fmt.Fprintf(e.stderr, "bench serve: fitted in %s\n", seconds(ev.Fitted))
			}
		}}
	if profile != "" {
		pf, err := os.Create(profile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pf.Close()
		opt.CPUProfile = pf
	}
	res, err := serveload.Run(e.ctx, opt)
	if err != nil {
		return err
	}
	if common.json {
		return writeJSON(e.stdout, res)
	}
	return printBenchServe(e.stdout, res, clients, wait)
}

// hostileRun are the flags of 'rfm bench serve --hostile'.
type hostileRun struct {
	kinds                   string
	clients, slow, ordinary int
	compareFCFS, json       bool
	profile                 string
}

// benchServeHostile measures the ordinary clients beside each hostile kind
// (o holds the load's durations and the server's batching).
func benchServeHostile(e *env, source serveload.ModelSource, h hostileRun, o serveload.HostileOptions) error {
	kinds := strings.Split(h.kinds, ",")
	if h.kinds == "all" {
		kinds = serveload.HostileKinds
	}
	if h.ordinary < 1 || h.clients < 1 || h.slow < 1 {
		return usagef("--ordinary, --hostile-clients and --slow must be at least 1")
	}
	if h.profile != "" {
		pf, err := os.Create(h.profile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	o.ModelSource, o.Kinds, o.CompareFCFS, o.Hostile, o.Slow, o.Ordinary = source, kinds, h.compareFCFS, h.clients, h.slow, h.ordinary
	o.Progress = func(kind, sched string) {
		fmt.Fprintf(e.stderr, "bench serve: %d ordinary clients beside hostile load %q, %s scheduling, for %s (after %s of warm-up) ...\n", h.ordinary, kind, sched, o.Duration, o.Warm)
	}
	res, err := serveload.HostileRun(e.ctx, o)
	if err != nil {
		return err
	}
	if h.json {
		return writeJSON(e.stdout, res)
	}
	return printBenchHostile(e.stdout, res)
}

func printBenchServe(w io.Writer, res *serveload.Result, clients int, wait time.Duration) error {
	fmt.Fprintf(w, "model    %s: %d centres, %d inputs\noffline  %.0f rows/s (Predict on %d rows, median of 3)\nload     %d clients on loopback, in-process server, --batch-wait %s\n\n",
		res.Model, res.Centers, res.Inputs, res.OfflineRowsSec, res.OfflineRows, clients, wait)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rows/req\trequests\treq/s\trows/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\t5xx\t4xx\terrors\trows/batch\tserved/offline\t")
	for _, r := range res.Runs {
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.1f\t%d\t%d\t%d\t%.0f\t%.2f\t\n", r.RowsPerRequest, r.Requests, r.RequestsPerSec, r.RowsPerSec,
			r.P50ms, r.P90ms, r.P99ms, r.MaxMs, r.Status5xx, r.Status4xx, r.Errors, r.MeanBatchRows, r.OfflineRatio)
	}
	return tw.Flush()
}

func printBenchHostile(w io.Writer, res *serveload.HostileResult) error {
	fmt.Fprintf(w, "model    %s: %d centres, %d inputs\nCPUs     %s\n\n", res.Model, res.Centers, res.Inputs, res.CPUs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "hostile kind\tscheduling\tclients\tordinary requests\tp50 ms\tp99 ms\tp99/unloaded\tpeak RSS MB\tCPU s\tevaluations\trows\tordinary status\thostile status")
	for _, p := range res.Phases {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.2f\t%.2f\t%.2f\t%.1f\t%.1f\t%d\t%d\t%v\t%v\n", p.Kind, p.Scheduling, p.HostileClients, p.Requests, p.P50ms, p.P99ms, p.P99Ratio, p.PeakRSSMB,
			p.CPUSeconds, p.Evaluations, p.KernelRows, p.Status, p.HostileStatus)
	}
	return tw.Flush()
}
