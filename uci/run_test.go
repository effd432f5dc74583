package uci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestResultsRoundTrip(t *testing.T) {
	rs := []Result{
		{Name: "a", Protocol: "paper", Status: StatusOK, N: 10, D: 2, Classes: 3,
			RFM:          []Choice{{Setting: Setting{Lambda: 0.1, Normalize: true, Bandwidth: 10, Norm: "mean", Iters: 4}, Round: 2, ValAccuracy: 91.25}},
			Laplace:      []Choice{{Setting: Setting{Lambda: 10, Bandwidth: 10, Norm: "mean", Iters: 4}, ValAccuracy: 88.5}},
			TestAccuracy: 90.125, TestAccuracies: []float64{90, 90.5, 89.5, 90.5},
			LaplaceAccuracy: 87.5, LaplaceAccuracies: []float64{87.5, 87.5, 87.5, 87.5},
			Seconds: 1.5},
		{Name: "b", Protocol: "clean", Status: StatusOK, N: 20, D: 4, Classes: 2,
			RFM: []Choice{
				{Setting: Setting{Lambda: 1, Bandwidth: 5, Diag: true, Centered: true, Norm: "max", Iters: 4}, Round: 1, ValAccuracy: 75},
				{Setting: Setting{Lambda: 0.001, Normalize: true, Bandwidth: 20, Norm: "mean", Iters: 4}, Round: 0, ValAccuracy: 80},
			},
			Laplace: []Choice{
				{Setting: Setting{Lambda: 1, Bandwidth: 5, Norm: "mean", Iters: 4}, ValAccuracy: 70},
				{Setting: Setting{Lambda: 10, Normalize: true, Bandwidth: 10, Norm: "mean", Iters: 4}, ValAccuracy: 60},
			},
			TestAccuracy: 50, TestAccuracies: []float64{50, 50}, LaplaceAccuracy: 25, LaplaceAccuracies: []float64{25, 25},
			LogLosses: []float64{0.75, 1.5}, CalLogLosses: []float64{0.5, 0.625}},
		{Name: "c", Protocol: "paper", Status: StatusSkipped, N: 5, D: 1, Classes: 2, Reason: "c_R.dat is missing"},
		{Name: "d", Protocol: "paper", Status: StatusFailed, N: 5, D: 1, Classes: 2, Reason: "fit:\tbroken\nbadly"},
	}
	path := filepath.Join(t.TempDir(), ResultsName)
	if err := WriteResults(path, rs); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	rs[3].Reason = "fit: broken badly" // tabs and newlines cannot live in a TSV cell
	if !reflect.DeepEqual(back, rs) {
		t.Errorf("read back\n%+v\nwant\n%+v", back, rs)
	}
	// No temporary file is left behind.
	des, _ := os.ReadDir(filepath.Dir(path))
	if len(des) != 1 {
		t.Errorf("folder holds %d files after an atomic write", len(des))
	}
	if r, err := ReadResults(filepath.Join(t.TempDir(), "none.tsv")); r != nil || err != nil {
		t.Errorf("missing file: %v, %v", r, err)
	}
}

// A results.tsv written before the members column, or before the
// log-loss columns too, is still read (its results have neither), so an
// earlier run's data sets are reused; the current one keeps the members.
func TestReadLegacyResults(t *testing.T) {
	r := Result{Name: "a", Protocol: "tuned", Status: StatusOK, N: 10, D: 2, Classes: 3,
		RFM:          []Choice{{Setting: Setting{Lambda: 0.1, Bandwidth: 10, Norm: "mean", Iters: 4}, Round: 2, ValAccuracy: 91.25}},
		Laplace:      []Choice{{Setting: Setting{Lambda: 10, Bandwidth: 10, Norm: "mean", Iters: 4}, ValAccuracy: 88.5}},
		TestAccuracy: 90, TestAccuracies: []float64{90}, LaplaceAccuracy: 87.5, LaplaceAccuracies: []float64{87.5}}
	for _, header := range append([][]string{resultColumns}, olderColumns...) {
		want := r
		if len(header) == len(resultColumns) {
			want.Members = []int{3}
		}
		row := resultRow(&want)
		var old []string
		for i, c := range resultColumns {
			if slices.Contains(header, c) {
				old = append(old, row[i])
			}
		}
		path := filepath.Join(t.TempDir(), ResultsName)
		text := strings.Join(header, "\t") + "\n" + strings.Join(old, "\t") + "\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := ReadResults(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(back) != 1 || !reflect.DeepEqual(back[0], want) {
			t.Fatalf("%d columns: read back %+v, want %+v", len(header), back, want)
		}
		if _, _, ok := back[0].MeanLogLosses(); ok {
			t.Error("an older result has log-losses")
		}
	}
}

