package cntk

import (
	"context"
	"math"
	"testing"
)

// TestSelectUsesObservedPixelsOnly: the hidden pixels are NaN, so reading
// one would make a score NaN; the choice must still be made, the same as
// with the hidden pixels set to anything else, and a smooth image must
// prefer no ridge to a ridge that shrinks every prediction to the mean.
func TestSelectUsesObservedPixelsOnly(t *testing.T) {
	ctx := context.Background()
	const n = 48
	m := &Image{H: n, W: n, C: 1, Pix: make([]float64, n*n)}
	for i := range n {
		for j := range n {
			m.Pix[i*n+j] = 0.5 + 0.3*math.Sin(float64(i)/6)*math.Cos(float64(j)/9)
		}
	}
	obs, err := RandomMask(n, n, 0.5, 2)
	if err != nil {
		t.Fatal(err)
	}
	cands := []Candidate{{S: 2, Filter: 3, Ridge: 100}, {S: 2, Filter: 3}, {S: 3, Filter: 3}}
	so := SelectOptions{Crop: 32, Crops: 2, Seed: 1}
	best, scores, err := Select(ctx, m, obs, Arch{}, Prior{Kind: PriorUniform, High: 0.1}, cands, so)
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != len(cands) {
		t.Fatalf("%d scores for %d candidates", len(scores), len(cands))
	}
	if best.Ridge != 0 {
		t.Errorf("chose %s (scores %v): a ridge of 100 should lose on a smooth image", best, scores)
	}
	hidden := &Image{H: n, W: n, C: 1, Pix: append([]float64(nil), m.Pix...)}
	for p, o := range obs {
		if !o {
			hidden.Pix[p] = math.NaN()
		}
	}
	best2, scores2, err := Select(ctx, hidden, obs, Arch{}, Prior{Kind: PriorUniform, High: 0.1}, cands, so)
	if err != nil {
		t.Fatal(err)
	}
	for i := range scores {
		if scores2[i].PSNR != scores[i].PSNR {
			t.Errorf("%s: PSNR %v with the hidden pixels NaN, %v without", cands[i], scores2[i].PSNR, scores[i].PSNR)
		}
	}
	if best2 != best {
		t.Errorf("chose %s, then %s with the hidden pixels NaN", best, best2)
	}
	// Holes as the hold-out pattern.
	if _, _, err := Select(ctx, m, obs, Arch{}, Prior{Kind: PriorUniform, High: 0.1}, cands[1:2], SelectOptions{Crop: 32, Crops: 1, HoleSize: 6}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []SelectOptions{{Holdout: 1}, {Crops: -1}, {Crop: 4}} {
		if _, _, err := Select(ctx, m, obs, Arch{}, Prior{Kind: PriorUniform, High: 0.1}, cands, bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if _, _, err := Select(ctx, m, obs, Arch{}, Prior{Kind: PriorUniform, High: 0.1}, nil, so); err == nil {
		t.Error("no candidates accepted")
	}
}
