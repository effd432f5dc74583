package cntk

import (
	"context"
	"fmt"
	"math"
	"testing"
)

// The expanded kernel equals the kernel computed by the recursion on every
// pair of pixels of the full image (SI appendix L's theorem), for 32×32 and
// 64×64 images and s = 1..4, both stationary priors and two activations.
func TestExpansionEqualsDirect(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		n     int
		prior Prior
		slope float64
	}{
		{32, Prior{Kind: PriorUniform}, 0},
		{32, Prior{Kind: PriorOneHot}, 0.2},
		{64, Prior{Kind: PriorUniform}, 0},
	}
	for _, c := range cases {
		for s := 1; s <= 4; s++ {
			t.Run(fmt.Sprintf("%dx%d/%s/s=%d/slope=%g", c.n, c.n, c.prior.Kind, s, c.slope), func(t *testing.T) {
				a := Arch{S: s, Slope: c.slope}
				want, err := Direct(ctx, a, c.prior, c.n, c.n)
				if err != nil {
					t.Fatal(err)
				}
				k, err := Expand(ctx, a, c.prior, c.n, c.n)
				if err != nil {
					t.Fatal(err)
				}
				n := c.n * c.n
				worst, scale := 0.0, 0.0
				for x := range n {
					for y := range n {
						scale = max(scale, math.Abs(want[x*n+y]))
					}
				}
				distinct := map[float64]bool{}
				for x := range n {
					for y := range n {
						got := k.At(x/c.n, x%c.n, y/c.n, y%c.n)
						worst = max(worst, math.Abs(got-want[x*n+y]))
						if len(distinct) < 100 {
							distinct[want[x*n+y]] = true
						}
					}
				}
				if worst > 1e-10*scale {
					t.Errorf("max |expanded − direct| = %.3g (relative %.3g)", worst, worst/scale)
				}
				if len(distinct) < 3 {
					t.Errorf("the direct kernel takes %d distinct values: the comparison is vacuous", len(distinct))
				}
			})
		}
	}
}

// Products by the nine polyphase GEMMs equal those of the window loop and
// of the kernel's entries one by one.
func TestApplyPaths(t *testing.T) {
	ctx := context.Background()
	k, err := Expand(ctx, Arch{S: 2}, Prior{Kind: PriorUniform}, 16, 20)
	if err != nil {
		t.Fatal(err)
	}
	if !k.usePolyphase() {
		t.Fatal("a 16×20 kernel with P = 4 should take the polyphase path")
	}
	n, c := 16*20, 2
	v := make([]float64, n*c)
	for i := range v {
		v[i] = math.Sin(float64(3*i + 1))
	}
	a, b := make([]float64, n*c), make([]float64, n*c)
	if err := k.applyPolyphase(ctx, v, a, c); err != nil {
		t.Fatal(err)
	}
	if err := k.applyWindow(ctx, v, b, c); err != nil {
		t.Fatal(err)
	}
	for x := range n {
		for ch := range c {
			want := 0.0
			for y := range n {
				want += k.At(x/20, x%20, y/20, y%20) * v[y*c+ch]
			}
			if d := max(math.Abs(a[x*c+ch]-want), math.Abs(b[x*c+ch]-want)); d > 1e-9*math.Abs(want)+1e-12 {
				t.Fatalf("pixel %d channel %d: polyphase %g, window %g, entries %g", x, ch, a[x*c+ch], b[x*c+ch], want)
			}
		}
	}
}
