package predictor

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/tree"

	// The model kinds a model file may hold: each registers its decoder
	// with modelfile (rfm's own and tree's come with their imports).
	_ "github.com/rfmkit/rfm/ensemble"
)

// Sections of a model file that rfm fit adds beside the model itself.
const (
	SectionPipeline = "pipeline" // *dataset.Pipeline: raw columns → features
	SectionTarget   = "target"   // *dataset.Target: class labels or target scaling
	SectionTraining = "training" // TrainingInfo: where the model came from
)

// ChunkRows is how many rows a model scores at once unless it says
// otherwise (rfm.Chunked); TreeChunkRows a tree's (it divides each chunk
// among its leaves, so a chunk of a few leaves' worth would leave each leaf
// a handful). Chunks bound the memory of a long prediction; they do not
// change its numbers, which depend only on the row (the kernel evaluates
// fixed bands of rows).
const (
	ChunkRows     = 32 * 128
	TreeChunkRows = tree.PredictChunkRows
)

// ErrNoPipeline is returned (wrapped) by the raw-row methods of a Model
// whose file has no column pipeline: it was written by the Go API on
// numeric features, not by rfm fit.
var ErrNoPipeline = errors.New("the model has no column pipeline (it was not written by 'rfm fit'); predict numeric features with PredictFeatures")

// TrainingInfo is rfm fit's record of how a model was trained.
type TrainingInfo struct {
	Data       string `json:"data"`
	Rows       int    `json:"rows"`
	Validation string `json:"validation"`
	Version    string `json:"rfm_version"`
}

// Model is a model file ready to predict: the fitted model (an exact RFM, a
// tree of them, an ensemble: any rfm.Fitted) and, for files written by rfm
// fit, the column pipeline
// that turns raw rows into its features and the target encoding that turns
// its outputs into labels or values.
//
// A Model does not change after Load; its methods are safe for concurrent
// use. The exported fields are for reading.
type Model struct {
	// Name is the file's path (or the name given to Read), used in errors.
	Name string
	// Checksum is the file's SHA-256 in hex: which file answered.
	Checksum string
	// FormatVersion and CreatedBy are the file's.
	FormatVersion int
	CreatedBy     string
	// Fitted is the model itself, of whichever kind the file holds.
	Fitted rfm.Fitted
	// Pipeline and Target are nil when the file has no column pipeline.
	Pipeline *dataset.Pipeline
	Target   *dataset.Target
	Training *TrainingInfo // nil when the file does not say
}

// Load reads and checks a model file: its checksum and version (by
// modelfile), the model, and that the pipeline, target and model agree.
func Load(path string) (*Model, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory, not a model file", path)
	}
	f, err := modelfile.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return FromFile(f, path)
}

// Read is Load from a reader; name is used in errors.
func Read(r io.Reader, name string) (*Model, error) {
	f, err := modelfile.Read(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return FromFile(f, name)
}

// FromFile decodes a model file's content; name is used in errors.
func FromFile(f *modelfile.File, name string) (*Model, error) {
	m := &Model{Name: name, Checksum: hex.EncodeToString(f.Checksum[:]), FormatVersion: f.FormatVersion, CreatedBy: f.CreatedBy}
	fm, extra, err := modelfile.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var ok bool
	if m.Fitted, ok = fm.(rfm.Fitted); !ok {
		return nil, fmt.Errorf("%s: the decoder of model kind %q gave a %T, which cannot predict", name, f.Kind, fm)
	}
	decode := func(key string, v any) (bool, error) {
		raw, ok := extra[key]
		if !ok {
			return false, nil
		}
		if err := json.Unmarshal(raw, v); err != nil {
			return false, fmt.Errorf("%s: model section %q is damaged: %v", name, key, err)
		}
		return true, nil
	}
	var p dataset.Pipeline
	var tg dataset.Target
	var info TrainingInfo
	okP, err := decode(SectionPipeline, &p)
	if err != nil {
		return nil, err
	}
	okT, err := decode(SectionTarget, &tg)
	if err != nil {
		return nil, err
	}
	okI, err := decode(SectionTraining, &info)
	if err != nil {
		return nil, err
	}
	if okI {
		m.Training = &info
	}
	// Prepare the model now (M^½, the mapped centres): an inconsistent file
	// is refused at load, not at its first prediction, and a server that
	// swaps it in does not stall its first batch.
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if okP != okT {
		return nil, fmt.Errorf("%s: the file has a %q section but no %q section; it is inconsistent", name,
			map[bool]string{true: SectionPipeline, false: SectionTarget}[okP], map[bool]string{true: SectionTarget, false: SectionPipeline}[okP])
	}
	if !okP {
		return m, nil
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: model section %q: %s", name, SectionPipeline, strings.TrimPrefix(err.Error(), "dataset: "))
	}
	if err := tg.Validate(); err != nil {
		return nil, fmt.Errorf("%s: model section %q: %s", name, SectionTarget, strings.TrimPrefix(err.Error(), "dataset: "))
	}
	if w := p.Width(); w != m.D() {
		return nil, fmt.Errorf("%s: the pipeline makes %d features but the model takes %d; the file is inconsistent", name, w, m.D())
	}
	wantTask := rfm.Regression
	if tg.IsClassification() {
		wantTask = rfm.Classification
		if tg.NumClasses() != m.Outputs() {
			return nil, fmt.Errorf("%s: the target has %d classes but the model has %d outputs; the file is inconsistent", name, tg.NumClasses(), m.Outputs())
		}
	} else if m.Outputs() != 1 {
		return nil, fmt.Errorf("%s: the target is one regression column but the model has %d outputs; the file is inconsistent", name, m.Outputs())
	}
	if m.Task() != wantTask {
		return nil, fmt.Errorf("%s: the target is for %s but the model does %s; the file is inconsistent", name, tg.Task, m.Task())
	}
	m.Pipeline, m.Target = &p, &tg
	return m, nil
}

// WriteFile writes a model with its pipeline, target and training record
// (each may be nil) atomically to path: Load gives them back, and rfm
// predict can use the file on raw rows when pipeline and target are set.
// createdBy names the writing program ("" for the default).
func WriteFile(ctx context.Context, path string, fm modelfile.Model, p *dataset.Pipeline, tg *dataset.Target, info *TrainingInfo, createdBy string) error {
	if (p == nil) != (tg == nil) {
		return errors.New("predictor: a pipeline needs its target and a target its pipeline")
	}
	extra := map[string]json.RawMessage{}
	add := func(key string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode model section %q: %w", key, err)
		}
		extra[key] = b
		return nil
	}
	if p != nil {
		if err := add(SectionPipeline, p); err != nil {
			return err
		}
		if err := add(SectionTarget, tg); err != nil {
			return err
		}
	}
	if info != nil {
		if err := add(SectionTraining, info); err != nil {
			return err
		}
	}
	f, err := fm.ToFile(extra)
	if err != nil {
		return err
	}
	f.CreatedBy = createdBy
	if p != nil && !p.Scaling.IsStandard() {
		f.FormatVersion = max(f.FormatVersion, modelfile.VersionScaledOrCalibrated)
	}
	return modelfile.WriteFileAtomicContext(ctx, path, f)
}

