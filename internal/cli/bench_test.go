package cli

import (
	"io"
	"strings"
	"testing"
)

func TestBenchFlags(t *testing.T) {
	parse := func(args ...string) (*BenchFlags, *FlagSet, []string) {
		t.Helper()
		var b BenchFlags
		f := NewFlagSet("bench x", "rfm bench x", "", "")
		b.DefineRun(f, BenchWords{Items: "tasks", Results: "results.json", Out: "out/x"})
		b.DefineOutput(f)
		pos, err := f.Parse(args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return &b, f, pos
	}
	b, f, pos := parse("--jobs", "2", "--seed", "7", "--out", "o", "--force", "--quiet", "--json")
	if err := b.Check(f, pos, false); err != nil {
		t.Fatal(err)
	}
	if b.Jobs != 2 || b.Seed != 7 || b.OutDir != "o" || !b.Force || !b.Quiet || !b.JSON || b.Trials != 30 || b.Threads != 0 {
		t.Errorf("parsed %+v", *b)
	}
	cases := []struct {
		args  []string
		tuned bool
		want  string
	}{
		{[]string{"--jobs", "0"}, false, "--jobs 0: want 1 to"},
		{[]string{"--threads", "-1"}, false, "--threads -1"},
		{[]string{"--seed", "0"}, false, "--seed 0: must be ≥ 1"},
		{[]string{"--trials", "0"}, true, "--trials 0: must be ≥ 1"},
		{[]string{"--trials", "5"}, false, "--trials applies to --protocol tuned only"},
		{[]string{"extra"}, false, `unexpected argument "extra"`},
	}
	for _, c := range cases {
		b, f, pos := parse(c.args...)
		err := b.Check(f, pos, c.tuned)
		if _, usage := err.(*UsageError); !usage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v; want a usage error with %q", c.args, err, c.want)
		}
	}
	if b, f, pos := parse("--trials", "5"); b.Check(f, pos, true) != nil {
		t.Error("--trials with the tuned protocol refused")
	}
}
