package describe

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/predictor"
)

// An Inspection is what 'rfm inspect' shows of a model file: a value that
// prints as JSON (encoding/json) and writes itself as text.
type Inspection interface {
	WriteText(w io.Writer) error
}

// InspectOptions say how much an inspection shows.
type InspectOptions struct {
	// Top is how many features ranked by diag(M) to list (0: all); Eigen
	// how many eigenvalues of M (0: all).
	Top, Eigen int
	// Plots is the folder of the figures ("" for none); ImageShape draws
	// M as images (an RFM's figures only).
	Plots      string
	ImageShape *plot.ImageShape
	// Figures draws the figures of an RFM (or an ensemble's best member)
	// into Plots and lists the files; nil for none.
	Figures func(m *predictor.Model) ([]string, error)
}

// OptionError is an inspection asked of a model kind that it cannot give
// (a figure the kind does not draw): a mistake in the options.
type OptionError struct{ Msg string }

func (e *OptionError) Error() string { return e.Msg }

// An Inspector inspects a model file whose model is of its kind.
type Inspector func(m *predictor.Model, opt InspectOptions) (Inspection, error)

var (
	inspectorsMu sync.RWMutex
	inspectors   = map[string]Inspector{}
)

// RegisterInspector makes Inspect describe models of the given kind
// (rfm.Fitted.Kind) with in, as modelfile.RegisterKind does for decoding:
// a new model kind adds its inspector, and no switch is edited. A kind
// registered twice panics.
func RegisterInspector(kind string, in Inspector) {
	inspectorsMu.Lock()
	defer inspectorsMu.Unlock()
	if _, dup := inspectors[kind]; dup || kind == "" || in == nil {
		panic("describe: inspector of kind " + strconv.Quote(kind) + " registered twice or empty")
	}
	inspectors[kind] = in
}

func init() {
	RegisterInspector("rfm", func(m *predictor.Model, opt InspectOptions) (Inspection, error) {
		return inspectRFM(m, opt, true)
	})
	RegisterInspector("tree", inspectTree)
	RegisterInspector("forest", inspectForest)
	RegisterInspector("ensemble", inspectEnsemble)
}

// Inspect describes the model file m by the inspector its kind registered.
func Inspect(m *predictor.Model, opt InspectOptions) (Inspection, error) {
	inspectorsMu.RLock()
	in := inspectors[m.Kind()]
	inspectorsMu.RUnlock()
	if in == nil {
		return nil, fmt.Errorf("%s: no description of a model of kind %q", m.Name, m.Kind())
	}
	return in(m, opt)
}

// File is what an inspection says of any model file.
type File struct {
	Model     string                  `json:"model"`
	CreatedBy string                  `json:"created_by,omitempty"`
	Training  *predictor.TrainingInfo `json:"training,omitempty"`
	Task      string                  `json:"task"`
	Target    string                  `json:"target,omitempty"`
	Classes   []string                `json:"classes,omitempty"`
	// Scaling of the numeric columns (fit's --scale), when the file has a
	// column pipeline.
	Scaling string `json:"scaling,omitempty"`
}

// NewFile describes the file of m.
func NewFile(m *predictor.Model) File {
	r := File{Model: m.Name, CreatedBy: m.CreatedBy, Training: m.Training, Task: string(m.Task())}
	if m.Target != nil {
		r.Target, r.Classes = m.Target.Name, m.Target.Classes
	}
	if m.Pipeline != nil {
		r.Scaling = string(m.Pipeline.Scaling.Name())
	}
	return r
}

// Feature is a feature ranked by diag(M).
type Feature struct {
	Rank     int     `json:"rank"`
	Name     string  `json:"name"`
	Diag     float64 `json:"diag"`     // diag(M) entry
	Relative float64 `json:"relative"` // diag / the largest diag
}

// Input is a raw input column of the pipeline.
type Input struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// RFMInspection is the inspection of one RFM ('rfm inspect --json').
type RFMInspection struct {
	File
	Inputs      []Input          `json:"inputs,omitempty"`
	Features    int              `json:"features"`
	Config      rfm.Config       `json:"config"`
	KernelUsed  kernel.Spec      `json:"kernel_used"`
	Metric      string           `json:"metric"`
	Centers     int              `json:"centers"`
	History     []rfm.Round      `json:"history"`
	Head        *rfm.Round       `json:"head,omitempty"`
	BestRound   int              `json:"best_round"`
	Refitted    bool             `json:"refitted"`
	Calibration *rfm.Calibration `json:"calibration,omitempty"`
	Selected    []string         `json:"selected_features,omitempty"`
	Note        string           `json:"note,omitempty"`
	TopFeatures []Feature        `json:"top_features"`
	Eigenvalues []float64        `json:"eigenvalues"`
	Figures     []string         `json:"figures,omitempty"`

	file   *predictor.Model
	header bool // the text starts with the file's header
}

