package predictor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/ensemble"
	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/predictor"
	"github.com/rfmkit/rfm/synth"
)

// tableCSV is a small mixed table: two numbers (one with missing cells),
// a colour and a yes/no target that depends on all three.
func tableCSV(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	b.WriteString("id,x1,x2,color,y,v\n")
	colors := []string{"red", "green", "blue"}
	for i := 0; i < n; i++ {
		x1, x2, c := r.NormFloat64(), r.NormFloat64(), r.IntN(3)
		y := "no"
		if x1+0.5*x2+float64(c)-1 > 0 {
			y = "yes"
		}
		x2s := fmt.Sprint(x2)
		if i%17 == 3 {
			x2s = "NA"
		}
		fmt.Fprintf(&b, "%d,%v,%s,%s,%s,%v\n", i, x1, x2s, colors[c], y, 2*x1+float64(c)+0.1*r.NormFloat64())
	}
	return b.String()
}

// fitFile fits an exact model (or a tree) on tableCSV with Train and
// writes it with its pipeline; it returns the file's path.
func fitFile(t *testing.T, useTree bool, task string) string {
	t.Helper()
	target, other := "y", "v"
	if task == dataset.TaskRegression {
		target, other = "v", "y"
	}
	tab, err := dataset.Read(strings.NewReader(tableCSV(600, 1)), "train.csv", dataset.ReadOptions{Ignore: []string{"id", other}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 2
	if useTree {
		cfg.Solver, cfg.LeafSize = rfm.SolverTree, 200
	}
	m, err := predictor.Train(context.Background(), tab, predictor.TrainOptions{Target: target, Task: task, Config: &cfg})
	if err != nil {
		t.Fatal(err)
	}
	if (m.Kind() == "tree") != useTree {
		t.Fatalf("tree %v, want %v", m.Kind() == "tree", useTree)
	}
	m.Training = &predictor.TrainingInfo{Data: "train.csv", Rows: tab.NRows()}
	path := filepath.Join(t.TempDir(), "m.rfm")
	if err := m.WriteFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	return path
}

// rowsOf is the test table as the three request layouts see it.
func rowsOf(t *testing.T, text string) (records []map[string]any, columns []string, rows [][]any) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(text), "\n")
	columns = []string{"x2", "color", "x1"} // another order than the file's
	for _, line := range lines[1:] {
		f := strings.Split(line, ",")
		num := func(s string) any {
			if s == "NA" {
				return nil
			}
			var v float64
			if _, err := fmt.Sscan(s, &v); err != nil {
				t.Fatal(err)
			}
			return v
		}
		records = append(records, map[string]any{"x1": num(f[1]), "x2": num(f[2]), "color": f[3]})
		rows = append(rows, []any{json.Number(strings.Replace(f[2], "NA", "0", 1)), f[3], num(f[1])})
		if f[2] == "NA" {
			rows[len(rows)-1][0] = nil
		}
	}
	return records, columns, rows
}

