package metrics

import (
	"errors"
	"fmt"
	"math"
)

// The aggregates below take a[i][j], the accuracy of classifier j on data set
// i, with NaN for "no result". SPEC §5 fixes the Friedman rule: a missing
// entry is first imputed with the row's mean over its present entries, so
// every classifier is ranked on every set. For the other aggregates the
// per-set max and min are taken over the present values of the row (never
// over imputed numbers), and the Missing policy says how a classifier's own
// missing results count.
//
// Every row must have at least one present value; values must be finite and
// non-negative.

// Missing says how PMA, PercentNearMax and ADTM count a data set on which the
// classifier has no result. Average accuracy always uses SkipMissing, and
// Friedman ranks always impute (see above).
type Missing int

const (
	// SkipMissing averages over the data sets where the classifier has a
	// result: a classifier is judged only where it ran. A classifier with no
	// result at all gets NaN. This is the default.
	SkipMissing Missing = iota
	// MissingAsZero counts a missing result as a failure: it contributes 0 and
	// every data set is in the denominator. Fernández-Delgado et al. (2014)
	// computed their PMA this way (svm_C: 92.3% with 2 of 121 sets missing,
	// against 93.8% under SkipMissing).
	MissingAsZero
)

func (m Missing) String() string {
	switch m {
	case SkipMissing:
		return "skip"
	case MissingAsZero:
		return "zero"
	}
	return fmt.Sprintf("Missing(%d)", int(m))
}

// AverageAccuracy returns, per classifier, the mean of its present values
// (NaN for a classifier with none), in the table's unit.
func AverageAccuracy(a [][]float64) ([]float64, error) {
	k, err := checkTable(a)
	if err != nil {
		return nil, fmt.Errorf("average accuracy: %w", err)
	}
	return meanPresent(a, k, SkipMissing, func(v, _, _ float64) float64 { return v }), nil
}

// FriedmanRanks returns, per classifier, its rank averaged over data sets.
// Within a data set classifiers are ranked by accuracy, 1 = highest, tied
// values sharing the average of the ranks they span; a missing value is
// first replaced by the mean of the data set's present values. Lower is
// better, and the ranks of one data set always sum to k(k+1)/2.
func FriedmanRanks(a [][]float64) ([]float64, error) {
	k, err := checkTable(a)
	if err != nil {
		return nil, fmt.Errorf("friedman ranks: %w", err)
	}
	sum := make([]float64, k)
	neg := make([]float64, k)
	for _, row := range a {
		mean, m := 0.0, 0
		for _, v := range row {
			if !math.IsNaN(v) {
				mean += v
				m++
			}
		}
		mean /= float64(m)
		for j, v := range row {
			if math.IsNaN(v) {
				v = mean
			}
			// Ascending ranks of −a are descending ranks of a, ties included.
			neg[j] = -v
		}
		for j, r := range averageRanks(neg) {
			sum[j] += r
		}
	}
	for j := range sum {
		sum[j] /= float64(len(a))
	}
	return sum, nil
}

// PMA returns, per classifier, the percentage of the maximum accuracy: the
// mean over data sets of 100·a_ij / max_j a_ij. A data set whose maximum is 0
// (every present value is 0) counts as 100 for everyone: all tie for best.
func PMA(a [][]float64, missing Missing) ([]float64, error) {
	k, err := checkAggregate(a, missing)
	if err != nil {
		return nil, fmt.Errorf("pma: %w", err)
	}
	return meanPresent(a, k, missing, func(v, hi, _ float64) float64 {
		if hi == 0 {
			return 100
		}
		return 100 * v / hi
	}), nil
}

// nearMaxTol makes the ≥ test in PercentNearMax inclusive despite rounding:
// 0.9·max computed in floating point can land a hair above a value that is
// exactly 90% of max on paper.
const nearMaxTol = 1e-12