func TestCalibrationSummary(t *testing.T) {
	rs := []Result{
		{Name: "a", Status: StatusOK, LogLosses: []float64{1, 3, 0.7}, CalLogLosses: []float64{0.5, 0.5, 0.7}},
		{Name: "b", Status: StatusOK, LogLosses: []float64{0.2}, CalLogLosses: []float64{0.3}},
		{Name: "c", Status: StatusOK}, // no log-losses (another protocol)
		{Name: "d", Status: StatusFailed, LogLosses: []float64{9}, CalLogLosses: []float64{9}},
	}
	cs := calibrationSummary(rs)
	if cs == nil || cs.Datasets != 2 || math.Abs(cs.LogLoss-(1.5666666666666667+0.2)/2) > 1e-12 || math.Abs(cs.CalLogLoss-(0.5666666666666667+0.3)/2) > 1e-12 {
		t.Fatalf("summary %+v", cs)
	}
	if len(cs.Worse) != 1 || cs.Worse[0].Name != "b" {
		t.Fatalf("worse %+v", cs.Worse)
	}
	if cs.Splits != 4 || cs.Changed != 3 || cs.Lowered != 2 {
		t.Errorf("splits %d, changed %d, lowered %d: want 4, 3, 2", cs.Splits, cs.Changed, cs.Lowered)
	}
	if s := cs.String(); !strings.Contains(s, "no worse on 1 of 2") || !strings.Contains(s, "changed the model in 3 of the 4 evaluation splits (elsewhere its check on the training split left it out or it fitted the identity) and lowered the test log-loss in 2 of those.") || !strings.Contains(s, "b 0.2000 → 0.3000") {
		t.Errorf("text %q", s)
	}
	if calibrationSummary(rs[2:3]) != nil {
		t.Error("a summary without log-losses")
	}
}

