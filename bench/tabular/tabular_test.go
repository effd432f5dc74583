package tabular

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

func TestSplitSizesFollowTheAuthorsRules(t *testing.T) {
	cases := []struct {
		n, maxTrain                  int
		train, val, test, repeatsWnt int
	}{
		{4052, 10000, 2836, 364, 852, 5},      // analcatdata_supreme: the paper's n-train 2836
		{13376, 10000, 9363, 1203, 2810, 3},   // MagicTelescope: the paper's 9363
		{10578, 10000, 7404, 952, 2222, 3},    // bank-marketing: the paper's 7404
		{20634, 10000, 10000, 3190, 7444, 1},  // california: capped at 10 000, one split
		{16000, 10000, 10000, 1800, 4200, 2},  // test in (3 000, 6 000]: two splits
		{53940, 50000, 37758, 4854, 11328, 1}, // diamonds large: the paper's 37758
		{1000000, 10000, 10000, 50000, 50000, 1},
		{1500, 10000, 1050, 135, 315, 5},
	}
	for _, c := range cases {
		tr, va, te, r := SplitSizes(c.n, c.maxTrain)
		if tr != c.train || va != c.val || te != c.test || r != c.repeatsWnt {
			t.Errorf("SplitSizes(%d, %d) = %d, %d, %d, %d; want %d, %d, %d, %d", c.n, c.maxTrain, tr, va, te, r, c.train, c.val, c.test, c.repeatsWnt)
		}
	}
}

func TestSplitsAreDisjointSeededAndSized(t *testing.T) {
	for _, n := range []int{1500, 5000, 16000} {
		sp, err := Splits(n, 10000, 7)
		if err != nil {
			t.Fatal(err)
		}
		tr, va, te, reps := SplitSizes(n, 10000)
		if len(sp) != reps {
			t.Fatalf("n=%d: %d splits, want %d", n, len(sp), reps)
		}
		for k, s := range sp {
			if len(s.Train) != tr || len(s.Val) != va || len(s.Test) != te {
				t.Fatalf("n=%d split %d: sizes %d/%d/%d, want %d/%d/%d", n, k, len(s.Train), len(s.Val), len(s.Test), tr, va, te)
			}
			seen := make([]bool, n)
			for _, part := range [][]int{s.Train, s.Val, s.Test} {
				for _, r := range part {
					if r < 0 || r >= n || seen[r] {
						t.Fatalf("n=%d split %d: row %d out of range or in two parts", n, k, r)
					}
					seen[r] = true
				}
			}
		}
		if reps > 1 && slices.Equal(sp[0].Test, sp[1].Test) {
			t.Errorf("n=%d: splits 1 and 2 have the same test rows", n)
		}
		again, _ := Splits(n, 10000, 7)
		other, _ := Splits(n, 10000, 8)
		if !slices.Equal(again[0].Train, sp[0].Train) {
			t.Errorf("n=%d: the same seed gave other rows", n)
		}
		if slices.Equal(other[0].Train, sp[0].Train) {
			t.Errorf("n=%d: another seed gave the same rows", n)
		}
	}
	if _, err := Splits(3, 10000, 1); err == nil {
		t.Error("3 rows: want an error, got splits")
	}
}

// writeGz writes a gzipped CSV.
func writeGz(t *testing.T, path string, header []string, rows [][]string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintln(&b, strings.Join(header, ","))
	for _, r := range rows {
		fmt.Fprintln(&b, strings.Join(r, ","))
	}
	testutil.WriteGzip(t, path, []byte(b.String()))
}

// synthRows makes a tiny task: x1, x2 numeric, c a category of 3 levels,
// the target depends on x1 and c (a class for classification).
func synthRows(n int, classification bool, seed uint64) [][]string {
	rng := rand.New(rand.NewPCG(seed, 1))
	rows := make([][]string, n)
	for i := range rows {
		x1, x2, c := rng.NormFloat64(), rng.NormFloat64(), rng.IntN(3)
		y := x1 + float64(c) + 0.1*rng.NormFloat64()
		ys := fmt.Sprintf("%.6g", y)
		if classification {
			ys = "no"
			if y > 1 {
				ys = "yes"
			}
		}
		rows[i] = []string{fmt.Sprintf("%.6g", x1), fmt.Sprintf("%.6g", x2), fmt.Sprint(c + 1), ys}
	}
	return rows
}