// Raw rows as a file, as records and as columns+rows give the same bits as
// the numeric path, for exact and tree models, classification and
// regression; labels and probabilities agree with the scores.
func TestRawRowsEqualFeatures(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		tree bool
		task string
	}{{false, dataset.TaskClassification}, {true, dataset.TaskClassification}, {false, dataset.TaskRegression}} {
		name := fmt.Sprintf("tree=%v/%s", c.tree, c.task)
		path := fitFile(t, c.tree, c.task)
		m, err := predictor.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Checksum) != 64 || m.Training == nil || m.Training.Rows != 600 {
			t.Fatalf("%s: loaded %+v", name, m)
		}
		text := tableCSV(300, 2)
		tab, err := m.ReadTable(ctx, strings.NewReader(text), "test.csv", "")
		if err != nil {
			t.Fatal(err)
		}
		x, n, _, err := m.Pipeline.Transform(tab)
		if err != nil {
			t.Fatal(err)
		}
		want, err := m.PredictFeatures(ctx, x, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		fromTable, err := m.Predict(ctx, tab)
		if err != nil {
			t.Fatal(err)
		}
		records, columns, rows := rowsOf(t, text)
		fromRecords, err := m.PredictRecords(ctx, "", records)
		if err != nil {
			t.Fatal(err)
		}
		fromRows, err := m.PredictRows(ctx, "", columns, rows)
		if err != nil {
			t.Fatal(err)
		}
		for label, p := range map[string]*predictor.Predictions{"table": fromTable, "records": fromRecords, "rows": fromRows} {
			if p.N != n || len(p.Scores) != len(want) {
				t.Fatalf("%s %s: %d rows, %d scores", name, label, p.N, len(p.Scores))
			}
			for i := range want {
				if math.Float64bits(p.Scores[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%s %s: score %d is %v, features give %v", name, label, i, p.Scores[i], want[i])
				}
			}
		}
		p := fromRecords
		if c.task == dataset.TaskRegression {
			if p.Labels != nil || len(p.Values) != n || p.Values[5] != want[5]*m.Target.Std+m.Target.Mean {
				t.Errorf("%s: values %v", name, p.Values[:6])
			}
			continue
		}
		if !reflect.DeepEqual(p.Classes, []string{"no", "yes"}) || len(p.Labels) != n || len(p.Proba) != 2*n {
			t.Fatalf("%s: %v, %d labels, %d probabilities", name, p.Classes, len(p.Labels), len(p.Proba))
		}
		right := 0
		for i := 0; i < n; i++ {
			k := 0
			if want[2*i+1] > want[2*i] {
				k = 1
			}
			if p.Class[i] != k || p.Labels[i] != p.Classes[k] || math.Abs(p.Proba[2*i]+p.Proba[2*i+1]-1) > 1e-12 {
				t.Fatalf("%s: row %d: class %d %q, proba %v, scores %v", name, i, p.Class[i], p.Labels[i], p.Proba[2*i:2*i+2], want[2*i:2*i+2])
			}
			if (p.Proba[2*i+1] > 0.5) != (k == 1) {
				t.Fatalf("%s: row %d: probability %v disagrees with class %d", name, i, p.Proba[2*i+1], k)
			}
			if strings.Split(strings.Split(strings.TrimSpace(text), "\n")[i+1], ",")[4] == p.Labels[i] {
				right++
			}
		}
		if right < n*8/10 {
			t.Errorf("%s: %d of %d test rows right; the model did not learn the rule", name, right, n)
		}
	}
}

// Requests with bad rows are refused with the row and the column named.
func TestBadRequestRows(t *testing.T) {
	ctx := context.Background()
	m, err := predictor.Load(fitFile(t, false, dataset.TaskClassification))
	if err != nil {
		t.Fatal(err)
	}
	good := func() map[string]any { return map[string]any{"x1": 0.5, "x2": -1.0, "color": "red"} }
	with := func(k string, v any) []map[string]any {
		r := good()
		if v == "<delete>" {
			delete(r, k)
		} else {
			r[k] = v
		}
		return []map[string]any{good(), r}
	}
	for _, c := range []struct {
		recs []map[string]any
		want string
	}{
		{with("x1", "<delete>"), `row 2, column "x1": the record lacks input column "x1"`},
		{with("colour", "red"), `row 2, column "colour": "colour" is not an input column of the model; the inputs are "x1", "x2", "color"`},
		{with("x1", "12"), `row 2, column "x1": got the string "12"; the column is numeric`},
		{with("x1", true), `row 2, column "x1": got a boolean; the column is numeric`},
		{with("x1", math.NaN()), `row 2, column "x1": NaN is not a finite number`},
		{with("x2", math.Inf(1)), `row 2, column "x2": +Inf is not a finite number`},
		{with("x2", json.Number("1e999")), `row 2, column "x2": 1e999 is beyond the float64 range`},
		{with("color", []any{"red"}), `row 2, column "color": got an array; the column is categorical`},
		{with("color", map[string]any{}), `row 2, column "color": got an object`},
	} {
		_, err := m.PredictRecords(ctx, "", c.recs)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "request: ") {
			t.Errorf("%v:\n got %v\nwant %s", c.recs[1], err, c.want)
		}
	}
	// Missing values are null or a missing token; numbers match levels.
	recs := []map[string]any{{"x1": nil, "x2": "NA", "color": nil}, {"x1": 1, "x2": int64(2), "color": "blue"}}
	if _, err := m.PredictRecords(ctx, "", recs); err != nil {
		t.Errorf("nulls and integers: %v", err)
	}
	for _, c := range []struct {
		cols []string
		rows [][]any
		want string
	}{
		{[]string{"x1", "x2"}, [][]any{{1.0, 2.0}}, `input column "color" is missing from the columns`},
		{[]string{"x1", "x2", "color", "x1"}, nil, `column "x1" is named twice (columns 1 and 4)`},
		{[]string{"x1", "x2", "color", "extra"}, nil, `column 4, "extra", is not an input column`},
		{[]string{"x1", "x2", "color"}, [][]any{{1.0, 2.0, "red"}, {1.0, 2.0}}, `row 2: the row has 2 values but there are 3 columns`},
		{[]string{"color", "x1", "x2"}, [][]any{{"red", 1.0, "x"}}, `row 1, column 3 ("x2"): got the string "x"`},
	} {
		_, err := m.PredictRows(ctx, "body", c.cols, c.rows)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "body: ") {
			t.Errorf("%v %v:\n got %v\nwant %s", c.cols, c.rows, err, c.want)
		}
	}
}