func (m *Model) header() *rfm.Header { return m.Fitted.ModelHeader() }

// Kind names the model kind: "rfm", "tree" or "ensemble".
func (m *Model) Kind() string { return m.Fitted.Kind() }

// Centers is the number of training rows the model keeps as kernel
// centres (over a tree's leaves or an ensemble's members).
func (m *Model) Centers() int {
	n := 0
	if c, ok := m.Fitted.(rfm.Composite); ok {
		for _, sm := range c.SubModels() {
			n += sm.N
		}
	}
	return n
}

// D is the number of features the model takes.
func (m *Model) D() int { return m.header().D }

// Outputs is the number of classes or regression outputs.
func (m *Model) Outputs() int { return m.header().Outputs }

// Task is the model's task.
func (m *Model) Task() rfm.Task { return m.header().Task }

// Config is the model's configuration (a tree's leaf configuration, an
// ensemble's best member's).
func (m *Model) Config() rfm.Config { return m.header().Config }

// Calibration is the model's map from class scores to probabilities (nil:
// the scores clipped and renormalized).
func (m *Model) Calibration() *rfm.Calibration { return m.header().Calibration }

// Classes are the class labels of a classifier with a target encoding (nil
// otherwise); class index k is Classes[k].
func (m *Model) Classes() []string {
	if m.Target == nil || !m.Target.IsClassification() {
		return nil
	}
	return slices.Clone(m.Target.Classes)
}

// Inputs are the raw input columns the model reads, in fit order (nil
// without a pipeline).
func (m *Model) Inputs() []dataset.InputColumn {
	if m.Pipeline == nil {
		return nil
	}
	return slices.Clone(m.Pipeline.Inputs)
}

// NeedPipeline returns an error naming the file when it has no column
// pipeline, so raw rows cannot be predicted.
func (m *Model) NeedPipeline() error {
	if m.Pipeline == nil {
		return fmt.Errorf("%s: %w", m.Name, ErrNoPipeline)
	}
	return nil
}

func (m *Model) check() error { return m.Fitted.Check() }

// ChunkRows is the number of rows the model scores at a time.
func (m *Model) ChunkRows() int {
	if c, ok := m.Fitted.(rfm.Chunked); ok {
		return c.ChunkRows()
	}
	return ChunkRows
}

// PredictFeatures returns the model's raw outputs (n × Outputs, row-major)
// for n rows of encoded features x (n × D): class scores or standardized
// regression values. A row whose prediction is not finite (values far
// beyond the training range overflow the map by M^½) is an error naming
// the row (1-based), an *rfm.InputError like the model's own checks. It scores ChunkRows rows at a time, telling each
// chunk's rows to started (may be nil) first, and stops between chunks
// when ctx is done.
func (m *Model) PredictFeatures(ctx context.Context, x []float64, n int, started func(r0, r1 int)) ([]float64, error) {
	d := m.D()
	if n < 0 || len(x) != n*d {
		return nil, fmt.Errorf("%s: %d values are not %d rows of %d features", m.Name, len(x), n, d)
	}
	chunk, s := m.ChunkRows(), m.Fitted
	out := []float64{}
	for r0 := 0; r0 < n; r0 += chunk {
		r1 := min(r0+chunk, n)
		if started != nil {
			started(r0, r1)
		}
		y, err := s.Predict(ctx, x[r0*d:r1*d], r1-r0)
		if err != nil {
			return nil, err
		}
		if r0 == 0 {
			if r1 == n {
				out = y // one chunk: no copy
				break
			}
			out = make([]float64, 0, n*m.Outputs())
		}
		out = append(out, y...)
	}
	k := m.Outputs()
	for i, v := range out {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, &rfm.InputError{Err: fmt.Errorf("row %d: the prediction is %v: the row's values are too far from the training rows to compute it", i/k+1, v)}
		}
	}
	return out, nil
}
