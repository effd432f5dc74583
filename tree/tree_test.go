package tree

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/internal/testutil/modeltest"
	"github.com/rfmkit/rfm/internal/testutil/synthset"
	"github.com/rfmkit/rfm/synth"
)

func lowRank(t *testing.T, n int, seed uint64) *rfm.Dataset {
	t.Helper()
	return synthset.Regression(t, synth.LowRank, n, 10, seed)
}

func classes(t *testing.T, n int, seed uint64) *rfm.Dataset {
	t.Helper()
	ds := lowRank(t, n, seed)
	ds.Labels, ds.Y = synth.Classes(ds.Y, 0.02), nil
	return ds
}

// mustProba is mustPredict for the tree's probabilities.
func mustProba(t *testing.T, m *Model, x []float64, n int) []float64 {
	t.Helper()
	out, err := m.PredictProba(context.Background(), x, n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// encode writes the tree as a model file into a buffer.
func encode(t *testing.T, tm *Model) *bytes.Buffer {
	t.Helper()
	return bytes.NewBuffer(modeltest.Encode(t, tm, nil))
}

// saveLoad writes the tree as a model file and reads it back.
func saveLoad(t *testing.T, tm *Model) *Model {
	t.Helper()
	back, _, err := Load(encode(t, tm))
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func small() rfm.Config {
	cfg := rfm.DefaultConfig()
	cfg.Solver = rfm.SolverTree
	cfg.Iters = 1
	cfg.AGOPSamples = 300
	return cfg
}

// A tree of depth 0 (all rows fit one leaf) is the exact RFM, bit for bit.
func TestDepthZeroIsExact(t *testing.T) {
	train, test := lowRank(t, 400, 1), lowRank(t, 100, 2)
	cfg := small()
	tm, _, err := Fit(context.Background(), cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Nodes) != 1 || len(tm.Leaves) != 1 || tm.Depth() != 0 {
		t.Fatalf("%d nodes, %d leaves for 400 rows", len(tm.Nodes), len(tm.Leaves))
	}
	cfg.Solver = rfm.SolverExact
	exact, err := rfm.Fit(context.Background(), cfg, train, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := testutil.MustPredict(t, tm, test.X, test.N), testutil.MustPredict(t, exact, test.X, test.N)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("prediction %d: tree %v, exact %v", i, a[i], b[i])
		}
	}
}

// Every training row routes to the leaf it was trained in (the leaves'
// sizes are the counts routed to them), routing is the same after a save
// and load, and so are the predictions, bit for bit.
func TestRoutingConsistentAndSaved(t *testing.T) {
	train, test := classes(t, 1200, 3), classes(t, 300, 4)
	for _, rule := range []rfm.SplitRule{rfm.SplitAGOP, rfm.SplitPCA, rfm.SplitRandom} {
		t.Run(string(rule), func(t *testing.T) {
			cfg := small()
			cfg.SplitRule, cfg.LeafSize, cfg.SplitSample = rule, 200, 400
			tm, plan, err := Fit(context.Background(), cfg, train, nil)
			if err != nil {
				t.Fatal(err)
			}
			if plan.LeafSize != 200 || plan.Parallel < 1 {
				t.Fatalf("plan %+v", plan)
			}
			if len(tm.Leaves) < 6 || tm.Depth() < 3 {
				t.Fatalf("%d leaves, depth %d for 1200 rows in leaves of ≤ 200", len(tm.Leaves), tm.Depth())
			}
			count := make([]int, len(tm.Leaves))
			for _, l := range tm.Route(train.X, train.N) {
				count[l]++
			}
			for i, lf := range tm.Leaves {
				if count[i] != lf.N || lf.N > 200 || lf.N < 200/8 {
					t.Fatalf("leaf %d trained on %d rows, %d training rows route to it", i, lf.N, count[i])
				}
			}
			back := saveLoad(t, tm)
			r1, r2 := tm.Route(test.X, test.N), back.Route(test.X, test.N)
			p1, p2 := mustProba(t, tm, test.X, test.N), mustProba(t, back, test.X, test.N)
			for i := range r1 {
				if r1[i] != r2[i] {
					t.Fatalf("row %d routes to leaf %d, after load to %d", i, r1[i], r2[i])
				}
			}
			for i := range p1 {
				if p1[i] != p2[i] {
					t.Fatalf("probability %d: %v, after load %v", i, p1[i], p2[i])
				}
			}
			// The same seed gives the same tree.
			again, _, err := Fit(context.Background(), cfg, train, nil)
			if err != nil {
				t.Fatal(err)
			}
			p3 := mustProba(t, again, test.X, test.N)
			for i := range p1 {
				if p1[i] != p3[i] {
					t.Fatalf("refit with the same seed: probability %d %v vs %v", i, p3[i], p1[i])
				}
			}
		})
	}
}

// The AGOP split of y = x0·x1·1[x5 > 0] (coordinates {0, 1, 5} matter) is
// along those coordinates, and a tree of small leaves predicts about as
// well as one exact RFM on all rows (here: within a factor 2 of its MSE).
func TestAGOPSplitFindsTheSignal(t *testing.T) {
	train, test := lowRank(t, 2000, 5), lowRank(t, 500, 6)
	cfg := small()
	cfg.Iters, cfg.AGOPSamples = 2, 20000
	cfg.LeafSize = 600
	tm, _, err := Fit(context.Background(), cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := tm.Nodes[0].Dir
	signal := dir[0]*dir[0] + dir[1]*dir[1] + dir[5]*dir[5]
	if signal < 0.7 {
		t.Errorf("root direction puts %.2f of its weight on {0, 1, 5}: %v", signal, dir)
	}
	cfg.Solver = rfm.SolverExact
	exact, err := rfm.Fit(context.Background(), cfg, train, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	mse := func(p testutil.Predictor) float64 {
		out := testutil.MustPredict(t, p, test.X, test.N)
		s := 0.0
		for i, v := range out {
			s += (v - test.Y[i]) * (v - test.Y[i])
		}
		return s / float64(test.N)
	}
	mt, me := mse(tm), mse(exact)
	t.Logf("test MSE: tree %.5f, exact %.5f", mt, me)
	if mt > 2*me {
		t.Errorf("tree MSE %.5f > 2 × exact %.5f", mt, me)
	}
	rank := tm.FeatureDiagonal()
	for j, v := range rank {
		if j != 0 && j != 1 && j != 5 && v > rank[0] {
			t.Errorf("global ranking puts feature %d (%.3g) above feature 0 (%.3g)", j, v, rank[0])
		}
	}
}

// Ties: the cut moves to the nearest change of value, never splits equal
// projections, and refuses a cut that leaves less than an eighth.
func TestBalancedCut(t *testing.T) {
	rows := []int{10, 11, 12, 13, 14, 15, 16, 17}
	// Sorted: 1 1 1 | 2 2 2 2 | 3; the middle (4) is inside the 2s, the
	// nearest change of value is at 3.
	l, r, thr, ok := balancedCut(rows, []float64{3, 1, 1, 1, 2, 2, 2, 2})
	if !ok || len(l) != 3 || len(r) != 5 || thr != 1.5 || l[0] != 11 || r[0] != 10 {
		t.Fatalf("cut %v | %v at %v (%v)", l, r, thr, ok)
	}
	for _, proj := range [][]float64{{1, 1, 1, 1, 1, 1, 1, 1}, make([]float64, 8)} {
		if _, _, _, ok := balancedCut(rows, proj); ok {
			t.Fatalf("equal projections %v were cut", proj)
		}
	}
	sixteen := make([]int, 16)
	proj := make([]float64, 16)
	proj[15] = 1
	if _, _, _, ok := balancedCut(sixteen, proj); ok {
		t.Fatal("a 15/1 cut of 16 rows was accepted")
	}
}

// Rows that no direction separates (all identical) make a leaf, trained on
// a sample, and say so.
func TestUnsplittableNode(t *testing.T) {
	n := 300
	ds := &rfm.Dataset{X: make([]float64, n*2), N: n, D: 2, Y: make([]float64, n)}
	for i := range ds.Y {
		ds.Y[i] = float64(i % 3)
	}
	cfg := small()
	cfg.LeafSize = 100
	tm, _, err := Fit(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.Leaves) != 1 || len(tm.Notes) != 1 || !strings.Contains(tm.Notes[0], "could not be split") || !strings.Contains(tm.Leaves[0].Note, "sample of 100") {
		t.Fatalf("leaves %+v, notes %q", tm.Leaves, tm.Notes)
	}
}

// A leaf whose rows are all of one class predicts that class.
func TestConstantLeaf(t *testing.T) {
	n := 200
	ds := &rfm.Dataset{X: make([]float64, n), N: n, D: 1, Labels: make([]int, n)}
	for i := range ds.X {
		ds.X[i] = float64(i)
		if i >= n/2 {
			ds.Labels[i] = 1
		}
	}
	cfg := small()
	cfg.LeafSize, cfg.SplitRule = 100, rfm.SplitPCA
	tm, _, err := Fit(context.Background(), cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	cls, err := tm.PredictClass(context.Background(), []float64{5, 150}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if cls[0] != 0 || cls[1] != 1 || tm.Leaves[0].Model != nil {
		t.Fatalf("classes %v, leaves %+v", cls, tm.Leaves)
	}
	back := saveLoad(t, tm)
	if c2, _ := back.PredictClass(context.Background(), []float64{5, 150}, 2); c2[0] != 0 || c2[1] != 1 {
		t.Fatalf("after load: %v", c2)
	}
}

// The planner refuses with the figure that does not fit.
func TestPlanRefuses(t *testing.T) {
	cfg := small()
	cfg.LeafSize = 5000
	cfg.MemoryLimit = 50 << 20
	_, err := MakePlan(cfg, 100000, 10, 1)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "a leaf of 5000 rows") || !strings.Contains(err.Error(), "50.0 MiB available") {
		t.Fatalf("err = %v", err)
	}
	cfg.LeafSize = 0
	cfg.MemoryLimit = 1 << 30
	p, err := MakePlan(cfg, 1000000, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.LeafSize >= DefaultLeafSize || p.LeafBytes+1000000*20*16 > 1<<30 || p.Parallel < 1 {
		t.Fatalf("plan %+v exceeds its 1 GiB budget", p)
	}
}

// Cancellation during the leaves stops the fit with the context's error.
func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := small()
	cfg.LeafSize = 100
	leaves := 0
	_, _, err := Fit(ctx, cfg, lowRank(t, 800, 7), func(p Progress) {
		if p.Stage == "leaf" {
			leaves = p.Leaves
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v after %d leaves", err, leaves)
	}
}

// A file whose nodes loop is refused, not routed forever.
func TestLoadRefusesLoops(t *testing.T) {
	cfg := small()
	cfg.LeafSize = 100
	tm, _, err := Fit(context.Background(), cfg, lowRank(t, 300, 8), nil)
	if err != nil {
		t.Fatal(err)
	}
	tm.Nodes[tm.Nodes[0].Left].Leaf = -1
	tm.Nodes[tm.Nodes[0].Left].Left = 0
	tm.Nodes[tm.Nodes[0].Left].Right = 0
	if _, _, err := Load(encode(t, tm)); err == nil || !strings.Contains(err.Error(), "reached twice") && !strings.Contains(err.Error(), "dirs") {
		t.Fatalf("looping tree loaded: %v", err)
	}
}

// Nyström leaves: with as many centres as leaf rows they give the exact
// leaves' predictions (to the CG tolerance); the planner gives them far
// larger leaves under a budget where exact leaves must stay small; a tree
// of them saves and loads to the same predictions.
func TestNystromLeaves(t *testing.T) {
	train, test := lowRank(t, 1200, 1), lowRank(t, 200, 2)
	cfg := small()
	cfg.LeafSize = 400
	cfg.Refit = false // the exact and Nyström leaves see the same rows
	exact, _, err := Fit(context.Background(), cfg, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	ny := cfg
	ny.LeafSolver, ny.Centers, ny.CGIters = rfm.SolverNystrom, 400, 400
	tm, plan, err := Fit(context.Background(), ny, train, nil)
	if err != nil {
		t.Fatal(err)
	}
	if plan.LeafSolver != rfm.SolverNystrom || !strings.Contains(plan.String(), "nystrom leaves") {
		t.Errorf("plan %q does not say the leaves are Nyström", plan)
	}
	if len(tm.Leaves) != len(exact.Leaves) || len(tm.Leaves) < 3 {
		t.Fatalf("%d Nyström leaves, %d exact", len(tm.Leaves), len(exact.Leaves))
	}
	for i, lf := range tm.Leaves {
		if lf.Model == nil || lf.Model.Config.Solver != rfm.SolverNystrom {
			t.Fatalf("leaf %d is not a Nyström fit: %+v", i, lf)
		}
	}
	a, b := testutil.MustPredict(t, tm, test.X, test.N), testutil.MustPredict(t, exact, test.X, test.N)
	var diff, norm float64
	for i := range a {
		diff += (a[i] - b[i]) * (a[i] - b[i])
		norm += b[i] * b[i]
	}
	if rel := math.Sqrt(diff / norm); rel > 1e-3 {
		t.Errorf("Nyström leaves with m = n differ from exact leaves by %.2g (relative)", rel)
	}
	c := testutil.MustPredict(t, saveLoad(t, tm), test.X, test.N)
	for i := range a {
		if a[i] != c[i] {
			t.Fatalf("prediction %d: %v before saving, %v after", i, a[i], c[i])
		}
	}

	// Under 1 GiB for 2 M rows of 20 features, exact leaves stay small;
	// Nyström leaves take the default 100 000 rows.
	big := small()
	big.MemoryLimit = 1 << 30
	pe, err := MakePlan(big, 2000000, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	big.LeafSolver = rfm.SolverNystrom
	big.Centers = 2000
	pn, err := MakePlan(big, 2000000, 20, 1)
	if err != nil {
		t.Fatal(err)
	}
	if pn.LeafSize != DefaultNystromLeafSize || pe.LeafSize >= DefaultLeafSize || pn.LeafBytes+2000000*20*16 > 1<<30 {
		t.Errorf("exact plan %+v, Nyström plan %+v", pe, pn)
	}
	big.Centers, big.LeafSize = 40000, 100000 // two 40 000² factors: 25 GB
	if _, err := MakePlan(big, 2000000, 20, 1); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "--centers") {
		t.Errorf("40 000 centres in 1 GiB: %v", err)
	}
}

// Above TimedRows rows the default exact leaf shrinks as 1/√n down to
// MinTimedLeafSize, and the plan says why; an asked leaf size, or Nyström
// leaves, are kept.
func TestPlanTimedLeafSize(t *testing.T) {
	cfg := rfm.DefaultConfig()
	cfg.MemoryLimit = 1 << 50
	for _, tc := range []struct{ n, want int }{{1000000, DefaultLeafSize}, {2500000, 6300}, {4000000, 5000}, {100000000, MinTimedLeafSize}} {
		p, err := MakePlan(cfg, tc.n, 9, 1)
		if err != nil {
			t.Fatal(err)
		}
		if p.LeafSize != tc.want || (p.Why != "") != (tc.n > TimedRows) {
			t.Errorf("n = %d: leaf size %d (why %q), want %d", tc.n, p.LeafSize, p.Why, tc.want)
		}
		if tc.n > TimedRows && !strings.Contains(p.String(), "--leaf-size overrides") {
			t.Errorf("n = %d: the plan does not say why: %s", tc.n, p)
		}
	}
	cfg.LeafSize = 9000
	if p, _ := MakePlan(cfg, 4000000, 9, 1); p.LeafSize != 9000 || p.Why != "" {
		t.Errorf("asked leaf size: %+v", p)
	}
	cfg.LeafSize, cfg.LeafSolver = 0, rfm.SolverNystrom
	if p, _ := MakePlan(cfg, 4000000, 9, 1); p.LeafSize != DefaultNystromLeafSize {
		t.Errorf("Nyström leaves: %+v", p)
	}
}

// ValScore is the tree's accuracy on labelled rows and the MSE of its
// outputs on regression rows.
func TestValScore(t *testing.T) {
	ctx := context.Background()
	cfg := rfm.DefaultConfig()
	cfg.Solver, cfg.LeafSize, cfg.Iters = rfm.SolverTree, 100, 1
	for _, ds := range []*rfm.Dataset{classes(t, 300, 5), lowRank(t, 300, 5)} {
		tm, _, err := Fit(ctx, cfg, ds, nil)
		if err != nil {
			t.Fatal(err)
		}
		va := ds.Subset(rangeTo(50))
		got, err := tm.ValScore(ctx, va)
		if err != nil {
			t.Fatal(err)
		}
		s := testutil.MustPredict(t, tm, va.X, va.N)
		want := 0.0
		if va.Labels != nil {
			for i, l := range rfm.Argmax(s, va.N, tm.Outputs) {
				if l == va.Labels[i] {
					want++
				}
			}
			want /= float64(va.N)
		} else {
			for i, y := range va.Y {
				want += (y - s[i]) * (y - s[i]) / float64(va.N)
			}
		}
		if math.Abs(got-want) > 1e-12 || got < 0 {
			t.Errorf("score %v, want %v", got, want)
		}
	}
}

func rangeTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
