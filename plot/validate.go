package plot

import (
	"fmt"
	"math"
	"strconv"
)

// checkFinite returns an error naming the first NaN or infinite entry.
func checkFinite(what string, v []float64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s[%d] = %v: values must be finite", what, i, x)
		}
	}
	return nil
}

// checkNonEmptyFinite requires at least one value and finite values.
func checkNonEmptyFinite(what string, v []float64) error {
	if len(v) == 0 {
		return fmt.Errorf("%s is empty", what)
	}
	return checkFinite(what, v)
}

// featureNames returns names, or x1..xd when names is nil, after checking
// the length.
func featureNames(names []string, d int) ([]string, error) {
	if names == nil {
		out := make([]string, d)
		for i := range out {
			out[i] = "x" + strconv.Itoa(i+1)
		}
		return out, nil
	}
	if len(names) != d {
		return nil, fmt.Errorf("%d names for %d features", len(names), d)
	}
	return names, nil
}

// minMax returns the smallest and largest value of a non-empty slice.
func minMax(v []float64) (lo, hi float64) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo = math.Min(lo, x)
		hi = math.Max(hi, x)
	}
	return lo, hi
}

// padRange widens [lo, hi] by frac of its width on both sides and makes it
// non-degenerate, so that tick generation never sees an empty range.
func padRange(lo, hi, frac float64) (float64, float64) {
	if hi-lo <= 1e-12*math.Max(math.Abs(lo), math.Abs(hi)) || hi <= lo {
		d := math.Max(math.Abs(lo), math.Abs(hi)) * 0.05
		if d == 0 {
			d = 0.5
		}
		return lo - d, hi + d
	}
	d := (hi - lo) * frac
	return lo - d, hi + d
}

// formatValue prints a value with three significant digits, without
// exponent for moderate magnitudes.
func formatValue(v float64) string {
	a := math.Abs(v)
	if v == 0 || (a >= 1e-3 && a < 1e5) {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'e', 2, 64)
}
