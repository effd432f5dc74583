package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/science/nfa"
)

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
