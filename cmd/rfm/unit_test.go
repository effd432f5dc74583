package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/describe"
	"github.com/rfmkit/rfm/kernel"
)

// saveModel/loadModel: the pipeline and target come back, and the loaded
// model predicts the same bits as the fitted one.
func TestSaveLoadRoundTrip(t *testing.T) {
	text := churnCSV(120, 21)
	tab, err := dataset.Read(strings.NewReader(text), "train.csv", dataset.ReadOptions{Ignore: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	tg, p, err := fitEncoding(tab, "train.csv", "churn", "auto", dataset.ScaleStandard)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := encodeRows(tab, "train.csv", p, tg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 2
	ctx := context.Background()
	m, err := rfm.Fit(ctx, cfg, ds, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.rfm")
	if err := saveModel(ctx, path, m, p, tg, trainingInfo{Data: "train.csv", Rows: ds.N, Validation: "x", Version: "test"}); err != nil {
		t.Fatal(err)
	}
	lm, err := loadModel(path, true)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(lm.Pipeline, p) || !reflect.DeepEqual(lm.Target, tg) || lm.Training.Rows != 120 {
		t.Fatalf("sections changed on the way:\n%+v\n%+v", lm.Pipeline, p)
	}
	want, _ := m.Predict(ctx, ds.X, ds.N)
	got, err := rfmModel(lm).Predict(ctx, ds.X, ds.N)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Fatalf("output %d: %v after load, %v before", i, got[i], want[i])
		}
	}
	// A file without the CLI's sections: inspect works, predict refuses.
	bare := filepath.Join(t.TempDir(), "bare.rfm")
	if err := m.SaveFile(bare, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := loadModel(bare, true); err == nil || !strings.Contains(err.Error(), "no column pipeline") {
		t.Errorf("predict with a bare model: %v", err)
	}
	r := runInProcess("inspect", bare)
	if r.code != 0 || !strings.Contains(r.stdout, "x0") || !strings.Contains(r.stdout, "no column pipeline") {
		t.Errorf("inspect of a bare model: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// The flags' defaults are the engine's, and each flag reaches its field.
func TestConfigFromFlags(t *testing.T) {
	parse := func(args ...string) (rfm.Config, error) {
		var o fitOptions
		f := fitFlags(&o)
		if _, err := f.Parse(args, &bytes.Buffer{}); err != nil {
			return rfm.Config{}, err
		}
		return o.eng.Config(f.FlagSet)
	}
	def, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	want := rfm.DefaultConfig()
	want.Solver = rfm.SolverAuto // the command line's default; the library's "" is exact
	if !reflect.DeepEqual(def, want) {
		t.Errorf("defaults:\n%+v\nwant\n%+v", def, want)
	}
	cases := []struct {
		args  []string
		check func(c rfm.Config) bool
	}{
		{[]string{"--kernel", "gaussian", "--bandwidth", "3"}, func(c rfm.Config) bool { return c.Kernel == kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 3} }},
		{[]string{"--kernel", "gen-laplace", "--exponent", "1.5"}, func(c rfm.Config) bool { return c.Kernel.Exponent == 1.5 && c.Kernel.Bandwidth == 10 }},
		{[]string{"--kernel", "ntk", "--depth", "3"}, func(c rfm.Config) bool { return c.Kernel == kernel.Spec{Kind: kernel.NTK, Depth: 3} }},
		{[]string{"--final-kernel", "ntk"}, func(c rfm.Config) bool {
			return c.FinalKernel != nil && *c.FinalKernel == kernel.Spec{Kind: kernel.NTK, Depth: 2}
		}},
		{[]string{"--ridge", "0.5", "--iters", "7"}, func(c rfm.Config) bool { return c.Ridge == 0.5 && c.Iters == 7 }},
		{[]string{"--diag", "--centered", "--agop-replace"}, func(c rfm.Config) bool { return c.Diag && c.Centered && c.AGOPReplace }},
		{[]string{"--agop-samples", "100", "--norm", "max"}, func(c rfm.Config) bool { return c.AGOPSamples == 100 && c.MNorm == rfm.MNormMax }},
		{[]string{"--early-stop", "1.1", "--adaptive-bandwidth", "2"}, func(c rfm.Config) bool { return c.EarlyStop == 1.1 && c.AdaptiveBandwidth == 2 }},
		{[]string{"--normalize-rows", "--float32", "--refine", "3"}, func(c rfm.Config) bool { return c.NormalizeRows && c.Float32 && c.Refine == 3 }},
		{[]string{"--no-refit", "--seed", "42", "--val-fraction", "0.3"}, func(c rfm.Config) bool { return !c.Refit && c.Seed == 42 && c.ValFraction == 0.3 }},
		{[]string{"--selection", "loss", "--memory-limit", "2G"}, func(c rfm.Config) bool { return c.Selection == "loss" && c.MemoryLimit == 2<<30 }},
	}
	for _, tc := range cases {
		c, err := parse(tc.args...)
		if err != nil {
			t.Errorf("%v: %v", tc.args, err)
			continue
		}
		if !tc.check(c) {
			t.Errorf("%v: config %+v", tc.args, c)
		}
	}
}

func TestParseHelpers(t *testing.T) {
	if s := suggest("inpsect"); s != "inspect" {
		t.Errorf("suggest(inpsect) = %q", s)
	}
	if s := suggest("frobnicate"); s != "" {
		t.Errorf("suggest(frobnicate) = %q", s)
	}
	if got := oneLine("a\nb\r\nc\n"); got != "a; b; c" {
		t.Errorf("oneLine: %q", got)
	}
}

// Flags and positional arguments interleave; "--" ends the flags.
func TestParseInterleaved(t *testing.T) {
	var data, target string
	f := newFlagSet("x", "rfm x", "", "")
	f.positional = "data"
	f.String(&data, "data", "", "")
	f.String(&target, "target", "", "")
	if err := f.ParsePositional([]string{"train.csv", "--target", "y"}, &bytes.Buffer{}, &data); err != nil || data != "train.csv" || target != "y" {
		t.Errorf("interleaved: data %q target %q err %v", data, target, err)
	}
	data, target = "", ""
	f = newFlagSet("x", "rfm x", "", "")
	f.positional = "data"
	f.String(&data, "data", "", "")
	f.String(&target, "target", "", "")
	if err := f.ParsePositional([]string{"--target", "y", "--", "-odd.csv"}, &bytes.Buffer{}, &data); err != nil || data != "-odd.csv" {
		t.Errorf("after --: data %q err %v", data, err)
	}
}

// fit on a terminal draws the bar on stderr; the report stays on stdout.
func TestFitProgressOnTerminal(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.csv"), churnCSV(60, 31))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"fit", "--data", filepath.Join(dir, "train.csv"), "--target", "churn",
		"--iters", "1", "--out", filepath.Join(dir, "m.rfm"), "--json"}, &out, &errb, func() bool { return true })
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "\r[") || !strings.Contains(errb.String(), "100%") || !strings.HasSuffix(errb.String(), "m.rfm\n") {
		t.Errorf("stderr on a terminal: %q", errb.String())
	}
	var res describe.Fit
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Errorf("stdout is not the JSON result: %v", err)
	}
}
