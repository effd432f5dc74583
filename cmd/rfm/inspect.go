package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/tree"
)

type featureJSON struct {
	Rank     int     `json:"rank"`
	Name     string  `json:"name"`
	Diag     float64 `json:"diag"`     // diag(M) entry
	Relative float64 `json:"relative"` // diag / the largest diag
}

type inputJSON struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// fileJSON is what 'rfm inspect --json' says of any model file.
type fileJSON struct {
	Model     string        `json:"model"`
	CreatedBy string        `json:"created_by,omitempty"`
	Training  *trainingInfo `json:"training,omitempty"`
	Task      string        `json:"task"`
	Target    string        `json:"target,omitempty"`
	Classes   []string      `json:"classes,omitempty"`
	// Scaling of the numeric columns (fit's --scale), when the file has a
	// column pipeline.
	Scaling string `json:"scaling,omitempty"`
}

func newFileJSON(lm *loadedModel) fileJSON {
	r := fileJSON{Model: lm.Name, CreatedBy: lm.CreatedBy, Training: lm.Training, Task: string(lm.Task())}
	if lm.Target != nil {
		r.Target, r.Classes = lm.Target.Name, lm.Target.Classes
	}
	if lm.Pipeline != nil {
		r.Scaling = string(lm.Pipeline.Scaling.Name())
	}
	return r
}

// inspectJSON is what 'rfm inspect --json' prints.
type inspectJSON struct {
	fileJSON
	Inputs      []inputJSON      `json:"inputs,omitempty"`
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
	TopFeatures []featureJSON    `json:"top_features"`
	Eigenvalues []float64        `json:"eigenvalues"`
	Figures     []string         `json:"figures,omitempty"`
}

func cmdInspect(e *env, args []string) error {
	var (
		model      string
		top, eig   int
		plots      string
		imageShape string
		common     commonFlags
	)
	f := newFlagSet("inspect", "rfm inspect --model FILE [flags]",
		`Show what a model file holds: its hyperparameters, the per-round validation
history with the chosen round, the features ranked by the diagonal of the
learned feature matrix M (named after the input columns: "age",
"age:missing", "color=red"), and the top eigenvalues of M. A few large
eigenvalues mean the model found a low-dimensional set of directions.`,
		`rfm inspect --model churn.rfm
rfm inspect --model churn.rfm --top-features 0 --json
rfm inspect --model digits.rfm --plots figs --image-shape 28x28`)
	f.positional = "model"
	f.String(&model, "model", "", "model `FILE` written by 'rfm fit'")
	f.Int(&top, "top-features", 20, "show the `K` features with the largest diag(M) (0 = all)")
	f.Int(&eig, "top-eigen", 10, "show the `K` largest eigenvalues of M (0 = all)")
	f.Section("Figures")
	f.String(&plots, "plots", "", "write PNG figures into `DIR`: diag(M) bars, eigenvalue spectrum, top eigenvectors, validation curve")
	f.String(&imageShape, "image-shape", "", "with --plots, also draw diag(M) and the top eigenvectors as `HxW[xC]` images (inputs are pixels)")
	f.Section("Output")
	f.Bool(&common.json, "json", false, "print the result as JSON on stdout")
	if err := f.ParsePositional(args, e.stdout, &model); err != nil {
		return err
	}
	var shape *imageDims
	if imageShape != "" {
		if plots == "" {
			return usagef("--image-shape needs --plots DIR")
		}
		sh, err := parseImageShape(imageShape)
		if err != nil {
			return err
		}
		shape = sh
	}
	if top < 0 {
		return usagef("--top-features %d: must be ≥ 0 (0 = all)", top)
	}
	if eig < 0 {
		return usagef("--top-eigen %d: must be ≥ 0 (0 = all)", eig)
	}
	lm, err := loadModel(model, false)
	if err != nil {
		return err
	}
	// inspect prints what each kind holds: its own report.
	switch fm := lm.Fitted.(type) {
	case *tree.Model:
		return inspectTree(e, lm, fm, top, plots, shape, common)
	case *tree.Forest:
		// A forest's trees share the configuration: the first one stands
		// for them.
		if !common.json {
			fmt.Fprintf(e.stdout, "forest of %d trees (the mean of their outputs); the first tree:\n\n", len(fm.Trees))
		}
		return inspectTree(e, lm, fm.Trees[0], top, plots, shape, common)
	case *ensemble.Model:
		return inspectEnsemble(e, lm, fm, top, eig, plots, shape, common)
	}
	res, err := inspectModel(lm, top, eig)
	if err != nil {
		return err
	}
	if plots != "" {
		figs, err := writeFigures(plots, lm, featureNames(lm), top, shape)
		if err != nil {
			return err
		}
		res.Figures = figs
	}
	if common.json {
		return writeJSON(e.stdout, res)
	}
	return writeInspectText(e.stdout, res, lm, true)
}