// FeatureNames names the model's D features: the pipeline's output names
// ("age", "age:missing", "color=red"), or x0, x1, ... without a pipeline.
func FeatureNames(m *predictor.Model) []string {
	if m.Pipeline != nil {
		return m.Pipeline.FeatureNames()
	}
	names := make([]string, m.D())
	for j := range names {
		names[j] = "x" + strconv.Itoa(j)
	}
	return names
}

// rankFeatures lists the top features by diag (all when top is 0).
func rankFeatures(diag []float64, names []string, top int) []Feature {
	order := plot.Ranking(diag)
	if top == 0 || top > len(order) {
		top = len(order)
	}
	largest := 0.0
	if len(order) > 0 {
		largest = diag[order[0]]
	}
	out := make([]Feature, 0, top)
	for r, j := range order[:top] {
		rel := 0.0
		if largest > 0 {
			rel = diag[j] / largest
		}
		out = append(out, Feature{Rank: r + 1, Name: names[j], Diag: diag[j], Relative: rel})
	}
	return out
}

// inspectRFM inspects the RFM of m; header says whether its text starts
// with the file's header.
func inspectRFM(lm *predictor.Model, opt InspectOptions, header bool) (*RFMInspection, error) {
	m := lm.Fitted.(rfm.KernelMachine).KernelMachine()
	res := &RFMInspection{
		File: NewFile(lm), Features: m.D,
		Config: m.Config, KernelUsed: m.KernelUsed, Metric: string(m.M.Form), Centers: m.N,
		History: m.History, Head: m.Head, BestRound: m.BestRound, Refitted: m.Refitted, Note: m.Note,
		Calibration: m.Calibration, file: lm, header: header,
	}
	names := FeatureNames(lm)
	if lm.Pipeline != nil {
		for _, in := range lm.Pipeline.Inputs {
			res.Inputs = append(res.Inputs, Input{Name: in.Name, Kind: in.Kind.String()})
		}
	}
	for _, j := range m.Selected {
		res.Selected = append(res.Selected, names[j])
	}
	res.TopFeatures = rankFeatures(m.FeatureDiagonal(), names, opt.Top)

	dm := m.Dm()
	var values []float64
	if m.M.Form == kernel.Full {
		v, _, err := kernel.EigSym(dm, m.FeatureMatrix())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lm.Name, err)
		}
		values = v
	} else {
		fm := m.FeatureMatrix()
		for i := 0; i < dm; i++ {
			values = append(values, fm[i*dm+i])
		}
		slices.Sort(values)
	}
	slices.Reverse(values)
	eig := opt.Eigen
	if eig == 0 || eig > len(values) {
		eig = len(values)
	}
	res.Eigenvalues = values[:eig]
	if opt.Plots != "" && opt.Figures != nil {
		figs, err := opt.Figures(lm)
		if err != nil {
			return nil, err
		}
		res.Figures = figs
	}
	return res, nil
}

// writeFileHeader prints where a model file came from: its path and
// writer, its training data and validation, its target.
func writeFileHeader(tw io.Writer, lm *predictor.Model) {
	fmt.Fprintf(tw, "model\t%s", lm.Name)
	if lm.CreatedBy != "" {
		fmt.Fprintf(tw, " (written by %s)", lm.CreatedBy)
	}
	fmt.Fprint(tw, "\n")
	if lm.Training != nil {
		fmt.Fprintf(tw, "trained on\t%s, %d rows\n", lm.Training.Data, lm.Training.Rows)
		fmt.Fprintf(tw, "validation\t%s\n", lm.Training.Validation)
	}
	if lm.Target != nil {
		fmt.Fprintf(tw, "target\t%s\n", Target(lm.Target))
	}
	if lm.Pipeline != nil && !lm.Pipeline.Scaling.IsStandard() {
		fmt.Fprintf(tw, "scaling\tnumeric columns: %s (--scale)\n", lm.Pipeline.Scaling)
	}
}

// fileHeader starts a table in b with the file's header (writeFileHeader).
func fileHeader(b *strings.Builder, lm *predictor.Model) *tabwriter.Writer {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	writeFileHeader(tw, lm)
	return tw
}

