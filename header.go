package rfm

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/rfmkit/rfm/modelfile"
)

// Header is what every model kind records about itself, embedded once in
// each kind's struct (Model, tree.Model, ensemble.Model), so that m.D,
// m.Task, m.Config ... read the same everywhere and ModelHeader gives them
// to code that holds any kind.
type Header struct {
	// Config is the model's configuration (a tree's leaf configuration, an
	// ensemble's best member's).
	Config  Config `json:"config"`
	Task    Task   `json:"task"`
	Outputs int    `json:"outputs"` // classes (classification) or target columns
	D       int    `json:"d"`       // input features
	// Calibration, when set, maps the classifier's scores to
	// probabilities; nil: the scores clipped and renormalized.
	Calibration *Calibration `json:"calibration,omitempty"`
}

// ModelHeader returns the header itself: every struct that embeds a Header
// has this method.
func (h *Header) ModelHeader() *Header { return h }

// Fitted is a fitted model of any kind: an exact or Nyström RFM (*Model),
// a tree of them (tree.Model) or an ensemble (ensemble.Model). A model
// file holds one; modelfile.Decode gives it back by the decoder its kind
// registered. Its methods are safe for concurrent use once it is built.
type Fitted interface {
	// Predict returns the raw outputs (n × Outputs, row-major) for n rows
	// of x (n × D): class scores, or standardized regression values.
	Predict(ctx context.Context, x []float64, n int) ([]float64, error)
	// Check verifies that the model is consistent and ready to predict.
	Check() error
	// ModelHeader is the shared record: task, features, outputs, config,
	// calibration (a Header embedded in the model).
	ModelHeader() *Header
	// Kind is the model kind's short name: "rfm", "tree", "ensemble".
	Kind() string
	// ToFile packs the model, with the caller's extra JSON sections, into
	// a model file (what modelfile.Decode reads back by its kind).
	modelfile.Model
}

// Optional behaviours of a Fitted model, asked for by what they do rather
// than by which kind a model is.
type (
	// Composite is a model made of RFMs (a tree's leaves, an ensemble's
	// members; an RFM is its own one part). SubModels lists them, without
	// the parts that have no model (a tree's constant leaves).
	Composite interface {
		SubModels() []*Model
	}
	// Rounded is a model that kept the score of each of its rounds.
	Rounded interface {
		Rounds() (history []Round, best int)
	}
	// Classifier is a model that gives class labels and probabilities,
	// calibrated or not (an RFM, an ensemble; a tree has no uncalibrated
	// probabilities of its own).
	Classifier interface {
		Fitted
		PredictClass(ctx context.Context, x []float64, n int) ([]int, error)
		PredictProba(ctx context.Context, x []float64, n int) ([]float64, error)
		UncalibratedProba(ctx context.Context, x []float64, n int) ([]float64, error)
	}
	// Chunked is a model that predicts best in chunks of other than the
	// default number of rows (a tree shares each chunk among its leaves).
	Chunked interface {
		ChunkRows() int
	}
	// KernelMachine is a model whose predictions are those of one kernel
	// machine (centres, M, kernel, coefficients: an exact or Nyström
	// RFM), what a format writing out the kernel machine (ONNX export)
	// can express. A tree (its routing) and an ensemble (its mean) are
	// not one.
	KernelMachine interface {
		KernelMachine() *Model
	}
)

// Kind is "rfm": an exact or Nyström RFM.
func (m *Model) Kind() string { return "rfm" }

// KernelMachine is the model itself (an RFM is one kernel machine).
func (m *Model) KernelMachine() *Model { return m }

// SubModels is the model itself (Composite).
func (m *Model) SubModels() []*Model { return []*Model{m} }

// Rounds returns the model's round history and the round it kept.
func (m *Model) Rounds() ([]Round, int) { return m.History, m.BestRound }

func init() {
	modelfile.Register(FileKind, FromFile)
}

// PackParts stores the models of a composite model (a tree's leaves, an
// ensemble's members) in f: part i's arrays under the prefix base+"i/",
// its JSON document returned in order ("null" for a nil part). It raises
// f's format version to the highest part's.
func PackParts(f *modelfile.File, base string, parts []*Model) ([]json.RawMessage, error) {
	metas := make([]json.RawMessage, len(parts))
	for i, p := range parts {
		if p == nil {
			metas[i] = json.RawMessage("null")
			continue
		}
		pf, err := p.ToFile(nil)
		if err != nil {
			return nil, fmt.Errorf("%s %d: %w", base, i, err)
		}
		f.FormatVersion = max(f.FormatVersion, pf.FormatVersion)
		metas[i] = pf.Meta
		f.Arrays = append(f.Arrays, modelfile.Prefixed(fmt.Sprintf("%s%d/", base, i), pf.Arrays)...)
	}
	return metas, nil
}

// UnpackParts is PackParts' inverse: the models of the JSON documents
// metas (nil for "null"), each with its arrays, and the arrays that belong
// to no part (an error unless others: the composite has arrays of its
// own).
func UnpackParts(f *modelfile.File, base string, metas []json.RawMessage, others bool) (parts []*Model, rest []modelfile.Array, err error) {
	byPart, rest, err := modelfile.SplitIndexed(f.Arrays, base, len(metas))
	if err != nil {
		return nil, nil, err
	}
	if len(rest) > 0 && !others {
		return nil, nil, fmt.Errorf("array %q names no %s", rest[0].Name, base)
	}
	parts = make([]*Model, len(metas))
	for i, meta := range metas {
		if string(meta) == "null" {
			continue
		}
		if parts[i], _, err = FromFile(&modelfile.File{Kind: FileKind, Meta: meta, Arrays: byPart[i]}); err != nil {
			return nil, nil, fmt.Errorf("%s %d: %w", base, i, err)
		}
	}
	return parts, rest, nil
}
