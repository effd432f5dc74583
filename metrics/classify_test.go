package metrics

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// tol is the tolerance for hand-computed values: they are short sums of a few
// terms, so only the last bits of float64 rounding can differ.
const tol = 1e-12

func near(a, b, eps float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Abs(a-b) <= eps
}

func TestAccuracy(t *testing.T) {
	tests := []struct {
		name        string
		yTrue, yPre []int
		want        float64
		wantErr     string
	}{
		{"all right", []int{0, 1, 2}, []int{0, 1, 2}, 1, ""},
		{"two of four", []int{0, 1, 1, 0}, []int{0, 0, 1, 1}, 0.5, ""},
		{"none right", []int{1}, []int{0}, 0, ""},
		{"length mismatch", []int{0, 1}, []int{0}, 0, "yTrue has 2 values but yPred has 1"},
		{"empty", nil, nil, 0, "empty input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Accuracy(tc.yTrue, tc.yPre)
			if !errMatches(err, tc.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
			}
			if err == nil && got != tc.want {
				t.Errorf("Accuracy = %g, want %g", got, tc.want)
			}
		})
	}
}

func TestConfusionMatrix(t *testing.T) {
	// Rows are the true class: sample 1 (true 0, predicted 1) lands in [0][1].
	cm, err := ConfusionMatrix([]int{0, 0, 1, 2, 2, 2}, []int{0, 1, 1, 2, 2, 0}, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{1, 1, 0}, {0, 1, 0}, {1, 0, 2}}
	for k := range want {
		if !slices.Equal(cm[k], want[k]) {
			t.Errorf("row %d = %v, want %v", k, cm[k], want[k])
		}
	}
	// A class that never occurs still gets its (zero) row and column.
	cm, err = ConfusionMatrix([]int{0}, []int{0}, 2)
	if err != nil || len(cm) != 2 || cm[1][1] != 0 || cm[0][0] != 1 {
		t.Errorf("unused class: cm = %v, err = %v", cm, err)
	}

	errCases := []struct {
		name         string
		yTrue, yPred []int
		c            int
		want         string
	}{
		{"label too big", []int{0, 3}, []int{0, 1}, 3, "yTrue[1] = 3 is outside 0..2"},
		{"negative prediction", []int{0, 1}, []int{0, -1}, 3, "yPred[1] = -1"},
		{"no classes", []int{0}, []int{0}, 0, "c = 0"},
		{"mismatch", []int{0}, []int{0, 1}, 2, "yTrue has 1 values but yPred has 2"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ConfusionMatrix(tc.yTrue, tc.yPred, tc.c); !errMatches(err, tc.want) {
				t.Errorf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}

func TestWriteConfusion(t *testing.T) {
	tests := []struct {
		name   string
		cm     [][]int
		labels []string
		want   string
	}{
		{
			name:   "labels",
			cm:     [][]int{{1, 1, 0}, {0, 1, 0}, {1, 0, 2}},
			labels: []string{"cat", "dog", "bird"},
			want: "true\\pred  cat  dog  bird\n" +
				"cat          1    1     0\n" +
				"dog          0    1     0\n" +
				"bird         1    0     2\n",
		},
		{
			// Default labels; the wide count widens only its own column.
			name: "no labels",
			cm:   [][]int{{1234, 0}, {5, 6}},
			want: "true\\pred     0  1\n" +
				"0          1234  0\n" +
				"1             5  6\n",
		},
		{
			// é is two bytes but one column: alignment must count runes.
			name:   "non-ASCII label",
			cm:     [][]int{{1}},
			labels: []string{"élan-long-label"},
			want: "true\\pred        élan-long-label\n" +
				"élan-long-label                1\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteConfusion(&b, tc.cm, tc.labels); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
	var b strings.Builder
	if err := WriteConfusion(&b, [][]int{{1, 2}, {3}}, nil); !errMatches(err, "row 1 has 1 entries") {
		t.Errorf("ragged matrix: err = %v", err)
	}
	if err := WriteConfusion(&b, [][]int{{1}}, []string{"a", "b"}); !errMatches(err, "2 labels for 1 classes") {
		t.Errorf("label count: err = %v", err)
	}
}

func TestLogLoss(t *testing.T) {
	tests := []struct {
		name    string
		yTrue   []int
		prob    []float64
		c       int
		want    float64
		wantErr string
	}{
		// −(ln 0.8 + ln 0.6)/2 = (0.2231435513 + 0.5108256238)/2.
		{"two rows", []int{0, 1}, []float64{0.8, 0.2, 0.4, 0.6}, 2, (-math.Log(0.8) - math.Log(0.6)) / 2, ""},
		// p = 0 is clipped to 1e-15: −ln(1e-15) = 34.5387763949.
		{"zero clipped", []int{1}, []float64{1, 0}, 2, 34.538776394910684, ""},
		// p = 1 is clipped to 1−1e-15: −ln(1−1e-15) ≈ 1.1e-15 (float64 rounds 1−1e-15).
		{"one clipped", []int{0}, []float64{1, 0}, 2, 1.1102230246251565e-15, ""},
		// Rows are not renormalised: only the true class's entry counts.
		{"not renormalised", []int{0}, []float64{0.5, 5}, 2, math.Log(2), ""},
		{"wrong size", []int{0, 1}, []float64{0.5, 0.5, 1}, 2, 0, "prob has 3 values, want n·c = 2·2 = 4"},
		{"label out of range", []int{2}, []float64{0.5, 0.5}, 2, 0, "yTrue[0] = 2 is outside 0..1"},
		{"NaN", []int{0}, []float64{math.NaN(), 1}, 2, 0, "NaN at row 0, column 0"},
		{"empty", nil, nil, 2, 0, "empty input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := LogLoss(tc.yTrue, tc.prob, tc.c)
			if !errMatches(err, tc.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
			}
			if err == nil && !near(got, tc.want, 1e-12) {
				t.Errorf("LogLoss = %.17g, want %.17g", got, tc.want)
			}
		})
	}
}

// LogLossClipped clips by the caller's bounds: floored only (hi = +Inf) a
// probability above one costs less than nothing, as rfm's calibration has
// always scored; bounds that are not an interval are an error.
func TestLogLossClipped(t *testing.T) {
	got, err := LogLossClipped([]int{1, 0}, []float64{0.5, 0, 1.5, 0.5}, 2, 1e-6, math.Inf(1))
	if want := (-math.Log(1e-6) - math.Log(1.5)) / 2; err != nil || got != want {
		t.Fatalf("floored: %v, %v; want %v", got, err, want)
	}
	got, err = LogLossClipped([]int{0}, []float64{1, 0}, 2, 0.1, 0.5)
	if err != nil || got != math.Log(2) {
		t.Fatalf("capped at 0.5: %v, %v", got, err)
	}
	for _, b := range [][2]float64{{0.5, 0.5}, {-1, 1}, {math.NaN(), 1}} {
		if _, err := LogLossClipped([]int{0}, []float64{1, 0}, 2, b[0], b[1]); !errMatches(err, "clip bounds") {
			t.Errorf("bounds %v: %v", b, err)
		}
	}
	if _, err := LogLossClipped([]int{3}, []float64{1, 0}, 2, 0.1, 1); !errMatches(err, "outside 0..1") {
		t.Errorf("label out of range: %v", err)
	}
}

func TestArgmax(t *testing.T) {
	got, err := Argmax([]float64{0.1, 0.7, 0.2, 0.5, 0.5, 0, -1, -2, -0.5}, 3)
	if err != nil {
		t.Fatal(err)
	}
	// Row 1 ties 0.5/0.5: the lower index wins.
	if want := []int{1, 0, 2}; !slices.Equal(got, want) {
		t.Errorf("Argmax = %v, want %v", got, want)
	}
	if _, err := Argmax([]float64{1, 2, 3}, 2); !errMatches(err, "not a positive multiple of c = 2") {
		t.Errorf("ragged: err = %v", err)
	}
	if _, err := Argmax([]float64{1, math.NaN()}, 2); !errMatches(err, "NaN at row 0, column 1") {
		t.Errorf("NaN: err = %v", err)
	}
}

func TestAUC(t *testing.T) {
	tests := []struct {
		name    string
		yTrue   []int
		score   []float64
		want    float64
		wantErr string
	}{
		// Positives 0.35, 0.8 vs negatives 0.1, 0.4:
		// 0.35>0.1, 0.35<0.4, 0.8>0.1, 0.8>0.4 → 3 of 4 pairs.
		{"classic", []int{0, 0, 1, 1}, []float64{0.1, 0.4, 0.35, 0.8}, 0.75, ""},
		// Positives {0.35, 0.8, 0.4}, negatives {0.1, 0.4, 0.4}. Pairs:
		// 0.35 beats 1; 0.8 beats 3; 0.4 beats 0.1 and ties two 0.4s → 1+2·½.
		// (1+3+2)/9 = 2/3. By ranks: 0.1→1, 0.35→2, 0.4×3→4, 0.8→6;
		// R1 = 2+6+4 = 12, U = 12 − 3·4/2 = 6, 6/9.
		{"ties across classes", []int{0, 0, 1, 1, 0, 1}, []float64{0.1, 0.4, 0.35, 0.8, 0.4, 0.4}, 2.0 / 3, ""},
		{"all scores tied", []int{0, 1, 0, 1}, []float64{3, 3, 3, 3}, 0.5, ""},
		{"perfect", []int{1, 0, 1, 0}, []float64{2, 1, 3, -1}, 1, ""},
		{"inverted", []int{1, 0}, []float64{0, 1}, 0, ""},
		{"one class", []int{1, 1}, []float64{0, 1}, 0, "only one class"},
		{"bad label", []int{0, 2}, []float64{0, 1}, 0, "yTrue[1] = 2, want 0 or 1"},
		{"NaN score", []int{0, 1}, []float64{math.NaN(), 1}, 0, "score[0] is NaN"},
		{"mismatch", []int{0, 1}, []float64{1}, 0, "yTrue has 2 values but score has 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AUC(tc.yTrue, tc.score)
			if !errMatches(err, tc.wantErr) {
				t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
			}
			if err == nil && !near(got, tc.want, tol) {
				t.Errorf("AUC = %.17g, want %.17g", got, tc.want)
			}
		})
	}
	if _, err := AUC([]int{0, 0}, []float64{1, 2}); !errors.Is(err, ErrUndefined) {
		t.Errorf("one class: err = %v, want ErrUndefined", err)
	}
}

func TestAUCMatchesPairCount(t *testing.T) {
	// The rank formula must agree with brute-force pair counting on data with
	// many ties (scores drawn from 5 levels).
	yTrue := make([]int, 60)
	score := make([]float64, 60)
	for i := range yTrue {
		yTrue[i] = (i * 7 / 3) % 2
		score[i] = float64((i * 13) % 5)
	}
	wins, pairs := 0.0, 0.0
	for i := range yTrue {
		for j := range yTrue {
			if yTrue[i] == 1 && yTrue[j] == 0 {
				pairs++
				switch {
				case score[i] > score[j]:
					wins++
				case score[i] == score[j]:
					wins += 0.5
				}
			}
		}
	}
	got, err := AUC(yTrue, score)
	if err != nil {
		t.Fatal(err)
	}
	if !near(got, wins/pairs, tol) {
		t.Errorf("AUC = %.17g, pair count = %.17g", got, wins/pairs)
	}
}

// absentClass is four rows of three classes in which class 2 never occurs
// (TestMacroAUC, TestEvaluateClassification).
func absentClass() (yTrue []int, prob []float64) {
	return []int{0, 1, 0, 1}, []float64{
		0.6, 0.2, 0.2,
		0.3, 0.3, 0.4,
		0.5, 0.4, 0.1,
		0.1, 0.1, 0.8,
	}
}

func TestMacroAUC(t *testing.T) {
	// Three classes, rows sum to 1.
	//   class 0: positive 0.7 vs 0.2, 0.1, 0.3 → 1
	//   class 1: positive 0.5 vs 0.2, 0.3, 0.5 → (1+1+½)/3 = 5/6
	//   class 2: positives 0.6, 0.2 vs 0.1, 0.3 → (1+1+1+0)/4 = 3/4
	// macro = (1 + 5/6 + 3/4)/3 = 31/36.
	yTrue := []int{0, 1, 2, 2}
	prob := []float64{
		0.7, 0.2, 0.1,
		0.2, 0.5, 0.3,
		0.1, 0.3, 0.6,
		0.3, 0.5, 0.2,
	}
	per, err := OneVsRestAUC(yTrue, prob, 3)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range []float64{1, 5.0 / 6, 0.75} {
		if !near(per[k], want, tol) {
			t.Errorf("class %d AUC = %g, want %g", k, per[k], want)
		}
	}
	got, err := MacroAUC(yTrue, prob, 3)
	if err != nil || !near(got, 31.0/36, tol) {
		t.Errorf("MacroAUC = %g, %v; want %g", got, err, 31.0/36)
	}

	// Class 2 never occurs: it is NaN per class and skipped in the mean.
	//   class 0: positives 0.6, 0.5 vs 0.3, 0.1 → 1
	//   class 1: positives 0.3, 0.1 vs 0.2, 0.4 → (1+0+0+0)/4 = 1/4
	yTrue, prob = absentClass()
	per, err = OneVsRestAUC(yTrue, prob, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !near(per[0], 1, tol) || !near(per[1], 0.25, tol) || !math.IsNaN(per[2]) {
		t.Errorf("per-class AUC = %v, want [1 0.25 NaN]", per)
	}
	if got, err := MacroAUC(yTrue, prob, 3); err != nil || !near(got, 0.625, tol) {
		t.Errorf("MacroAUC with absent class = %g, %v; want 0.625", got, err)
	}

	// Binary with rows summing to 1 equals AUC of column 1.
	yb := []int{0, 0, 1, 1}
	pb := []float64{0.9, 0.1, 0.6, 0.4, 0.65, 0.35, 0.2, 0.8}
	bin, _ := AUC(yb, []float64{0.1, 0.4, 0.35, 0.8})
	if got, err := MacroAUC(yb, pb, 2); err != nil || !near(got, bin, tol) {
		t.Errorf("binary MacroAUC = %g, %v; want %g", got, err, bin)
	}

	if _, err := MacroAUC([]int{1, 1}, []float64{0, 1, 0, 1}, 2); !errors.Is(err, ErrUndefined) {
		t.Errorf("one class: err = %v, want ErrUndefined", err)
	}
	if _, err := MacroAUC([]int{0}, []float64{1}, 1); !errMatches(err, "want ≥ 2") {
		t.Errorf("c = 1: err = %v", err)
	}
}

// errMatches reports whether err contains want, or is nil when want is "".
func errMatches(err error, want string) bool {
	if want == "" {
		return err == nil
	}
	return err != nil && strings.Contains(err.Error(), want)
}
