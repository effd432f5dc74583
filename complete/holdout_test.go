package complete

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

func TestHoldoutEntries(t *testing.T) {
	y, _ := randomProblem(4, 30, 20, 3, 0.4)
	h, err := HoldoutEntries(y, 0.25, 9)
	if err != nil {
		t.Fatal(err)
	}
	want := int(math.Round(0.25 * float64(y.Count())))
	if len(h.Cells) != want || h.Train.Count() != y.Count()-want {
		t.Fatalf("held out %d of %d (train %d), want %d", len(h.Cells), y.Count(), h.Train.Count(), want)
	}
	for q, k := range h.Cells {
		if !y.Observed[k] || h.Train.Observed[k] || h.Truth[q] != y.Values[k] {
			t.Fatalf("cell %d: observed %v, in train %v, truth %v vs %v", k, y.Observed[k], h.Train.Observed[k], h.Truth[q], y.Values[k])
		}
	}
	for i := 0; i < y.Rows; i++ {
		c := 0
		for j := 0; j < y.Cols; j++ {
			if h.Train.Observed[i*y.Cols+j] {
				c++
			}
		}
		if c == 0 {
			t.Fatalf("row %d lost every observed cell", i)
		}
	}
	again, _ := HoldoutEntries(y, 0.25, 9)
	other, _ := HoldoutEntries(y, 0.25, 10)
	if !slices.Equal(again.Cells, h.Cells) || slices.Equal(other.Cells, h.Cells) {
		t.Error("the holdout is not a function of the seed")
	}
	if _, err := HoldoutEntries(y, 1, 1); err == nil {
		t.Error("share 1 accepted")
	}
	if _, err := HoldoutEntries(y, 1e-9, 1); err == nil || !strings.Contains(err.Error(), "no entry") {
		t.Errorf("empty holdout: %v", err)
	}
}

func TestHoldoutColumns(t *testing.T) {
	y, _ := randomProblem(4, 30, 20, 3, 0.4)
	h, err := HoldoutColumns(y, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Columns) != 5 {
		t.Fatalf("%d columns", len(h.Columns))
	}
	for _, j := range h.Columns {
		for i := 0; i < y.Rows; i++ {
			if h.Train.Observed[i*y.Cols+j] {
				t.Fatalf("held-out column %d still observed in row %d", j, i)
			}
		}
	}
	if _, err := HoldoutColumns(y, 40, 2); err == nil {
		t.Error("more columns than there are accepted")
	}
}

func TestScoreKnownValues(t *testing.T) {
	truth := []float64{1, 2, 3, 4}
	pred := []float64{1, 2, 3, 5}
	cols := []int{0, 0, 1, 1}
	s := Score(truth, pred, cols)
	if math.Abs(s.RMSE-0.5) > 1e-15 || math.Abs(s.MAE-0.25) > 1e-15 {
		t.Errorf("RMSE %v MAE %v", s.RMSE, s.MAE)
	}
	if math.Abs(s.R2-(1-1/5.0)) > 1e-15 { // SST = 5
		t.Errorf("R² %v", s.R2)
	}
	// Per column: column 0 perfect (R² 1, cosine 1); column 1: truth (3,4),
	// pred (3,5): R² = 1 − 1/0.5 = −1, cosine 29/(5·√34).
	if math.Abs(s.MeanR2-0) > 1e-15 || s.R2Columns != 2 {
		t.Errorf("mean R² %v over %d", s.MeanR2, s.R2Columns)
	}
	if want := (1 + 29/(5*math.Sqrt(34))) / 2; math.Abs(s.MeanCosine-want) > 1e-15 {
		t.Errorf("mean cosine %v, want %v", s.MeanCosine, want)
	}
	if want := (1 + 4 + 9 + 20) / math.Sqrt(30*39); math.Abs(s.ThesisR-want) > 1e-15 {
		t.Errorf("thesis r %v, want %v", s.ThesisR, want)
	}
}

// Hard-impute recovers an exactly low-rank matrix from most of its cells:
// rank 3 plus row offsets, which after removing the observed row means is
// rank 4.
func TestSVDImputeRecoversLowRank(t *testing.T) {
	s := Synthetic{M: 40, N: 50, Rank: 3, MetaDim: 2, Noise: 0, MetaNoise: 0, Observed: 0.6, Seed: 5}
	y, _, _ := s.Generate()
	h, err := HoldoutEntries(y, 0.2, 1)
	if err != nil {
		t.Fatal(err)
	}
	out, it, err := SVDImpute(context.Background(), h.Train, 4, 3000, 1e-12)
	if err != nil {
		t.Fatal(err)
	}
	if sc := h.Score(out); sc.RMSE > 1e-3 {
		t.Errorf("rank-4 residual: held-out RMSE %v after %d rounds", sc.RMSE, it)
	}
	if sc := h.Score(RowMean(h.Train)); sc.RMSE < 0.1 {
		t.Errorf("row mean RMSE %v: the test is not testing anything", sc.RMSE)
	}
}

func TestReadWideLongMetadata(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string { return testutil.WriteFile(t, dir, name, s) }
	ctx := context.Background()
	y, err := ReadWide(ctx, write("w.csv", "gene,a,b,c\ng1,1,NA,3\ng2,,5,NaN\n"), ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if y.Rows != 2 || y.Cols != 3 || y.RowIDs[1] != "g2" || y.ColIDs[2] != "c" || y.Count() != 3 || !y.Observed[1*3+1] || y.Values[1*3+1] != 5 {
		t.Fatalf("wide: %+v", y)
	}
	var b bytes.Buffer
	if err := WriteCSV(&b, y); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "gene,a,b,c\ng1,1,,3\ng2,,5,\n"; got != want {
		t.Errorf("written %q, want %q", got, want)
	}
	l, err := ReadLong(ctx, write("l.csv", "row,column,value\nu1,m2,4\nu2,m1,1.5\nu1,m1,2\n"), LongOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Rows != 2 || l.Cols != 2 || l.RowIDs[0] != "u1" || l.ColIDs[0] != "m2" || l.Values[0*2+1] != 2 || l.Observed[1*2+0] {
		t.Fatalf("long: %+v", l)
	}
	pr, extra, err := ReadMetadata(ctx, write("m.csv", "id,size,kind\nb,2,x\na,1,y\nz,9,x\nc,3,x\n"), []string{"a", "b", "c"}, MetaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// size standardized over the 4 rows, kind one-hot (x, y).
	if pr.N != 3 || pr.P != 3 || extra != 1 || pr.E[0*3+2] != 1 || pr.E[1*3+1] != 1 {
		t.Fatalf("metadata prior %+v, %d extra", pr, extra)
	}
	_, _, err = ReadMetadata(ctx, filepath.Join(dir, "m.csv"), []string{"a", "q"}, MetaOptions{})
	if err == nil || !strings.Contains(err.Error(), `"q"`) {
		t.Errorf("missing id: %v", err)
	}
}

// Scores that are undefined (all held-out cells equal) travel as JSON null.
func TestScoresJSONUndefined(t *testing.T) {
	s := Score([]float64{2, 2}, []float64{1, 3}, []int{0, 1})
	if !math.IsNaN(s.Pearson) && !math.IsInf(s.R2, 0) {
		t.Fatalf("expected undefined scores: %+v", s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"pearson":null`) || !strings.Contains(string(b), `"rmse":1`) {
		t.Errorf("JSON %s", b)
	}
	var back Scores
	if err := json.Unmarshal(b, &back); err != nil || back.RMSE != 1 || !math.IsNaN(back.Pearson) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}
