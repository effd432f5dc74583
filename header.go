package rfm

import (
	"context"
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

// MeanOutputs is the mean of k sub-models' outputs (a forest's trees, an
// ensemble's members), output(i) giving sub-model i's: the first's slice,
// summed into in order and divided by k (for k = 1 the outputs themselves,
// bit for bit). An error from sub-model i > 0 is wrapped with noun and i.
func MeanOutputs(k int, noun string, output func(i int) ([]float64, error)) ([]float64, error) {
	sum, err := output(0)
	if err != nil || k == 1 {
		return sum, err
	}
	for i := 1; i < k; i++ {
		y, err := output(i)
		if err != nil {
			return nil, fmt.Errorf("%s %d: %w", noun, i, err)
		}
		for j, v := range y {
			sum[j] += v
		}
	}
	kf := float64(k)
	for j := range sum {
		sum[j] /= kf
	}
	return sum, nil
}