func TestCategoricalColumnsAreTheOnesTheNumTwinDrops(t *testing.T) {
	dir := t.TempDir()
	rows := synthRows(50, true, 1)
	writeGz(t, filepath.Join(dir, "clf_cat", "toy.csv.gz"), []string{"x1", "x2", "c", "y"}, rows)
	num := make([][]string, len(rows))
	for i, r := range rows {
		num[i] = []string{r[0], r[1], r[3]}
	}
	writeGz(t, filepath.Join(dir, "clf_num", "toy.csv.gz"), []string{"x1", "x2", "y"}, num)
	tasks, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || tasks[0].ID() != "clf_num/toy" || tasks[1].ID() != "clf_cat/toy" {
		t.Fatalf("tasks %v", tasks)
	}
	if !slices.Equal(tasks[1].Categorical, []string{"c"}) || tasks[0].Categorical != nil {
		t.Fatalf("categorical columns %v and %v, want [c] and none", tasks[1].Categorical, tasks[0].Categorical)
	}
	tab, err := Load(tasks[1])
	if err != nil {
		t.Fatal(err)
	}
	sp, _ := Splits(tab.Rows(), 10000, 1)
	e, err := tab.Encode(sp[0])
	if err != nil {
		t.Fatal(err)
	}
	if e.Train.D != 5 { // x1, x2 and c one-hot over 3 levels
		t.Fatalf("encoded width %d, want 5", e.Train.D)
	}
	if e.Train.Classes != 2 || len(e.TestLabels) != len(sp[0].Test) {
		t.Fatalf("classes %d, %d test labels", e.Train.Classes, len(e.TestLabels))
	}
}

// poison returns a copy of rows whose listed rows have absurd features
// and targets.
func poison(rows [][]string, which []int, classification bool) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = slices.Clone(r)
	}
	for k, i := range which {
		out[i][0], out[i][1], out[i][2] = "1e6", "-3e5", "99"
		out[i][3] = fmt.Sprint(1e9 * float64(k%7-3))
		if classification {
			out[i][3] = "ABSURD"
		}
	}
	return out
}

// TestPoisonedTestRowsChangeNoFitOrChoice runs the paper grid on split 1
// of a tiny task and again with that split's test rows poisoned (absurd
// features, a category and a target never seen): every validation score,
// every kept round and the choice must be identical; only the test scores
// may move (and must, or the test rows were not read at all).
func TestPoisonedTestRowsChangeNoFitOrChoice(t *testing.T) {
	for _, classification := range []bool{true, false} {
		group := "reg_cat"
		if classification {
			group = "clf_cat"
		}
		dir := t.TempDir()
		rows := synthRows(300, classification, 2)
		header := []string{"x1", "x2", "c", "y"}
		path := filepath.Join(dir, "clean", group, "toy.csv.gz")
		writeGz(t, path, header, rows)
		task := Task{Group: group, Name: "toy", Path: path, Categorical: []string{"c"}}
		sp, err := Splits(len(rows), 10000, 1)
		if err != nil {
			t.Fatal(err)
		}
		bad := task
		bad.Path = filepath.Join(dir, "poisoned", group, "toy.csv.gz")
		writeGz(t, bad.Path, header, poison(rows, sp[0].Test, classification))

		run := func(tk Task) ([]GridPoint, *Encoded) {
			tab, err := Load(tk)
			if err != nil {
				t.Fatal(err)
			}
			e, err := tab.Encode(sp[0])
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{DataDir: dir, OutDir: dir, Float32: false}
			if err := opt.defaults(); err != nil {
				t.Fatal(err)
			}
			f := &fitter{protocol: ProtocolPaper, seed: 1, fit: opt.fit}
			grid := newPaperGrid()
			if err := f.paperSplit(context.Background(), e, grid, classification, func(string) {}); err != nil {
				t.Fatal(err)
			}
			return grid, e
		}
		g1, e1 := run(task)
		g2, e2 := run(bad)
		if !slices.Equal(e1.Train.X, e2.Train.X) || !slices.Equal(e1.Val.X, e2.Val.X) {
			t.Fatalf("%s: the encoded training or validation rows changed with the test rows", group)
		}
		moved := false
		for i := range g1 {
			if !slices.Equal(g1[i].Val, g2[i].Val) || !slices.Equal(g1[i].Rounds, g2[i].Rounds) {
				t.Errorf("%s: grid point %d: validation %v rounds %v, poisoned %v %v", group, i, g1[i].Val, g1[i].Rounds, g2[i].Val, g2[i].Rounds)
			}
			if g1[i].Test[0] != g2[i].Test[0] {
				moved = true
			}
		}
		if bestPoint(g1) != bestPoint(g2) {
			t.Errorf("%s: the choice moved: %d → %d", group, bestPoint(g1), bestPoint(g2))
		}
		if !moved {
			t.Errorf("%s: no test score moved: the poisoned rows were not the test rows", group)
		}
		if classification {
			for _, l := range e2.TestLabels {
				if l != -1 {
					t.Fatalf("a poisoned test row kept a known class (%d)", l)
				}
			}
		}
	}
}

