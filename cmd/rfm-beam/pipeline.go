package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/transforms/stats"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/predictor"
	"github.com/rfmkit/rfm/tree"
)

func init() {
	for _, t := range []any{Shard{}, RawRow{}, EncRow{}, LeafResult{}, Top{}, sampleAcc{}} {
		beam.RegisterType(reflect.TypeOf(t))
	}
	register.DoFn4x1[context.Context, Shard, func(RawRow), func(int), error](&sampleFn{})
	register.DoFn4x1[context.Context, []RawRow, int, func(Top), error](&growFn{})
	register.DoFn4x1[context.Context, Shard, Top, func(int, EncRow), error](&routeFn{})
	register.DoFn5x1[context.Context, int, func(*EncRow) bool, Top, func(LeafResult), error](&leafFn{})
	register.DoFn5x1[context.Context, int, func(*LeafResult) bool, Top, func(string), error](&assembleFn{})
	register.DoFn4x1[context.Context, Shard, []byte, func(int), error](&scoreFn{})
	register.Combiner3[sampleAcc, RawRow, []RawRow](&sampleCombine{})
	register.Emitter1[RawRow]()
	register.Emitter1[int]()
	register.Emitter1[Top]()
	register.Emitter2[int, EncRow]()
	register.Emitter1[LeafResult]()
	register.Emitter1[string]()
	register.Iter1[*EncRow]()
	register.Iter1[*LeafResult]()
}

// Counters and distributions, under the namespace "rfm".
var (
	rowsRead     = beam.NewCounter("rfm", "rows_read")
	rowsRouted   = beam.NewCounter("rfm", "rows_routed")
	leavesFitted = beam.NewCounter("rfm", "leaves_fitted")
	leafRows     = beam.NewDistribution("rfm", "leaf_rows")
	leafMillis   = beam.NewDistribution("rfm", "leaf_fit_ms")
	rowsScored   = beam.NewCounter("rfm", "rows_scored")
)

// openShard opens a file by the Beam file systems (local paths, gs://). A
// local path must be a regular file: a named pipe or device is refused at
// once instead of blocking the open.
func openShard(ctx context.Context, path string) (io.ReadCloser, error) {
	if !strings.Contains(path, "://") {
		return atomicfile.OpenRegular(path)
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return nil, err
	}
	return fs.OpenRead(ctx, path)
}

// expand lists the files of comma-separated globs, sorted and numbered: the
// shards. A glob that matches nothing is an error.
func expand(ctx context.Context, globs string) ([]Shard, error) {
	var paths []string
	for _, g := range strings.Split(globs, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		fs, err := filesystem.New(ctx, g)
		if err != nil {
			return nil, fmt.Errorf("--data %s: %w", g, err)
		}
		m, err := fs.List(ctx, g)
		fs.Close()
		if err != nil {
			return nil, fmt.Errorf("--data %s: %w", g, err)
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("--data %s: no file matches", g)
		}
		if !strings.Contains(g, "://") {
			// A named pipe would block its reader beyond any interrupt.
			for _, p := range m {
				if st, err := os.Stat(p); err == nil && !st.Mode().IsRegular() {
					return nil, fmt.Errorf("--data %s: %s is not a regular file (a named pipe, device or directory); the inputs must be files", g, p)
				}
			}
		}
		paths = append(paths, m...)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("--data: no files given")
	}
	sort.Strings(paths)
	var out []Shard
	for i, p := range paths {
		if i > 0 && p == paths[i-1] {
			continue // two globs matched it
		}
		out = append(out, Shard{Index: len(out), Path: p})
	}
	return out, nil
}

// readChunks reads a shard (delimited text in pieces, gzip or not; other
// formats whole) through the Beam file systems.
func readChunks(ctx context.Context, path string, opt dataset.ReadOptions, fn func(*dataset.Table) error) error {
	if !strings.Contains(path, "://") {
		return dataset.ReadFileChunks(ctx, path, opt, 0, fn)
	}
	r, err := openShard(ctx, path)
	if err != nil {
		return err
	}
	defer r.Close()
	return dataset.ReadChunks(ctx, r, path, opt, 0, fn)
}

// sampleFn emits a shard's Sample rows of smallest key and its row count.
type sampleFn struct {
	Header []string
	Seed   uint64
	K      int
}

func (f *sampleFn) ProcessElement(ctx context.Context, sh Shard, emit func(RawRow), count func(int)) error {
	rows, n, err := sampleShard(ctx, sh, f.Header, f.Seed, f.K)
	if err != nil {
		return err
	}
	rowsRead.Inc(ctx, int64(n))
	for _, r := range rows {
		emit(r)
	}
	count(n)
	return nil
}

