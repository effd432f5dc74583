package dataset

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MissingLevel is the feature-name suffix of the one-hot slot for missing
// categorical cells ("color=<missing>").
const MissingLevel = "<missing>"

// Pipeline maps input columns to the float64 design matrix. It is fitted on
// training rows only and stored, as JSON, inside model files; all of its
// state is in exported fields.
//
// Numeric input: missing cells take the training mean; if the training rows
// had missing cells, an extra 0/1 indicator feature ("age:missing") follows;
// the value is then scaled by the pipeline's Scaling: by default
// standardized with the training mean and population standard deviation (1
// for a constant column).
//
// Categorical input: one-hot over the training levels in sorted order, plus
// a "<missing>" slot when training had missing cells. A level not seen in
// training (or a missing cell when training had none) encodes as all zeros.
type Pipeline struct {
	Inputs []InputColumn `json:"inputs"`
	// Scaling is how numeric columns were scaled ("" is ScaleStandard,
	// as in files written before it existed).
	Scaling Scaling `json:"scaling,omitempty"`
	// Read settings of the training file, reused for prediction files.
	MissingTokens []string `json:"missing_tokens,omitempty"`
	NoHeader      bool     `json:"no_header,omitempty"`
}

// InputColumn is the fitted state of one input column.
type InputColumn struct {
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Numeric: the column's feature is (v − Mean)/Std. With the default
	// scaling these are the mean and population standard deviation of the
	// non-missing training values (Std 1 for a constant column); other
	// scalings store their centre and scale here (see Scaling), so that a
	// reader that knows only standardization still computes the feature.
	Mean float64 `json:"mean,omitempty"`
	Std  float64 `json:"std,omitempty"`
	// Fill is the value a missing cell takes before scaling, the training
	// mean, when it is not Mean (scalings other than standard).
	Fill *float64 `json:"fill,omitempty"`
	// Numeric: training had missing cells, so an indicator feature follows.
	MissingIndicator bool `json:"missing_indicator,omitempty"`
	// Categorical: sorted distinct training values.
	Levels []string `json:"levels,omitempty"`
	// Categorical: training had missing cells, so a "<missing>" slot follows
	// the levels.
	HasMissingLevel bool `json:"has_missing_level,omitempty"`
}

// width is the number of features the column produces.
func (in *InputColumn) width() int {
	if in.Kind == Numeric {
		if in.MissingIndicator {
			return 2
		}
		return 1
	}
	w := len(in.Levels)
	if in.HasMissingLevel {
		w++
	}
	return w
}

// FitPipeline fits a pipeline on the given feature columns of t (the
// training rows), standardizing numeric columns. The target column must not
// be among features.
func FitPipeline(t *Table, features []string) (*Pipeline, error) {
	return FitPipelineScaled(t, features, ScaleStandard)
}

