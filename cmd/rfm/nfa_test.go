package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/hyperbf"
	"github.com/rfmkit/rfm/science/nfa"
	"github.com/rfmkit/rfm/science/phenomena"
)

// rfm nfa passes its flags to package nfa, prints its result as JSON and
// writes its files; bad flags are refused.
func TestNFACommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "nfa")
	r := runInProcess("nfa", "--task", "chain", "--n", "128", "--d", "8", "--test-n", "200", "--widths", "32,32", "--epochs", "80", "--points", "4",
		"--lr", "0.01", "--init-scale", "0.1,1,1", "--rfm", "--out", out, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res nfa.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	// The measurements themselves are package nfa's tests; here, that the
	// flags reach it and its results come out.
	if res.Network.Widths[0] != 32 || res.Rows != 128 || res.Test != 200 || res.Inputs != 8 || res.Data != "synthetic chain, n = 128, d = 8" ||
		len(res.Records) == 0 || res.Records[len(res.Records)-1].Epoch != 80 {
		t.Errorf("result %+v", res)
	}
	for _, k := range []string{"nfm_vs_egop", "agop_vs_egop", "rfm_m_vs_nfm", "rfm_m_vs_egop"} {
		if _, ok := res.Final[k]; !ok {
			t.Errorf("no %s in %v", k, res.Final)
		}
	}
	for _, f := range []string{"nfa.csv", "nfa.json", "nfa_correlations.png", "layer1_nfm.png", "layer1_agop.png", "rfm_m.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nfa", "--widths", "0"}, `--widths "0"`},
		{[]string{"nfa", "--activation", "gelu"}, `unknown activation "gelu"`},
		{[]string{"nfa", "--task", "spiral"}, `--task "spiral"`},
		{[]string{"nfa", "--init-scale", "-1"}, `--init-scale "-1"`},
		{[]string{"nfa", "--target", "y"}, "--target goes with --data"},
		{[]string{"nfa", "--task", "chain", "--d", "3"}, "needs d ≥ 5"},
		{[]string{"nfa", "--data", "x.csv", "--target", "y", "--n", "10"}, "with --data they do not apply"},
		{[]string{"nfa", "--momentum", "NaN"}, "momentum NaN"},
	} {
		r := runInProcess(c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d %q", c.args, r.code, r.stderr)
		}
	}
}

// rfm hyperbf reads and encodes the tables, passes its flags to
// hyperbf.Study (whose tests check the training) and prints its result.
func TestHyperBFCommand(t *testing.T) {
	dir := t.TempDir()
	mustRun(t, dir, "synth", "--task", "product", "--n", "300", "--d", "5", "--seed", "1", "--out", "train.csv")
	mustRun(t, dir, "synth", "--task", "product", "--n", "200", "--d", "5", "--seed", "2", "--out", "test.csv")
	r := runInProcess("hyperbf", "--data", filepath.Join(dir, "train.csv"), "--test", filepath.Join(dir, "test.csv"), "--target", "y",
		"--centers", "40", "--epochs", "3", "--lr", "0.01", "--batch", "50", "--measure-rows", "100", "--compare", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res hyperbf.StudyResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Epochs) != 4 || res.Metric != "test MSE (standardized target)" || len(res.Compare) != 4 || res.Rows != 300 || res.Centers != 40 ||
		res.Data != filepath.Join(dir, "train.csv") || res.Test != filepath.Join(dir, "test.csv") {
		t.Fatalf("%+v", res)
	}
	if r := runInProcess("hyperbf", "--data", filepath.Join(dir, "train.csv"), "--test", filepath.Join(dir, "test.csv"), "--target", "y", "--centers", "301"); r.code != 2 || !strings.Contains(r.stderr, "--centers 301: the training table has 300 rows") {
		t.Errorf("too many centres: %d %s", r.code, r.stderr)
	}
	if r := runInProcess("hyperbf", "--data", "x.csv"); r.code != 2 || !strings.Contains(r.stderr, "--data, --test and --target are required") {
		t.Errorf("missing flags: %d %s", r.code, r.stderr)
	}
}