// sampleCombine keeps the K rows of smallest key (top.Smallest sorts its
// whole list at every element: hours for a sample of a million rows).
type sampleCombine struct {
	K int
}

// sampleAcc holds up to about 2K candidate rows.
type sampleAcc struct {
	Rows []RawRow
}

func (c *sampleCombine) CreateAccumulator() sampleAcc { return sampleAcc{} }

func (c *sampleCombine) AddInput(a sampleAcc, r RawRow) sampleAcc {
	a.Rows = append(a.Rows, r)
	if len(a.Rows) >= 2*c.K+1024 {
		a.Rows = smallest(a.Rows, c.K)
	}
	return a
}

func (c *sampleCombine) MergeAccumulators(a, b sampleAcc) sampleAcc {
	a.Rows = smallest(append(a.Rows, b.Rows...), c.K)
	return a
}

func (c *sampleCombine) ExtractOutput(a sampleAcc) []RawRow { return smallest(a.Rows, c.K) }

// smallest sorts rows by key and keeps the first k.
func smallest(rows []RawRow, k int) []RawRow {
	slices.SortFunc(rows, cmpRaw)
	return rows[:min(k, len(rows))]
}

// growFn fits the pipeline and the routing on the sample.
type growFn struct {
	Spec   FitSpec
	Header []string
}

func (f *growFn) ProcessElement(ctx context.Context, sample []RawRow, total int, emit func(Top)) error {
	start := time.Now()
	t, err := topFromSample(ctx, f.Spec, f.Header, sample, total)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "rfm-beam: routing grown on %d sampled rows of %d in %.1f s\n", len(sample), total, time.Since(start).Seconds())
	emit(*t)
	return nil
}

// routeFn encodes a shard's rows and keys each by its leaf.
type routeFn struct {
	topCache
}

// topCache decodes the side input Top (JSON pipeline and target, gob
// routing tree) once per DoFn instance: it is the same for every element.
type topCache struct {
	once sync.Once
	d    *decoded
	err  error
}

func (c *topCache) decoded(top Top) (*decoded, error) {
	c.once.Do(func() { c.d, c.err = top.decode() })
	return c.d, c.err
}

func (f *routeFn) ProcessElement(ctx context.Context, sh Shard, top Top, emit func(int, EncRow)) error {
	d, err := f.decoded(top)
	if err != nil {
		return err
	}
	n, err := d.encodeShard(ctx, sh, func(leaf int, r EncRow) {
		r.X = append([]float64(nil), r.X...) // the chunk's buffer is reused
		emit(leaf, r)
	})
	rowsRouted.Inc(ctx, int64(n))
	return err
}

// leafFn fits one leaf on its rows.
type leafFn struct {
	Memory uint64
	topCache
}

// fittedHere counts the leaves this process fitted (progress on stderr).
var fittedHere atomic.Int64

// failLeaf, when set (tests), makes the first attempt of a leaf fail.
var failLeaf = struct {
	sync.Mutex
	leaf  int
	tried map[int]bool
}{leaf: -1}

func (f *leafFn) ProcessElement(ctx context.Context, leaf int, rows func(*EncRow) bool, top Top, emit func(LeafResult)) error {
	d, err := f.decoded(top)
	if err != nil {
		return err
	}
	all := collect(rows)
	failLeaf.Lock()
	if failLeaf.leaf == leaf && !failLeaf.tried[leaf] {
		failLeaf.tried[leaf] = true
		failLeaf.Unlock()
		return fmt.Errorf("leaf %d: injected failure of the first attempt", leaf)
	}
	failLeaf.Unlock()
	killWorkerAt(leaf)
	res, err := d.fitLeaf(ctx, leaf, all, f.Memory)
	if err != nil {
		return err
	}
	leavesFitted.Inc(ctx, 1)
	if n := fittedHere.Add(1); n%50 == 0 {
		fmt.Fprintf(os.Stderr, "rfm-beam: %d leaves fitted in this worker\n", n)
	}
	leafRows.Update(ctx, int64(len(all)))
	leafMillis.Update(ctx, res.FitMillis)
	emit(*res)
	return nil
}

// collect reads a grouped stage's values into a slice.
func collect[T any](next func(*T) bool) []T {
	var all []T
	var v T
	for next(&v) {
		all = append(all, v)
	}
	return all
}

// assembleFn puts the leaves into the routing and writes the model file.
type assembleFn struct {
	Out  string
	Info predictor.TrainingInfo
}

