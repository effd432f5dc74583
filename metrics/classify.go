package metrics

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrUndefined is wrapped by errors for metrics that have no value on the
// given input even though the input is well formed: AUC when yTrue holds a
// single class, R² when the target is constant.
var ErrUndefined = errors.New("metric undefined")

// LogLossEps is the clipping bound of LogLoss: probabilities are clipped to
// [LogLossEps, 1-LogLossEps] so a confident wrong answer costs about 34.5
// nats instead of +Inf.
const LogLossEps = 1e-15

// Accuracy returns the fraction of positions where yPred equals yTrue.
func Accuracy(yTrue, yPred []int) (float64, error) {
	hit, err := Correct(yTrue, yPred)
	if err != nil {
		return 0, fmt.Errorf("accuracy: %w", err)
	}
	return float64(hit) / float64(len(yTrue)), nil
}

// Correct returns how many positions of yPred equal yTrue (Accuracy's
// numerator).
func Correct(yTrue, yPred []int) (int, error) {
	if err := checkPair(len(yTrue), len(yPred), "yTrue", "yPred"); err != nil {
		return 0, err
	}
	hit := 0
	for i, t := range yTrue {
		if yPred[i] == t {
			hit++
		}
	}
	return hit, nil
}

// ConfusionMatrix returns the c×c matrix whose entry [t][p] counts the samples
// of true class t predicted as class p (rows = true class). Every label must
// lie in 0..c-1.
func ConfusionMatrix(yTrue, yPred []int, c int) ([][]int, error) {
	if err := checkPair(len(yTrue), len(yPred), "yTrue", "yPred"); err != nil {
		return nil, fmt.Errorf("confusion matrix: %w", err)
	}
	if c < 1 {
		return nil, fmt.Errorf("confusion matrix: number of classes c = %d, want ≥ 1", c)
	}
	if err := checkLabels(yTrue, c, "yTrue"); err != nil {
		return nil, fmt.Errorf("confusion matrix: %w", err)
	}
	if err := checkLabels(yPred, c, "yPred"); err != nil {
		return nil, fmt.Errorf("confusion matrix: %w", err)
	}
	cm := make([][]int, c)
	cells := make([]int, c*c) // one allocation; rows are views into it
	for k := range cm {
		cm[k] = cells[k*c : (k+1)*c]
	}
	for i, t := range yTrue {
		cm[t][yPred[i]]++
	}
	return cm, nil
}

