package onnx

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/predictor"
)

// Opset versions the graph declares: ai.onnx 17 and ai.onnx.ml 3 (IR
// version 8), which ONNX Runtime and onnx 1.12's checker both know.
const (
	IRVersion = 8
	Opset     = 17
	OpsetML   = 3
)

// Graph input and output names.
const (
	InputNumeric     = "numeric"     // double [N, numeric inputs], NaN for missing
	InputCategorical = "categorical" // string [N, categorical inputs], "" for missing
	OutputPrediction = "prediction"  // string labels [N] (classifier) or double values [N]
	OutputProba      = "probabilities"
	OutputScores     = "scores"
)

// Layout says how the graph's inputs map to the model's columns.
type Layout struct {
	Numeric     []string // the columns of the "numeric" input, in order
	Categorical []string // the columns of the "categorical" input
	Classes     []string // a classifier's labels, the columns of probabilities
}

// ErrUnsupported is wrapped by Export for models it cannot express.
var ErrUnsupported = errors.New("cannot be exported to ONNX")

// unsupportedKinds says why a model kind that is not one kernel machine
// (rfm.KernelMachine) does not export (a format with one %w for
// ErrUnsupported); a kind not listed gets a general reason.
var unsupportedKinds = map[string]string{
	"tree":     "a tree of RFMs %w (its routing of rows to leaves is not expressed); export an exact or Nyström model",
	"ensemble": "an ensemble of RFMs %w; export one RFM (rfm tune without --ensemble)",
}