func (f *assembleFn) ProcessElement(ctx context.Context, _ int, leaves func(*LeafResult) bool, top Top, emit func(string)) error {
	d, err := top.decode()
	if err != nil {
		return err
	}
	m, err := d.assemble(collect(leaves))
	if err != nil {
		return err
	}
	if err := writeModel(ctx, f.Out, m, d, f.Info); err != nil {
		return err
	}
	emit(f.Out)
	return nil
}

// writeModel writes the tree with its pipeline and target: atomically to
// a local path, as one object elsewhere.
func writeModel(ctx context.Context, out string, m *tree.Model, d *decoded, info predictor.TrainingInfo) error {
	info.Rows = m.N
	if !strings.Contains(out, "://") {
		return predictor.WriteFile(ctx, out, m, d.pipeline, d.target, &info, "rfm-beam")
	}
	dir, err := os.MkdirTemp("", "rfm-beam-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	local := dir + "/model.rfm"
	if err := predictor.WriteFile(ctx, local, m, d.pipeline, d.target, &info, "rfm-beam"); err != nil {
		return err
	}
	b, err := os.ReadFile(local)
	if err != nil {
		return err
	}
	return writeObject(ctx, out, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// writeObject writes a file by the Beam file systems (a failed write of a
// local file leaves none).
func writeObject(ctx context.Context, path string, fn func(io.Writer) error) error {
	if !strings.Contains(path, "://") {
		return modelfile.WriteAtomicContext(ctx, path, fn)
	}
	fs, err := filesystem.New(ctx, path)
	if err != nil {
		return err
	}
	defer fs.Close()
	w, err := fs.OpenWrite(ctx, path)
	if err != nil {
		return err
	}
	if err := fn(w); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// fitPipeline builds the distributed fit: sample, routing, leaves, model.
func fitPipeline(spec FitSpec, shards []Shard, header []string, out string, info predictor.TrainingInfo) *beam.Pipeline {
	p, s := beam.NewPipelineWithRoot()
	files := beam.CreateList(s, shards)
	raw, counts := beam.ParDo2(s, &sampleFn{Header: header, Seed: spec.Seed, K: spec.Sample}, files)
	sample := beam.Combine(s.Scope("sample"), &sampleCombine{K: spec.Sample}, raw)
	total := stats.Sum(s, counts)
	topInfo := beam.ParDo(s.Scope("grow"), &growFn{Spec: spec, Header: header}, sample, beam.SideInput{Input: total})
	routed := beam.ParDo(s.Scope("route"), &routeFn{}, files, beam.SideInput{Input: topInfo})
	leaves := beam.ParDo(s.Scope("leaves"), &leafFn{Memory: spec.Memory}, beam.GroupByKey(s, routed), beam.SideInput{Input: topInfo})
	all := beam.GroupByKey(s, beam.AddFixedKey(s, leaves))
	beam.ParDo(s.Scope("assemble"), &assembleFn{Out: out, Info: info}, all, beam.SideInput{Input: topInfo})
	return p
}

// scoreFn predicts a shard's rows and writes them to DIR/part-NNNNN.csv
// as 'rfm predict' writes its output.
type scoreFn struct {
	Dir   string
	Proba bool
	once  sync.Once
	m     *predictor.Model
	err   error
}

func (f *scoreFn) ProcessElement(ctx context.Context, sh Shard, model []byte, emit func(int)) error {
	f.once.Do(func() { f.m, f.err = predictor.Read(bytes.NewReader(model), "model") })
	if f.err != nil {
		return f.err
	}
	n, err := scoreShard(ctx, f.m, sh, partPath(f.Dir, sh.Index), f.Proba)
	if err != nil {
		return err
	}
	rowsScored.Inc(ctx, int64(n))
	emit(n)
	return nil
}

// partPath is the output file of shard i.
func partPath(dir string, i int) string {
	return strings.TrimSuffix(dir, "/") + "/part-" + fmt.Sprintf("%05d", i) + ".csv"
}

// predictPipeline builds the batch scoring: the model as a side input,
// one output file per input shard.
func predictPipeline(model []byte, shards []Shard, dir string, proba bool) *beam.Pipeline {
	p, s := beam.NewPipelineWithRoot()
	files := beam.CreateList(s, shards)
	m := beam.Create(s, model)
	counts := beam.ParDo(s.Scope("score"), &scoreFn{Dir: dir, Proba: proba}, files, beam.SideInput{Input: m})
	stats.Sum(s, counts)
	return p
}
