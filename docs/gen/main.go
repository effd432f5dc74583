// Command gen writes docs/benchmarks.md from the measured files in results/,
// so that every figure in that page is the figure in a results file.
//
// Run it from the repository's root after adding or replacing a results file:
//
//	go run ./docs/gen
//
// The test in this package fails when the committed docs/benchmarks.md is not
// what the generator writes (go test ./docs/gen -update rewrites it).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/internal/atomicfile"
)

// page is the generated file, relative to the repository's root.
const page = "docs/benchmarks.md"

func main() {
	root := flag.String("root", ".", "the repository's root `DIR` (results/ is read there, docs/benchmarks.md written)")
	flag.Parse()
	out, err := generate(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	path := filepath.Join(*root, page)
	err = atomicfile.Write(context.Background(), path, func(w io.Writer) error {
		_, err := w.Write(out)
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "gen: wrote %s (%d bytes)\n", path, len(out))
}

// reader reads the results files under root and remembers the first error,
// so that the sections below read as the page they write.
type reader struct {
	root string
	err  error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// path is a results file relative to the root, with forward slashes.
func (r *reader) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(r.root, filepath.FromSlash(rel)))
	return err == nil
}

func (r *reader) json(rel string, v any) bool {
	b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		r.fail(err)
		return false
	}
	if err := json.Unmarshal(b, v); err != nil {
		r.fail(fmt.Errorf("%s: %w", rel, err))
		return false
	}
	return true
}

// tsv reads a tab-separated file with a header into one map per row.
func (r *reader) tsv(rel string) []map[string]string {
	f, err := os.Open(filepath.Join(r.root, filepath.FromSlash(rel)))
	if err != nil {
		r.fail(err)
		return nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var head []string
	var rows []map[string]string
	line := 0
	for sc.Scan() {
		line++
		fields := strings.Split(sc.Text(), "\t")
		if head == nil {
			head = fields
			continue
		}
		if len(fields) != len(head) {
			r.fail(fmt.Errorf("%s:%d: %d fields, the header has %d", rel, line, len(fields), len(head)))
			return nil
		}
		row := make(map[string]string, len(head))
		for i, h := range head {
			row[h] = fields[i]
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		r.fail(fmt.Errorf("%s: %w", rel, err))
		return nil
	}
	if head == nil {
		r.fail(fmt.Errorf("%s: empty file", rel))
	}
	return rows
}

// num parses a numeric column of a row read by tsv.
func (r *reader) num(rel string, row map[string]string, col string) float64 {
	s, ok := row[col]
	if !ok {
		r.fail(fmt.Errorf("%s: no column %q", rel, col))
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		r.fail(fmt.Errorf("%s: set %s, column %q: %q is not a number", rel, row["name"], col, s))
		return math.NaN()
	}
	return v
}

// timing is what /usr/bin/time -v recorded in a time.txt file.
type timing struct {
	wall string // as printed, h:mm:ss or m:ss.cc
	peak float64
	ok   bool
}

var (
	wallRe = regexp.MustCompile(`Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)`)
	rssRe  = regexp.MustCompile(`Maximum resident set size \(kbytes\): (\d+)`)
)

// timeFile reads the last wall time and peak RSS of a time.txt file; a file
// that is absent gives no timing.
func (r *reader) timeFile(rel string) timing {
	b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return timing{}
	}
	if err != nil {
		r.fail(err)
		return timing{}
	}
	w := wallRe.FindAllSubmatch(b, -1)
	m := rssRe.FindAllSubmatch(b, -1)
	if len(w) == 0 || len(m) == 0 {
		r.fail(fmt.Errorf("%s: no wall time or peak RSS from /usr/bin/time -v", rel))
		return timing{}
	}
	kb, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	return timing{wall: string(w[len(w)-1][1]), peak: kb * 1024, ok: true}
}

// duration renders /usr/bin/time's h:mm:ss or m:ss.cc as "1 h 8 min" or "15 min 40 s".
func duration(s string) string {
	parts := strings.Split(s, ":")
	var secs float64
	for _, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return s
		}
		secs = secs*60 + v
	}
	t := int(math.Round(secs))
	switch {
	case t >= 3600:
		return fmt.Sprintf("%d h %d min", t/3600, (t%3600)/60)
	case t >= 60:
		return fmt.Sprintf("%d min %d s", t/60, t%60)
	default:
		return fmt.Sprintf("%d s", t)
	}
}

