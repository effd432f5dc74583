package predictor

import (
	"math"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/metrics"
)

// A tally of two pieces scores as one Score call over all the rows.
func TestTallyPieces(t *testing.T) {
	for _, task := range []string{dataset.TaskClassification, dataset.TaskRegression} {
		csv := "x,y\n1,1\n2,2\n3,1\n4,2\n5,2\n6,1\n"
		tab, err := dataset.Read(strings.NewReader(csv), "t.csv", dataset.ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		col, _ := tab.TargetColumn("y")
		tg, err := dataset.FitTarget(col, task)
		if err != nil {
			t.Fatal(err)
		}
		p, err := dataset.FitPipelineScaled(tab, []string{"x"}, dataset.ScaleNone)
		if err != nil {
			t.Fatal(err)
		}
		c := 1
		if task == dataset.TaskClassification {
			c = 2
		}
		tally := &Tally{Target: tg}
		var labels []int
		var yTrue, all []float64
		for _, rows := range [][]int{{0, 1, 2}, {3, 4, 5}} {
			piece, err := tab.SelectRows(rows)
			if err != nil {
				t.Fatal(err)
			}
			ds, err := Encode(piece, p, tg)
			if err != nil {
				t.Fatal(err)
			}
			scores := make([]float64, ds.N*c)
			for i := range scores {
				scores[i] = math.Sin(float64(i + 3*rows[0]))
			}
			tally.Add(piece, ds, scores)
			all = append(all, scores...)
			labels = append(labels, ds.Labels...)
			yTrue = append(yTrue, TrueValues(tg, piece, ds.Y)...)
		}
		got, err := tally.Score(nil, c)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Score(tg, nil, labels, yTrue, all, 6, c)
		if err != nil {
			t.Fatal(err)
		}
		if tally.N != 6 {
			t.Errorf("%s: %d rows", task, tally.N)
		}
		switch w := want.(type) {
		case *metrics.Classification:
			if g := got.(*metrics.Classification); g.Accuracy != w.Accuracy || g.N != 6 {
				t.Errorf("accuracy %v, want %v", g.Accuracy, w.Accuracy)
			}
		case *metrics.Regression:
			if g := got.(*metrics.Regression); g.MSE != w.MSE || g.MSE == 0 {
				t.Errorf("MSE %v, want %v", g.MSE, w.MSE)
			}
		}
	}
}

func TestFitEncoding(t *testing.T) {
	tab, err := dataset.Read(strings.NewReader("x,c,y\n1,a,u\n2,b,v\n3,a,u\n"), "t.csv", dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tg, p, err := FitEncoding(tab, "y", dataset.TaskAuto, dataset.ScaleStandard)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Name != "y" || !tg.IsClassification() || strings.Join(p.InputColumns(), ",") != "x,c" {
		t.Errorf("target %q classification %v inputs %v", tg.Name, tg.IsClassification(), p.InputColumns())
	}
	if _, _, err := FitEncoding(tab, "nope", dataset.TaskAuto, dataset.ScaleStandard); err == nil {
		t.Error("a missing target column was accepted")
	}
	only, _ := dataset.Read(strings.NewReader("y\na\nb\n"), "t.csv", dataset.ReadOptions{})
	if _, _, err := FitEncoding(only, "y", dataset.TaskAuto, dataset.ScaleStandard); err == nil || !strings.Contains(err.Error(), "no feature columns") {
		t.Errorf("a table of only the target: %v", err)
	}
}
