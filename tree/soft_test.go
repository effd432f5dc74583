package tree

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/testutil"
)

// softTree fits a small regression tree with soft routing asked for.
func softTree(t *testing.T) (*Model, *rfm.Dataset) {
	t.Helper()
	train, test := lowRank(t, 1500, 1), lowRank(t, 300, 2)
	cfg := small()
	cfg.LeafSize = 300
	cfg.SoftRouting = true
	tm, _, err := Fit(context.Background(), cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tm, test
}

// Temperature 0 is hard routing bit for bit; the leaf probabilities of a
// row sum to 1; the choice on held-out rows is recorded; a saved model
// predicts the same softly after loading.
func TestSoftRouting(t *testing.T) {
	tm, test := softTree(t)
	if len(tm.Leaves) < 4 {
		t.Fatalf("%d leaves; want a tree", len(tm.Leaves))
	}
	note := strings.Join(tm.Notes, "\n")
	if !strings.Contains(note, "150 held-out rows") || !strings.Contains(note, "0.3: MSE") {
		t.Errorf("notes do not report the choice on 150 held-out rows:\n%s", note)
	}
	hard, err := tm.predictHard(context.Background(), test.X, test.N)
	if err != nil {
		t.Fatal(err)
	}
	soft0, err := tm.predictSoft(context.Background(), test.X, test.N, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range hard {
		if hard[i] != soft0[i] {
			t.Fatalf("row %d: hard %v, soft at temperature 0 %v", i, hard[i], soft0[i])
		}
	}
	multi := 0
	for i := 0; i < test.N; i++ {
		leaves, w := tm.LeafWeights(test.X[i*tm.D:(i+1)*tm.D], 0.3)
		sum := 0.0
		for _, v := range w {
			sum += v
			if v < softCut/2 || v > 1 {
				t.Fatalf("row %d: weight %v", i, v)
			}
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Fatalf("row %d: weights sum to %v", i, sum)
		}
		if len(leaves) > 1 {
			multi++
		}
		hl, hw := tm.LeafWeights(test.X[i*tm.D:(i+1)*tm.D], 0)
		if len(hl) != 1 || hw[0] != 1 || hl[0] != tm.Route(test.X[i*tm.D:(i+1)*tm.D], 1)[0] {
			t.Fatalf("row %d: hard weights %v %v", i, hl, hw)
		}
	}
	if multi == 0 {
		t.Error("at temperature 0.3 no row reaches two leaves")
	}
	tm.Temperature = 0.1
	a := testutil.MustPredict(t, tm, test.X, test.N)
	b := testutil.MustPredict(t, saveLoad(t, tm), test.X, test.N)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("row %d: %v before saving, %v after", i, a[i], b[i])
		}
	}
	for i := range a {
		if a[i] != hard[i] {
			return // soft routing changed something
		}
	}
	t.Error("soft routing at 0.1 predicts exactly as hard routing")
}

// Across a threshold hard routing jumps from one leaf to the other; soft
// routing moves continuously: a step of ε changes its prediction by O(ε).
func TestSoftRoutingIsContinuous(t *testing.T) {
	tm, test := softTree(t)
	nd := tm.Nodes[0]
	if nd.Leaf >= 0 || nd.Scale <= 0 {
		t.Fatalf("root %+v", nd)
	}
	// A row moved onto the root's threshold along its direction.
	x := append([]float64(nil), test.X[:tm.D]...)
	norm2 := dot(nd.Dir, nd.Dir)
	shift := (nd.Threshold - dot(x, nd.Dir)) / norm2
	at := func(eps float64) []float64 {
		y := make([]float64, tm.D)
		for j := range y {
			y[j] = x[j] + (shift+eps/math.Sqrt(norm2))*nd.Dir[j]
		}
		return y
	}
	const eps = 1e-7
	lo, hi := at(-eps), at(eps)
	ctx := context.Background()
	hlo, _ := tm.predictHard(ctx, lo, 1)
	hhi, _ := tm.predictHard(ctx, hi, 1)
	slo, _ := tm.predictSoft(ctx, lo, 1, 0.1)
	shi, _ := tm.predictSoft(ctx, hi, 1, 0.1)
	if math.Abs(hlo[0]-hhi[0]) < 1e-4 {
		t.Fatalf("hard routing does not jump at the threshold (%v, %v): the test row is not on a boundary", hlo[0], hhi[0])
	}
	if d := math.Abs(slo[0] - shi[0]); d > 1e-4 {
		t.Errorf("soft routing jumps by %v across the threshold", d)
	}
}

