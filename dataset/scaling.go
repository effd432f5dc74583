package dataset

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Scaling is how a pipeline scales its numeric columns, each to
// (v − centre)/scale with a centre and scale fitted on the training rows.
type Scaling string

// The scalings.
const (
	// ScaleStandard: the training mean and population standard deviation
	// (the default for tables).
	ScaleStandard Scaling = "standard"
	// ScaleNone keeps the values as they are (centre 0, scale 1): for
	// columns on a common scale already, such as pixel intensities.
	ScaleNone Scaling = "none"
	// ScaleMinMax maps the training range onto [0, 1].
	ScaleMinMax Scaling = "minmax"
	// ScaleRobust centres on the training median and divides by the
	// interquartile range (the standard deviation when the quartiles
	// coincide): outliers do not squeeze the bulk of the column.
	ScaleRobust Scaling = "robust"
)

// Scalings lists the scalings, for help texts.
func Scalings() []Scaling { return []Scaling{ScaleStandard, ScaleNone, ScaleMinMax, ScaleRobust} }

// Check reports an unknown scaling ("" is ScaleStandard).
func (s Scaling) Check() error {
	if s == "" || slices.Contains(Scalings(), s) {
		return nil
	}
	names := make([]string, 0, 4)
	for _, k := range Scalings() {
		names = append(names, string(k))
	}
	return fmt.Errorf("dataset: unknown scaling %q (known: %s)", string(s), strings.Join(names, ", "))
}

// IsStandard reports whether s is the default standardization.
func (s Scaling) IsStandard() bool { return s == "" || s == ScaleStandard }

// Name is s with "" spelled out as ScaleStandard, for messages.
func (s Scaling) Name() Scaling {
	if s.IsStandard() {
		return ScaleStandard
	}
	return s
}

// affine returns the centre and the scale (> 0) of a numeric column with
// the given non-missing training values, mean and standard deviation (std
// already 1 for a constant column). A zero spread becomes 1, as for
// standardization.
func (s Scaling) affine(vals []float64, mean, std float64) (center, scale float64) {
	switch s {
	case ScaleNone:
		return 0, 1
	case ScaleMinMax:
		lo, hi := slices.Min(vals), slices.Max(vals)
		scale = hi - lo
		if !(scale > 1e-12*math.Max(math.Abs(lo), math.Abs(hi))) || math.IsInf(scale, 0) {
			scale = std
		}
		return lo, scale
	case ScaleRobust:
		sorted := slices.Clone(vals)
		slices.Sort(sorted)
		q1, med, q3 := quantile(sorted, 0.25), quantile(sorted, 0.5), quantile(sorted, 0.75)
		scale = q3 - q1
		if !(scale > 1e-12*math.Max(math.Abs(q1), math.Abs(q3))) || math.IsInf(scale, 0) {
			scale = std
		}
		return med, scale
	}
	return mean, std
}

// quantile of sorted values by linear interpolation between order
// statistics (the "type 7" rule of R and NumPy's default).
func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	i := int(h)
	if i+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[i] + (h-float64(i))*(sorted[i+1]-sorted[i])
}
