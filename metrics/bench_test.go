package metrics

import (
	"math"
	"testing"
)

var nan = math.NaN()

// handTable is the worked example for the aggregates: 3 data sets × 4
// classifiers A B C D, with ties, missing values and a set where every
// present value is equal.
//
//	      A    B    C    D
//	d1   90   82   82   70
//	d2   60   --   75   60
//	d3   50   50   50   --
func handTable() [][]float64 {
	return [][]float64{
		{90, 82, 82, 70},
		{60, nan, 75, 60},
		{50, 50, 50, nan},
	}
}

// Every expected value below is worked out by hand in the comments; the
// tolerance only covers float64 rounding of a few divisions.
const handTol = 1e-9

func TestAverageAccuracy(t *testing.T) {
	// A (90+60+50)/3, B (82+50)/2, C (82+75+50)/3, D (70+60)/2.
	want := []float64{200.0 / 3, 66, 69, 65}
	got, err := AverageAccuracy(handTable())
	checkVec(t, "AverageAccuracy", got, err, want)
}

func TestFriedmanRanks(t *testing.T) {
	// d1: 90→1, the two 82s share ranks 2,3 → 2.5, 70→4.
	// d2: B imputed with mean(60,75,60) = 65; 75→1, 65→2, the 60s share 3,4 → 3.5.
	//     ranks A 3.5, B 2, C 1, D 3.5.
	// d3: D imputed with 50; four-way tie → 2.5 each.
	// A (1+3.5+2.5)/3 = 7/3, B (2.5+2+2.5)/3 = 7/3, C (2.5+1+2.5)/3 = 2,
	// D (4+3.5+2.5)/3 = 10/3. They sum to k(k+1)/2 = 10.
	want := []float64{7.0 / 3, 7.0 / 3, 2, 10.0 / 3}
	got, err := FriedmanRanks(handTable())
	checkVec(t, "FriedmanRanks", got, err, want)

	// An imputed mean that equals a present value ties with it.
	// Row (80, --, 80): imputed 80, three-way tie → 2 each.
	got, err = FriedmanRanks([][]float64{{80, nan, 80}})
	checkVec(t, "FriedmanRanks tie with imputed", got, err, []float64{2, 2, 2})
}

func TestPMA(t *testing.T) {
	// Row maxima over present values: d1 90, d2 75, d3 50.
	// Ratios: A 1, 0.8, 1; B 82/90, --, 1; C 82/90, 1, 1; D 70/90, 0.8, --.
	skip := []float64{
		100 * (1 + 0.8 + 1) / 3,     // 93.33
		100 * (82.0/90 + 1) / 2,     // 95.56
		100 * (82.0/90 + 1 + 1) / 3, // 97.04
		100 * (70.0/90 + 0.8) / 2,   // 78.89
	}
	got, err := PMA(handTable(), SkipMissing)
	checkVec(t, "PMA skip", got, err, skip)
	// MissingAsZero: a missing set adds 0 and the denominator is always 3.
	zero := []float64{
		skip[0],
		100 * (82.0/90 + 0 + 1) / 3, // 63.70
		skip[2],
		100 * (70.0/90 + 0.8 + 0) / 3, // 52.59
	}
	got, err = PMA(handTable(), MissingAsZero)
	checkVec(t, "PMA zero", got, err, zero)

	// A set where every value is 0: all tie for best → 100.
	got, err = PMA([][]float64{{0, 0}}, SkipMissing)
	checkVec(t, "PMA all zero", got, err, []float64{100, 100})
}