// A damaged temperature or scale in a file is refused; cancellation stops
// a soft prediction.
func TestSoftRoutingChecks(t *testing.T) {
	tm, test := softTree(t)
	for _, bad := range []func(*Model){
		func(m *Model) { m.Temperature = -1 },
		func(m *Model) { m.Nodes[0].Scale = -2 },
	} {
		cp := *tm
		cp.Nodes = append([]Node(nil), tm.Nodes...)
		bad(&cp)
		if _, _, err := Load(encode(t, &cp)); err == nil {
			t.Errorf("a tree with temperature %v, root scale %v loaded", cp.Temperature, cp.Nodes[0].Scale)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tm.predictSoft(ctx, test.X, test.N, 0.1); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled soft prediction: %v", err)
	}
}

// A classification tree with Calibrate holds rows out of its leaves, fits
// the map on the tree's scores there, and PredictProba applies it; the
// model file keeps it (format version 2).
func TestTreeCalibration(t *testing.T) {
	cfg := small()
	cfg.Calibrate = rfm.CalibrateTemperature
	ds := classes(t, 600, 3)
	m, _, err := Fit(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Calibration == nil || m.Calibration.Rows < 55 || m.Calibration.Rows > 65 {
		t.Fatalf("calibration %+v, want one fitted on about 60 held-out rows (stratified)", m.Calibration)
	}
	inLeaves := 0
	for _, lf := range m.Leaves {
		inLeaves += lf.N
	}
	if inLeaves+m.Calibration.Rows != 600 {
		t.Errorf("the leaves hold %d rows and %d are held out, of 600", inLeaves, m.Calibration.Rows)
	}
	ctx := context.Background()
	s, _ := m.Predict(ctx, ds.X[:10*ds.D], 10)
	p, _ := m.PredictProba(ctx, ds.X[:10*ds.D], 10)
	m.Calibration.Apply(s, 10, m.Outputs)
	if !slices.Equal(s, p) {
		t.Error("PredictProba is not the calibration of the scores")
	}
	buf := encode(t, m)
	if v := binary.LittleEndian.Uint32(buf.Bytes()[8:12]); v != 2 {
		t.Errorf("file version %d, want 2", v)
	}
	back := saveLoad(t, m)
	p2, _ := back.PredictProba(ctx, ds.X[:10*ds.D], 10)
	if !slices.Equal(p, p2) {
		t.Error("probabilities changed on a save/load round trip")
	}
}

// A row's tree prediction does not depend on the rows predicted with it,
// hard or soft (each leaf's batch is padded by the leaf model, see
// kernel.BatchRows).
func TestTreePredictionsDoNotDependOnTheBatch(t *testing.T) {
	tm, test := softTree(t)
	ctx := context.Background()
	for _, temp := range []float64{0, 0.3} {
		all, err := tm.predictSoft(ctx, test.X, test.N, temp)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []int{1, 9} {
			for r0 := 0; r0 < test.N; r0 += b {
				r1 := min(r0+b, test.N)
				p, err := tm.predictSoft(ctx, test.X[r0*tm.D:r1*tm.D], r1-r0, temp)
				if err != nil {
					t.Fatal(err)
				}
				for i := range p {
					if p[i] != all[r0+i] {
						t.Fatalf("temperature %g: row %d in batches of %d: %v, in one batch %v", temp, r0+i, b, p[i], all[r0+i])
					}
				}
			}
		}
	}
}
