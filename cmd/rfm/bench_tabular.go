package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rfmkit/rfm/bench/tabular"
	"github.com/rfmkit/rfm/internal/cli"
)

// cmdBenchTabular runs 'rfm bench tabular': the RFM paper's second
// tabular benchmark (Grinsztajn et al.), package bench/tabular.
func cmdBenchTabular(e *env, args []string) error {
	var opt tabular.Options
	var bf cli.BenchFlags
	var tasks, budget string
	f := helpFlagSet("bench tabular", "rfm bench tabular --data DIR [flags]")
	f.Section("Benchmark")
	f.String(&opt.DataDir, "data", "", "benchmark `DIR` (required)")
	f.String(&opt.Protocol, "protocol", tabular.ProtocolPaper, "`P`: "+strings.Join(tabular.Protocols(), ", "))
	f.String(&opt.Size, "size", tabular.SizeMedium, "`SIZE`: medium (train ≤ 10 000 rows) or large (≤ 50 000; tasks with more than 10 000 training rows)")
	f.String(&tasks, "tasks", "", "only these tasks: comma list of `NAMES` (GROUP/NAME, NAME, or GROUP/ for a whole group)")
	bf.DefineRun(f.FlagSet, cli.BenchWords{Items: "tasks", Results: "results.json", Out: "out/tabular-PROTOCOL-SIZE", Seed: "the splits and fits"})
	f.Bool(&opt.Float32, "float32", false, "store and factor the kernel matrices in float32")
	f.String(&budget, "budget", "", "wall-time `DURATION` of the tuned protocol's search per task, shared by its splits (e.g. 10m; default none)")
	f.Bool(&opt.ReportOnly, "report-only", false, "compute nothing: summarize the tasks already in OUT/results.json")
	f.String(&opt.XGBoost, "xgboost", "", "results `FILE` of scripts/xgboost_tabular.py to show beside ours (default: OUT/xgboost.json when present)")
	bf.DefineOutput(f.FlagSet)
	pos, err := f.Parse(args, e.stdout)
	if err != nil {
		return err
	}
	tuned := opt.Protocol == tabular.ProtocolTuned
	switch {
	case opt.DataDir == "":
		return usagef("--data DIR is required (the tabular-benchmark folder)")
	case !slices.Contains(tabular.Protocols(), opt.Protocol):
		return usagef("--protocol %q: want one of %s", opt.Protocol, strings.Join(tabular.Protocols(), ", "))
	case opt.Size != tabular.SizeMedium && opt.Size != tabular.SizeLarge:
		return usagef("--size %q: want medium or large", opt.Size)
	case budget != "" && !tuned:
		return usagef("--budget applies to --protocol tuned only")
	}
	if err := bf.Check(f.FlagSet, pos, tuned); err != nil {
		return err
	}
	opt.Jobs, opt.Threads, opt.OutDir, opt.Force, opt.Seed, opt.Trials = bf.Jobs, bf.Threads, bf.OutDir, bf.Force, bf.Seed, bf.Trials
	if budget != "" {
		d, err := time.ParseDuration(budget)
		if err != nil || d <= 0 {
			return usagef("--budget %q: want a positive duration such as 10m or 1h", budget)
		}
		opt.Budget = d
	}
	if tasks != "" {
		opt.Tasks = strings.Split(tasks, ",")
		all, err := tabular.Discover(opt.DataDir)
		if err != nil {
			return err
		}
		if _, err := tabular.Select(all, opt.Tasks); err != nil {
			return usagef("%v", err)
		}
	}
	if opt.OutDir == "" {
		opt.OutDir = filepath.Join("out", "tabular-"+opt.Protocol+"-"+opt.Size)
	}
	if !bf.Quiet {
		opt.Progress = tabularProgress(e.stderr)
	}
	rep, err := tabular.Run(e.ctx, opt)
	if err != nil {
		return benchStopped(e, "tabular", filepath.Join(opt.OutDir, tabular.ResultsName), err)
	}
	if bf.JSON {
		err = writeJSON(e.stdout, rep)
	} else {
		_, err = io.WriteString(e.stdout, tabular.Markdown(rep))
	}
	if err != nil {
		return err
	}
	if rep.Failed > 0 {
		return fmt.Errorf("%d task(s) failed (see %s); rerun to retry them", rep.Failed, filepath.Join(opt.OutDir, tabular.SummaryMDName))
	}
	return nil
}

// tabularProgress prints one line per task started or finished and per
// fit, with the elapsed time.
func tabularProgress(w io.Writer) func(tabular.Progress) {
	return func(p tabular.Progress) {
		el := p.Elapsed.Round(time.Second)
		switch p.Event {
		case "start":
			fmt.Fprintf(w, "[%d/%d %s] %s: started\n", p.Done, p.Total, el, p.Task)
		case "fit":
			fmt.Fprintf(w, "[%d/%d %s] %s: %s\n", p.Done, p.Total, el, p.Task, p.Detail)
		case "done":
			fmt.Fprintf(w, "[%d/%d %s] %s: score %.4g (validation %.4g, %d split(s), %.0f s)\n", p.Done, p.Total, el, p.Task, p.Result.Score, p.Result.ValScore, p.Result.Repeats, p.Result.Seconds)
		case "failed":
			fmt.Fprintf(w, "[%d/%d %s] %s: failed: %s\n", p.Done, p.Total, el, p.Task, p.Result.Reason)
		}
	}
}
