package onnx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/predictor"
)

// fitted writes and loads a model fitted on a small mixed table.
func fitted(t *testing.T, cfg rfm.Config, useTree bool) *predictor.Model {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("a,b,color,y\n")
	for i := 0; i < 300; i++ {
		a, c := r.NormFloat64(), r.NormFloat64()
		color := []string{"red", "blue", ""}[i%3]
		y := "no"
		if a+c > 0 {
			y = "yes"
		}
		fmt.Fprintf(&b, "%v,%v,%s,%s\n", a, c, color, y)
	}
	tab, err := dataset.Read(strings.NewReader(b.String()), "t.csv", dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if useTree {
		cfg.Solver, cfg.LeafSize = rfm.SolverTree, 100
	}
	ctx := context.Background()
	trained, err := predictor.Train(ctx, tab, predictor.TrainOptions{Target: "y", Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.rfm")
	if err := trained.WriteFile(ctx, path); err != nil {
		t.Fatal(err)
	}
	m, err := predictor.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fields decodes one protobuf message into its fields by number (bytes
// fields as raw, varints as uint64).
func fields(t *testing.T, b []byte) map[protowire.Number][]any {
	t.Helper()
	out := map[protowire.Number][]any{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		var v any
		switch typ {
		case protowire.VarintType:
			x, m := protowire.ConsumeVarint(b)
			v, n = x, m
		case protowire.BytesType:
			x, m := protowire.ConsumeBytes(b)
			v, n = x, m
		case protowire.Fixed32Type:
			x, m := protowire.ConsumeFixed32(b)
			v, n = x, m
		default:
			t.Fatalf("unexpected wire type %v", typ)
		}
		if n < 0 {
			t.Fatalf("bad field %d: %v", num, protowire.ParseError(n))
		}
		out[num] = append(out[num], v)
		b = b[n:]
	}
	return out
}

// The model decodes as a ModelProto with the declared IR version and
// opsets, a graph whose inputs are the raw columns and whose outputs are
// the prediction, probabilities and scores; every node input is a graph
// input, a constant or an earlier node's output; equal models give equal
// bytes.
func TestGraphStructure(t *testing.T) {
	m := fitted(t, rfm.DefaultConfig(), false)
	b, lay, err := Export(m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(lay.Numeric, ",") != "a,b" || strings.Join(lay.Categorical, ",") != "color" || strings.Join(lay.Classes, ",") != "no,yes" {
		t.Fatalf("layout %+v", lay)
	}
	again, _, _ := Export(m)
	if !bytes.Equal(b, again) {
		t.Error("two exports of one model differ")
	}
	top := fields(t, b)
	if top[1][0].(uint64) != IRVersion || string(top[2][0].([]byte)) != "rfm" || len(top[8]) != 2 {
		t.Fatalf("model fields: ir %v, producer %q, %d opsets", top[1], top[2], len(top[8]))
	}
	ops := map[string]uint64{}
	for _, o := range top[8] {
		f := fields(t, o.([]byte))
		dom := ""
		if len(f[1]) > 0 {
			dom = string(f[1][0].([]byte))
		}
		ops[dom] = f[2][0].(uint64)
	}
	if ops[""] != Opset || ops["ai.onnx.ml"] != OpsetML {
		t.Errorf("opsets %v", ops)
	}
	g := fields(t, top[7][0].([]byte))
	names := func(vals []any) []string {
		var out []string
		for _, v := range vals {
			out = append(out, string(fields(t, v.([]byte))[1][0].([]byte)))
		}
		return out
	}
	if got := strings.Join(names(g[11]), ","); got != "numeric,categorical" {
		t.Errorf("graph inputs %s", got)
	}
	if got := strings.Join(names(g[12]), ","); got != "prediction,probabilities,scores" {
		t.Errorf("graph outputs %s", got)
	}
	known := map[string]bool{"numeric": true, "categorical": true}
	for _, v := range g[5] { // initializers: TensorProto.name is field 8
		known[string(fields(t, v.([]byte))[8][0].([]byte))] = true
	}
	for i, nb := range g[1] {
		nf := fields(t, nb.([]byte))
		for _, in := range nf[1] {
			if !known[string(in.([]byte))] {
				t.Fatalf("node %d (%s) reads %q before it is defined", i, nf[4][0], in)
			}
		}
		for _, out := range nf[2] {
			known[string(out.([]byte))] = true
		}
	}
	for _, out := range []string{"prediction", "probabilities", "scores"} {
		if !known[out] {
			t.Errorf("no node writes output %s", out)
		}
	}
}

// Models the graph cannot express are refused, saying why.
func TestUnsupported(t *testing.T) {
	cfg := rfm.DefaultConfig()
	cfg.Iters = 1
	if _, _, err := Export(fitted(t, cfg, true)); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "tree of RFMs") {
		t.Errorf("tree: %v", err)
	}
	ntk := cfg
	ntk.Kernel = kernel.Spec{Kind: kernel.NTK, Depth: 1}
	if _, _, err := Export(fitted(t, ntk, false)); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "the ntk kernel") {
		t.Errorf("ntk: %v", err)
	}
	iso := cfg
	iso.Calibrate = rfm.CalibrateIsotonic
	if _, _, err := Export(fitted(t, iso, false)); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "--calibrate temperature") {
		t.Errorf("isotonic: %v", err)
	}
	bare := &predictor.Model{Name: "bare.rfm", Fitted: &rfm.Model{}}
	if _, _, err := Export(bare); !errors.Is(err, predictor.ErrNoPipeline) {
		t.Errorf("no pipeline: %v", err)
	}
}
