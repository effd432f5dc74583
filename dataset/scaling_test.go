package dataset

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// The scalings on one column with a missing cell and an outlier:
// observed 1, 2, 3, 4, 100 (mean 22, median 3, quartiles 2 and 4).
const scaleCSV = "v,c\n1,a\n2,b\n,a\n3,b\n4,a\n100,b\n"

func TestScalings(t *testing.T) {
	tab, err := Read(strings.NewReader(scaleCSV), "s.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mean := 22.0
	for _, tc := range []struct {
		s             Scaling
		center, scale float64
	}{
		{ScaleStandard, mean, math.Sqrt((21*21 + 20*20 + 19*19 + 18*18 + 78*78) / 5.0)},
		{"", mean, math.Sqrt((21*21 + 20*20 + 19*19 + 18*18 + 78*78) / 5.0)},
		{ScaleNone, 0, 1},
		{ScaleMinMax, 1, 99},
		{ScaleRobust, 3, 2},
	} {
		p, err := FitPipelineScaled(tab, []string{"v", "c"}, tc.s)
		if err != nil {
			t.Fatalf("%q: %v", tc.s, err)
		}
		in := p.Inputs[0]
		if math.Abs(in.Mean-tc.center) > 1e-12 || math.Abs(in.Std-tc.scale) > 1e-12 {
			t.Errorf("%q: centre %v scale %v, want %v and %v", tc.s, in.Mean, in.Std, tc.center, tc.scale)
		}
		if tc.s.IsStandard() != (p.Scaling == "") {
			t.Errorf("%q: pipeline scaling %q (the default is stored as \"\", as in older files)", tc.s, p.Scaling)
		}
		// A JSON round trip (the model file) keeps every feature, and a
		// missing cell takes the training mean under every scaling.
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q Pipeline
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		x, n, d, err := q.Transform(tab)
		if err != nil {
			t.Fatalf("%q: %v", tc.s, err)
		}
		if n != 6 || d != 4 { // v, v:missing, c=a, c=b
			t.Fatalf("%q: %d×%d", tc.s, n, d)
		}
		raw := []float64{1, 2, mean, 3, 4, 100}
		for i, v := range raw {
			want := (v - tc.center) / tc.scale
			if math.Abs(x[i*d]-want) > 1e-12 {
				t.Errorf("%q: row %d feature %v, want %v", tc.s, i, x[i*d], want)
			}
		}
		if x[2*d+1] != 1 || x[0*d+1] != 0 {
			t.Errorf("%q: missing indicator %v %v", tc.s, x[2*d+1], x[1])
		}
		switch tc.s {
		case ScaleMinMax:
			if x[0] != 0 || x[5*d] != 1 {
				t.Errorf("minmax: training range maps to [%v, %v], want [0, 1]", x[0], x[5*d])
			}
		case ScaleRobust:
			if x[3*d] != 0 {
				t.Errorf("robust: the median maps to %v, want 0", x[3*d])
			}
		}
	}
}

// A constant column keeps a scale of 1 under every scaling (no division by
// zero), and quartiles that coincide fall back to the standard deviation.
func TestScalingDegenerate(t *testing.T) {
	tab, err := Read(strings.NewReader("k,q\n5,0\n5,0\n5,0\n5,0\n5,10\n"), "k.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range Scalings() {
		p, err := FitPipelineScaled(tab, []string{"k", "q"}, s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if k := p.Inputs[0]; !(k.Std == 1) {
			t.Errorf("%s: constant column scale %v, want 1", s, k.Std)
		}
		if q := p.Inputs[1]; s == ScaleRobust && q.Std != 4 { // quartiles 0 and 0: std of 0,0,0,0,10 is 4
			t.Errorf("robust: scale %v, want the standard deviation 4", q.Std)
		}
		if err := p.Validate(); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}
}

func TestScalingRejected(t *testing.T) {
	tab, err := Read(strings.NewReader(scaleCSV), "s.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := FitPipelineScaled(tab, []string{"v"}, "zscore"); err == nil || !strings.Contains(err.Error(), `unknown scaling "zscore"`) {
		t.Errorf("unknown scaling: %v", err)
	}
	p, err := FitPipelineScaled(tab, []string{"v"}, ScaleMinMax)
	if err != nil {
		t.Fatal(err)
	}
	bad := *p
	bad.Scaling = "log"
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "log") {
		t.Errorf("pipeline with an unknown scaling: %v", err)
	}
	bad = *p
	bad.Inputs = append([]InputColumn(nil), p.Inputs...)
	inf := math.Inf(1)
	bad.Inputs[0].Fill = &inf
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "fill") {
		t.Errorf("pipeline with an infinite fill: %v", err)
	}
}