// PercentNearMax returns, per classifier, the percentage of data sets on
// which a_ij ≥ frac·max_j a_ij (within a relative 1e-12). frac = 0.90 and 0.95
// give the P90 and P95 of Fernández-Delgado et al.; frac must be in (0, 1].
func PercentNearMax(a [][]float64, frac float64, missing Missing) ([]float64, error) {
	if !(frac > 0 && frac <= 1) {
		return nil, fmt.Errorf("percent near max: fraction %g is outside (0, 1]", frac)
	}
	k, err := checkAggregate(a, missing)
	if err != nil {
		return nil, fmt.Errorf("percent near max: %w", err)
	}
	return meanPresent(a, k, missing, func(v, hi, _ float64) float64 {
		if v >= frac*hi-nearMaxTol*hi {
			return 100
		}
		return 0
	}), nil
}

// ADTM returns, per classifier, the average distance to the minimum in
// percent: the mean over data sets of 100·(a_ij − min)/(max − min), min and
// max over the data set's present values. A data set where max = min (all
// present values equal, or only one present) counts as 100 for everyone
// present: no classifier is worse than another there, and 100 keeps such a
// set from dragging a classifier down.
func ADTM(a [][]float64, missing Missing) ([]float64, error) {
	k, err := checkAggregate(a, missing)
	if err != nil {
		return nil, fmt.Errorf("adtm: %w", err)
	}
	return meanPresent(a, k, missing, func(v, hi, lo float64) float64 {
		if hi == lo {
			return 100
		}
		return 100 * (v - lo) / (hi - lo)
	}), nil
}

// meanPresent averages f(a_ij, max_i, min_i) per column; max and min are over
// the row's present values. Under SkipMissing only rows where a_ij is present
// count, and a column with none gets NaN; under MissingAsZero every row
// counts and a missing a_ij adds 0.
func meanPresent(a [][]float64, k int, missing Missing, f func(v, hi, lo float64) float64) []float64 {
	sum := make([]float64, k)
	cnt := make([]int, k)
	for _, row := range a {
		hi, lo := rowRange(row)
		for j, v := range row {
			if !math.IsNaN(v) {
				sum[j] += f(v, hi, lo)
				cnt[j]++
			}
		}
	}
	if missing == MissingAsZero {
		for j := range cnt {
			cnt[j] = len(a)
		}
	}
	for j := range sum {
		if cnt[j] == 0 {
			sum[j] = math.NaN()
		} else {
			sum[j] /= float64(cnt[j])
		}
	}
	return sum
}

// rowRange returns the max and min of the present values of row (checkTable
// guarantees at least one).
func rowRange(row []float64) (hi, lo float64) {
	hi, lo = math.Inf(-1), math.Inf(1)
	for _, v := range row {
		if !math.IsNaN(v) {
			hi = max(hi, v)
			lo = min(lo, v)
		}
	}
	return hi, lo
}

func checkAggregate(a [][]float64, missing Missing) (int, error) {
	if missing != SkipMissing && missing != MissingAsZero {
		return 0, fmt.Errorf("unknown missing-value policy %v", missing)
	}
	return checkTable(a)
}

// checkTable validates an accuracy table and returns its column count.
func checkTable(a [][]float64) (int, error) {
	if len(a) == 0 {
		return 0, errors.New("no data sets (empty table)")
	}
	k := len(a[0])
	if k == 0 {
		return 0, errors.New("no classifiers (row 0 is empty)")
	}
	for i, row := range a {
		if len(row) != k {
			return 0, fmt.Errorf("row %d has %d values, want %d like row 0", i, len(row), k)
		}
		present := 0
		for j, v := range row {
			switch {
			case math.IsNaN(v):
				continue
			case math.IsInf(v, 0) || v < 0:
				return 0, fmt.Errorf("row %d, column %d: accuracy %g must be finite and ≥ 0 (NaN marks missing)", i, j, v)
			}
			present++
		}
		if present == 0 {
			return 0, fmt.Errorf("row %d has no values: drop the data set or add a result", i)
		}
	}
	return k, nil
}