func TestBestPointUsesValidationOnly(t *testing.T) {
	g := []GridPoint{
		{Val: []float64{80, 82}, Test: []float64{99, 99}},
		{Val: []float64{82, 80}, Test: []float64{10, 10}}, // same mean: the first wins
		{Val: []float64{80, 81}, Test: []float64{50, 50}},
	}
	if b := bestPoint(g); b != 0 {
		t.Fatalf("best %d, want 0 (first strict maximum of the mean validation score)", b)
	}
	g[2].Val = []float64{90, 90}
	if b := bestPoint(g); b != 2 {
		t.Fatalf("best %d, want 2", b)
	}
}

func TestReferenceHoldsThePapersTables(t *testing.T) {
	ref, err := LoadReference()
	if err != nil {
		t.Fatal(err)
	}
	if len(ref) != 34 {
		t.Errorf("%d reference rows, want 34", len(ref))
	}
	row, ok := ref.Lookup(SizeMedium, "clf_num/california")
	if !ok || row.Scores[ColumnPaperRFM] != 90.29 || row.Scores["XGBoost"] != 90.17 || row.NTrain != 10000 {
		t.Errorf("clf_num/california: %+v", row)
	}
	row, ok = ref.Lookup(SizeLarge, "reg_num/diamonds")
	if !ok || row.Scores[ColumnPaperRFM] != 0.948 || row.NTrain != 37758 {
		t.Errorf("large reg_num/diamonds: %+v", row)
	}
	row, _ = ref.Lookup(SizeMedium, "reg_num/elevators")
	if !math.IsNaN(row.Scores["SAINT"]) || row.Scores[ColumnPaperRFM] != 0.923 {
		t.Errorf("reg_num/elevators: SAINT %v (want missing), RFM %v", row.Scores["SAINT"], row.Scores[ColumnPaperRFM])
	}
	for _, bad := range []string{
		"group\tsize\ttask\tpaper_name\tpaper_table\tpaper_n_train\tRFM\nclf_num\tmedium\tx\tx\t3\tten\t1\n",
		"group\tsize\ttask\tpaper_name\tpaper_table\tpaper_n_train\tRFM\nclf_num\tmedium\tx\tx\t3\t10\tabc\n",
		"group\tsize\ttask\tpaper_name\tpaper_table\tpaper_n_train\tRFM\nclf_num\tmedium\tx\tx\t3\t10\n",
		"task\tsize\n",
	} {
		if _, err := ParseReference([]byte(bad)); err == nil {
			t.Errorf("ParseReference accepted %q", bad)
		}
	}
}