func (t timing) cells() (string, string) {
	if !t.ok {
		return "", ""
	}
	return duration(t.wall), fmt.Sprintf("%.1f GiB", t.peak/(1<<30))
}

// benchSummary is the part of bench uci's summary.json the page uses.
type benchSummary struct {
	Protocol    string  `json:"protocol"`
	Tag         string  `json:"tag"`
	OK          int     `json:"ok"`
	RFMMean     float64 `json:"mean_accuracy_pct"`
	LaplaceMean float64 `json:"mean_laplace_pct"`
	Calibration *struct {
		Datasets   int     `json:"datasets"`
		LogLoss    float64 `json:"log_loss"`
		CalLogLoss float64 `json:"cal_log_loss"`
		Worse      []struct {
			Name string `json:"name"`
		} `json:"worse"`
	} `json:"calibration"`
	Scopes []struct {
		Name      string `json:"name"`
		Datasets  []string
		Place     int `json:"rfm_place"`
		LapPlace  int `json:"laplace_place"`
		Summaries []struct {
			Classifier string  `json:"classifier"`
			Sets       int     `json:"sets"`
			Accuracy   float64 `json:"average_accuracy"`
			Rank       float64 `json:"friedman_rank"`
			P90        float64 `json:"p90"`
			P95        float64 `json:"p95"`
			PMA        float64 `json:"pma"`
		} `json:"summaries"`
	} `json:"scopes"`
}

// uciRun is one folder of bench uci output and how the page describes it.
type uciRun struct {
	dir      string // under results/
	sets     string // which data sets, in words
	command  string // the options that differ from bench uci's defaults
	note     string // what the model is, in words
	leakFree bool
	optional bool // left out of the page when its folder is absent
}

// uciRuns are the bench uci runs of the summary table, in its order. The
// older folders (uci-115, the partial 60-trial run, the lp-laplace cap
// trial) are history: results/README.md describes them.
var uciRuns = []uciRun{
	{dir: "uci-arora90-paper", sets: "Arora's 90", command: "--subset arora90 --protocol paper --float32", note: "the papers' grid, 5 rounds", optional: true},
	{dir: "uci-arora90", sets: "Arora's 90", command: "--subset arora90 --protocol tuned --float32", note: "mean of the 3 best (the default)", leakFree: true},
	{dir: "uci-arora90-ensemble5", sets: "Arora's 90", command: "--subset arora90 --protocol tuned --float32 --ensemble 5", note: "mean of the 5 best", leakFree: true},
	{dir: "uci-others23", sets: "the 23 others", command: "--subset NAMES --protocol tuned --float32", note: "mean of the 3 best", leakFree: true},
	{dir: "uci-others23-ensemble1", sets: "the 23 others", command: "--subset NAMES --protocol tuned --float32 --ensemble 1", note: "the best alone", leakFree: true},
	{dir: "uci-113", sets: "90 + 23", command: "--combine results/uci-arora90,results/uci-others23", note: "summary of the two mean-of-3 runs", leakFree: true},
	{dir: "uci-118", sets: "all 118", command: "--combine ...", note: "the 113 and the five largest (below)", leakFree: true},
}

func pct(v float64) string { return fmt.Sprintf("%.2f%%", v) }

func link(rel string) string { return fmt.Sprintf("[`%s`](../results/%s)", rel, rel) }

func generate(root string) ([]byte, error) {
	r := &reader{root: root}
	var b bytes.Buffer
	b.WriteString(`# Benchmarks

<!-- Generated by "go run ./docs/gen" from the files in results/. Do not edit by hand:
     change or add a results file, then run the generator. -->

Every figure on this page is read from a file in [results/](../results/), which holds what the
command wrote and how it was run; [results/README.md](../results/README.md) gives each file's
command, the machine and the history of the figure. Unless a row says otherwise the runs are on
a 2-core machine with OpenBLAS, often shared with other work, so wall times are as measured, not
best cases. How the protocols work: [uci.md](uci.md).

`)
	r.uciSection(&b)
	r.largeSection(&b)
	r.xgboostSection(&b)
	r.mnistSection(&b)
	r.scaleSection(&b)
	r.tabularSection(&b)
	r.thyroidSection(&b)
	if r.err != nil {
		return nil, r.err
	}
	return b.Bytes(), nil
}