// rfmModel is the RFM of a model file that holds one (inspect's and its
// figures' subject).
func rfmModel(lm *loadedModel) *rfm.Model { return lm.Fitted.(rfm.KernelMachine).KernelMachine() }

func inspectModel(lm *loadedModel, top, eig int) (*inspectJSON, error) {
	m := rfmModel(lm)
	res := &inspectJSON{
		fileJSON: newFileJSON(lm), Features: m.D,
		Config: m.Config, KernelUsed: m.KernelUsed, Metric: string(m.M.Form), Centers: m.N,
		History: m.History, Head: m.Head, BestRound: m.BestRound, Refitted: m.Refitted, Note: m.Note,
		Calibration: m.Calibration,
	}
	names := featureNames(lm)
	if lm.Pipeline != nil {
		for _, in := range lm.Pipeline.Inputs {
			res.Inputs = append(res.Inputs, inputJSON{Name: in.Name, Kind: in.Kind.String()})
		}
	}
	for _, j := range m.Selected {
		res.Selected = append(res.Selected, names[j])
	}

	diag := m.FeatureDiagonal()
	order := rankOrder(diag)
	largest := 0.0
	if len(order) > 0 {
		largest = diag[order[0]]
	}
	if top == 0 || top > len(order) {
		top = len(order)
	}
	res.TopFeatures = make([]featureJSON, 0, top)
	for r, j := range order[:top] {
		rel := 0.0
		if largest > 0 {
			rel = diag[j] / largest
		}
		res.TopFeatures = append(res.TopFeatures, featureJSON{Rank: r + 1, Name: names[j], Diag: diag[j], Relative: rel})
	}

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
	if eig == 0 || eig > len(values) {
		eig = len(values)
	}
	res.Eigenvalues = values[:eig]
	return res, nil
}

// featureNames names the model's D features: the pipeline's output names
// ("age", "age:missing", "color=red"), or x0, x1, ... without a pipeline.
func featureNames(lm *loadedModel) []string {
	if lm.Pipeline != nil {
		return lm.Pipeline.FeatureNames()
	}
	names := make([]string, lm.D())
	for j := range names {
		names[j] = "x" + strconv.Itoa(j)
	}
	return names
}

// writeFileHeader prints where a model file came from: its path and
// writer, its training data and validation, its target.
func writeFileHeader(tw io.Writer, lm *loadedModel) {
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
		fmt.Fprintf(tw, "target\t%s\n", describeTarget(lm.Target))
	}
	if lm.Pipeline != nil && !lm.Pipeline.Scaling.IsStandard() {
		fmt.Fprintf(tw, "scaling\tnumeric columns: %s (--scale)\n", lm.Pipeline.Scaling)
	}
}

func writeInspectText(w io.Writer, r *inspectJSON, lm *loadedModel, header bool) error {
	var b strings.Builder
	m := rfmModel(lm)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if header {
		writeFileHeader(tw, lm)
	}
	if lm.Target != nil {
		fmt.Fprintf(tw, "inputs\t%d columns → %d features\n", len(r.Inputs), r.Features)
	} else {
		fmt.Fprintf(tw, "task\t%s, %d outputs, %d features (no column pipeline in the file)\n", r.Task, m.Outputs, r.Features)
	}
	fmt.Fprintf(tw, "config\t%s\n", describeConfig(r.Config))
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
		fmt.Fprintf(tw, "probabilities\t%s\n", describeCalibration(cal))
	}
	if len(r.Selected) > 0 {
		fmt.Fprintf(tw, "RFM-T kept\t%d of %d features: %s\n", len(r.Selected), r.Features, joinLimited(r.Selected, 12))
	}
	tw.Flush()
	if r.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", r.Note)
	}

	validated := r.Training == nil || !strings.HasPrefix(r.Training.Validation, "none")
	b.WriteString("\nRounds (* = kept):\n")
	writeHistory(&b, r.History, r.BestRound, m.Task, validated)
	b.WriteString(describeBest(m, validated))

	fmt.Fprintf(&b, "\nFeatures by diag(M) (top %d of %d):\n", len(r.TopFeatures), r.Features)
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "rank\tfeature\tdiag(M)\trelative\n")
	for _, ft := range r.TopFeatures {
		fmt.Fprintf(tw, "%d\t%s\t%.4g\t%.3f\n", ft.Rank, ft.Name, ft.Diag, ft.Relative)
	}
	tw.Flush()

	total := 0.0
	for _, v := range r.Eigenvalues {
		total += v
	}
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

// describeCalibration says how a classifier's scores become probabilities.
func describeCalibration(cal *rfm.Calibration) string {
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