// WriteText prints the inspection of an RFM.
func (r *RFMInspection) WriteText(w io.Writer) error {
	var b strings.Builder
	lm := r.file
	m := lm.Fitted.(rfm.KernelMachine).KernelMachine()
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if r.header {
		writeFileHeader(tw, lm)
	}
	if lm.Target != nil {
		fmt.Fprintf(tw, "inputs\t%d columns → %d features\n", len(r.Inputs), r.Features)
	} else {
		fmt.Fprintf(tw, "task\t%s, %d outputs, %d features (no column pipeline in the file)\n", r.Task, m.Outputs, r.Features)
	}
	fmt.Fprintf(tw, "config\t%s\n", Config(r.Config))
	fmt.Fprintf(tw, "\tseed %d, validation fraction %g, selection %s, refit %v\n", r.Config.Seed, r.Config.ValFraction, selectionName(r.Config, m.Task), r.Config.Refit)
	fmt.Fprintf(tw, "kernel used\t%s\n", r.KernelUsed)
	metric := map[string]string{"identity": "identity (the plain kernel)", "diagonal": "diagonal", "full": "full"}[r.Metric]
	fmt.Fprintf(tw, "metric M\t%s, %d×%d, from round %d\n", metric, m.Dm(), m.Dm(), r.BestRound)
	fmt.Fprintf(tw, "centres\t%d", r.Centers)
	if r.Refitted {
		fmt.Fprint(tw, " (α refitted on training + validation rows)")
	}
	fmt.Fprint(tw, "\n")
	if cal := r.Calibration; cal != nil {
		fmt.Fprintf(tw, "probabilities\t%s\n", Calibration(cal))
	}
	if len(r.Selected) > 0 {
		fmt.Fprintf(tw, "RFM-T kept\t%d of %d features: %s\n", len(r.Selected), r.Features, JoinLimited(r.Selected, 12))
	}
	tw.Flush()
	if r.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", r.Note)
	}

	validated := r.Training == nil || !strings.HasPrefix(r.Training.Validation, "none")
	b.WriteString("\nRounds (* = kept):\n")
	WriteHistory(&b, r.History, r.BestRound, m.Task, validated)
	b.WriteString(Best(m, validated))

	fmt.Fprintf(&b, "\nFeatures by diag(M) (top %d of %d):\n", len(r.TopFeatures), r.Features)
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "rank\tfeature\tdiag(M)\trelative\n")
	for _, ft := range r.TopFeatures {
		fmt.Fprintf(tw, "%d\t%s\t%.4g\t%.3f\n", ft.Rank, ft.Name, ft.Diag, ft.Relative)
	}
	tw.Flush()

	trace := 0.0
	fm := m.FeatureMatrix()
	for i := 0; i < m.Dm(); i++ {
		trace += fm[i*m.Dm()+i]
	}
	fmt.Fprintf(&b, "\nTop eigenvalues of M (%d of %d; share = eigenvalue / trace):\n", len(r.Eigenvalues), m.Dm())
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "k\teigenvalue\tshare\n")
	for k, v := range r.Eigenvalues {
		share := 0.0
		if trace > 0 {
			share = v / trace
		}
		fmt.Fprintf(tw, "%d\t%.4g\t%.3f\n", k+1, v, share)
	}
	tw.Flush()
	if len(r.Figures) > 0 {
		fmt.Fprintf(&b, "\nFigures:\n")
		for _, f := range r.Figures {
			fmt.Fprintf(&b, "  %s\n", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func selectionName(c rfm.Config, task rfm.Task) string {
	if c.Selection != "" {
		return string(c.Selection)
	}
	if task == rfm.Classification {
		return "accuracy"
	}
	return "loss"
}

// Calibration says how a classifier's scores become probabilities.
func Calibration(cal *rfm.Calibration) string {
	var what string
	switch cal.Method {
	case rfm.CalibrateTemperature:
		if cal.Rows == 0 && cal.Temperature == 1 {
			return "softmax of the logistic head's logits (not calibrated)"
		}
		what = fmt.Sprintf("temperature scaling, T = %.4g", cal.Temperature)
	case rfm.CalibratePower:
		what = fmt.Sprintf("power calibration, β = %.4g", cal.Power)
	case rfm.CalibrateIsotonic:
		what = "isotonic calibration"
	default:
		what = string(cal.Method)
	}
	return fmt.Sprintf("%s, fitted on %d rows: log-loss %.4g → %.4g", what, cal.Rows, cal.LogLossBefore, cal.LogLossAfter)
}