// TestRankingMetricsOnAHandCheckedTable: three tasks, ours and the six
// baselines, ResNet and SAINT missing everywhere (dropped), FT-Transformer
// missing on task c (imputed by the row mean for the Friedman rank,
// skipped by the averages).
func TestRankingMetricsOnAHandCheckedTable(t *testing.T) {
	nan := math.NaN()
	pub := func(ft, gbt, rf, xgb float64) map[string]Opt {
		return map[string]Opt{"FT-Transformer": Opt(ft), "GradientBoostingTree": Opt(gbt), "RandomForest": Opt(rf), "ResNet": Opt(nan), "SAINT": Opt(nan), "XGBoost": Opt(xgb)}
	}
	rows := []TaskRow{
		{Task: "a", Ours: 90, Published: pub(80, 85, 70, 90)},
		{Task: "b", Ours: 60, Published: pub(70, 50, 80, 40)},
		{Task: "c", Ours: 50, Published: pub(nan, 100, 50, 75)},
		{Task: "d", Ours: 77}, // not in the paper: left out of the ranking
	}
	s, place, err := rank(rows, false)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][4]float64{}
	for _, x := range s {
		got[x.Classifier] = [4]float64{x.FriedmanRank, x.Average, x.PMA, x.ADTM}
	}
	// Ranks per task (1 = best, ties averaged):
	//   a: ours 1.5, XGB 1.5, GBT 3, FT 4, RF 5
	//   b: RF 1, FT 2, ours 3, GBT 4, XGB 5
	//   c: GBT 1, XGB 2, FT imputed (50+100+50+75)/4 = 68.75 → 3, ours 4.5, RF 4.5
	// PMA: ours (90/90 + 60/80 + 50/100)/3 = 75; ADTM ours: (100 + 50 + 0)/3 = 50.
	want := map[string][4]float64{
		ColumnOurs:             {3, 200.0 / 3, 75, 50},
		"XGBoost":              {8.5 / 3, 205.0 / 3, 100 * (1 + 0.5 + 0.75) / 3, 100 * (1 + 0 + 0.5) / 3},
		"GradientBoostingTree": {8.0 / 3, 235.0 / 3, 100 * (85.0/90 + 50.0/80 + 1) / 3, 100 * (0.75 + 0.25 + 1) / 3},
		"FT-Transformer":       {3, 75, 100 * (80.0/90 + 70.0/80) / 2, 100 * (0.5 + 0.75) / 2},
		"RandomForest":         {10.5 / 3, 200.0 / 3, 100 * (70.0/90 + 1 + 0.5) / 3, 100.0 / 3},
	}
	if len(s) != len(want) {
		t.Fatalf("%d methods ranked, want %d (ResNet and SAINT have no value): %+v", len(s), len(want), s)
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Fatalf("%s not ranked", k)
		}
		for i := range w {
			if math.Abs(g[i]-w[i]) > 1e-9 {
				t.Errorf("%s: [rank, average, PMA, ADTM] = %v, want %v", k, g, w)
				break
			}
		}
	}
	if s[0].Classifier != "GradientBoostingTree" || place != 4 {
		t.Errorf("order %v, our place %d; want GBT first and ours fourth (rank 3 tied with FT, whose average is higher)", s, place)
	}
	if s, _, err := rank(rows[3:], false); err != nil || s != nil {
		t.Errorf("no task in the paper: got %v, %v; want nothing", s, err)
	}
}

// TestRunResumesAndExportsTheSplits runs the paper protocol on a tiny
// task, checks the exported split indices are those of Splits, and that a
// second run reuses the result instead of computing it again.
func TestRunResumesAndExportsTheSplits(t *testing.T) {
	dir := t.TempDir()
	rows := synthRows(200, false, 3)
	writeGz(t, filepath.Join(dir, "data", "reg_cat", "toy.csv.gz"), []string{"x1", "x2", "c", "y"}, rows)
	opt := Options{DataDir: filepath.Join(dir, "data"), OutDir: filepath.Join(dir, "out")}
	rep, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Computed != 1 || len(rep.Results) != 1 || rep.Results[0].Status != StatusOK {
		t.Fatalf("report %+v", rep)
	}
	r := rep.Results[0]
	if r.Repeats != 5 || len(r.Splits) != 5 || len(r.Grid) != 10 || r.Train != 140 {
		t.Fatalf("result: %d repeats, %d splits, %d grid points, %d training rows", r.Repeats, len(r.Splits), len(r.Grid), r.Train)
	}
	if !(r.Score > 0.5) {
		t.Errorf("test R² %v on a task that is mostly x1 + c: want > 0.5", r.Score)
	}
	var sf SplitsFile
	data, err := os.ReadFile(filepath.Join(opt.OutDir, SplitsDir, "reg_cat__toy.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sf); err != nil {
		t.Fatal(err)
	}
	want, _ := Splits(200, 10000, 1)
	if len(sf.Splits) != len(want) || !slices.Equal(sf.Splits[2].Test, want[2].Test) || sf.Target != "y" || sf.Classify {
		t.Fatalf("exported splits differ from Splits(200, 10000, 1)")
	}
	for _, name := range []string{SummaryMDName, SummaryJSONName} {
		if _, err := os.Stat(filepath.Join(opt.OutDir, name)); err != nil {
			t.Error(err)
		}
	}
	var sum Report
	data, err = os.ReadFile(filepath.Join(opt.OutDir, SummaryJSONName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Groups) != 1 || len(sum.Groups[0].Rows) != 1 || !math.IsNaN(float64(sum.Groups[0].Rows[0].PaperRFM)) {
		t.Fatalf("summary.json: want one group with one task and no paper score (null), got %+v", sum.Groups)
	}
	again, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if again.Computed != 0 || again.Reused != 1 || again.Results[0].Score != r.Score {
		t.Fatalf("second run computed %d, reused %d", again.Computed, again.Reused)
	}
	opt.Protocol = ProtocolTuned
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("a run of another protocol into the same folder: got %v, want a refusal naming --force", err)
	}
}