func (r *reader) uciSection(b *bytes.Buffer) {
	b.WriteString("## UCI-121 (Fernández-Delgado et al.), RFM against 179 classifiers\n\n")
	b.WriteString("`rfm bench uci --data ../shared/data/uci121/data` with the options shown. " +
		"*RFM* is the model the protocol selects; *plain kernel* is Laplace for `paper`, and the best " +
		"round-0 kernel of the same search for `tuned`. The place is by Friedman rank among the " +
		"classifiers with results on those sets (the study's 179 with a result, plus these two). " +
		"Log-loss is the RFM's mean test log-loss as fitted → calibrated.\n\n")
	b.WriteString("| sets | options | model | leak-free | data sets | RFM | plain kernel | RFM place | log-loss | time | peak RSS | file |\n")
	b.WriteString("|---|---|---|---|---:|---:|---:|---|---|---:|---:|---|\n")
	var last *benchSummary
	for _, run := range uciRuns {
		rel := run.dir + "/summary.json"
		if run.optional && !r.exists("results/"+rel) {
			continue
		}
		var s benchSummary
		if !r.json("results/"+rel, &s) {
			return
		}
		place := ""
		if len(s.Scopes) > 0 {
			sc := s.Scopes[0]
			place = fmt.Sprintf("%d of %d", sc.Place, len(sc.Summaries))
		}
		ll := ""
		if c := s.Calibration; c != nil && c.Datasets > 0 {
			ll = fmt.Sprintf("%.3f → %.3f", c.LogLoss, c.CalLogLoss)
		}
		leak := "no"
		if run.leakFree {
			leak = "**yes**"
		}
		wall, peak := r.timeFile("results/" + run.dir + "/time.txt").cells()
		fmt.Fprintf(b, "| %s | `%s` | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |\n",
			run.sets, run.command, run.note, leak, s.OK, pct(s.RFMMean), pct(s.LaplaceMean), place, ll, wall, peak, link(run.dir+"/"))
		if run.dir == "uci-118" {
			last = &s
		}
	}
	b.WriteString("\n`paper` learns M on rows that reappear in the test splits (the papers' protocol); " +
		"`tuned` runs `rfm tune`'s search inside each training split, so no test row influences any choice. " +
		"*The 23 others* are the sets outside Arora's 90 but for the five largest (their names are in " +
		"[results/README.md](../results/README.md)). " +
		"`--combine` rows have no time: they compute nothing and summarize the rows of the runs they name " +
		"([results/README.md](../results/README.md) gives the exact command).\n\n")
	if last == nil {
		return
	}
	for _, sc := range last.Scopes {
		if sc.Name != "selected" {
			continue
		}
		fmt.Fprintf(b, "### The first 10 of %d classifiers on all %d sets\n\n", len(sc.Summaries), last.OK)
		fmt.Fprintf(b, "From %s (tuned protocol, leak-free: the mean of 3 on 113 sets, the best alone on the five largest). P90/P95: share of sets within 90%%/95%% of the best accuracy; PMA: mean percentage of the best.\n\n", link("uci-118/summary.json"))
		b.WriteString("| # | classifier | Friedman rank | mean accuracy | P90 | P95 | PMA | sets |\n")
		b.WriteString("|---:|---|---:|---:|---:|---:|---:|---:|\n")
		sum := sc.Summaries
		sort.SliceStable(sum, func(i, j int) bool { return sum[i].Rank < sum[j].Rank })
		for i, c := range sum {
			if i == 10 {
				break
			}
			name := c.Classifier
			switch name {
			case "RFM":
				name = "**RFM (tuned)**"
			case "Laplace":
				name = "**plain kernel (tuned)**"
			}
			fmt.Fprintf(b, "| %d | %s | %.2f | %.2f%% | %.1f | %.1f | %.1f | %d |\n", i+1, name, c.Rank, c.Accuracy, c.P90, c.P95, c.PMA, c.Sets)
		}
		b.WriteString("\n")
	}
}

// largeSets are the five largest UCI sets, measured one by one.
var largeSets = []string{"adult", "chess-krvk", "letter", "magic", "statlog-shuttle"}

func mean(vals string) (float64, error) {
	var s float64
	parts := strings.Split(vals, ",")
	for _, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", p)
		}
		s += v
	}
	return s / float64(len(parts)), nil
}