func TestPercentNearMax(t *testing.T) {
	// P90 thresholds: d1 81, d2 67.5, d3 45.
	//   A: 90 ✓, 60 ✗, 50 ✓ → 2/3.  B: 82 ✓, 50 ✓ → 2/2.
	//   C: 82 ✓, 75 ✓, 50 ✓ → 3/3.  D: 70 ✗, 60 ✗ → 0.
	// P95 thresholds: d1 85.5, d2 71.25, d3 47.5.
	//   A: ✓ ✗ ✓ → 2/3.  B: 82 ✗, 50 ✓ → 1/2.  C: ✗ ✓ ✓ → 2/3.  D: 0.
	tests := []struct {
		name    string
		frac    float64
		missing Missing
		want    []float64
	}{
		{"P90 skip", 0.90, SkipMissing, []float64{200.0 / 3, 100, 100, 0}},
		{"P95 skip", 0.95, SkipMissing, []float64{200.0 / 3, 50, 200.0 / 3, 0}},
		// Missing counts as "not near the max", over all 3 sets.
		{"P90 zero", 0.90, MissingAsZero, []float64{200.0 / 3, 200.0 / 3, 100, 0}},
		{"P95 zero", 0.95, MissingAsZero, []float64{200.0 / 3, 100.0 / 3, 200.0 / 3, 0}},
	}
	for _, tc := range tests {
		got, err := PercentNearMax(handTable(), tc.frac, tc.missing)
		checkVec(t, tc.name, got, err, tc.want)
	}

	// 0.72 is exactly 90% of 0.8 on paper, but 0.9*0.8 rounds to
	// 0.7200000000000001 in float64; the tolerance must still count it.
	got, err := PercentNearMax([][]float64{{0.8, 0.72, 0.71}}, 0.9, SkipMissing)
	checkVec(t, "P90 boundary", got, err, []float64{100, 100, 0})

	for _, frac := range []float64{0, -0.5, 1.5, nan} {
		if _, err := PercentNearMax(handTable(), frac, SkipMissing); !errMatches(err, "outside (0, 1]") {
			t.Errorf("frac %g: err = %v", frac, err)
		}
	}
}

func TestADTM(t *testing.T) {
	// d1: min 70, max 90, range 20 → A 1, B 0.6, C 0.6, D 0.
	// d2: min 60, max 75, range 15 → A 0, C 1, D 0 (B missing).
	// d3: max = min = 50 → 1 for A, B, C (D missing).
	// skip: A (1+0+1)/3, B (0.6+1)/2, C (0.6+1+1)/3, D (0+0)/2.
	got, err := ADTM(handTable(), SkipMissing)
	checkVec(t, "ADTM skip", got, err, []float64{200.0 / 3, 80, 260.0 / 3, 0})
	// zero: B (0.6+0+1)/3; D (0+0+0)/3.
	got, err = ADTM(handTable(), MissingAsZero)
	checkVec(t, "ADTM zero", got, err, []float64{200.0 / 3, 160.0 / 3, 260.0 / 3, 0})
	// One present value: max = min → 100; the missing classifier is NaN
	// under skip (no sets) and 0 under zero.
	got, err = ADTM([][]float64{{nan, 5}}, SkipMissing)
	checkVec(t, "ADTM single skip", got, err, []float64{nan, 100})
	got, err = ADTM([][]float64{{nan, 5}}, MissingAsZero)
	checkVec(t, "ADTM single zero", got, err, []float64{0, 100})
}

func TestAggregateErrors(t *testing.T) {
	tests := []struct {
		name string
		a    [][]float64
		want string
	}{
		{"empty", nil, "no data sets"},
		{"no columns", [][]float64{{}}, "no classifiers"},
		{"ragged", [][]float64{{1, 2}, {1}}, "row 1 has 1 values, want 2"},
		{"all missing row", [][]float64{{1, 2}, {nan, nan}}, "row 1 has no values"},
		{"negative", [][]float64{{1, -2}}, "row 0, column 1: accuracy -2"},
		{"infinite", [][]float64{{math.Inf(1)}}, "must be finite"},
	}
	funcs := map[string]func([][]float64) ([]float64, error){
		"AverageAccuracy": AverageAccuracy,
		"FriedmanRanks":   FriedmanRanks,
		"PMA":             func(a [][]float64) ([]float64, error) { return PMA(a, SkipMissing) },
		"P90":             func(a [][]float64) ([]float64, error) { return PercentNearMax(a, 0.9, SkipMissing) },
		"ADTM":            func(a [][]float64) ([]float64, error) { return ADTM(a, MissingAsZero) },
	}
	for _, tc := range tests {
		for name, f := range funcs {
			if _, err := f(tc.a); !errMatches(err, tc.want) {
				t.Errorf("%s(%s): err = %v, want containing %q", name, tc.name, err, tc.want)
			}
		}
	}
	if _, err := PMA(handTable(), Missing(7)); !errMatches(err, "unknown missing-value policy Missing(7)") {
		t.Errorf("bad policy: err = %v", err)
	}
}

func checkVec(t *testing.T, name string, got []float64, err error, want []float64) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if len(got) != len(want) {
		t.Errorf("%s = %v, want %v", name, got, want)
		return
	}
	for j := range want {
		if !near(got[j], want[j], handTol) {
			t.Errorf("%s[%d] = %.12g, want %.12g", name, j, got[j], want[j])
		}
	}
}
