package dataset

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Task names for FitTarget and Target.Task.
const (
	TaskAuto           = "auto"
	TaskClassification = "classification"
	TaskRegression     = "regression"
)

// maxAutoClasses is the most distinct integer values a numeric target may
// have for "auto" to choose classification.
const maxAutoClasses = 20

// Target is the fitted encoding of the output column. Like Pipeline it is
// plain data, stored in model files.
type Target struct {
	Name string `json:"name"`
	Task string `json:"task"` // TaskClassification or TaskRegression
	// Classification: the class labels; class index k means Classes[k].
	// Sorted numerically when all labels are numbers, else lexicographically.
	Classes []string `json:"classes,omitempty"`
	// Regression: Encode returns (v - Mean) / Std.
	Mean float64 `json:"mean,omitempty"`
	Std  float64 `json:"std,omitempty"`
}

// FitTarget chooses the task and fits the encoding of target column c on the
// training rows. task is TaskAuto (or ""), TaskClassification or
// TaskRegression. Auto picks classification for a categorical column or a
// numeric one with only integer values and at most 20 distinct values.
func FitTarget(c *Column, task string) (*Target, error) {
	if c == nil {
		return nil, errors.New("dataset: target column is nil")
	}
	switch task {
	case "", TaskAuto, TaskClassification, TaskRegression:
	default:
		return nil, fmt.Errorf("dataset: unknown task %q; use auto, classification or regression", task)
	}
	if err := checkColumn(c); err != nil {
		return nil, err
	}
	n := c.Len()
	if n < 2 {
		return nil, fmt.Errorf("dataset: target %q has %d row(s); at least 2 are needed", c.Name, n)
	}
	for i := 0; i < n; i++ {
		if c.IsMissing(i) {
			return nil, c.cellError(i, "target value is missing; remove rows without a target value")
		}
		if c.Kind == Numeric && math.IsInf(c.Num[i], 0) {
			return nil, c.cellError(i, "target %q is %v; only finite values are allowed", c.Name, c.Num[i])
		}
	}
	if task == "" || task == TaskAuto {
		task = autoTask(c)
	}
	t := &Target{Name: c.Name, Task: task}
	if task == TaskRegression {
		y, err := targetValues(c)
		if err != nil {
			return nil, err
		}
		var ok bool
		if t.Mean, t.Std, ok = scaledMoments(y); !ok {
			extreme := 0
			for i, v := range y {
				if math.Abs(v) > math.Abs(y[extreme]) {
					extreme = i
				}
			}
			return nil, c.cellError(extreme, "target %q value %g: the target's spread overflows float64 when standardized; rescale it", c.Name, y[extreme])
		}
		if !(t.Std > 0) { // a constant target: keep it unscaled
			t.Std = 1
		}
		return t, nil
	}
	labels := map[string]bool{}
	for i := 0; i < n; i++ {
		labels[labelOf(c, i)] = true
	}
	for l := range labels {
		t.Classes = append(t.Classes, l)
	}
	sortLabels(t.Classes)
	if len(t.Classes) < 2 {
		return nil, fmt.Errorf("target %q has only one class (%q): classification needs at least 2", c.Name, t.Classes[0])
	}
	return t, nil
}

// checkColumn checks a single column's shape, as Table.Validate does.
func checkColumn(c *Column) error {
	t := Table{Source: c.source, Columns: []*Column{c}}
	if t.Source == "" {
		t.Source = "dataset"
	}
	return t.Validate()
}

func autoTask(c *Column) string {
	if c.Kind == Categorical {
		return TaskClassification
	}
	distinct := map[float64]bool{}
	for _, v := range c.Num {
		if v != math.Trunc(v) {
			return TaskRegression
		}
		distinct[v] = true
		if len(distinct) > maxAutoClasses {
			return TaskRegression
		}
	}
	return TaskClassification
}

// targetValues returns the target as numbers, parsing a categorical column.
func targetValues(c *Column) ([]float64, error) {
	if c.Kind == Numeric {
		return c.Num, nil
	}
	y := make([]float64, len(c.Str))
	for i, s := range c.Str {
		v, cls := parseCell(strings.TrimSpace(s))
		if cls != cellNumber {
			return nil, c.cellError(i, "regression target %q: %s; use classification for a categorical target", c.Name, numberError(s, cls))
		}
		y[i] = v
	}
	return y, nil
}

// labelOf is the class label of row i: the cell text, or for a numeric
// column the shortest form of the value ("3", "2.5").
func labelOf(c *Column, i int) string {
	if c.Kind == Categorical {
		return c.Str[i]
	}
	return strconv.FormatFloat(c.Num[i], 'g', -1, 64)
}