// xgbRows reads an XGBoost table of scripts/xgboost_uci.py by set name.
func (r *reader) xgbRows(rel string) map[string]float64 {
	out := map[string]float64{}
	for _, row := range r.tsv(rel) {
		out[row["name"]] = r.num(rel, row, "test_acc_pct")
	}
	return out
}

func (r *reader) largeSection(b *bytes.Buffer) {
	b.WriteString("## The five largest UCI sets\n\n")
	b.WriteString("Each: `rfm bench uci --subset NAME --protocol tuned --float32 --ensemble 1` (the search on at most " +
		"4 000 rows of each training split; a final fit on more than 10 000 rows by Nyström on 10 000 centres). XGBoost: " +
		"`scripts/xgboost_uci.py` with the same splits and budget (" + link("xgboost/large.tsv") + ").\n\n")
	b.WriteString("| set | rows in the set | classes | RFM | plain kernel | XGBoost | log-loss | time | peak RSS | file |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---|---:|---:|---|\n")
	xgb := r.xgbRows("results/xgboost/large.tsv")
	for _, name := range largeSets {
		rel := "uci-large/" + name + ".results.tsv"
		rows := r.tsv("results/" + rel)
		if len(rows) != 1 {
			if r.err == nil {
				r.fail(fmt.Errorf("results/%s: %d rows, want 1", rel, len(rows)))
			}
			return
		}
		row := rows[0]
		ll, err1 := mean(row["logloss"])
		cll, err2 := mean(row["cal_logloss"])
		if err := errors.Join(err1, err2); err != nil {
			r.fail(fmt.Errorf("results/%s: log-loss: %w", rel, err))
			return
		}
		x, ok := xgb[name]
		xs := ""
		if ok {
			xs = pct(x)
		}
		wall, peak := r.timeFile("results/uci-large/" + name + ".time.txt").cells()
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %.3f → %.3f | %s | %s | %s |\n", name, row["n"], row["classes"],
			pct(r.num(rel, row, "test_acc_pct")), pct(r.num(rel, row, "laplace_acc_pct")), xs, ll, cll, wall, peak, link(rel))
	}
	b.WriteString("\n")
}

// compare counts the sets where a beats b, b beats a, and ties.
func compare(a, b map[string]float64, names []string) (wa, wb, eq int) {
	for _, n := range names {
		switch d := a[n] - b[n]; {
		case math.Abs(d) < 1e-9:
			eq++
		case d > 0:
			wa++
		default:
			wb++
		}
	}
	return
}

func (r *reader) xgboostSection(b *bytes.Buffer) {
	b.WriteString("## Against XGBoost\n\n")
	b.WriteString("`scripts/xgboost_uci.py` runs Debian's XGBoost 1.7 (`hist`) under the tuned protocol's rules: in " +
		"each evaluation training split, 30 seeded random configurations (learning rate, depth, rounds, " +
		"subsampling, column sampling, child weight, L2) scored by 4-fold cross-validation under 1 000 rows " +
		"and on a 20% holdout (at most 4 000 fitting rows) above; the best is refitted and scored once on " +
		"the test split. RFM: the tuned protocol's mean of 3.\n\n")
	rfmRel := "uci-others23/results.tsv"
	rfm := map[string]float64{}
	var names []string
	for _, row := range r.tsv("results/" + rfmRel) {
		rfm[row["name"]] = r.num(rfmRel, row, "test_acc_pct")
		names = append(names, row["name"])
	}
	xgb := r.xgbRows("results/xgboost/others23.tsv")
	if r.err != nil {
		return
	}
	var sr, sx float64
	for _, n := range names {
		x, ok := xgb[n]
		if !ok {
			r.fail(fmt.Errorf("results/xgboost/others23.tsv: no row for %s", n))
			return
		}
		sr += rfm[n]
		sx += x
	}
	wr, wx, eq := compare(rfm, xgb, names)
	fmt.Fprintf(b, "### The 23 other UCI sets\n\nFrom %s and %s: **RFM %s, XGBoost %s** on average; the RFM better on %d sets, XGBoost on %d, equal on %d.\n\n",
		link(rfmRel), link("xgboost/others23.tsv"), pct(sr/float64(len(names))), pct(sx/float64(len(names))), wr, wx, eq)
	b.WriteString("| set | RFM | XGBoost |\n|---|---:|---:|\n")
	for _, n := range names {
		fmt.Fprintf(b, "| %s | %s | %s |\n", n, pct(rfm[n]), pct(xgb[n]))
	}
	b.WriteString("\nThe five largest sets are in the table above.\n\n")
}