// Export builds an ONNX model computing m's predictions from raw columns:
// numeric columns as one double tensor (NaN where missing), categorical
// ones as one string tensor ("" where missing; cells as the pipeline saw
// them, trimmed of surrounding spaces). The graph scales the numbers and
// fills missing ones as the pipeline does, one-hot encodes the categories
// (an unseen level encodes as zeros), maps the rows by M^½, evaluates the
// kernel against the mapped centres and applies the coefficients, then the
// target's scaling (regression) or the argmax label and the calibrated
// probabilities (classification). Everything is in float64.
//
// Exact and Nyström RFMs with the laplace, gen-laplace, gaussian and
// lp-laplace kernels export; a tree (its routing), the ntk and nngp
// kernels, ensembles and isotonic calibration do not (ErrUnsupported, with
// why).
func Export(m *predictor.Model) ([]byte, *Layout, error) {
	if err := m.NeedPipeline(); err != nil {
		return nil, nil, err
	}
	km, ok := m.Fitted.(rfm.KernelMachine)
	if !ok {
		why, known := unsupportedKinds[m.Kind()]
		if !known {
			why = "a " + m.Kind() + " model %w; export an exact or Nyström model"
		}
		return nil, nil, fmt.Errorf("%s: "+why, m.Name, ErrUnsupported)
	}
	rm := km.KernelMachine()
	spec := rm.KernelUsed
	switch spec.Kind {
	case kernel.Laplace, kernel.GenLaplace, kernel.Gaussian, kernel.LpLaplace:
	default:
		return nil, nil, fmt.Errorf("%s: the %s kernel %w; the radial kernels (laplace, gen-laplace, gaussian, lp-laplace) do", m.Name, spec.Kind, ErrUnsupported)
	}
	if cal := rm.Calibration; cal != nil && cal.Method == rfm.CalibrateIsotonic {
		return nil, nil, fmt.Errorf("%s: isotonic calibration %w; refit with --calibrate temperature (or none)", m.Name, ErrUnsupported)
	}
	b := &builder{}
	lay := &Layout{}
	x, err := b.features(m.Pipeline, lay)
	if err != nil {
		return nil, nil, err
	}
	scores, err := b.model(rm, x)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	g := &graph{name: "rfm"}
	if len(lay.Numeric) > 0 {
		g.inputs = append(g.inputs, valueInfo{name: InputNumeric, dtype: typeDouble, dims: []int{-1, len(lay.Numeric)},
			doc: "numeric columns in order: " + quoteAll(lay.Numeric) + "; NaN for a missing value"})
	}
	if len(lay.Categorical) > 0 {
		g.inputs = append(g.inputs, valueInfo{name: InputCategorical, dtype: typeString, dims: []int{-1, len(lay.Categorical)},
			doc: "categorical columns in order: " + quoteAll(lay.Categorical) + "; \"\" for a missing value"})
	}
	c := rm.Outputs
	if rm.Task == rfm.Regression {
		if c != 1 {
			return nil, nil, fmt.Errorf("%s: a regression with %d outputs %w", m.Name, c, ErrUnsupported)
		}
		v := b.op("Mul", scores, b.f64("y_std", []int{c}, orOnes(rm.YStd, c)))
		v = b.op("Add", v, b.f64("y_mean", []int{c}, orZeros(rm.YMean, c)))
		v = b.op("Mul", v, b.f64("target_std", nil, []float64{m.Target.Std}))
		v = b.op("Add", v, b.f64("target_mean", nil, []float64{m.Target.Mean}))
		b.opTo("Squeeze", OutputPrediction, nil, v, b.i64("axis_1", []int{1}, []int64{1}))
		g.outputs = append(g.outputs, valueInfo{name: OutputPrediction, dtype: typeDouble, dims: []int{-1}, doc: "the predicted " + strconv.Quote(m.Target.Name)})
	} else {
		lay.Classes = m.Classes()
		idx := b.op("ArgMax", []attr{intAttr("axis", 1), intAttr("keepdims", 0), intAttr("select_last_index", 0)}, scores)
		b.opTo("Gather", OutputPrediction, []attr{intAttr("axis", 0)}, b.str("classes", []int{c}, lay.Classes), idx)
		p := scores
		// clipped: the scores clipped to [ProbEps, 1−ProbEps], each row
		// renormalized (rfm.Probabilities); name "" lets the builder name it.
		clipped := func(name string, v string) string {
			v = b.op("Clip", v, b.f64("prob_min", nil, []float64{rfm.ProbEps}), b.f64("prob_max", nil, []float64{1 - rfm.ProbEps}))
			sum := b.op("ReduceSum", []attr{intAttr("keepdims", 1)}, v, b.i64("axis_1", []int{1}, []int64{1}))
			if name == "" {
				return b.op("Div", v, sum)
			}
			b.opTo("Div", name, nil, v, sum)
			return name
		}
		if cal := rm.Calibration; cal != nil {
			switch cal.Method {
			case rfm.CalibrateTemperature:
				p = b.op("Mul", p, b.f64("inverse_temperature", nil, []float64{1 / cal.Temperature}))
				p = b.op("Softmax", []attr{intAttr("axis", 1)}, p)
			case rfm.CalibratePower:
				if cal.Power == 1 { // the model as fitted: the clip below
					break
				}
				p = b.op("Log", clipped("", p))
				p = b.op("Mul", p, b.f64("power", nil, []float64{cal.Power}))
				p = b.op("Softmax", []attr{intAttr("axis", 1)}, p)
			}
		}
		clipped(OutputProba, p)
		b.opTo("Identity", OutputScores, nil, scores)
		g.outputs = append(g.outputs,
			valueInfo{name: OutputPrediction, dtype: typeString, dims: []int{-1}, doc: "the predicted class of " + strconv.Quote(m.Target.Name)},
			valueInfo{name: OutputProba, dtype: typeDouble, dims: []int{-1, c}, doc: "class probabilities, columns " + quoteAll(lay.Classes)},
			valueInfo{name: OutputScores, dtype: typeDouble, dims: []int{-1, c}, doc: "raw class scores (the argmax is the prediction)"})
	}
	g.nodes, g.inits = b.nodes, b.inits
	meta := map[string]string{"rfm_checksum": m.Checksum, "rfm_task": string(rm.Task), "rfm_kernel": spec.String()}
	doc := fmt.Sprintf("RFM %s exported from %s (checksum %s)", rm.Task, m.Name, m.Checksum)
	return g.model(doc, meta), lay, nil
}

