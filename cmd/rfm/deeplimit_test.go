package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestDeepLimitTiny(t *testing.T) {
	dir := t.TempDir()
	r := rfmCmd(t, dir, "deep-limit", "--activation", "hermite:2,cor1:2", "--n", "40", "--test", "30", "--depths", "1,200", "--out", "res")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"case 2, 1-NN", "case 1, singular kernel; α = 2", "identity to working precision"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	// hermite:2 at depth 200: the 1-NN classifier exactly.
	if !regexp.MustCompile(`(?m)^\s+200\s+\S+\s+100\.0%`).MatchString(r.stdout) {
		t.Errorf("hermite:2 at L = 200 does not agree 100%% with 1-NN:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "res", "taxonomy-hermite-2_cor1-2.json")); err != nil {
		t.Error(err)
	}
	r = rfmCmd(t, dir, "deep-limit", "--experiment", "consistency", "--activation", "cor2:2", "--ns", "20,40", "--test", "30", "--depth", "50", "--bayes-samples", "5000", "--out", "res")
	if r.code != 0 {
		t.Fatalf("consistency: exit %d: %s", r.code, r.stderr)
	}
	for _, f := range []string{"consistency-2d.json", "consistency-2d.png"} {
		if _, err := os.Stat(filepath.Join(dir, "res", f)); err != nil {
			t.Error(err)
		}
	}
}

func TestDeepLimitBadInput(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "nan.csv")
	if err := os.WriteFile(csv, []byte("a,b,label\n1,2,x\n0,0,y\n3,1,x\n2,2,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--activation", "nope"}, 2, "unknown activation"},
		{[]string{}, 2, "--activation is required"},
		{[]string{"--activation", "relu", "--depths", "0"}, 2, "--depths"},
		{[]string{"--activation", "relu", "--experiment", "consistency", "--depth", "0"}, 2, "--depth 0"},
		{[]string{"--activation", "relu", "--experiment", "x"}, 2, "--experiment"},
		{[]string{"--activation", "relu", "--task", "5d"}, 2, "--task"},
		{[]string{"--activation", "hermite:0"}, 2, "hermite"},
		{[]string{"--activation", "relu", "--data", csv, "--n", "2", "--test", "2"}, 1, "row 1 is at every column's minimum"},
	} {
		r := rfmCmd(t, dir, append([]string{"deep-limit"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("rfm deep-limit %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), r.code, r.stderr, c.code, c.want)
		}
	}
}