// tuneSummary is the part of rfm tune --json the page uses.
type tuneSummary struct {
	Rows           int   `json:"rows"`
	Rungs          []int `json:"rungs"`
	Configurations int   `json:"configurations"`
	Trials         int   `json:"trials"`
	Best           struct {
		Trial    int     `json:"trial"`
		Accuracy float64 `json:"accuracy"`
	} `json:"best"`
	Plain struct {
		Accuracy float64 `json:"accuracy"`
	} `json:"plain_kernel"`
	Config struct {
		Kernel struct {
			Kind      string  `json:"kind"`
			Bandwidth float64 `json:"bandwidth"`
		} `json:"kernel"`
		Loss string `json:"loss"`
	} `json:"config"`
	Scaling       string `json:"scaling"`
	EnsembleTrial []int  `json:"ensemble_trials"`
	EnsembleVal   *struct {
		Accuracy float64 `json:"accuracy"`
	} `json:"ensemble_validation"`
}

// evalSummary is the part of rfm eval --json the page uses.
type evalSummary struct {
	Rows    int `json:"rows"`
	Metrics struct {
		Accuracy float64 `json:"accuracy"`
		LogLoss  float64 `json:"log_loss"`
		ECE      float64 `json:"ece"`
		Brier    float64 `json:"brier"`
	} `json:"metrics"`
}