// features builds the design matrix X [N, D] from the raw inputs, as
// dataset.Pipeline.Transform computes it.
func (b *builder) features(p *dataset.Pipeline, lay *Layout) (string, error) {
	var mean, std, miss []float64
	for _, in := range p.Inputs {
		if in.Kind == dataset.Numeric {
			lay.Numeric = append(lay.Numeric, in.Name)
			mean, std = append(mean, in.Mean), append(std, in.Std)
			v := 0.0 // the mean, scaled
			if in.Fill != nil {
				v = (*in.Fill - in.Mean) / in.Std
			}
			miss = append(miss, v)
		} else {
			lay.Categorical = append(lay.Categorical, in.Name)
		}
	}
	// Blocks concatenated along the columns, then gathered into the
	// pipeline's feature order.
	var blocks []string
	width := 0
	var filledAt, indAt int
	nNum := len(lay.Numeric)
	if nNum > 0 {
		k := []int{nNum}
		isnan := b.op("IsNaN", nil, InputNumeric)
		scaled := b.op("Div", b.op("Sub", InputNumeric, b.f64("num_center", k, mean)), b.f64("num_scale", k, std))
		filled := b.op("Where", isnan, b.f64("num_missing", k, miss), scaled)
		ind := b.op("Cast", []attr{intAttr("to", typeDouble)}, isnan)
		blocks = append(blocks, filled, ind)
		filledAt, indAt, width = 0, nNum, 2*nNum
	}
	var perm []int64
	jn, jc := 0, 0
	for _, in := range p.Inputs {
		if in.Kind == dataset.Numeric {
			perm = append(perm, int64(filledAt+jn))
			if in.MissingIndicator {
				perm = append(perm, int64(indAt+jn))
			}
			jn++
			continue
		}
		keys := append([]string(nil), in.Levels...)
		if in.HasMissingLevel {
			keys = append(keys, "")
		}
		if len(keys) > 0 {
			col := b.op("Slice", InputCategorical, b.i64("", []int{1}, []int64{int64(jc)}), b.i64("", []int{1}, []int64{int64(jc + 1)}), b.i64("axis_1", []int{1}, []int64{1}))
			vals, rng := make([]int64, len(keys)), make([]int64, len(keys))
			for i := range vals {
				vals[i], rng[i] = int64(i), int64(i)
			}
			code := b.opDomain("LabelEncoder", "ai.onnx.ml", []attr{{name: "keys_strings", kind: attrStrings, strings: keys},
				{name: "values_int64s", kind: attrInts, ints: vals}, intAttr("default_int64", -1)}, col)
			hot := b.op("Cast", []attr{intAttr("to", typeDouble)}, b.op("Equal", code, b.i64("", []int{len(keys)}, rng)))
			blocks = append(blocks, hot)
			for i := range keys {
				perm = append(perm, int64(width+i))
			}
			width += len(keys)
		}
		jc++
	}
	if len(perm) != p.Width() {
		return "", fmt.Errorf("onnx: %d features built for a pipeline of %d", len(perm), p.Width())
	}
	all := blocks[0]
	if len(blocks) > 1 {
		all = b.add("Concat", "", []attr{intAttr("axis", 1)}, blocks)
	}
	return b.op("Gather", []attr{intAttr("axis", 1)}, all, b.i64("feature_order", []int{len(perm)}, perm)), nil
}