// Numbers sent for a categorical column match its levels by text or value.
func TestNumbersMatchLevels(t *testing.T) {
	p := &dataset.Pipeline{Inputs: []dataset.InputColumn{{Name: "k", Kind: dataset.Categorical, Levels: []string{"1", "2.5", "x"}}}}
	tab, err := p.RowsTable("", []string{"k"}, [][]any{{1.0}, {json.Number("1.0")}, {json.Number("2.50")}, {3}, {"x"}, {"NA"}, {true}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := tab.Column("k")
	want := []string{"1", "1", "2.5", "3", "x", "NA", "true"}
	if !reflect.DeepEqual(c.Str, want) || !c.Missing[5] || c.Missing[4] {
		t.Errorf("levels %q, missing %v", c.Str, c.Missing)
	}
	x, _, _, err := p.Transform(tab)
	if err != nil {
		t.Fatal(err)
	}
	if x[0*3] != 1 || x[1*3] != 1 || x[2*3+1] != 1 || x[3*3]+x[3*3+1]+x[3*3+2] != 0 {
		t.Errorf("one-hot rows %v", x)
	}
}

// A Model is used by many goroutines at once: every answer equals the
// serial one (run with -race too).
func TestConcurrentPredictions(t *testing.T) {
	ctx := context.Background()
	m, err := predictor.Load(fitFile(t, true, dataset.TaskClassification))
	if err != nil {
		t.Fatal(err)
	}
	records, _, _ := rowsOf(t, tableCSV(200, 3))
	want, err := m.PredictRecords(ctx, "", records)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Parallel(t, 8, func(g int) error {
		for rep := 0; rep < 5; rep++ {
			lo := (g*13 + rep*29) % 150
			got, err := m.PredictRecords(ctx, "", records[lo:lo+1+g*5])
			if err != nil {
				return err
			}
			for i := range got.Scores {
				if got.Scores[i] != want.Scores[lo*2+i] {
					return fmt.Errorf("goroutine %d: row %d score %v, serial %v", g, lo+i/2, got.Scores[i], want.Scores[lo*2+i])
				}
			}
		}
		return nil
	})
}

// A file without the pipeline predicts features but refuses raw rows;
// damaged files and inconsistent sections are refused with the file named.
func TestLoadChecks(t *testing.T) {
	ctx := context.Background()
	s, err := synth.Generate(synth.LowRank, 100, 6, 1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 1
	rm, err := rfm.Fit(ctx, cfg, &rfm.Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bare := filepath.Join(dir, "bare.rfm")
	if err := predictor.WriteFile(ctx, bare, rm, nil, nil, nil, ""); err != nil {
		t.Fatal(err)
	}
	m, err := predictor.Load(bare)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.PredictRecords(ctx, "", nil); !errors.Is(err, predictor.ErrNoPipeline) || !strings.Contains(err.Error(), bare) {
		t.Errorf("raw rows without a pipeline: %v", err)
	}
	if y, err := m.PredictFeatures(ctx, s.X[:60], 10, nil); err != nil || len(y) != 10 {
		t.Errorf("features: %v %v", y, err)
	}
	if _, err := m.PredictFeatures(ctx, s.X[:61], 10, nil); err == nil || !strings.Contains(err.Error(), "61 values are not 10 rows of 6 features") {
		t.Errorf("ragged features: %v", err)
	}
	// A pipeline of the wrong width.
	p := &dataset.Pipeline{Inputs: []dataset.InputColumn{{Name: "a", Kind: dataset.Numeric, Std: 1}}}
	tg := &dataset.Target{Name: "y", Task: dataset.TaskRegression, Std: 1}
	wrong := filepath.Join(dir, "wrong.rfm")
	if err := predictor.WriteFile(ctx, wrong, rm, p, tg, nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := predictor.Load(wrong); err == nil || !strings.Contains(err.Error(), "the pipeline makes 1 features but the model takes 6") {
		t.Errorf("wrong width: %v", err)
	}
	if err := predictor.WriteFile(ctx, wrong, rm, p, nil, nil, ""); err == nil {
		t.Error("a pipeline without a target was written")
	}
	// One flipped byte: the checksum catches it.
	b, _ := os.ReadFile(bare)
	b[len(b)/2] ^= 1
	if _, err := predictor.Read(strings.NewReader(string(b)), "flipped.rfm"); !errors.Is(err, modelfile.ErrCorrupted) || !strings.HasPrefix(err.Error(), "flipped.rfm: ") {
		t.Errorf("flipped byte: %v", err)
	}
}

// Classify must give exactly Model.PredictClass and Model.PredictProba,
// bit for bit, from one Predict call.
func TestClassifyMatchesModel(t *testing.T) {
	for _, classes := range []int{2, 3} {
		s, err := synth.Generate(synth.Product, 200, 4, uint64(classes))
		if err != nil {
			t.Fatal(err)
		}
		labels := make([]int, s.N)
		for i, v := range s.Y {
			switch {
			case v > 0.3:
				labels[i] = 1
			case v < -0.3 && classes == 3:
				labels[i] = 2
			}
		}
		cfg := rfm.DefaultConfig()
		cfg.Iters = 1
		ctx := context.Background()
		m, err := rfm.Fit(ctx, cfg, &rfm.Dataset{X: s.X, N: s.N, D: s.D, Labels: labels}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if classes == 3 { // a calibrated model too (40 holdout rows are too few to fit one)
			m.Calibration = &rfm.Calibration{Method: rfm.CalibrateTemperature, Temperature: 0.37, Rows: 40}
		}
		q, _ := synth.Generate(synth.Product, 50, 4, 99)
		scores, _ := m.Predict(ctx, q.X, q.N)
		if (m.Calibration != nil) != (classes == 3) {
			t.Fatalf("%d classes: calibration %+v", classes, m.Calibration)
		}
		gotC, gotP := predictor.Classify(m.Calibration, scores, q.N, m.Outputs)
		wantC, _ := m.PredictClass(ctx, q.X, q.N)
		wantP, _ := m.PredictProba(ctx, q.X, q.N)
		if !reflect.DeepEqual(gotC, wantC) {
			t.Errorf("%d classes: classes %v, model says %v", classes, gotC, wantC)
		}
		for i := range wantP {
			if math.Float64bits(gotP[i]) != math.Float64bits(wantP[i]) {
				t.Fatalf("%d classes: probability %d is %v, model says %v", classes, i, gotP[i], wantP[i])
			}
		}
	}
	// Ties and saturated scores: argmax of the raw scores, as the model does.
	c, p := predictor.Classify(nil, []float64{1.3, 1.2, -0.5, 0.2}, 2, 2)
	eps, s := rfm.ProbEps, 0.2 // variables: float64 arithmetic, not exact constant arithmetic
	if c[0] != 0 || c[1] != 1 || p[0] != 0.5 || p[2] != eps/(eps+s) {
		t.Errorf("classify: %v %v", c, p)
	}
}

// PredictFeatures in chunks (for a progress bar) gives one Predict call's
// numbers bit for bit, across chunk boundaries and a ragged last chunk.
func TestPredictChunkedMatchesPredict(t *testing.T) {
	s, err := synth.Generate(synth.LowRank, 200, 6, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 1
	m, err := rfm.Fit(context.Background(), cfg, &rfm.Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	q, err := synth.Generate(synth.LowRank, 32*128*2+77, 6, 4)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Predict(context.Background(), q.X, q.N)
	if err != nil {
		t.Fatal(err)
	}
	var chunks [][2]int
	got, err := (&predictor.Model{Fitted: m}).PredictFeatures(context.Background(), q.X, q.N, func(r0, r1 int) {
		chunks = append(chunks, [2]int{r0, r1})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("output %d: %v chunked, %v whole", i, got[i], want[i])
		}
	}
	if len(chunks) != 3 || chunks[2] != [2]int{2 * predictor.ChunkRows, q.N} {
		t.Errorf("chunks %v", chunks)
	}
}

// Train's errors name what is wrong; a model it trains keeps the scaling
// asked for and predicts records.
func TestTrainErrors(t *testing.T) {
	tab, err := dataset.Read(strings.NewReader(tableCSV(100, 2)), "train.csv", dataset.ReadOptions{Ignore: []string{"id", "v"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := predictor.Train(ctx, tab, predictor.TrainOptions{}); err == nil || !strings.Contains(err.Error(), "target") {
		t.Errorf("no target: %v", err)
	}
	if _, err := predictor.Train(ctx, tab, predictor.TrainOptions{Target: "nope"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown target: %v", err)
	}
	only, _ := dataset.Read(strings.NewReader("y\na\nb\n"), "t.csv", dataset.ReadOptions{})
	if _, err := predictor.Train(ctx, only, predictor.TrainOptions{Target: "y"}); err == nil || !strings.Contains(err.Error(), "no feature columns") {
		t.Errorf("no features: %v", err)
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 1
	m, err := predictor.Train(ctx, tab, predictor.TrainOptions{Target: "y", Config: &cfg, Scaling: dataset.ScaleMinMax})
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind() != "rfm" || m.Pipeline.Scaling != dataset.ScaleMinMax || m.Target.NumClasses() != 2 {
		t.Fatalf("trained %+v", m)
	}
	p, err := m.PredictRecords(ctx, "r", []map[string]any{{"x1": 1.0, "x2": nil, "color": "red"}})
	if err != nil || len(p.Labels) != 1 {
		t.Fatalf("predict: %v, %+v", err, p)
	}
}

// TestPredictionRowsText: the text rows are the labels (and probabilities)
// or values, and every number reads back to the same float64.
func TestPredictionRowsText(t *testing.T) {
	cls := &predictor.Predictions{N: 2, Classes: []string{"a", "b"}, Labels: []string{"b", "a"},
		Proba: []float64{0.1, 0.9, 2.0 / 3, 1.0 / 3}}
	got := cls.Rows(true)
	want := [][]string{{"b", "0.1", "0.9"}, {"a", "0.6666666666666666", "0.3333333333333333"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("classification rows %q, want %q", got, want)
	}
	if got := cls.Rows(false); !reflect.DeepEqual(got, [][]string{{"b"}, {"a"}}) {
		t.Fatalf("rows without probabilities %q", got)
	}
	vals := []float64{math.Pi * 1e-300, -12345.678901234567, 0}
	reg := &predictor.Predictions{N: 3, Values: vals}
	for i, r := range reg.Rows(false) {
		var v float64
		if _, err := fmt.Sscan(r[0], &v); err != nil || v != vals[i] || len(r) != 1 {
			t.Fatalf("row %d: %q reads back as %v (%v), want %v", i, r, v, err, vals[i])
		}
	}
}

// An ensemble file loads as one Model: its kind, size and calibration are
// the ensemble's, raw rows predict through the pipeline, and the class of
// each row is the argmax of the mean of the members' probabilities.
func TestEnsembleFile(t *testing.T) {
	ctx := context.Background()
	tab, err := dataset.Read(strings.NewReader(tableCSV(400, 2)), "train.csv", dataset.ReadOptions{Ignore: []string{"id", "v"}})
	if err != nil {
		t.Fatal(err)
	}
	var members []*rfm.Model
	var p *dataset.Pipeline
	var tg *dataset.Target
	for i, bw := range []float64{5, 10, 20} {
		cfg := rfm.DefaultConfig()
		cfg.Iters, cfg.Kernel.Bandwidth = 1, bw
		m, err := predictor.Train(ctx, tab, predictor.TrainOptions{Target: "y", Config: &cfg})
		if err != nil {
			t.Fatal(err)
		}
		members, p, tg = append(members, m.Fitted.(*rfm.Model)), m.Pipeline, m.Target
		if i > 0 && m.D() != members[0].D {
			t.Fatal("members of other widths")
		}
	}
	e, err := ensemble.New(members)
	if err != nil {
		t.Fatal(err)
	}
	e.Calibration = &rfm.Calibration{Method: rfm.CalibratePower, Power: 2, Rows: 80}
	path := filepath.Join(t.TempDir(), "e.rfm")
	if err := predictor.WriteFile(ctx, path, e, p, tg, nil, ""); err != nil {
		t.Fatal(err)
	}
	lm, err := predictor.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if lm.Kind() != "ensemble" || lm.Centers() != 3*400 || lm.D() != e.D || lm.Outputs() != 2 || lm.Calibration().Power != 2 || lm.Config().Kernel.Bandwidth != 5 {
		t.Fatalf("loaded: kind %s, %d centres, d %d, %d outputs, calibration %+v", lm.Kind(), lm.Centers(), lm.D(), lm.Outputs(), lm.Calibration())
	}
	test, err := lm.ReadTable(ctx, strings.NewReader(tableCSV(50, 3)), "test.csv", "")
	if err != nil {
		t.Fatal(err)
	}
	pred, err := lm.Predict(ctx, test)
	if err != nil {
		t.Fatal(err)
	}
	x, n, _, err := p.Transform(test)
	if err != nil || n != 50 {
		t.Fatal(n, err)
	}
	mean := make([]float64, 50*2)
	for _, m := range members {
		q, err := m.UncalibratedProba(ctx, x, 50)
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range q {
			mean[j] += v / 3
		}
	}
	for i, c := range rfm.Argmax(mean, 50, 2) {
		if pred.Class[i] != c {
			t.Fatalf("row %d: class %d, the members' mean says %d", i, pred.Class[i], c)
		}
	}
	// The probabilities are the ensemble's calibration of the mean (β = 2).
	want, err := e.PredictProba(ctx, x, 50)
	if err != nil {
		t.Fatal(err)
	}
	rfm.Probabilities(mean, 50, 2)
	checked := 0
	for j := range want {
		if math.Abs(pred.Proba[j]-want[j]) > 1e-12 {
			t.Fatalf("probability %d: %v, the ensemble's %v", j, pred.Proba[j], want[j])
		}
		if v := mean[j]; v > 0.05 && v < 0.95 && math.Abs(v-0.5) > 0.05 {
			checked++
			if math.Abs(pred.Proba[j]-v) < 1e-9 {
				t.Fatalf("probability %d is the uncalibrated mean %v: the calibration was not applied", j, v)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no probability away from 0, ½ and 1 to tell calibrated from uncalibrated")
	}
}