// sortLabels sorts numerically when every label is a number, else as strings.
func sortLabels(labels []string) {
	vals := make(map[string]float64, len(labels))
	for _, l := range labels {
		v, cls := parseCell(strings.TrimSpace(l))
		if cls != cellNumber {
			slices.Sort(labels)
			return
		}
		vals[l] = v
	}
	slices.SortFunc(labels, func(a, b string) int {
		if c := cmp.Compare(vals[a], vals[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b) // "1" and "1.0" are distinct labels
	})
}

// Validate checks a target, for example one loaded from a model file.
func (t *Target) Validate() error {
	switch t.Task {
	case TaskClassification:
		if len(t.Classes) < 2 {
			return fmt.Errorf("dataset: target %q: classification needs at least 2 classes, have %d", t.Name, len(t.Classes))
		}
		seen := map[string]bool{}
		for _, c := range t.Classes {
			if seen[c] {
				return fmt.Errorf("dataset: target %q lists class %q twice", t.Name, c)
			}
			seen[c] = true
		}
	case TaskRegression:
		if math.IsNaN(t.Mean) || math.IsInf(t.Mean, 0) || !(t.Std > 0) || math.IsInf(t.Std, 0) {
			return fmt.Errorf("dataset: target %q has invalid mean %v / std %v", t.Name, t.Mean, t.Std)
		}
	default:
		return fmt.Errorf("dataset: target %q has unknown task %q", t.Name, t.Task)
	}
	return nil
}

// IsClassification reports whether the task is classification.
func (t *Target) IsClassification() bool { return t.Task == TaskClassification }

// NumClasses returns the number of classes (0 for regression).
func (t *Target) NumClasses() int { return len(t.Classes) }

// Encode encodes column c (training or validation rows). Regression returns
// standardized values in y and nil classIdx; classification returns the class
// index of each row in classIdx and nil y. A missing value or a class not
// seen at fit time is an error naming the line.
func (t *Target) Encode(c *Column) (y []float64, classIdx []int, err error) {
	if err := t.Validate(); err != nil {
		return nil, nil, err
	}
	if c == nil {
		return nil, nil, errors.New("dataset: target column is nil")
	}
	if err := checkColumn(c); err != nil {
		return nil, nil, err
	}
	n := c.Len()
	for i := 0; i < n; i++ {
		if c.IsMissing(i) {
			return nil, nil, c.cellError(i, "target value is missing; remove rows without a target value")
		}
	}
	if t.Task == TaskRegression {
		vals, err := targetValues(c)
		if err != nil {
			return nil, nil, err
		}
		y = make([]float64, n)
		for i, v := range vals {
			if math.IsInf(v, 0) {
				return nil, nil, c.cellError(i, "target %q is %v; only finite values are allowed", c.Name, v)
			}
			y[i] = (v - t.Mean) / t.Std
		}
		return y, nil, nil
	}
	index := make(map[string]int, len(t.Classes))
	byValue := map[float64]int{} // "1.0" in a validation file still means class "1"
	for k, l := range t.Classes {
		index[l] = k
		if v, cls := parseCell(strings.TrimSpace(l)); cls == cellNumber {
			if _, dup := byValue[v]; !dup {
				byValue[v] = k
			}
		}
	}
	classIdx = make([]int, n)
	for i := 0; i < n; i++ {
		l := labelOf(c, i)
		k, ok := index[l]
		if !ok {
			if v, cls := parseCell(strings.TrimSpace(l)); cls == cellNumber {
				k, ok = byValue[v]
			}
		}
		if !ok {
			return nil, nil, c.cellError(i, "class %s of target %q was not seen in training; the classes are %s", quoteCell(l), c.Name, listNames(t.Classes))
		}
		classIdx[i] = k
	}
	return nil, classIdx, nil
}

// OneHot expands class indices into a row-major n×NumClasses matrix.
func (t *Target) OneHot(classIdx []int) ([]float64, error) {
	c := len(t.Classes)
	out := make([]float64, len(classIdx)*c)
	for i, k := range classIdx {
		if k < 0 || k >= c {
			return nil, fmt.Errorf("dataset: class index %d at row %d out of range [0, %d)", k, i, c)
		}
		out[i*c+k] = 1
	}
	return out, nil
}

// Label returns the label of class index k.
func (t *Target) Label(k int) (string, error) {
	if k < 0 || k >= len(t.Classes) {
		return "", fmt.Errorf("dataset: class index %d out of range [0, %d)", k, len(t.Classes))
	}
	return t.Classes[k], nil
}

// Labels maps class indices to labels.
func (t *Target) Labels(classIdx []int) ([]string, error) {
	out := make([]string, len(classIdx))
	for i, k := range classIdx {
		l, err := t.Label(k)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		out[i] = l
	}
	return out, nil
}

// Unstandardize maps standardized regression outputs back to target units,
// returning a new slice.
func (t *Target) Unstandardize(y []float64) []float64 {
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = v*t.Std + t.Mean
	}
	return out
}