// model applies the RFM to the design matrix x: scores [N, outputs].
func (b *builder) model(m *rfm.Model, x string) (string, error) {
	if m.Config.NormalizeRows {
		sq := b.op("ReduceSum", []attr{intAttr("keepdims", 1)}, b.op("Mul", x, x), b.i64("axis_1", []int{1}, []int64{1}))
		zero := b.op("Equal", sq, b.f64("zero", nil, []float64{0}))
		one := b.f64("one", nil, []float64{1})
		inv := b.op("Div", one, b.op("Where", zero, one, b.op("Sqrt", sq)))
		x = b.op("Mul", x, inv)
	}
	if m.Selected != nil {
		sel := make([]int64, len(m.Selected))
		for i, c := range m.Selected {
			sel[i] = int64(c)
		}
		x = b.op("Gather", []attr{intAttr("axis", 1)}, x, b.i64("selected", []int{len(sel)}, sel))
	}
	dm := m.Dm()
	mt := m.M
	if mt.IsIdentity() && mt.D == 0 {
		mt = kernel.IdentityMatrix(dm)
	}
	fm, err := kernel.NewFeatureMap(mt, m.Shift)
	if err != nil {
		return "", err
	}
	if m.Shift != nil {
		x = b.op("Sub", x, b.f64("shift", []int{dm}, m.Shift))
	}
	switch root := fm.Root(); {
	case root == nil:
	case len(root) == dm && mt.Form == kernel.Diagonal:
		x = b.op("Mul", x, b.f64("m_root", []int{dm}, root))
	default:
		x = b.op("MatMul", x, b.f64("m_root", []int{dm, dm}, root))
	}
	centers := fm.Map(m.Centers, m.N).Z[:m.N*dm]
	nc := m.N
	spec := m.KernelUsed
	L := spec.Bandwidth
	var k string
	if spec.Kind == kernel.LpLaplace {
		// Σ_i |z_i − c_i|^p over a [N, centres, dm] difference.
		z3 := b.op("Unsqueeze", x, b.i64("axis_1", []int{1}, []int64{1}))
		diff := b.op("Sub", z3, b.f64("centers_3d", []int{1, nc, dm}, centers))
		s := b.op("Pow", b.op("Abs", diff), b.f64("p", nil, []float64{spec.Power}))
		s = b.op("ReduceSum", []attr{intAttr("keepdims", 0)}, s, b.i64("axis_2", []int{1}, []int64{2}))
		s = b.op("Pow", s, b.f64("q_over_p", nil, []float64{spec.Exponent / spec.Power}))
		k = b.op("Exp", b.op("Mul", s, b.f64("minus_inv_lq", nil, []float64{-1 / pow(L, spec.Exponent)})))
	} else {
		// ‖z − c‖² = ‖z‖² + ‖c‖² − 2 z·c, clipped at 0 against rounding.
		ct := make([]float64, dm*nc)
		cn := make([]float64, nc)
		for i := 0; i < nc; i++ {
			for j := 0; j < dm; j++ {
				v := centers[i*dm+j]
				ct[j*nc+i] = v
				cn[i] += v * v
			}
		}
		zz := b.op("ReduceSum", []attr{intAttr("keepdims", 1)}, b.op("Mul", x, x), b.i64("axis_1", []int{1}, []int64{1}))
		zc := b.op("MatMul", x, b.f64("centers_t", []int{dm, nc}, ct))
		d2 := b.op("Sub", b.op("Add", zz, b.f64("center_norms", []int{nc}, cn)), b.op("Mul", zc, b.f64("two", nil, []float64{2})))
		d2 = b.op("Max", d2, b.f64("zero", nil, []float64{0}))
		switch spec.Kind {
		case kernel.Laplace:
			k = b.op("Exp", b.op("Mul", b.op("Sqrt", d2), b.f64("minus_inv_l", nil, []float64{-1 / L})))
		case kernel.Gaussian:
			k = b.op("Exp", b.op("Mul", d2, b.f64("minus_inv_2l2", nil, []float64{-1 / (2 * L * L)})))
		case kernel.GenLaplace:
			s := b.op("Pow", d2, b.f64("half_q", nil, []float64{spec.Exponent / 2}))
			k = b.op("Exp", b.op("Mul", s, b.f64("minus_inv_lq", nil, []float64{-1 / pow(L, spec.Exponent)})))
		}
	}
	return b.op("MatMul", k, b.f64("alpha", []int{nc, m.Outputs}, m.Alpha)), nil
}

func orOnes(v []float64, n int) []float64 {
	if v != nil {
		return v
	}
	out := make([]float64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

func orZeros(v []float64, n int) []float64 {
	if v != nil {
		return v
	}
	return make([]float64, n)
}

func quoteAll(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(n)
	}
	return out
}
