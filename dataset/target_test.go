package dataset

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func numCol(name string, v ...float64) *Column { return &Column{Name: name, Num: v} }
func strCol(name string, v ...string) *Column {
	return &Column{Name: name, Kind: Categorical, Str: v}
}

func TestFitTargetTask(t *testing.T) {
	ints21 := make([]float64, 21)
	for i := range ints21 {
		ints21[i] = float64(i)
	}
	cases := []struct {
		name    string
		col     *Column
		task    string
		want    string
		classes []string
	}{
		{"categorical", strCol("y", "b", "a", "b"), "auto", TaskClassification, []string{"a", "b"}},
		{"empty task is auto", strCol("y", "b", "a"), "", TaskClassification, []string{"a", "b"}},
		{"few integers", numCol("y", 3, 1, 2, 1), "auto", TaskClassification, []string{"1", "2", "3"}},
		{"fractional", numCol("y", 1, 2.5, 1), "auto", TaskRegression, nil},
		{"21 integers", numCol("y", ints21...), "auto", TaskRegression, nil},
		{"20 integers", numCol("y", ints21[:20]...), "auto", TaskClassification, nil},
		{"forced classification", numCol("y", 0.5, 1.5), "classification", TaskClassification, []string{"0.5", "1.5"}},
		{"forced regression", numCol("y", 0, 1, 0), "regression", TaskRegression, nil},
		{"numeric text labels sort by value", strCol("y", "10", "9", "2", "-1.5"), "auto", TaskClassification, []string{"-1.5", "2", "9", "10"}},
		{"mixed labels sort as text", strCol("y", "b", "10", "a", "9"), "auto", TaskClassification, []string{"10", "9", "a", "b"}},
		{"regression from numeric text", strCol("y", "1", "2"), "regression", TaskRegression, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := FitTarget(tc.col, tc.task)
			if err != nil {
				t.Fatal(err)
			}
			if tg.Task != tc.want || tg.Name != "y" {
				t.Errorf("task %q name %q, want %q", tg.Task, tg.Name, tc.want)
			}
			if tc.classes != nil && !reflect.DeepEqual(tg.Classes, tc.classes) {
				t.Errorf("classes %q, want %q", tg.Classes, tc.classes)
			}
			if err := tg.Validate(); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestFitTargetErrors(t *testing.T) {
	tab, err := Read(strings.NewReader("a,y\n1,x\n2,\n3,z\n"), "data.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	y, _ := tab.Column("y")
	cases := []struct {
		name string
		col  *Column
		task string
		want string
	}{
		{"missing value", y, "auto", `data.csv: line 3, column 2 ("y"): target value is missing; remove rows without a target value`},
		{"NaN in code", numCol("y", 1, math.NaN()), "auto", `row 2, column "y": target value is missing; remove rows without a target value`},
		{"one class", strCol("y", "a", "a"), "auto", `target "y" has only one class ("a"): classification needs at least 2`},
		{"one row", strCol("y", "a"), "auto", `dataset: target "y" has 1 row(s); at least 2 are needed`},
		{"unknown task", strCol("y", "a", "b"), "ranking", `dataset: unknown task "ranking"; use auto, classification or regression`},
		{"text regression", strCol("y", "1", "x"), "regression", `row 2, column "y": regression target "y": "x" is not a number; use classification for a categorical target`},
		{"infinite", numCol("y", 1, math.Inf(1)), "regression", `row 2, column "y": target "y" is +Inf; only finite values are allowed`},
		{"nil", nil, "auto", "dataset: target column is nil"},
		{"ragged", &Column{Name: "y", Num: []float64{1, 2}, Missing: []bool{false}}, "auto", `dataset: column "y" has 1 missing flags for 2 rows`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FitTarget(tc.col, tc.task)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
	var pe *ParseError
	if _, err := FitTarget(y, "auto"); !errors.As(err, &pe) || pe.Line != 3 || pe.Row != 2 {
		t.Errorf("missing target ParseError: %+v", pe)
	}
}

func TestTargetRegression(t *testing.T) {
	tg, err := FitTarget(numCol("y", 1, 2, 3, 4), TaskRegression)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Task != TaskRegression || tg.Mean != 2.5 || math.Abs(tg.Std-math.Sqrt(1.25)) > 1e-15 {
		t.Fatalf("%+v", tg)
	}
	y, idx, err := tg.Encode(numCol("y", 2.5, 5))
	if err != nil || idx != nil {
		t.Fatal(err)
	}
	if y[0] != 0 || math.Abs(y[1]-2.5/math.Sqrt(1.25)) > 1e-12 {
		t.Errorf("encoded %v", y)
	}
	back := tg.Unstandardize(y)
	if math.Abs(back[0]-2.5) > 1e-12 || math.Abs(back[1]-5) > 1e-12 {
		t.Errorf("Unstandardize %v", back)
	}
	// A constant target is kept unscaled rather than divided by zero.
	c, err := FitTarget(numCol("y", 7, 7, 7), "regression")
	if err != nil || c.Std != 1 || c.Mean != 7 {
		t.Errorf("constant target %+v %v", c, err)
	}
}

func TestTargetClassification(t *testing.T) {
	tg, err := FitTarget(numCol("y", 2, 0, 1, 2), "auto")
	if err != nil {
		t.Fatal(err)
	}
	if !tg.IsClassification() || tg.NumClasses() != 3 {
		t.Fatalf("%+v", tg)
	}
	// Labels from another file may be text and spelled differently.
	y, idx, err := tg.Encode(strCol("y", "1.0", "2", "0"))
	if err != nil || y != nil || !reflect.DeepEqual(idx, []int{1, 2, 0}) {
		t.Errorf("Encode = %v %v %v", y, idx, err)
	}
	_, _, err = tg.Encode(numCol("y", 0, 5))
	if err == nil || err.Error() != `row 2, column "y": class "5" of target "y" was not seen in training; the classes are "0", "1", "2"` {
		t.Errorf("unseen class: %v", err)
	}
	oh, err := tg.OneHot([]int{2, 0})
	if err != nil || !reflect.DeepEqual(oh, []float64{0, 0, 1, 1, 0, 0}) {
		t.Errorf("OneHot %v %v", oh, err)
	}
	if _, err := tg.OneHot([]int{3}); err == nil {
		t.Error("OneHot accepted class 3")
	}
	labels, err := tg.Labels([]int{2, 1})
	if err != nil || !reflect.DeepEqual(labels, []string{"2", "1"}) {
		t.Errorf("Labels %v %v", labels, err)
	}
	if _, err := tg.Label(-1); err == nil {
		t.Error("Label accepted -1")
	}

	b, _ := json.Marshal(tg)
	var back Target
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(&back, tg) {
		t.Errorf("JSON round trip %+v %v", back, err)
	}
	for _, bad := range []Target{
		{Name: "y", Task: TaskClassification, Classes: []string{"a"}},
		{Name: "y", Task: TaskClassification, Classes: []string{"a", "a"}},
		{Name: "y", Task: TaskRegression, Std: 0},
		{Name: "y", Task: "other"},
	} {
		if _, _, err := bad.Encode(strCol("y", "a")); err == nil {
			t.Errorf("invalid target %+v encoded", bad)
		}
	}
}

// fitTarget takes the column name of tab as the target and fits it with
// TaskAuto, failing the test on an error.
func fitTarget(t *testing.T, tab *Table, name string) (*Column, *Target) {
	t.Helper()
	c, err := tab.TargetColumn(name)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := FitTarget(c, TaskAuto)
	if err != nil {
		t.Fatal(err)
	}
	return c, tg
}

func TestTargetFromFixture(t *testing.T) {
	tab := readMixed(t, ReadOptions{})
	c, tg := fitTarget(t, tab, "y")
	_, idx, err := tg.Encode(c)
	if err != nil || !reflect.DeepEqual(tg.Classes, []string{"no", "yes"}) || !reflect.DeepEqual(idx, []int{1, 0, 1, 0, 1, 0}) {
		t.Errorf("classes %q idx %v err %v", tg.Classes, idx, err)
	}
}
