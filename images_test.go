package rfm

import (
	"context"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/rfmkit/rfm/kernel"
)

// blobImages is an image-like task: n non-negative 8×8 "digits" of c
// classes, each a class template of a few inked pixels with per-image
// jitter and faint noise, so that the class is in a few directions.
func blobImages(n, c int, seed uint64) *Dataset {
	const side = 8
	d := side * side
	rng := rand.New(rand.NewPCG(seed, 9))
	tmpl := make([][]int, c)
	for k := range tmpl {
		for range 6 {
			tmpl[k] = append(tmpl[k], 2*side+rng.IntN(d-4*side))
		}
	}
	ds := &Dataset{N: n, D: d, X: make([]float64, n*d), Labels: make([]int, n), Classes: c}
	for i := range n {
		k := i % c
		ds.Labels[i] = k
		row := ds.X[i*d : (i+1)*d]
		for _, p := range tmpl[k] {
			row[p] = 0.5 + 0.5*rng.Float64()
		}
		for range 4 {
			row[rng.IntN(d)] += 0.3 * rng.Float64()
		}
	}
	return ds
}

// topShare is the share of a symmetric PSD matrix's trace in its k largest
// eigenvalues, and the trace.
func topShare(t *testing.T, m kernel.FeatureMatrix, k int) (share, trace float64) {
	t.Helper()
	vals, _, err := kernel.EigSym(m.D, m.Values)
	if err != nil {
		t.Fatal(err)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(vals)))
	var top float64
	for i, v := range vals {
		trace += v
		if i < k {
			top += v
		}
	}
	return top / trace, trace
}

// On unit-norm pixel rows the Laplace kernel with L = 10 is nearly flat,
// and the papers' update (uncentred AGOP) is dominated by the outer
// product of the outputs' mean gradients: most of its trace, and it piles
// M into at most c directions. Centring removes that part (the difference
// of the traces) and AGOP^½ spreads the spectrum (docs/images.md).
func TestImageAGOPMeanGradientDominates(t *testing.T) {
	const c = 4
	ds := blobImages(240, c, 3)
	fit := func(centered bool, power float64) kernel.FeatureMatrix {
		cfg := DefaultConfig()
		cfg.NormalizeRows, cfg.Iters, cfg.ValFraction = true, 1, 0 // keeps round 1
		cfg.Centered, cfg.AGOPPower = centered, power
		m, err := Fit(context.Background(), cfg, ds, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if m.BestRound != 1 {
			t.Fatalf("round %d kept, want the last (1)", m.BestRound)
		}
		return m.M
	}
	papers, centred, root := fit(false, 1), fit(true, 1), fit(true, 0.5)
	sp, tp := topShare(t, papers, c)
	sc, tc := topShare(t, centred, c)
	sr, _ := topShare(t, root, c)
	t.Logf("top-%d share / trace: papers %.3f / %.4g, centred %.3f / %.4g, centred AGOP^½ %.3f", c, sp, tp, sc, tc, sr)
	if !(tc < 0.5*tp) {
		t.Errorf("the mean gradients carry %.0f%% of the uncentred AGOP's trace, want most", 100*(1-tc/tp))
	}
	if !(sp > 0.8 && sp > sc && sc > sr) {
		t.Errorf("top-%d shares: papers %.3f (want > 0.8), centred %.3f, centred AGOP^½ %.3f: want decreasing", c, sp, sc, sr)
	}
}
