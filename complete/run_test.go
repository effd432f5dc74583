package complete

import (
	"context"
	"math"
	"slices"
	"testing"
)

func TestAddColumns(t *testing.T) {
	y := NewMatrix(2, 2)
	y.ColIDs = []string{"a", "b"}
	y.Values[1], y.Observed[1] = 5, true
	y.Values[2], y.Observed[2] = 7, true
	z, err := AddColumns(y, []string{"c", "d"})
	if err != nil {
		t.Fatal(err)
	}
	if z.Cols != 4 || !slices.Equal(z.ColIDs, []string{"a", "b", "c", "d"}) {
		t.Fatalf("columns %d %v", z.Cols, z.ColIDs)
	}
	if !z.Observed[1] || z.Values[1] != 5 || !z.Observed[4] || z.Values[4] != 7 {
		t.Errorf("observed cells moved: %v %v", z.Values, z.Observed)
	}
	for i := range 2 {
		for j := 2; j < 4; j++ {
			if z.Observed[i*4+j] {
				t.Errorf("new cell (%d, %d) observed", i, j)
			}
		}
	}
	if _, err := AddColumns(y, []string{"b"}); err == nil {
		t.Error("an existing column id was accepted")
	}
	if _, err := AddColumns(y, []string{"c", "c"}); err == nil {
		t.Error("a repeated new id was accepted")
	}
	if got := NewMatrix(1, 3).ColID(2); got != "c2" {
		t.Errorf("ColID without ids = %q", got)
	}
}

// The study's prior for one name equals that prior normalized; with an
// identity weight it differs, and an unknown name is an error.
func TestStudyPrior(t *testing.T) {
	y, meta := randomProblem(3, 12, 8, 4, 0.3)
	s := &Study{Priors: []string{"metadata"}, Meta: meta}
	p, err := s.Prior(y)
	if err != nil {
		t.Fatal(err)
	}
	want := *meta
	want.E = append([]float64(nil), meta.E...)
	if err := want.Normalize(y.ColName); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.E, want.E) {
		t.Error("one metadata prior is not the normalized metadata")
	}
	if slices.Equal(meta.E, p.E) {
		t.Error("the metadata prior was normalized in place")
	}
	s.Identity = 1.5
	q, err := s.Prior(y)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.E) <= len(p.E) {
		t.Errorf("identity part missing: %d ≤ %d embedding values", len(q.E), len(p.E))
	}
	if _, err := (&Study{Priors: []string{"nope"}}).Prior(y); err == nil {
		t.Error("an unknown prior was accepted")
	}
	if _, err := (&Study{Priors: []string{"metadata"}}).Prior(y); err == nil {
		t.Error("the metadata prior without metadata was accepted")
	}
}

// Score on a column holdout names the held-out columns, scores the NTK and
// the three baselines, and the NTK's score matches completing by hand.
func TestStudyScore(t *testing.T) {
	ctx := context.Background()
	y, meta := randomProblem(5, 20, 10, 4, 0.2)
	y.ColIDs = make([]string, y.Cols)
	for j := range y.ColIDs {
		y.ColIDs[j] = string(rune('a' + j))
	}
	h, err := HoldoutColumns(y, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := &Study{Priors: []string{"metadata"}, Meta: meta, Identity: 1.5, Options: Options{Depth: 1}, Baselines: true, SVDRank: 3}
	r, err := s.Score(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	if r.Cells != len(h.Cells) || len(r.Columns) != 2 || r.Columns[0] != y.ColIDs[h.Columns[0]] {
		t.Errorf("cells %d columns %v", r.Cells, r.Columns)
	}
	for _, name := range []string{"row_mean", "column_mean", "svd_rank3"} {
		if _, ok := r.Baselines[name]; !ok {
			t.Errorf("baseline %s missing: %v", name, r.Baselines)
		}
	}
	res, err := s.Complete(ctx, h.Train)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := r.NTK.RMSE, h.Score(res.Y).RMSE; math.IsNaN(got) || got != want {
		t.Errorf("NTK RMSE %v, completing by hand %v", got, want)
	}
	rep := s.NewReport("m.csv", y)
	rep.Fill(res)
	if rep.Rows != 20 || rep.Cols != 10 || rep.Prior != "metadata" || rep.Groups == 0 || rep.Memory == 0 {
		t.Errorf("report %+v", rep)
	}
}
