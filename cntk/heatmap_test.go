package cntk

import (
	"context"
	"testing"
)

// Figure 3-4: with the uniform prior a missing pixel is predicted from its
// neighbourhood; with the identity prior (the identity matrix as the input
// image) the weight sits far away (across the diagonal).
func TestHeatmapLocality(t *testing.T) {
	ctx := context.Background()
	const n, s = 32, 3
	xi, xj := 20, 6 // off the diagonal
	obs := make([]bool, n*n)
	for i := range n {
		for j := range n {
			obs[i*n+j] = max(abs(i-xi), abs(j-xj)) > 2 // a 5×5 hole
		}
	}
	share := map[PriorKind]float64{}
	for _, kind := range []PriorKind{PriorUniform, PriorIdentity} {
		k, err := NewKernel(ctx, Arch{S: s}, Prior{Kind: kind}, n, n)
		if err != nil {
			t.Fatal(err)
		}
		w, _, err := Weights(ctx, k, obs, xi, xj, Options{Ridge: 1e-8})
		if err != nil {
			t.Fatal(err)
		}
		// The share of the prediction of a constant image that comes from
		// pixels within 5 px (signed: weights of kernel regression are).
		near, all := 0.0, 0.0
		for i := range n {
			for j := range n {
				all += w[i*n+j]
				if max(abs(i-xi), abs(j-xj)) <= 5 {
					near += w[i*n+j]
				}
			}
		}
		share[kind] = near / all
		t.Logf("%s prior: %.3f of the weight within 5 px", kind, share[kind])
	}
	if share[PriorUniform] < 0.9 {
		t.Errorf("uniform prior: only %.3f of the weight within 5 px: not local", share[PriorUniform])
	}
	if share[PriorIdentity] > 0.1 {
		t.Errorf("identity prior: %.3f of the weight within 5 px: not the non-local weights of figure 3-4", share[PriorIdentity])
	}
}

func abs(a int) int {
	if a < 0 {
		return -a
	}
	return a
}