func TestReadResultsErrors(t *testing.T) {
	header := strings.Join(resultColumns, "\t")
	good := strings.Join(resultRow(&Result{Name: "x", Protocol: "paper", Status: StatusSkipped, N: 1, D: 1, Classes: 2, Reason: "r"}), "\t")
	cases := []struct{ name, text, want string }{
		{"header", "name\tstatus\n", ":1: not a results.tsv"},
		{"columns", header + "\n" + good + "\nx\tpaper\n", ":3: 2 columns"},
		{"status", header + "\n" + strings.Replace(good, "skipped", "weird", 1) + "\n", `:2: status "weird"`},
		{"number", header + "\n" + strings.Replace(good, "\t1\t1\t2\t", "\tone\t1\t2\t", 1) + "\n", `:2: column n: "one"`},
	}
	for _, c := range cases {
		path := filepath.Join(t.TempDir(), ResultsName)
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadResults(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// fixtureRun runs the benchmark on the fixture folder.
func fixtureRun(t *testing.T, out string, mod func(*Options)) *Report {
	t.Helper()
	opt := Options{DataDir: fixtureDir, Subset: SubsetAll, OutDir: out, Threads: 1}
	if mod != nil {
		mod(&opt)
	}
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestRunAndResume(t *testing.T) {
	out := t.TempDir()
	var events []string
	last, fits := 0.0, 0
	rep := fixtureRun(t, out, func(o *Options) {
		o.Progress = func(p Progress) {
			if p.Event != "fit" {
				events = append(events, p.Dataset+":"+p.Event)
			} else {
				fits++
			}
			if p.Fraction < last-1e-12 || p.Fraction > 1 {
				t.Errorf("progress fraction %g after %g", p.Fraction, last)
			}
			last = p.Fraction
		}
	})
	if last != 1 || fits < 2*(10+8) {
		t.Errorf("progress ended at %g after %d fit events", last, fits)
	}
	if rep.OK != 2 || rep.Skipped != 1 || rep.Failed != 0 || rep.Computed != 2 || rep.Reused != 0 {
		t.Fatalf("first run: %d ok, %d skipped, %d failed, %d computed, %d reused", rep.OK, rep.Skipped, rep.Failed, rep.Computed, rep.Reused)
	}
	if got := strings.Join(events, " "); got != "tiny-a:start tiny-a:done tiny-b:start tiny-b:done" {
		t.Errorf("events %s", got)
	}
	for _, r := range rep.Results {
		if r.Status == StatusOK && (len(r.TestAccuracies) != 4 || r.TestAccuracy < 50 || r.TestAccuracy > 100) {
			t.Errorf("%s: test accuracies %v (mean %g)", r.Name, r.TestAccuracies, r.TestAccuracy)
		}
	}
	for _, f := range []string{ResultsName, SummaryMDName, SummaryJSONName, PlotName} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	first, err := os.ReadFile(filepath.Join(out, ResultsName))
	if err != nil {
		t.Fatal(err)
	}

	// A second run reuses both sets and leaves results.tsv as it was.
	rep2 := fixtureRun(t, out, nil)
	if rep2.Computed != 0 || rep2.Reused != 2 || rep2.OK != 2 {
		t.Errorf("second run: %d computed, %d reused", rep2.Computed, rep2.Reused)
	}
	second, _ := os.ReadFile(filepath.Join(out, ResultsName))
	if !bytes.Equal(first, second) {
		t.Errorf("results.tsv changed on resume:\n%s\n---\n%s", first, second)
	}
	if rep2.MeanAccuracy != rep.MeanAccuracy {
		t.Errorf("mean accuracy %g after resume, %g before", rep2.MeanAccuracy, rep.MeanAccuracy)
	}

	// An interrupted run (only tiny-a recorded) computes just the rest.
	rs, err := ReadResults(filepath.Join(out, ResultsName))
	if err != nil {
		t.Fatal(err)
	}
	var keep []Result
	for _, r := range rs {
		if r.Name == "tiny-a" {
			keep = append(keep, r)
		}
	}
	if err := WriteResults(filepath.Join(out, ResultsName), keep); err != nil {
		t.Fatal(err)
	}
	rep3 := fixtureRun(t, out, nil)
	if rep3.Computed != 1 || rep3.Reused != 1 || rep3.OK != 2 {
		t.Errorf("resumed run: %d computed, %d reused, %d ok", rep3.Computed, rep3.Reused, rep3.OK)
	}

	// Force recomputes; the same seed gives the same accuracies.
	rep4 := fixtureRun(t, out, func(o *Options) { o.Force = true })
	if rep4.Computed != 2 || rep4.Reused != 0 {
		t.Errorf("forced run: %d computed, %d reused", rep4.Computed, rep4.Reused)
	}
	for i := range rep.Results {
		if rep.Results[i].TestAccuracy != rep4.Results[i].TestAccuracy {
			t.Errorf("%s: %g then %g", rep.Results[i].Name, rep.Results[i].TestAccuracy, rep4.Results[i].TestAccuracy)
		}
	}

	// Results of another protocol are not mixed in.
	_, err = Run(context.Background(), Options{DataDir: fixtureDir, Subset: SubsetAll, OutDir: out, Protocol: ProtocolClean})
	if err == nil || !strings.Contains(err.Error(), `computed with "paper", this run is "clean"`) {
		t.Errorf("protocol mismatch: %v", err)
	}
}

func TestRunProtocols(t *testing.T) {
	for _, p := range Protocols() {
		t.Run(p, func(t *testing.T) {
			rep := fixtureRun(t, t.TempDir(), func(o *Options) { o.Protocol = p; o.Jobs = 2; o.Threads = 2 })
			if rep.OK != 2 {
				t.Fatalf("%d ok", rep.OK)
			}
			for _, r := range rep.Results {
				if r.Status != StatusOK {
					continue
				}
				want := 1
				if p == ProtocolClean || p == ProtocolTuned { // one per evaluation split
					want = 4
				}
				if len(r.RFM) != want || len(r.Laplace) != want {
					t.Errorf("%s: %d RFM and %d Laplace selections, want %d", r.Name, len(r.RFM), len(r.Laplace), want)
				}
			}
		})
	}
}

func TestSummaryAgainstTable(t *testing.T) {
	out := t.TempDir()
	rep := fixtureRun(t, out, nil)
	if len(rep.Scopes) != 2 {
		t.Fatalf("%d scopes, want all + arora90", len(rep.Scopes))
	}
	all, a90 := rep.Scopes[0], rep.Scopes[1]
	if all.Name != "all" || len(all.Datasets) != 2 || a90.Name != "arora90" || len(a90.Datasets) != 1 || a90.Datasets[0] != "tiny-a" {
		t.Fatalf("scopes %+v / %+v", all, a90)
	}
	// 3 classifiers of the table + ours.
	if len(all.Summaries) != 5 || all.RFMPlace == 0 || all.LaplacePlace == 0 {
		t.Fatalf("summaries %+v", all.Summaries)
	}
	for i := 1; i < len(all.Summaries); i++ {
		if all.Summaries[i].FriedmanRank < all.Summaries[i-1].FriedmanRank {
			t.Errorf("not sorted by Friedman rank: %+v", all.Summaries)
		}
	}
	// clfB has no result on tiny-b: it takes part in tiny-a only.
	for _, s := range all.Summaries {
		if s.Classifier == "clfB" && s.Sets != 1 {
			t.Errorf("clfB counted on %d sets", s.Sets)
		}
	}
	md, err := os.ReadFile(filepath.Join(out, SummaryMDName))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"| # | classifier | Friedman rank | avg acc (%) | P90 | P95 | PMA |", "**RFM (ours)**", "## arora90: 1 data sets", "nodata | skipped"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("summary.md lacks %q:\n%s", w, md)
		}
	}
	var js Report
	data, err := os.ReadFile(filepath.Join(out, SummaryJSONName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &js); err != nil {
		t.Fatal(err)
	}
	if js.MeanAccuracy != rep.MeanAccuracy || len(js.Scopes) != 2 {
		t.Errorf("summary.json: mean %g, %d scopes", js.MeanAccuracy, len(js.Scopes))
	}
}

// The members line counts the splits by the size of their model, largest
// first, and says how many splits did not record it.
func TestMembersSummary(t *testing.T) {
	rs := []Result{
		{Name: "a", Status: StatusOK, Members: []int{3, 3, 1, 3}, TestAccuracies: []float64{1, 1, 1, 1}},
		{Name: "b", Status: StatusOK, Members: []int{2}, TestAccuracies: []float64{1}},
		{Name: "c", Status: StatusOK, TestAccuracies: []float64{1, 1}}, // older results
		{Name: "d", Status: StatusFailed, Members: []int{3}},
	}
	ms := membersSummary(rs)
	if ms == nil || ms.Splits != 5 || ms.ByMembers[3] != 3 || ms.ByMembers[1] != 1 || ms.Unrecorded != 2 {
		t.Fatalf("summary %+v", ms)
	}
	want := "Tuned models over 5 evaluation splits: the mean of 3 in 3, the mean of 2 in 1, the best configuration alone in 1"
	if s := ms.String(); !strings.HasPrefix(s, want) || !strings.Contains(s, "2 more splits did not record it") {
		t.Fatalf("line %q", s)
	}
	if membersSummary(rs[2:3]) != nil {
		t.Error("a summary without any recorded split")
	}
}

// TestTunedResumesSplits: the tuned protocol saves a partial row after
// each evaluation split; a run stopped there resumes at the next split,
// keeps the splits already saved, and ends with the accuracies of an
// uninterrupted run.
func TestTunedResumesSplits(t *testing.T) {
	tuned := func(o *Options) { o.Protocol, o.Subset, o.Ensemble = ProtocolTuned, "tiny-a", 1 }
	whole := fixtureRun(t, t.TempDir(), tuned)

	out := t.TempDir()
	path := filepath.Join(out, ResultsName)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var saved *Result
	splits := 0
	opt := Options{DataDir: fixtureDir, OutDir: out, Threads: 1}
	tuned(&opt)
	opt.Progress = func(p Progress) {
		if p.Event == "split" {
			if splits++; p.Result == nil || p.Result.Status != StatusPartial || len(p.Result.TestAccuracies) != splits {
				t.Errorf("split event %d: %+v", splits, p.Result)
			}
		}
		rs, err := ReadResults(path)
		if err != nil {
			t.Errorf("results.tsv during the run: %v", err)
			return
		}
		for i := range rs {
			if rs[i].Status == StatusPartial && len(rs[i].TestAccuracies) == 2 && saved == nil {
				saved = &rs[i]
				cancel()
			}
		}
	}
	if _, err := Run(ctx, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped run: %v", err)
	}
	if saved == nil || splits != 2 {
		t.Fatalf("no partial row with 2 splits was saved (%d split events)", splits)
	}
	if want := "2 of 4 evaluation splits done"; saved.Reason != want || saved.TestAccuracy != mean(saved.TestAccuracies) {
		t.Errorf("partial row: reason %q, mean %g of %v", saved.Reason, saved.TestAccuracy, saved.TestAccuracies)
	}
	w := whole.Results[0]
	if !slices.Equal(saved.TestAccuracies, w.TestAccuracies[:2]) {
		t.Errorf("saved splits %v, uninterrupted %v", saved.TestAccuracies, w.TestAccuracies)
	}

	// Mark a saved split: the resumed run must take it from the file, not
	// recompute it.
	rs, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	rs[0].TestAccuracies[0] = 12.5
	if err := WriteResults(path, rs); err != nil {
		t.Fatal(err)
	}
	opt.Progress = nil
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	if r.Status != StatusOK || rep.Computed != 1 || len(r.TestAccuracies) != 4 || len(r.RFM) != 4 || len(r.LogLosses) != 4 {
		t.Fatalf("resumed: status %s, %d computed, splits %v", r.Status, rep.Computed, r.TestAccuracies)
	}
	want := append([]float64{12.5}, w.TestAccuracies[1:]...)
	if !slices.Equal(r.TestAccuracies, want) || !slices.Equal(r.LaplaceAccuracies, w.LaplaceAccuracies) {
		t.Errorf("resumed splits %v / %v, want %v / %v", r.TestAccuracies, r.LaplaceAccuracies, want, w.LaplaceAccuracies)
	}
	if r.TestAccuracy != mean(want) || r.Seconds < saved.Seconds {
		t.Errorf("resumed mean %g (want %g), %g s (partial %g s)", r.TestAccuracy, mean(want), r.Seconds, saved.Seconds)
	}
}

// TestCombine: runs of one protocol with different options summarize as
// one report (their tags in the notes); a data set twice, another
// protocol, or a file without ok rows are errors.
func TestCombine(t *testing.T) {
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	ra := fixtureRun(t, a, func(o *Options) { o.Protocol, o.Subset, o.Ensemble = ProtocolTuned, "tiny-a", 1 })
	rb := fixtureRun(t, b, func(o *Options) { o.Protocol, o.Subset, o.Ensemble = ProtocolTuned, "tiny-b", 3 })
	out := t.TempDir()
	rep, err := Combine(fixtureDir, []string{a, filepath.Join(b, ResultsName)}, out)
	if err != nil {
		t.Fatal(err)
	}
	want := (ra.Results[0].TestAccuracy + rb.Results[0].TestAccuracy) / 2
	if rep.OK != 2 || rep.Protocol != ProtocolTuned || math.Abs(rep.MeanAccuracy-want) > 1e-12 || len(rep.Notes) < 2 {
		t.Fatalf("combined: %d ok, protocol %q, mean %g (want %g), notes %q", rep.OK, rep.Protocol, rep.MeanAccuracy, want, rep.Notes)
	}
	md, err := os.ReadFile(filepath.Join(out, SummaryMDName))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{ra.Tag, rb.Tag, "Combined from"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("summary.md lacks %q", s)
		}
	}
	if _, err := os.Stat(filepath.Join(out, ResultsName)); err == nil {
		t.Error("Combine wrote a results.tsv")
	}

	fixtureRun(t, c, func(o *Options) { o.Subset = "tiny-b" }) // the paper protocol
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{a, a}, "tiny-a is also in"},
		{[]string{a, c}, `protocol "paper"`},
		{[]string{a, filepath.Join(t.TempDir(), ResultsName)}, "no such file"},
		{[]string{a, ""}, "an empty path"},
	} {
		if _, err := Combine(fixtureDir, tc.paths, t.TempDir()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.paths, err, tc.want)
		}
	}
}