// FitPipelineScaled is FitPipeline with the given scaling of numeric
// columns ("" is ScaleStandard).
func FitPipelineScaled(t *Table, features []string, scaling Scaling) (*Pipeline, error) {
	if err := scaling.Check(); err != nil {
		return nil, err
	}
	if len(features) == 0 {
		return nil, errors.New("dataset: no feature columns given")
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	n := t.NRows()
	if n == 0 {
		return nil, fmt.Errorf("%s: no rows to fit the pipeline on", t.name())
	}
	p := &Pipeline{MissingTokens: t.missingTokens, NoHeader: t.noHeader}
	if !scaling.IsStandard() {
		p.Scaling = scaling
	}
	seen := map[string]bool{}
	for _, name := range features {
		if seen[name] {
			return nil, fmt.Errorf("dataset: feature column %q is listed twice", name)
		}
		seen[name] = true
		c, ok := t.Column(name)
		if !ok {
			return nil, fmt.Errorf("%s: feature column %q not found; the columns are %s", t.name(), name, listNames(t.Names()))
		}
		in := InputColumn{Name: name, Kind: c.Kind}
		if c.Kind == Numeric {
			vals := make([]float64, 0, n)
			extreme := -1 // row of the largest |value|, for messages
			for i, v := range c.Num {
				if c.IsMissing(i) {
					continue
				}
				if math.IsInf(v, 0) {
					return nil, c.cellError(i, "value is %v; only finite values are allowed", v)
				}
				if extreme < 0 || math.Abs(v) > math.Abs(c.Num[extreme]) {
					extreme = i
				}
				vals = append(vals, v)
			}
			cnt := len(vals)
			if cnt == 0 {
				return nil, fmt.Errorf("%s: feature column %q has no values in the training rows (all missing); leave it out", t.name(), name)
			}
			mean, std, ok := scaledMoments(vals)
			if !ok {
				return nil, c.cellError(extreme, "value %g: the column's spread overflows float64 when standardized; rescale the column", c.Num[extreme])
			}
			// Rounding leaves a tiny std on constant columns such as all 0.1;
			// dividing by it would blow noise up to unit scale.
			if !(std > 1e-12*math.Max(math.Abs(mean), math.SmallestNonzeroFloat64)) {
				std = 1
			}
			in.Mean, in.Std, in.MissingIndicator = mean, std, cnt < n
			if !scaling.IsStandard() {
				center, scale := scaling.affine(vals, mean, std)
				if center != mean {
					in.Fill = &mean
				}
				in.Mean, in.Std = center, scale
			}
		} else {
			levels := map[string]bool{}
			for i, s := range c.Str {
				if c.IsMissing(i) {
					in.HasMissingLevel = true
				} else {
					levels[s] = true
				}
			}
			if len(levels) == 0 {
				return nil, fmt.Errorf("%s: feature column %q has no values in the training rows (all missing); leave it out", t.name(), name)
			}
			for l := range levels {
				in.Levels = append(in.Levels, l)
			}
			slices.Sort(in.Levels)
		}
		p.Inputs = append(p.Inputs, in)
	}
	return p, nil
}

// Validate checks a pipeline, for example one loaded from a model file.
func (p *Pipeline) Validate() error {
	if len(p.Inputs) == 0 {
		return errors.New("dataset: pipeline has no input columns")
	}
	if err := p.Scaling.Check(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, in := range p.Inputs {
		if in.Name == "" {
			return errors.New("dataset: pipeline has an input column without a name")
		}
		if seen[in.Name] {
			return fmt.Errorf("dataset: pipeline lists input column %q twice", in.Name)
		}
		seen[in.Name] = true
		switch in.Kind {
		case Numeric:
			if math.IsNaN(in.Mean) || math.IsInf(in.Mean, 0) || !(in.Std > 0) || math.IsInf(in.Std, 0) {
				return fmt.Errorf("dataset: pipeline column %q has invalid mean %v / std %v (std must be positive and finite)", in.Name, in.Mean, in.Std)
			}
			if in.Fill != nil && (math.IsNaN(*in.Fill) || math.IsInf(*in.Fill, 0) || math.IsInf((*in.Fill-in.Mean)/in.Std, 0)) {
				return fmt.Errorf("dataset: pipeline column %q has invalid fill value %v for missing cells", in.Name, *in.Fill)
			}
		case Categorical:
			lv := map[string]bool{}
			for _, l := range in.Levels {
				if lv[l] {
					return fmt.Errorf("dataset: pipeline column %q lists level %q twice", in.Name, l)
				}
				lv[l] = true
			}
		default:
			return fmt.Errorf("dataset: pipeline column %q has invalid kind %d", in.Name, int(in.Kind))
		}
	}
	return nil
}

// Width returns d, the number of features Transform produces per row.
func (p *Pipeline) Width() int {
	d := 0
	for i := range p.Inputs {
		d += p.Inputs[i].width()
	}
	return d
}

// FeatureNames names the d features in order: "age", "age:missing",
// "color=red", "color=<missing>".
func (p *Pipeline) FeatureNames() []string {
	names := make([]string, 0, p.Width())
	for _, in := range p.Inputs {
		if in.Kind == Numeric {
			names = append(names, in.Name)
			if in.MissingIndicator {
				names = append(names, in.Name+":missing")
			}
			continue
		}
		for _, l := range in.Levels {
			names = append(names, in.Name+"="+l)
		}
		if in.HasMissingLevel {
			names = append(names, in.Name+"="+MissingLevel)
		}
	}
	return names
}

// InputColumns returns the names of the input columns, in fit order.
func (p *Pipeline) InputColumns() []string {
	names := make([]string, len(p.Inputs))
	for i, in := range p.Inputs {
		names[i] = in.Name
	}
	return names
}

// ReadOptions returns options for reading prediction files: they force the
// kinds seen at fit time (so "007" stays a level and a text cell in a
// numeric column is an error with its line) and reuse the training file's
// missing tokens and header setting. Format and delimiter are detected.
func (p *Pipeline) ReadOptions() ReadOptions {
	opt := ReadOptions{MissingTokens: slices.Clone(p.MissingTokens), NoHeader: p.NoHeader}
	for _, in := range p.Inputs {
		if in.Kind == Numeric {
			opt.Numeric = append(opt.Numeric, in.Name)
		} else {
			opt.Categorical = append(opt.Categorical, in.Name)
		}
	}
	return opt
}

// Transform encodes the input columns of t (matched by name, in any order;
// other columns are ignored) into a row-major n×d matrix.
func (p *Pipeline) Transform(t *Table) (x []float64, n, d int, err error) {
	if err := p.Validate(); err != nil {
		return nil, 0, 0, err
	}
	if err := t.Validate(); err != nil {
		return nil, 0, 0, err
	}
	n, d = t.NRows(), p.Width()
	cols := make([]*Column, len(p.Inputs))
	for k, in := range p.Inputs {
		c, ok := t.Column(in.Name)
		if !ok {
			return nil, 0, 0, fmt.Errorf("%s: input column %q is missing; the model needs %s", t.name(), in.Name, listNames(p.InputColumns()))
		}
		cols[k] = c
	}
	ms := newMissingSet(p.MissingTokens)
	x = make([]float64, n*d)
	off := 0
	for k := range p.Inputs {
		in, c := &p.Inputs[k], cols[k]
		if c.source == "" {
			c = withSource(c, t.Source)
		}
		var err error
		if in.Kind == Numeric {
			err = in.numeric(c, ms, x, off, d)
		} else {
			in.categorical(c, x, off, d)
		}
		if err != nil {
			return nil, 0, 0, err
		}
		off += in.width()
	}
	return x, n, d, nil
}

// withSource returns a shallow copy of c that names the table in errors.
func withSource(c *Column, source string) *Column {
	cc := *c
	cc.source = source
	return &cc
}

func (in *InputColumn) numeric(c *Column, ms *missingSet, x []float64, off, d int) error {
	n := c.Len()
	for i := 0; i < n; i++ {
		v, missing := 0.0, c.IsMissing(i)
		if !missing {
			if c.Kind == Numeric {
				v = c.Num[i]
				if math.IsInf(v, 0) {
					return c.cellError(i, "value is %v; only finite values are allowed", v)
				}
			} else { // read without the model's ReadOptions: parse the text
				s := strings.TrimSpace(c.Str[i])
				if ms.has(s) {
					missing = true
				} else {
					var cls cellClass
					if v, cls = parseCell(s); cls != cellNumber {
						return c.cellError(i, "%s, but the column is numeric in the model", numberError(s, cls))
					}
				}
			}
		}
		row := x[i*d+off:]
		if missing {
			row[0] = 0 // the mean, standardized
			if in.Fill != nil {
				row[0] = (*in.Fill - in.Mean) / in.Std
			}
			if in.MissingIndicator {
				row[1] = 1
			}
			continue
		}
		row[0] = (v - in.Mean) / in.Std
		if math.IsInf(row[0], 0) {
			return c.cellError(i, "value %g is too far from the training rows (centre %g, scale %g) to scale in float64", v, in.Mean, in.Std)
		}
	}
	return nil
}

// scaledMoments returns the mean and the population standard deviation of
// xs, summing xs/max|x| so that values anywhere in the float64 range do not
// overflow the sums (two passes: stable for large offsets). ok is false if
// a result is still not finite (a spread beyond the float64 range).
func scaledMoments(xs []float64) (mean, std float64, ok bool) {
	scale := 0.0
	for _, v := range xs {
		scale = math.Max(scale, math.Abs(v))
	}
	if scale == 0 || len(xs) == 0 {
		return 0, 0, len(xs) > 0
	}
	var sum float64
	for _, v := range xs {
		sum += v / scale
	}
	m := sum / float64(len(xs))
	var ss float64
	for _, v := range xs {
		d := v/scale - m
		ss += d * d
	}
	mean, std = m*scale, math.Sqrt(ss/float64(len(xs)))*scale
	return mean, std, !math.IsInf(mean, 0) && !math.IsInf(std, 0) && !math.IsNaN(std)
}

func (in *InputColumn) categorical(c *Column, x []float64, off, d int) {
	index := make(map[string]int, len(in.Levels))
	for j, l := range in.Levels {
		index[l] = j
	}
	// A numeric column (read without the model's ReadOptions) lost its cell
	// text; match its values to levels that are numbers, by value.
	var byValue map[float64]int
	if c.Kind == Numeric {
		byValue = map[float64]int{}
		for j, l := range in.Levels {
			if v, cls := parseCell(l); cls == cellNumber {
				if _, dup := byValue[v]; !dup {
					byValue[v] = j
				}
			}
		}
	}
	n := c.Len()
	for i := 0; i < n; i++ {
		row := x[i*d+off:]
		if c.IsMissing(i) {
			if in.HasMissingLevel {
				row[len(in.Levels)] = 1
			}
			continue
		}
		var j int
		var ok bool
		if c.Kind == Categorical {
			j, ok = index[c.Str[i]]
		} else {
			j, ok = index[strconv.FormatFloat(c.Num[i], 'g', -1, 64)]
			if !ok {
				j, ok = byValue[c.Num[i]]
			}
		}
		if ok {
			row[j] = 1
		}
	}
}
