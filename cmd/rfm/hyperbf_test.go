package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/cifar10"
	"github.com/rfmkit/rfm/hyperbf"
)

// rfm hyperbf --data cifar10 reads a CIFAR-10 folder (a tiny one written by
// cifar10.Save), scales its pixels and, with --validation, scores on a
// share of the training images instead of the test set.
func TestHyperBFImages(t *testing.T) {
	dir := t.TempDir()
	mk := func(n, seed int) *cifar10.Set {
		s := &cifar10.Set{X: make([]float64, n*3072), Y: make([]int, n), N: n, D: 3072, H: 32, W: 32, C: 3}
		for i := range s.X {
			s.X[i] = float64((i*seed+i/3072)%256) / 255
		}
		for i := range s.Y {
			s.Y[i] = i % 10
		}
		return s
	}
	if err := cifar10.Save(context.Background(), dir, mk(40, 7), mk(10, 11)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args   []string
		scored string
		rows   int
	}{
		{[]string{"--pixels", "l2"}, "test", 10},
		{[]string{"--pixels", "standard", "--validation", "0.25", "--lr-schedule", "cosine"}, "validation", 10},
	} {
		args := append([]string{"hyperbf", "--data", "cifar10", "--cifar10", dir, "--centers", "5", "--epochs", "0", "--measure-rows", "0", "--json"}, c.args...)
		r := runInProcess(args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, r.code, r.stderr)
		}
		var res hyperbf.StudyResult
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
			t.Fatal(err)
		}
		if res.Scored != c.scored || res.ScoredRows != c.rows || res.Rows+map[string]int{"test": 0, "validation": 10}[c.scored] != 40 || res.Data != "cifar10" || res.Pixels != c.args[1] || len(res.Epochs) != 1 {
			t.Errorf("%v: %+v", c.args, res)
		}
	}
	for _, c := range []struct{ args []string }{
		{[]string{"--data", "mnist", "--test", "t.csv"}},
		{[]string{"--data", "cifar10", "--cifar10", dir, "--pixels", "gamma"}},
		{[]string{"--data", "cifar10", "--cifar10", dir, "--lr-schedule", "linear"}},
		{[]string{"--data", "cifar10", "--cifar10", dir, "--validation", "1"}},
		{[]string{"--data", "cifar10", "--cifar10", dir, "--rank", "-1"}},
	} {
		if r := runInProcess(append([]string{"hyperbf"}, c.args...)...); r.code != 2 {
			t.Errorf("%v: exit %d %s", c.args, r.code, r.stderr)
		}
	}
	if r := runInProcess("hyperbf", "--data", "cifar10", "--cifar10", filepath.Join(dir, "missing")); r.code == 0 || !strings.Contains(r.stderr, cifar10.TrainImagesFile) {
		t.Errorf("missing folder: exit %d %s", r.code, r.stderr)
	}
}