// rfm phenomena loads the shared MNIST digits, runs package phenomena (whose
// tests check the phenomena) and writes its files; a bad kind is refused.
func TestPhenomenaCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "halves")
	r := runInProcess("phenomena", "--kind", "halves", "--mnist", "../../../shared/data/mnist", "--n", "20", "--epochs", "2", "--rounds", "1", "--out", out, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res phenomena.Result
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.Kind != "halves" || res.Train != 20 || res.Inputs != 28*56 || len(res.Points) != 2+2 {
		t.Errorf("result %+v", res)
	}
	for _, f := range []string{"phenomena.json", "network_accuracy.png", "rfm_accuracy.png", "network_diag.png", "rfm_diag.png"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if r := runInProcess("phenomena", "--kind", "spiral"); r.code != 2 || !strings.Contains(r.stderr, `--kind "spiral"`) {
		t.Errorf("bad kind: %d %s", r.code, r.stderr)
	}
	if r := runInProcess("phenomena", "--kind", "marker", "--weight-decay", "-1"); r.code != 2 {
		t.Errorf("bad weight decay: %d %s", r.code, r.stderr)
	}
}

// rfm nfa --task alignment-reversing passes its flags to the sweep and
// writes its table and figures; rfm synth writes the dataset; bad input is
// refused with a clear message.
func TestNFAReversingCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "rev")
	r := runInProcess("nfa", "--task", "alignment-reversing", "--n", "40", "--d", "16", "--widths", "12", "--balance", "0.25,1",
		"--data-seeds", "2", "--net-seeds", "2", "--x-scale", "0.1", "--out", out, "--json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var res nfa.ReversingResult
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	if res.N != 40 || res.D != 16 || res.Width != 12 || res.Scale != 0.1 || res.DataSeeds != 2 || res.NetSeeds != 2 ||
		len(res.Points) != 4 || len(res.Summary) != 2 || res.Summary[0].Balance != 0.25 || res.Points[0].N1 != 10 {
		t.Errorf("result %+v", res)
	}
	for _, f := range []string{"reversing.csv", "reversing.json", "reversing.png", "reversing_scatter.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	syn := runInProcess("synth", "--task", "alignment-reversing", "--balance", "0.25", "--n", "8", "--d", "3", "--seed", "4")
	if syn.code != 0 {
		t.Fatalf("synth: exit %d: %s", syn.code, syn.stderr)
	}
	csv := syn.stdout
	lines := strings.Split(strings.TrimSpace(csv), "\n")
	if len(lines) != 9 || lines[0] != "x0,x1,x2,y" || !strings.HasSuffix(lines[1], ",1.00001") || !strings.HasSuffix(lines[8], ",1e-05") {
		t.Errorf("synth alignment-reversing wrote %q", csv)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nfa", "--task", "alignment-reversing", "--balance", "0,0.5"}, "(0, 1]"},
		{[]string{"nfa", "--task", "alignment-reversing", "--balance", "x"}, `--balance "x"`},
		{[]string{"nfa", "--task", "alignment-reversing", "--n", "8", "--d", "4", "--balance", "0.01"}, "no row of the first subset"},
		{[]string{"nfa", "--task", "alignment-reversing", "--widths", "8,8"}, "one hidden layer"},
		{[]string{"nfa", "--task", "alignment-reversing", "--epochs", "5"}, "--epochs does not apply"},
		{[]string{"nfa", "--task", "alignment-reversing", "--net-seeds", "0"}, "--net-seeds 0"},
		{[]string{"nfa", "--task", "alignment-reversing", "--x-scale", "-1"}, "--x-scale -1"},
		{[]string{"nfa", "--task", "chain", "--balance", "0.5"}, "--balance goes with --task alignment-reversing"},
		{[]string{"synth", "--task", "alignment-reversing", "--balance", "1.5"}, "must be in (0, 1]"},
		{[]string{"synth", "--task", "alignment-reversing", "--n", "1"}, "n ≥ 2"},
		{[]string{"synth", "--task", "alignment-reversing", "--egop", "g.csv"}, "no EGOP"},
		{[]string{"synth", "--task", "chain", "--balance", "0.5"}, "go with --task alignment-reversing"},
	} {
		r := runInProcess(c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d %q", c.args, r.code, r.stderr)
		}
	}
}
