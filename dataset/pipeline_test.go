package dataset

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// readMixed reads the fixture testdata/mixed.csv with opt, failing the
// test on an error.
func readMixed(t *testing.T, opt ReadOptions) *Table {
	t.Helper()
	tab, err := ReadFile("testdata/mixed.csv", opt)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// fitFixture fits on testdata/mixed.csv with zip read as categorical.
func fitFixture(t *testing.T, features ...string) (*Table, *Pipeline) {
	t.Helper()
	tab := readMixed(t, ReadOptions{Categorical: []string{"zip"}})
	p, err := FitPipeline(tab, features)
	if err != nil {
		t.Fatal(err)
	}
	return tab, p
}

func TestFitPipeline(t *testing.T) {
	_, p := fitFixture(t, "age", "color", "zip", "income")
	wantNames := []string{"age", "age:missing", "color=blue", "color=green", "color=red", "color=<missing>", "zip=007", "zip=10", "zip=12", "income", "income:missing"}
	if got := p.FeatureNames(); !reflect.DeepEqual(got, wantNames) {
		t.Fatalf("FeatureNames\n got %v\nwant %v", got, wantNames)
	}
	if got := p.InputColumns(); !reflect.DeepEqual(got, []string{"age", "color", "zip", "income"}) {
		t.Errorf("InputColumns %v", got)
	}
	age := p.Inputs[0]
	// Observed ages 34, 29, 51, 42: mean 39, population variance 278/4.
	if age.Mean != 39 || math.Abs(age.Std-math.Sqrt(69.5)) > 1e-12 || !age.MissingIndicator {
		t.Errorf("age %+v", age)
	}
	opt := p.ReadOptions()
	if !reflect.DeepEqual(opt.Numeric, []string{"age", "income"}) || !reflect.DeepEqual(opt.Categorical, []string{"color", "zip"}) {
		t.Errorf("ReadOptions %+v", opt)
	}
}

func TestTransform(t *testing.T) {
	tab, p := fitFixture(t, "age", "color", "zip")
	x, n, d, err := p.Transform(tab)
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 || d != 9 || len(x) != n*d {
		t.Fatalf("n=%d d=%d len=%d", n, d, len(x))
	}
	s := math.Sqrt(69.5)
	want := [][]float64{
		{(34 - 39) / s, 0, 0, 0, 1, 0, 1, 0, 0}, // red, 007
		{0, 1, 1, 0, 0, 0, 0, 1, 0},             // age missing → mean; blue, 10
		{(29 - 39) / s, 0, 0, 0, 0, 1, 1, 0, 0}, // color missing
	}
	for i, w := range want {
		if !near(x[i*d:(i+1)*d], w, 1e-12) {
			t.Errorf("row %d = %v\nwant %v", i, x[i*d:(i+1)*d], w)
		}
	}
	// Standardized training columns have mean 0 (the imputed rows sit at 0).
	var sum float64
	for i := 0; i < n; i++ {
		sum += x[i*d]
	}
	if math.Abs(sum) > 1e-12 {
		t.Errorf("standardized age sums to %v", sum)
	}
}

func near(a, b []float64, tol float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

func TestTransformPrediction(t *testing.T) {
	_, p := fitFixture(t, "age", "color", "zip")
	// Other column order, an extra column, an unseen level, a missing cell,
	// and zip codes that look numeric.
	pred := "zip,extra,color,age\n007,x,purple,39\n12,y,green,\n"
	tab, err := Read(strings.NewReader(pred), "pred.csv", p.ReadOptions())
	if err != nil {
		t.Fatal(err)
	}
	x, n, d, err := p.Transform(tab)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{
		0, 0, 0, 0, 0, 0, 1, 0, 0, // purple is unseen: all zeros
		0, 1, 0, 1, 0, 0, 0, 0, 1,
	}
	if n != 2 || d != 9 || !near(x, want, 1e-12) {
		t.Errorf("x = %v\nwant %v", x, want)
	}

	// Read without the model's options, "007" becomes the number 7; it still
	// matches level "007" by value.
	tab, err = Read(strings.NewReader(pred), "pred.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := tab.Column("zip"); c.Kind != Numeric {
		t.Fatal("zip should read as numeric without options")
	}
	x2, _, _, err := p.Transform(tab)
	if err != nil || !near(x2, want, 1e-12) {
		t.Errorf("numeric zip: %v %v", err, x2)
	}
}

func TestTransformErrors(t *testing.T) {
	_, p := fitFixture(t, "age", "color")
	// A text cell in a numeric input: with the model's options the reader
	// reports it, without them Transform does; both name file, line, column.
	in := "color,age\nred,40\nblue,old\n"
	_, err := Read(strings.NewReader(in), "pred.csv", p.ReadOptions())
	if err == nil || err.Error() != `pred.csv: line 3, column 2 ("age"): "old" is not a number` {
		t.Errorf("reader: %v", err)
	}
	tab, err := Read(strings.NewReader(in), "pred.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = p.Transform(tab)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 3 || pe.Col != 2 || err.Error() != `pred.csv: line 3, column 2 ("age"): "old" is not a number, but the column is numeric in the model` {
		t.Errorf("transform: %v", err)
	}
	// Text that is a number or a missing token is accepted.
	tab = &Table{Source: "mem", Columns: []*Column{
		{Name: "age", Kind: Categorical, Str: []string{" 40 ", "NA"}},
		{Name: "color", Kind: Categorical, Str: []string{"red", "red"}},
	}}
	x, _, d, err := p.Transform(tab)
	// The statistics are summed on values scaled by the largest one: equal
	// to the textbook formula up to round-off.
	if err != nil || math.Abs(x[0]-(40-39)/math.Sqrt(69.5)) > 1e-15 || x[d] != 0 || x[d+1] != 1 {
		t.Errorf("numeric text: %v %v", err, x)
	}

	tab, err = Read(strings.NewReader("color,size\nred,1\n"), "pred.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, err = p.Transform(tab)
	if err == nil || err.Error() != `pred.csv: input column "age" is missing; the model needs "age", "color"` {
		t.Errorf("missing column: %v", err)
	}
}

func TestFitPipelineErrors(t *testing.T) {
	tab, err := Read(strings.NewReader("a,b,c\n1,,x\n2,,y\n"), "d.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		features []string
		want     string
	}{
		{nil, "dataset: no feature columns given"},
		{[]string{"a", "zz"}, `d.csv: feature column "zz" not found; the columns are "a", "b", "c"`},
		{[]string{"a", "a"}, `dataset: feature column "a" is listed twice`},
		{[]string{"b"}, `d.csv: feature column "b" has no values in the training rows (all missing); leave it out`},
	}
	for _, tc := range cases {
		if _, err := FitPipeline(tab, tc.features); err == nil || err.Error() != tc.want {
			t.Errorf("%v: got %v, want %s", tc.features, err, tc.want)
		}
	}
	inf := &Table{Columns: []*Column{{Name: "a", Num: []float64{1, math.Inf(1)}}}}
	if _, err := FitPipeline(inf, []string{"a"}); err == nil || !strings.Contains(err.Error(), "+Inf") {
		t.Errorf("Inf in training: %v", err)
	}
}

func TestConstantColumn(t *testing.T) {
	tab := &Table{Columns: []*Column{
		{Name: "c", Num: []float64{0.1, 0.1, 0.1}},
		{Name: "z", Num: []float64{0, 0, 0}},
	}}
	p, err := FitPipeline(tab, []string{"c", "z"})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range p.Inputs {
		if in.Std != 1 {
			t.Errorf("%s: std %v, want 1 for a constant column", in.Name, in.Std)
		}
	}
	x, _, _, err := p.Transform(tab)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range x {
		if math.Abs(v) > 1e-15 {
			t.Errorf("constant column transforms to %v", x)
			break
		}
	}
}

func TestPipelineJSON(t *testing.T) {
	tab, p := fitFixture(t, "age", "color", "zip", "income")
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"kind":"categorical"`) {
		t.Errorf("kind not stored by name: %s", b)
	}
	var q Pipeline
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	x1, _, _, err1 := p.Transform(tab)
	x2, _, _, err2 := q.Transform(tab)
	if err1 != nil || err2 != nil || !reflect.DeepEqual(x1, x2) {
		t.Errorf("round trip changed the transform: %v %v", err1, err2)
	}
	if !reflect.DeepEqual(p.FeatureNames(), q.FeatureNames()) {
		t.Error("round trip changed the feature names")
	}

	bad := []string{
		`{"inputs":[{"name":"a","kind":"numeric","mean":0,"std":0}]}`,
		`{"inputs":[{"name":"a","kind":"numeric","std":1},{"name":"a","kind":"numeric","std":1}]}`,
		`{"inputs":[{"name":"a","kind":"categorical","levels":["x","x"]}]}`,
		`{"inputs":[]}`,
	}
	for _, s := range bad {
		var p Pipeline
		if err := json.Unmarshal([]byte(s), &p); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := p.Transform(tab); err == nil {
			t.Errorf("invalid pipeline %s transformed", s)
		}
	}
	if err := json.Unmarshal([]byte(`{"inputs":[{"name":"a","kind":"text"}]}`), &q); err == nil {
		t.Error("unknown kind accepted")
	}
}

// Column finds columns by name through an index, and stays right when the
// exported Columns slice is changed after the index was built.
func TestColumnLookupAfterChanges(t *testing.T) {
	tab := &Table{}
	for j := range 1000 {
		tab.Columns = append(tab.Columns, &Column{Name: "c" + strconv.Itoa(j), Num: []float64{float64(j)}})
	}
	for j := range 1000 {
		c, ok := tab.Column("c" + strconv.Itoa(j))
		if !ok || c.Num[0] != float64(j) {
			t.Fatalf("c%d: %v %v", j, c, ok)
		}
	}
	if _, ok := tab.Column("nope"); ok {
		t.Fatal("found a column that does not exist")
	}
	// Rename, swap, append and drop behind the index's back.
	tab.Columns[5].Name = "renamed"
	tab.Columns[1], tab.Columns[2] = tab.Columns[2], tab.Columns[1]
	tab.Columns = append(tab.Columns, &Column{Name: "new", Num: []float64{-1}})
	tab.Columns = tab.Columns[10:]
	for _, tc := range []struct {
		name string
		want float64
		ok   bool
	}{{"renamed", 5, false}, {"c5", 0, false}, {"c1", 0, false}, {"c11", 11, true}, {"new", -1, true}, {"c999", 999, true}} {
		c, ok := tab.Column(tc.name)
		if ok != tc.ok || ok && c.Num[0] != tc.want {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, c, ok, tc.want, tc.ok)
		}
	}
	tab.Columns = append(tab.Columns[:1], &Column{Name: "renamed", Num: []float64{7}})
	if c, ok := tab.Column("renamed"); !ok || c.Num[0] != 7 {
		t.Errorf("renamed: %v %v", c, ok)
	}
}

// BenchmarkTransformWide encodes a 3-row table of 100 000 columns: the
// column lookups must not grow with the square of the width.
func BenchmarkTransformWide(b *testing.B) {
	const d = 100000
	tab := &Table{}
	names := make([]string, d)
	for j := range d {
		names[j] = "c" + strconv.Itoa(j)
		tab.Columns = append(tab.Columns, &Column{Name: names[j], Num: []float64{1, 2, float64(j)}})
	}
	p, err := FitPipeline(tab, names)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, _, _, err := p.Transform(tab); err != nil {
			b.Fatal(err)
		}
	}
}
