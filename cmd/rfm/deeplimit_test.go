package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The flags reach the experiments (their logic is tested in deeplimit):
// the taxonomy's file is named after the activations, the consistency
// run writes its JSON and figure.
func TestDeepLimitTiny(t *testing.T) {
	dir := t.TempDir()
	r := rfmCmd(t, dir, "deep-limit", "--activation", "hermite:2,cor1:2", "--n", "20", "--test", "10", "--depths", "1,3", "--out", "res")
	if r.code != 0 || !strings.Contains(r.stdout, "case 2, 1-NN") {
		t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "res", "taxonomy-hermite-2_cor1-2.json")); err != nil {
		t.Error(err)
	}
	r = rfmCmd(t, dir, "deep-limit", "--experiment", "consistency", "--activation", "cor2:2", "--ns", "20", "--test", "10", "--depth", "5", "--bayes-samples", "1000", "--out", "res")
	if r.code != 0 || !strings.Contains(r.stderr, "deep-limit: wrote") {
		t.Fatalf("consistency: exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "res", "consistency-2d.png")); err != nil {
		t.Error(err)
	}
}

func TestDeepLimitBadInput(t *testing.T) {
	dir := t.TempDir()
	csv := filepath.Join(dir, "nan.csv")
	writeFile(t, csv, "a,b,label\n1,2,x\n0,0,y\n3,1,x\n2,2,y\n")
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
