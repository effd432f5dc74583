package tree

import (
	"context"
	"slices"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/testutil"
	"github.com/rfmkit/rfm/internal/testutil/modeltest"
)

// A forest of one tree is that tree: the same predictions, bit for bit,
// and its file reads back to them; a forest of three averages its trees,
// which differ (other seeds), and survives its file too.
func TestForestOfOneIsTheTree(t *testing.T) {
	ctx := context.Background()
	ds := classes(t, 900, 5)
	cfg := small()
	cfg.LeafSize = 300
	tm, _, err := Fit(ctx, cfg, ds, nil)
	if err != nil {
		t.Fatal(err)
	}
	one, err := FitForest(ctx, cfg, ds, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, n := ds.X[:100*ds.D], 100
	want := testutil.MustPredict(t, tm, x, n)
	if got := testutil.MustPredict(t, one, x, n); !slices.Equal(got, want) {
		t.Fatal("a forest of one predicts other numbers than its tree")
	}
	three, err := FitForest(ctx, cfg, ds, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if three.Trees[0].Config.Seed != cfg.Seed || three.Trees[1].Config.Seed == cfg.Seed {
		t.Fatalf("tree seeds %d, %d; want the config's, then another", three.Trees[0].Config.Seed, three.Trees[1].Config.Seed)
	}
	mean, err := three.Predict(ctx, x, n)
	if err != nil {
		t.Fatal(err)
	}
	each := make([][]float64, 3)
	for i, tr := range three.Trees {
		if each[i], err = tr.Predict(ctx, x, n); err != nil {
			t.Fatal(err)
		}
	}
	if slices.Equal(each[0], each[1]) {
		t.Error("trees of other seeds predict the same numbers")
	}
	for j := range mean {
		if w := (each[0][j] + each[1][j] + each[2][j]) / 3; mean[j] < w-1e-12 || mean[j] > w+1e-12 {
			t.Fatalf("output %d: forest %v, mean of trees %v", j, mean[j], w)
		}
	}
	for _, f := range []*Forest{one, three} {
		back := modeltest.RoundTrip(t, f)
		bf, ok := back.(*Forest)
		if !ok || len(bf.Trees) != len(f.Trees) {
			t.Fatalf("decoded a %T", back)
		}
		a, _ := f.Predict(ctx, x, n)
		b, err := bf.Predict(ctx, x, n)
		if err != nil || !slices.Equal(a, b) {
			t.Fatalf("read back: %v, same predictions %v", err, slices.Equal(a, b))
		}
	}
	if _, err := FitForest(ctx, cfg, ds, 0, nil); err == nil {
		t.Error("a forest of 0 trees was fitted")
	}
	if _, err := NewForest([]*Model{tm, {Header: rfm.Header{Task: rfm.Regression, D: tm.D, Outputs: tm.Outputs}}}); err == nil {
		t.Error("a forest of a classifier and a regression was made")
	}
}
