package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/predictor"
	"github.com/rfmkit/rfm/tree"
)

func TestMain(m *testing.M) {
	if id, endpoint, ok := processWorkerArgs(os.Args[1:]); ok {
		// Started by Prism's process environment (TestSeparateWorkerProcess).
		fmt.Fprintf(os.Stderr, "worker: %v\n", bootProcessWorker(id, endpoint))
		os.Exit(1)
	}
	if slices.Contains(os.Args[1:], "--worker=true") {
		flag.Parse()
		beam.Init() // Beam's worker: it runs until the runner is done with it
		os.Exit(0)
	}
	initBeam()
	os.Exit(m.Run())
}

// writeShards writes a three-class table over three files (the last
// gzipped): numbers (one with missing cells), a category and the class.
func writeShards(t *testing.T, dir string, rows []int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	colors := []string{"red", "green", "blue"}
	for s, n := range rows {
		var b strings.Builder
		b.WriteString("a,b,c,color,y\n")
		for i := 0; i < n; i++ {
			a, bb, c := r.NormFloat64(), r.NormFloat64(), r.Float64()*4
			col := r.IntN(3)
			v := a + 0.5*bb*bb + 0.3*float64(col) - 0.2*c
			y := "low"
			switch {
			case v > 1:
				y = "high"
			case v > 0:
				y = "mid"
			}
			bs := fmt.Sprint(bb)
			if i%17 == 3 {
				bs = "NA"
			}
			fmt.Fprintf(&b, "%v,%s,%v,%s,%s\n", a, bs, c, colors[col], y)
		}
		name := filepath.Join(dir, fmt.Sprintf("part%d.csv", s))
		data := []byte(b.String())
		if s == len(rows)-1 {
			name += ".gz"
			var z bytes.Buffer
			w := gzip.NewWriter(&z)
			w.Write(data)
			w.Close()
			data = z.Bytes()
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "part*")
}

func testSpec() FitSpec {
	cfg := rfm.DefaultConfig()
	cfg.Solver, cfg.Iters, cfg.LeafSize, cfg.AGOPSamples = rfm.SolverTree, 1, 300, 300
	return FitSpec{Target: "y", Task: "auto", Scaling: "standard", Sample: 700, Seed: cfg.Seed, Memory: 1 << 30, Config: cfg}
}

var testInfo = predictor.TrainingInfo{Data: "test", Validation: "none", Version: "rfm-beam"}

// inputs expands the globs into shards and reads their header.
func inputs(t *testing.T, glob string) ([]Shard, []string) {
	t.Helper()
	ctx := context.Background()
	shards, err := expand(ctx, glob)
	if err != nil {
		t.Fatal(err)
	}
	header, err := readHeader(ctx, shards[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	return shards, header
}

// runFit runs the fit pipeline on Prism, in this process.
func runFit(t *testing.T, spec FitSpec, glob, out string) error {
	t.Helper()
	ctx := context.Background()
	shards, header := inputs(t, glob)
	return beamx.Run(ctx, fitPipeline(spec, shards, header, out, testInfo))
}

// fitLocal is the single-machine twin of the pipeline: the same sample
// (the k rows of smallest key over all files), the pipeline and target
// fitted on it, every row encoded in table order, and tree.FitSampled on
// them; the model file is written the same way.
func fitLocal(t *testing.T, spec FitSpec, glob, out string) {
	t.Helper()
	ctx := context.Background()
	shards, header := inputs(t, glob)
	var cand []RawRow
	offset := map[int]int{}
	total := 0
	for _, sh := range shards {
		rows, n, err := sampleShard(ctx, sh, header, spec.Seed, spec.Sample)
		if err != nil {
			t.Fatal(err)
		}
		offset[sh.Index] = total
		total += n
		cand = append(cand, rows...)
	}
	slices.SortFunc(cand, cmpRaw)
	sample := cand[:min(spec.Sample, len(cand))]
	top, err := topFromSample(ctx, spec, header, sample, total)
	if err != nil {
		t.Fatal(err)
	}
	d, err := top.decode()
	if err != nil {
		t.Fatal(err)
	}
	ds := &rfm.Dataset{D: d.tree.D, Classes: d.tree.Outputs}
	for _, sh := range shards {
		if _, err := d.encodeShard(ctx, sh, func(_ int, r EncRow) {
			ds.X = append(ds.X, r.X...)
			ds.Labels = append(ds.Labels, r.Label)
			ds.N++
		}); err != nil {
			t.Fatal(err)
		}
	}
	var idx []int
	for _, r := range sample {
		idx = append(idx, offset[r.Shard]+r.Row)
	}
	slices.Sort(idx)
	m, err := tree.FitSampled(ctx, spec.Config, ds, idx, spec.Memory, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeModel(ctx, out, m, d, testInfo); err != nil {
		t.Fatal(err)
	}
}

// The distributed fit on Prism writes the model file the single-machine
// twin writes, byte for byte; the model predicts its own training rows
// well; a leaf whose first attempt fails leaves no model file, and the
// rerun gives the same file.
func TestFitMatchesSingleMachine(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, []int{700, 600, 500})
	spec := testSpec()
	beamOut, localOut := filepath.Join(dir, "beam.rfm"), filepath.Join(dir, "local.rfm")
	if err := runFit(t, spec, glob, beamOut); err != nil {
		t.Fatal(err)
	}
	fitLocal(t, spec, glob, localOut)
	a, _ := os.ReadFile(beamOut)
	b, _ := os.ReadFile(localOut)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("the Beam model (%d bytes) differs from the single-machine one (%d bytes)", len(a), len(b))
	}
	m, err := predictor.Load(beamOut)
	if err != nil {
		t.Fatal(err)
	}
	if tm, ok := m.Fitted.(*tree.Model); !ok || len(tm.Leaves) < 4 {
		t.Fatalf("expected a tree of several leaves for 1 800 rows at 300 a leaf, got %+v", m.Fitted)
	}
	tab, err := m.ReadTable(context.Background(), mustOpen(t, filepath.Join(dir, "part0.csv")), "part0.csv", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Predict(context.Background(), tab)
	if err != nil {
		t.Fatal(err)
	}
	col, _ := tab.Column("y")
	hit := 0
	for i, l := range p.Labels {
		if l == col.Str[i] {
			hit++
		}
	}
	if acc := float64(hit) / float64(p.N); acc < 0.8 {
		t.Errorf("training accuracy %.3f of the distributed model", acc)
	}

	// A failure in one leaf's first attempt: Prism does not retry bundles,
	// so the job fails (and writes nothing); the rerun, like a runner's
	// retry of that bundle, fits the same leaf, and the same file.
	retryOut := filepath.Join(dir, "retry.rfm")
	failLeaf.Lock()
	failLeaf.leaf, failLeaf.tried = 2, map[int]bool{}
	failLeaf.Unlock()
	defer func() { failLeaf.Lock(); failLeaf.leaf = -1; failLeaf.Unlock() }()
	err = runFit(t, spec, glob, retryOut)
	if err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("the injected failure was not reported: %v", err)
	}
	if _, serr := os.Stat(retryOut); serr == nil {
		t.Fatal("a failed fit left a model file")
	}
	if err := runFit(t, spec, glob, retryOut); err != nil {
		t.Fatal(err)
	}
	c, _ := os.ReadFile(retryOut)
	if !bytes.Equal(a, c) {
		t.Error("the retried fit gives another model file")
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// Batch scoring on Prism writes, per input file, what 'rfm predict
// --proba' writes for it, byte for byte.
func TestPredictMatchesRfmPredict(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, []int{400, 300, 200})
	spec := testSpec()
	model := filepath.Join(dir, "m.rfm")
	if err := runFit(t, spec, glob, model); err != nil {
		t.Fatal(err)
	}
	rfmBin := filepath.Join(dir, "rfm")
	build := exec.Command("go", "build", "-tags", buildTags, "-o", rfmBin, "./cmd/rfm")
	build.Dir = filepath.Join("..", "..") // the rfm module, with its own go.sum
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build rfm: %v\n%s", err, out)
	}
	ctx := context.Background()
	out := filepath.Join(dir, "pred")
	if err := predictBeam(ctx, model, glob, out, true, false, os.Stderr); err != nil {
		t.Fatal(err)
	}
	shards, _ := expand(ctx, glob)
	for _, sh := range shards {
		want := filepath.Join(dir, fmt.Sprintf("want%d.csv", sh.Index))
		cmd := exec.Command(rfmBin, "predict", "--model", model, "--data", sh.Path, "--proba", "--out", want, "--quiet")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("rfm predict %s: %v\n%s", sh.Path, err, b)
		}
		w, _ := os.ReadFile(want)
		g, err := os.ReadFile(partPath(out, sh.Index))
		if err != nil {
			t.Fatal(err)
		}
		if len(w) == 0 || !bytes.Equal(w, g) {
			t.Errorf("%s: the pipeline's output differs from rfm predict's", sh.Path)
		}
	}
}

// Bad input stops before any work with a message that names it.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	glob := writeShards(t, dir, []int{50, 50})
	ctx := context.Background()
	var sink bytes.Buffer
	if err := fitBeam(ctx, testSpec(), filepath.Join(dir, "nothing*.csv"), filepath.Join(dir, "m.rfm"), &sink); err == nil || !strings.Contains(err.Error(), "no file matches") {
		t.Errorf("a glob matching nothing: %v", err)
	}
	spec := testSpec()
	spec.Target = "z"
	if err := fitBeam(ctx, spec, glob, filepath.Join(dir, "m.rfm"), &sink); err == nil || !strings.Contains(err.Error(), `--target "z" is not a column`) {
		t.Errorf("a missing target: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "part9.csv"), []byte("a,b,y\n1,2,low\n"), 0o644)
	err := runFit(t, testSpec(), glob, filepath.Join(dir, "m.rfm"))
	if err == nil || !strings.HasPrefix(rootCause(err), filepath.Join(dir, "part9.csv")+`: categorical column "c" not found`) {
		t.Errorf("a file with other columns: %v", err)
	}
	if err := run(ctx, []string{"fit", "--data", glob}, &sink); err == nil || !strings.Contains(err.Error(), "--target is required") {
		t.Errorf("no --target: %v", err)
	}
}
