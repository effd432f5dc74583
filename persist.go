package rfm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/rfmkit/rfm/internal/linalg"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/modelfile"
)

// FileKind is the modelfile kind of an RFM model.
const FileKind = "rfm.Model"

// fileMeta is the JSON document stored with the arrays. Extra carries the
// caller's sections (the CLI stores its column pipeline there) so that one
// file is the whole model.
type fileMeta struct {
	Model   *Model                     `json:"model"`
	Backend string                     `json:"backend"`
	Extra   map[string]json.RawMessage `json:"extra,omitempty"`
}

// fileModel is how a Model is written: its rounds without their timings,
// so that the same fit gives the same bytes (the shallower History and Head
// fields hide the embedded Model's). Old files with timings still load.
// The shallower Calibration keeps it where files have always had it, after
// the note (the Header's other fields lead, as they always have).
type fileModel struct {
	*Model
	Calibration *Calibration `json:"calibration,omitempty"`
	History     []Round      `json:"history"`
	Head        *Round       `json:"head,omitempty"`
}

// untimed returns a copy of the rounds with their wall-clock fields zeroed.
func untimed(h []Round) []Round {
	out := append([]Round(nil), h...)
	for i := range out {
		out[i].FitSeconds, out[i].AGOPSeconds = 0, 0
	}
	return out
}

// ToFile packs the model (and the caller's extra JSON sections) into a
// modelfile container. Timings are left out: they are not part of the model.
func (m *Model) ToFile(extra map[string]json.RawMessage) (*modelfile.File, error) {
	fm := fileModel{Model: m, Calibration: m.Calibration, History: untimed(m.History)}
	if m.Head != nil {
		fm.Head = &untimed([]Round{*m.Head})[0]
	}
	meta, err := json.Marshal(struct {
		Model   fileModel                  `json:"model"`
		Backend string                     `json:"backend"`
		Extra   map[string]json.RawMessage `json:"extra,omitempty"`
	}{fm, linalg.Backend(), extra})
	if err != nil {
		return nil, fmt.Errorf("encode model: %w", err)
	}
	f := &modelfile.File{Kind: FileKind, Meta: meta}
	if m.Calibration != nil {
		f.FormatVersion = modelfile.VersionScaledOrCalibrated
	}
	add := func(name string, data []float64, shape ...int) {
		if data != nil {
			f.Arrays = append(f.Arrays, modelfile.Array{Name: name, Shape: shape, F64: data})
		}
	}
	dm := m.Dm()
	add("centers", m.Centers, m.N, dm)
	add("alpha", m.Alpha, m.N, m.Outputs)
	add("shift", m.Shift, dm)
	switch m.M.Form {
	case kernel.Diagonal:
		add("m", m.M.Values, dm)
	case kernel.Full:
		add("m", m.M.Values, dm, dm)
	}
	return f, nil
}

// Save writes the model to w.
func (m *Model) Save(w io.Writer, extra map[string]json.RawMessage) error {
	return modelfile.WriteModel(w, m, extra)
}

// SaveFile writes the model to path atomically: the file appears whole or
// not at all.
func (m *Model) SaveFile(path string, extra map[string]json.RawMessage) error {
	return modelfile.WriteModelFile(path, m, extra)
}

// FromFile unpacks a model and the caller's extra sections, checking that
// every array has the size the metadata implies.
func FromFile(f *modelfile.File) (*Model, map[string]json.RawMessage, error) {
	meta, m, err := modelfile.DecodeSection(f, FileKind, "an RFM model", "model", func(x *fileMeta) *Model { return x.Model })
	if err != nil {
		return nil, nil, err
	}
	if m.N < 1 || m.D < 1 || m.Outputs < 1 {
		return nil, nil, fmt.Errorf("model metadata: bad sizes n=%d d=%d outputs=%d", m.N, m.D, m.Outputs)
	}
	if m.Selected != nil && len(m.Selected) == 0 {
		return nil, nil, errors.New("model metadata: an empty list of selected columns (a model uses at least one)")
	}
	seen := make(map[int]bool, len(m.Selected))
	for _, c := range m.Selected {
		if c < 0 || c >= m.D {
			return nil, nil, fmt.Errorf("model metadata: selected column %d outside [0, %d)", c, m.D)
		}
		if seen[c] {
			return nil, nil, fmt.Errorf("model metadata: column %d is selected twice", c)
		}
		seen[c] = true
	}
	dm := m.Dm()
	get := func(name string, want int, required bool) ([]float64, error) {
		a, ok := f.Array(name)
		if !ok {
			if required {
				return nil, fmt.Errorf("model file has no %q array", name)
			}
			return nil, nil
		}
		if a.F64 == nil || len(a.F64) != want {
			return nil, fmt.Errorf("model file: array %q has %d float64 values, want %d", name, a.Len(), want)
		}
		for i, v := range a.F64 {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("model file: array %q holds %v at index %d; a fitted model has only finite values", name, v, i)
			}
		}
		return a.F64, nil
	}
	if m.Centers, err = get("centers", m.N*dm, true); err != nil {
		return nil, nil, err
	}
	if m.Alpha, err = get("alpha", m.N*m.Outputs, true); err != nil {
		return nil, nil, err
	}
	if m.Shift, err = get("shift", dm, false); err != nil {
		return nil, nil, err
	}
	switch m.M.Form {
	case kernel.Identity, kernel.Diagonal, kernel.Full:
	default:
		return nil, nil, fmt.Errorf("model metadata: unknown metric %q", m.M.Form)
	}
	m.M.D = dm
	if n := m.M.Len(); n > 0 {
		if m.M.Values, err = get("m", n, true); err != nil {
			return nil, nil, err
		}
	}
	switch m.Task {
	case Regression:
		if len(m.YMean) != m.Outputs || len(m.YStd) != m.Outputs {
			return nil, nil, errors.New("model metadata: regression model without target scaling")
		}
		for k := range m.YMean {
			if !finite(m.YMean[k]) || !(m.YStd[k] > 0) || !finite(m.YStd[k]) {
				return nil, nil, fmt.Errorf("model metadata: target scaling of output %d is mean %v, std %v", k, m.YMean[k], m.YStd[k])
			}
		}
	case Classification:
		if m.Outputs < 2 {
			return nil, nil, fmt.Errorf("model metadata: a classifier with %d class(es)", m.Outputs)
		}
	default:
		return nil, nil, fmt.Errorf("model metadata: unknown task %q", m.Task)
	}
	if err := m.Calibration.Check(m.Task, m.Outputs); err != nil {
		return nil, nil, fmt.Errorf("model metadata: %w", err)
	}
	if len(m.History) > 0 && (m.BestRound < 0 || m.BestRound >= len(m.History)) {
		return nil, nil, fmt.Errorf("model metadata: best round %d of a %d-round history", m.BestRound, len(m.History))
	}
	if err := m.KernelUsed.Validate(); err != nil {
		return nil, nil, fmt.Errorf("model metadata: %w", err)
	}
	return m, meta.Extra, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Load reads a model written by Save.
func Load(r io.Reader) (*Model, map[string]json.RawMessage, error) {
	f, err := modelfile.Read(r)
	if err != nil {
		return nil, nil, err
	}
	return FromFile(f)
}

// LoadFile reads a model file from disk.
func LoadFile(path string) (*Model, map[string]json.RawMessage, error) {
	f, err := modelfile.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	m, extra, err := FromFile(f)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, extra, nil
}
