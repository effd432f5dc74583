package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var update = flag.Bool("update", false, "rewrite docs/benchmarks.md from results/")

// root is the repository's root, seen from this package's folder.
const root = "../.."

// TestBenchmarksPage fails when the committed docs/benchmarks.md is not what
// the generator writes from results/: a figure changed in a results file, or
// the page was edited by hand.
func TestBenchmarksPage(t *testing.T) {
	want, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, page)
	got, err := os.ReadFile(path)
	if err != nil && !*update {
		t.Fatal(err)
	}
	if bytes.Equal(got, want) {
		return
	}
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s is stale at line %d; run go run ./docs/gen (or go test ./docs/gen -update)\ncommitted: %s\ngenerated: %s", page, i+1, g, w)
		}
	}
}

// TestPageFiguresComeFromFiles checks a few figures of the page against the
// files they are read from, so that a generator that formats the wrong field
// is caught even when the page was regenerated with it.
func TestPageFiguresComeFromFiles(t *testing.T) {
	out, err := generate(root)
	if err != nil {
		t.Fatal(err)
	}
	r := &reader{root: root}
	var s benchSummary
	if !r.json("results/uci-118/summary.json", &s) {
		t.Fatal(r.err)
	}
	for _, want := range []string{
		"| all 118 |", pct(s.RFMMean), pct(s.LaplaceMean),
		"[`uci-large/adult.results.tsv`](../results/uci-large/adult.results.tsv)",
	} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
	var e evalSummary
	if !r.json("results/mnist/tune.eval.json", &e) {
		t.Fatal(r.err)
	}
	if want := "**" + pct(100*e.Metrics.Accuracy) + "** on 10000 digits"; !bytes.Contains(out, []byte(want)) {
		t.Errorf("the MNIST row lacks %q", want)
	}
}

func TestMissingFileIsNamed(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := generate(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join("results", "uci-arora90", "summary.json")) {
		t.Fatalf("generate on an empty results/: %v, want an error naming results/uci-arora90/summary.json", err)
	}
}

func TestTSVErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("short.tsv", "name\ttest_acc_pct\nabalone\t66.1\niris\n")
	write("text.tsv", "name\ttest_acc_pct\nabalone\tabc\n")
	r := &reader{root: dir}
	r.tsv("short.tsv")
	if r.err == nil || !strings.Contains(r.err.Error(), "short.tsv:3: 1 fields, the header has 2") {
		t.Errorf("short row: %v", r.err)
	}
	r = &reader{root: dir}
	rows := r.tsv("text.tsv")
	if r.err != nil || len(rows) != 1 {
		t.Fatalf("text.tsv: %v, %d rows", r.err, len(rows))
	}
	r.num("text.tsv", rows[0], "test_acc_pct")
	if r.err == nil || !strings.Contains(r.err.Error(), `set abalone, column "test_acc_pct": "abc" is not a number`) {
		t.Errorf("bad number: %v", r.err)
	}
}

// checkStrings checks a string function on a table of inputs and wants.
func checkStrings(t *testing.T, name string, f func(string) string, cases map[string]string) {
	t.Helper()
	for in, want := range cases {
		if got := f(in); got != want {
			t.Errorf("%s(%q) = %q, want %q", name, in, got, want)
		}
	}
}

func TestDuration(t *testing.T) {
	checkStrings(t, "duration", duration, map[string]string{
		"1:07:44":  "1 h 7 min",
		"15:40.28": "15 min 40 s",
		"0:45.20":  "45 s",
		"9.5":      "10 s",
		"x:1":      "x:1",
	})
}

func TestCompare(t *testing.T) {
	a := map[string]float64{"x": 90, "y": 80, "z": 70}
	b := map[string]float64{"x": 85, "y": 80, "z": 75}
	if wa, wb, eq := compare(a, b, []string{"x", "y", "z"}); wa != 1 || wb != 1 || eq != 1 {
		t.Errorf("compare: %d, %d, %d; want 1, 1, 1", wa, wb, eq)
	}
}

// mdLink is a Markdown link or image whose target is not a URL or an anchor.
var mdLink = regexp.MustCompile(`\]\(([^)#:\s]+)(#[^)]*)?\)`)

// TestDocLinks checks that every relative link of README.md and docs/*.md
// names a file or folder of the repository.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join(root, "README.md"), filepath.Join(root, "results", "README.md"))
	checked := 0
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllSubmatch(b, -1) {
			target := filepath.Join(filepath.Dir(p), filepath.FromSlash(string(m[1])))
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %s: %v", p, m[1], err)
				continue
			}
			checked++
			if anchor := strings.TrimPrefix(string(m[2]), "#"); anchor != "" && strings.HasSuffix(target, ".md") {
				if !hasAnchor(t, target, anchor) {
					t.Errorf("%s: link %s%s: no heading with that anchor", p, m[1], m[2])
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d links checked: the pattern or the pages are not what this test expects", checked)
	}
}

// hasAnchor reports whether a Markdown file has a heading whose GitHub
// anchor is anchor: lower case, punctuation dropped, spaces as hyphens.
func hasAnchor(t *testing.T, path, anchor string) bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		if slug(strings.TrimLeft(line, "# ")) == anchor {
			return true
		}
	}
	return false
}

func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	checkStrings(t, "slug", slug, map[string]string{
		"MNIST: `rfm tune` in 20 minutes":    "mnist-rfm-tune-in-20-minutes",
		"UCI thyroid: the command-line tour": "uci-thyroid-the-command-line-tour",
		"rfm bench uci":                      "rfm-bench-uci",
	})
}

// TestScaleSection checks the table of rfm bench scale's results.tsv (no
// such file is kept in results/ yet, so the page test does not reach it):
// the columns bench scale writes, and a failed run left out.
func TestScaleSection(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "results", "scale-ijcnn1")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	tsv := "set\tmethod\ttrain_rows\ttest_rows\tfit_seconds\tpeak_rss_mb\tpredict_rows_per_s\tmetric\tvalue\tflags\terror\n" +
		"ijcnn1\ttree\t49990\t91701\t15.80\t594\t40123\taccuracy\t0.9881\t--solver tree\t\n" +
		"ijcnn1\tnystrom\t49990\t91701\t0\t0\t0\taccuracy\t0\t--solver nystrom\tout of memory\n" +
		"flights\texact\t20000\t502222\t3061.5\t1536\t0\trmse\t40.06\t--solver exact\t\n"
	if err := os.WriteFile(filepath.Join(sub, "results.tsv"), []byte(tsv), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &reader{root: dir}
	var b bytes.Buffer
	r.scaleSection(&b)
	if r.err != nil {
		t.Fatal(r.err)
	}
	out := b.String()
	for _, want := range []string{
		"| ijcnn1 | tree | 49990 | 16 s | 0.58 GiB | accuracy 98.81% | 40123 | [`scale-ijcnn1/results.tsv`](../results/scale-ijcnn1/results.tsv) |",
		"| flights | exact | 20000 | 51 min 2 s | 1.50 GiB | RMSE 40.06 |  |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the scale table lacks\n%s\ngot:\n%s", want, out)
		}
	}
	if strings.Contains(out, "nystrom") {
		t.Errorf("the failed run is in the table:\n%s", out)
	}
}