func (r *reader) mnistSection(b *bytes.Buffer) {
	var t tuneSummary
	var e, alone evalSummary
	var x struct {
		Trials     int     `json:"trials"`
		CPUSeconds float64 `json:"search_cpu_seconds"`
		Val        float64 `json:"val_acc_pct"`
		Test       float64 `json:"test_acc_pct"`
	}
	if !r.json("results/mnist/tune.json", &t) || !r.json("results/mnist/tune.eval.json", &e) ||
		!r.json("results/mnist/best-alone.eval.json", &alone) || !r.json("results/xgboost/mnist.json", &x) {
		return
	}
	wall, peak := r.timeFile("results/mnist/tune.time.txt").cells()
	b.WriteString("## MNIST: `rfm tune` in 20 minutes\n\n")
	b.WriteString("The 10 000 training digits of `../shared/data/mnist` (as CSV: `go run ./examples/mnist --export DIR`), " +
		"scored once on the official 10 000 test digits:\n\n")
	b.WriteString("```sh\nrfm tune --data mnist_train.csv --target label --time 20m --float32 \\\n" +
		"         --calibrate temperature --ensemble 3 --out mnist.rfm\nrfm eval --model mnist.rfm --data mnist_test.csv\n```\n\n")
	b.WriteString("| | value | file |\n|---|---|---|\n")
	fmt.Fprintf(b, "| search | %d configurations, %d fits, rungs of %s rows | %s |\n", t.Configurations, t.Trials, joinInts(t.Rungs), link("mnist/tune.json"))
	fmt.Fprintf(b, "| best configuration | trial %d: %s kernel, L = %g, %s scaling, %s loss; validation %s (best plain kernel %s) | %s |\n",
		t.Best.Trial, t.Config.Kernel.Kind, t.Config.Kernel.Bandwidth, t.Scaling, t.Config.Loss, pct(100*t.Best.Accuracy), pct(100*t.Plain.Accuracy), link("mnist/tune.json"))
	if t.EnsembleVal != nil {
		fmt.Fprintf(b, "| saved model | mean of trials %s, validation %s | %s |\n", joinInts(t.EnsembleTrial), pct(100*t.EnsembleVal.Accuracy), link("mnist/tune.json"))
	}
	fmt.Fprintf(b, "| **test** | **%s** on %d digits, ECE %.4f, log-loss %.3f | %s |\n", pct(100*e.Metrics.Accuracy), e.Rows, e.Metrics.ECE, e.Metrics.LogLoss, link("mnist/tune.eval.json"))
	fmt.Fprintf(b, "| the best configuration alone | test %s, ECE %.4f | %s |\n", pct(100*alone.Metrics.Accuracy), alone.Metrics.ECE, link("mnist/best-alone.eval.json"))
	if wall != "" {
		fmt.Fprintf(b, "| time, peak memory | %s (the search and the three final fits), %s | %s |\n", wall, peak, link("mnist/tune.time.txt"))
	}
	fmt.Fprintf(b, "| XGBoost, the same budget (`scripts/xgboost_tune.py`) | %d configurations, validation %s, test %s | %s |\n", x.Trials, pct(x.Val), pct(x.Test), link("xgboost/mnist.json"))
	b.WriteString("\nOne run of one seed: a repeat moves by a tenth of a point or two.\n\n")
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// scaleSection writes the table of each results/scale-*/summary.json, when
// there is one.
func (r *reader) scaleSection(b *bytes.Buffer) {
	dirs, err := filepath.Glob(filepath.Join(r.root, "results", "scale-*", "results.tsv"))
	if err != nil {
		r.fail(err)
		return
	}
	sort.Strings(dirs)
	b.WriteString("## Large tables: `rfm bench scale`\n\n")
	if len(dirs) == 0 {
		b.WriteString("No `rfm bench scale` output is kept in results/ yet; see [scale.md](scale.md) for the command.\n\n")
		return
	}
	b.WriteString("Every fit runs in a child `rfm fit` (its own peak RSS); \"exact\" is an exact RFM on a seeded 20 000-row subset; " +
		"XGBoost (Debian's 1.7, `hist`, a small grid chosen on a validation split) is the reference.\n\n")
	b.WriteString("| set | method | train rows | fit | peak RSS | test | predict rows/s | file |\n")
	b.WriteString("|---|---|---:|---:|---:|---|---:|---|\n")
	for _, p := range dirs {
		rel, _ := filepath.Rel(filepath.Join(r.root, "results"), p)
		rel = filepath.ToSlash(rel)
		for _, row := range r.tsv("results/" + rel) {
			r.scaleRow(b, rel, row)
		}
	}
	b.WriteString("\n")
}

func (r *reader) scaleRow(b *bytes.Buffer, rel string, row map[string]string) {
	if row["error"] != "" {
		return
	}
	secs := r.num(rel, row, "fit_seconds")
	rss := r.num(rel, row, "peak_rss_mb")
	score := r.num(rel, row, "value")
	var test string
	switch metric := row["metric"]; metric {
	case "accuracy":
		test = "accuracy " + pct(100*score)
	case "mse":
		test = fmt.Sprintf("MSE %.3g", score)
	case "rmse":
		test = fmt.Sprintf("RMSE %.2f", score)
	default:
		test = fmt.Sprintf("%s %.4g", metric, score)
	}
	pr := ""
	if v := r.num(rel, row, "predict_rows_per_s"); v > 0 {
		pr = strconv.Itoa(int(math.Round(v)))
	}
	fmt.Fprintf(b, "| %s | %s | %s | %s | %.2f GiB | %s | %s | %s |\n", row["set"], row["method"], row["train_rows"],
		duration(strconv.FormatFloat(secs, 'f', 1, 64)), rss/1024, test, pr, link(rel))
}

// thyroidSection writes the CLI tour's figures on UCI thyroid, from the
// eval --json files of results/thyroid/.
func (r *reader) thyroidSection(b *bytes.Buffer) {
	runs := []struct{ file, what string }{
		{"laplace.eval.json", "plain Laplace kernel (`--iters 0`)"},
		{"rfm.eval.json", "RFM, the papers' defaults"},
		{"lp-laplace.eval.json", "RFM, `--kernel lp-laplace` (product Laplace)"},
	}
	if !r.exists("results/thyroid") {
		return
	}
	b.WriteString("## UCI thyroid: the command-line tour\n\n")
	b.WriteString("`rfm fit` on the 3 772 training rows of `thyroid_train_R.dat` (`--target clase --ignore c0 --task classification`), " +
		"`rfm eval --json` on the 3 428 rows of `thyroid_test_R.dat`; the commands are in [results/thyroid/README.md](../results/thyroid/README.md).\n\n")
	b.WriteString("| model | test accuracy | log-loss | ECE | file |\n|---|---:|---:|---:|---|\n")
	for _, run := range runs {
		var e evalSummary
		if !r.json("results/thyroid/"+run.file, &e) {
			return
		}
		fmt.Fprintf(b, "| %s | %s | %.4f | %.4f | %s |\n", run.what, pct(100*e.Metrics.Accuracy), e.Metrics.LogLoss, e.Metrics.ECE, link("thyroid/"+run.file))
	}
	b.WriteString("\n")
}