// WriteConfusion renders a square confusion matrix as aligned text: a header
// row of predicted labels, then one row per true class. labels names the
// classes in index order; nil means "0", "1", .... Row labels are left
// aligned, counts right aligned.
func WriteConfusion(w io.Writer, cm [][]int, labels []string) error {
	c := len(cm)
	if c == 0 {
		return errors.New("write confusion matrix: empty matrix")
	}
	for k, row := range cm {
		if len(row) != c {
			return fmt.Errorf("write confusion matrix: row %d has %d entries, want %d (matrix must be square)", k, len(row), c)
		}
	}
	if labels == nil {
		labels = make([]string, c)
		for k := range labels {
			labels[k] = strconv.Itoa(k)
		}
	}
	if len(labels) != c {
		return fmt.Errorf("write confusion matrix: %d labels for %d classes", len(labels), c)
	}
	const corner = "true\\pred"
	// Widths in runes, which is how fmt pads, so non-ASCII labels align.
	first := len(corner)
	for _, l := range labels {
		first = max(first, utf8.RuneCountInString(l))
	}
	// One width per predicted column: wide enough for its label and its counts.
	widths := make([]int, c)
	for p := range widths {
		widths[p] = utf8.RuneCountInString(labels[p])
		for t := range cm {
			widths[p] = max(widths[p], len(strconv.Itoa(cm[t][p])))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", first, corner)
	for p, l := range labels {
		fmt.Fprintf(&b, "  %*s", widths[p], l)
	}
	b.WriteByte('\n')
	for t, row := range cm {
		fmt.Fprintf(&b, "%-*s", first, labels[t])
		for p, v := range row {
			fmt.Fprintf(&b, "  %*d", widths[p], v)
		}
		b.WriteByte('\n')
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write confusion matrix: %w", err)
	}
	return nil
}

// LogLoss returns the mean negative log-likelihood of the true classes,
// −(1/n) Σ log p[i, yTrue[i]], with prob the row-major n×c class
// probabilities. Each probability is clipped to [LogLossEps, 1−LogLossEps];
// rows are not renormalised, so only the true class's entry matters.
func LogLoss(yTrue []int, prob []float64, c int) (float64, error) {
	return LogLossClipped(yTrue, prob, c, LogLossEps, 1-LogLossEps)
}

// LogLossClipped is LogLoss with each true class's probability clipped to
// [lo, hi] instead (hi = +Inf: floored only). A caller whose probabilities
// are already clipped to other bounds scores them by its own, as
// rfm's calibration does with rfm.ProbEps.
func LogLossClipped(yTrue []int, prob []float64, c int, lo, hi float64) (float64, error) {
	if err := checkProb(yTrue, prob, c); err != nil {
		return 0, fmt.Errorf("log loss: %w", err)
	}
	if !(lo >= 0 && lo < hi) {
		return 0, fmt.Errorf("log loss: clip bounds [%g, %g] (want 0 ≤ lo < hi)", lo, hi)
	}
	sum := 0.0
	for i, t := range yTrue {
		p := min(max(prob[i*c+t], lo), hi)
		sum -= math.Log(p)
	}
	return sum / float64(len(yTrue)), nil
}

// Argmax returns the index of the largest entry of each row of the row-major
// n×c matrix prob; ties go to the lowest index. It turns class scores into
// predicted classes. A NaN is an error naming its row and column.
func Argmax(prob []float64, c int) ([]int, error) {
	if c < 1 {
		return nil, fmt.Errorf("argmax: number of classes c = %d, want ≥ 1", c)
	}
	if len(prob) == 0 || len(prob)%c != 0 {
		return nil, fmt.Errorf("argmax: %d values is not a positive multiple of c = %d", len(prob), c)
	}
	for i, v := range prob {
		if math.IsNaN(v) {
			return nil, fmt.Errorf("argmax: NaN at row %d, column %d", i/c, i%c)
		}
	}
	return ArgmaxRows(prob, len(prob)/c, c), nil
}

// ArgmaxRows is Argmax of n rows of c scores without the checks (the
// caller's sizes are right): the first largest of each row, a NaN never
// larger than another entry.
func ArgmaxRows(s []float64, n, c int) []int {
	out := make([]int, n)
	for i := range n {
		row := s[i*c : (i+1)*c]
		best := 0
		for k := 1; k < c; k++ {
			if row[k] > row[best] {
				best = k
			}
		}
		out[i] = best
	}
	return out
}

// AUC returns the area under the ROC curve of a binary problem: yTrue holds
// 0 (negative) or 1 (positive), score is higher for "more positive". It is
// computed as the Mann–Whitney statistic with average ranks, so a tie between
// a positive and a negative counts one half. With only one class present the
// AUC is undefined and the error wraps ErrUndefined.
func AUC(yTrue []int, score []float64) (float64, error) {
	if err := checkPair(len(yTrue), len(score), "yTrue", "score"); err != nil {
		return 0, fmt.Errorf("auc: %w", err)
	}
	pos := make([]bool, len(yTrue))
	for i, t := range yTrue {
		if t != 0 && t != 1 {
			return 0, fmt.Errorf("auc: yTrue[%d] = %d, want 0 or 1 (use MacroAUC for more classes)", i, t)
		}
		pos[i] = t == 1
	}
	a, err := binaryAUC(pos, score)
	if err != nil {
		return 0, fmt.Errorf("auc: %w", err)
	}
	return a, nil
}

// OneVsRestAUC returns, for each class k, the AUC of "class k versus the
// rest" scored by column k of the row-major n×c matrix prob. A class absent
// from yTrue has no positives, so its entry is NaN. If fewer than two classes
// occur in yTrue the error wraps ErrUndefined.
func OneVsRestAUC(yTrue []int, prob []float64, c int) ([]float64, error) {
	if err := checkProb(yTrue, prob, c); err != nil {
		return nil, fmt.Errorf("one-vs-rest auc: %w", err)
	}
	if c < 2 {
		return nil, fmt.Errorf("one-vs-rest auc: c = %d classes, want ≥ 2", c)
	}
	n := len(yTrue)
	counts := make([]int, c)
	for _, t := range yTrue {
		counts[t]++
	}
	present := 0
	for _, m := range counts {
		if m > 0 {
			present++
		}
	}
	if present < 2 {
		return nil, fmt.Errorf("one-vs-rest auc: only one class occurs in yTrue: %w", ErrUndefined)
	}
	out := make([]float64, c)
	pos := make([]bool, n)
	col := make([]float64, n)
	for k := range c {
		if counts[k] == 0 {
			out[k] = math.NaN()
			continue
		}
		for i, t := range yTrue {
			pos[i] = t == k
			col[i] = prob[i*c+k]
		}
		a, err := binaryAUC(pos, col)
		if err != nil {
			// Cannot be ErrUndefined here: two classes are present.
			return nil, fmt.Errorf("one-vs-rest auc: class %d: %w", k, err)
		}
		out[k] = a
	}
	return out, nil
}

// MacroAUC returns the unweighted mean of the one-vs-rest AUCs (see
// OneVsRestAUC). Classes absent from yTrue are skipped: their AUC does not
// exist, and counting them as 0.5 or 0 would reward or punish a model for the
// test split's composition. For c = 2 with rows summing to 1 this equals the
// binary AUC of column 1.
func MacroAUC(yTrue []int, prob []float64, c int) (float64, error) {
	per, err := OneVsRestAUC(yTrue, prob, c)
	if err != nil {
		return 0, fmt.Errorf("macro auc: %w", err)
	}
	sum, m := 0.0, 0
	for _, a := range per {
		if !math.IsNaN(a) {
			sum += a
			m++
		}
	}
	return sum / float64(m), nil
}

// binaryAUC is the Mann–Whitney U statistic normalised by n1·n0:
// (R1 − n1(n1+1)/2) / (n1·n0), R1 the sum of the positives' average ranks.
func binaryAUC(pos []bool, score []float64) (float64, error) {
	for i, s := range score {
		if math.IsNaN(s) {
			return 0, fmt.Errorf("score[%d] is NaN", i)
		}
	}
	n1 := 0
	for _, p := range pos {
		if p {
			n1++
		}
	}
	n0 := len(pos) - n1
	if n1 == 0 || n0 == 0 {
		return 0, fmt.Errorf("yTrue holds only one class: %w", ErrUndefined)
	}
	ranks := averageRanks(score)
	r1 := 0.0
	for i, p := range pos {
		if p {
			r1 += ranks[i]
		}
	}
	f1, f0 := float64(n1), float64(n0)
	return (r1 - f1*(f1+1)/2) / (f1 * f0), nil
}

// averageRanks returns the 1-based ascending ranks of v, tied values sharing
// the mean of the ranks they span. v must not contain NaN.
func averageRanks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	ranks := make([]float64, len(v))
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && v[idx[hi]] == v[idx[lo]] {
			hi++
		}
		// Positions lo..hi-1 hold ranks lo+1..hi; their mean is (lo+1+hi)/2.
		r := float64(lo+1+hi) / 2
		for _, i := range idx[lo:hi] {
			ranks[i] = r
		}
		lo = hi
	}
	return ranks
}

func checkPair(a, b int, na, nb string) error {
	if a != b {
		return fmt.Errorf("%s has %d values but %s has %d", na, a, nb, b)
	}
	if a == 0 {
		return errors.New("empty input")
	}
	return nil
}

func checkLabels(y []int, c int, name string) error {
	for i, v := range y {
		if v < 0 || v >= c {
			return fmt.Errorf("%s[%d] = %d is outside 0..%d", name, i, v, c-1)
		}
	}
	return nil
}

// checkProb validates yTrue against a row-major n×c probability matrix.
func checkProb(yTrue []int, prob []float64, c int) error {
	if c < 1 {
		return fmt.Errorf("number of classes c = %d, want ≥ 1", c)
	}
	n := len(yTrue)
	if n == 0 {
		return errors.New("empty input")
	}
	if len(prob) != n*c {
		return fmt.Errorf("prob has %d values, want n·c = %d·%d = %d (row-major n×c)", len(prob), n, c, n*c)
	}
	if err := checkLabels(yTrue, c, "yTrue"); err != nil {
		return err
	}
	for i, p := range prob {
		if math.IsNaN(p) {
			return fmt.Errorf("prob is NaN at row %d, column %d", i/c, i%c)
		}
	}
	return nil
}
