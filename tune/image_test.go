package tune

import (
	"math"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
)

func pixels(n, d int, f func(i int) float64) *rfm.Dataset {
	ds := &rfm.Dataset{N: n, D: d, X: make([]float64, n*d), Labels: make([]int, n)}
	for i := range ds.X {
		ds.X[i] = f(i)
	}
	for i := range ds.Labels {
		ds.Labels[i] = i % 2
	}
	return ds
}

func TestImageLike(t *testing.T) {
	unit := func(i int) float64 { return float64(i%7) / 6 }
	for _, c := range []struct {
		name string
		ds   *rfm.Dataset
		want bool
	}{
		{"pixels in [0, 1]", pixels(3, 64, unit), true},
		{"bytes in [0, 255]", pixels(3, 100, func(i int) float64 { return float64(i % 256) }), true},
		{"too few columns", pixels(3, 63, unit), false},
		{"negative value", pixels(3, 64, func(i int) float64 { return unit(i) - 0.5 }), false},
		{"above 255", pixels(3, 64, func(i int) float64 { return float64(2 * i) }), false},
		{"NaN", pixels(3, 64, func(i int) float64 { return math.NaN() }), false},
		{"all zero", pixels(3, 64, func(int) float64 { return 0 }), false},
		{"nil", nil, false},
	} {
		if got := ImageLike(c.ds); got != c.want {
			t.Errorf("%s: ImageLike = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestImageCandidates(t *testing.T) {
	img := pixels(4, 64, func(i int) float64 { return float64(i%5) / 4 })
	base := rfm.DefaultConfig()
	base.Iters, base.Diag, base.Loss = 3, true, rfm.LossLogistic
	opt := Options{Base: base, Data: map[string]*rfm.Dataset{"standard": img, "none": img}}
	got := ImageCandidates(opt)
	if len(got) != 1 {
		t.Fatalf("%d candidates, want 1", len(got))
	}
	learned := got[0]
	if learned.Scaling != "none" {
		t.Fatalf("scaling %q: want the raw pixels", learned.Scaling)
	}
	// Its round 0 is rfm fit --scale none --normalize-rows --iters 0.
	if c := learned.Config; !c.NormalizeRows || c.Loss != rfm.LossSquared || c.Kernel != base.Kernel || c.Ridge != base.Ridge {
		t.Errorf("candidate %+v: its round 0 is not the plain kernel on unit-norm raw pixels", c)
	}
	if c := learned.Config; c.Iters != 3 || !c.Centered || c.AGOPPower != 0.5 || c.Diag {
		t.Errorf("learned candidate: iters %d centered %v power %g diag %v", c.Iters, c.Centered, c.AGOPPower, c.Diag)
	}
	base0 := base
	base0.Iters = 0
	if c := ImageCandidates(Options{Base: base0, Data: opt.Data}); c[0].Config.Iters != 1 {
		t.Errorf("a base of 0 rounds: the candidate has %d, want 1", c[0].Config.Iters)
	}
	for _, p := range got {
		if err := p.Config.Validate(); err != nil {
			t.Errorf("candidate invalid: %v", err)
		}
	}
	// No unscaled version, or one that is not pixels: no candidates.
	if c := ImageCandidates(Options{Base: base, Data: map[string]*rfm.Dataset{"standard": img}}); c != nil {
		t.Errorf("without the none scaling: %d candidates", len(c))
	}
	table := pixels(4, 64, func(i int) float64 { return float64(i) - 100 })
	if c := ImageCandidates(Options{Base: base, Data: map[string]*rfm.Dataset{"none": table}}); c != nil {
		t.Errorf("negative values: %d candidates", len(c))
	}
}

// Protected candidates are drawn right after the base and reach the top
// rung even when they score worst below, under both rules; a protected
// candidate without data is refused.
func TestProtectedReachTopRung(t *testing.T) {
	ds := classes(t, 900, 3)
	for _, rule := range []Rule{RuleBest, RuleOneSE} {
		opt := options(ds, 9)
		opt.Rule = rule
		bad := opt.Base
		bad.Ridge, bad.Iters = 1e4, 0 // all but constant: the worst score on every rung
		opt.Protected = []Point{{Config: bad, Scaling: ""}}
		res := mustRun(t, opt)
		if len(res.Rungs) < 2 {
			t.Fatalf("rungs %v: the test needs successive halving", res.Rungs)
		}
		top := res.Rungs[len(res.Rungs)-1]
		var reached bool
		for _, tr := range res.Trials {
			if tr.Index == 1 {
				if tr.Config.Ridge != 1e4 {
					t.Fatalf("rule %d: trial 1 is not the protected candidate: ridge %g", rule, tr.Config.Ridge)
				}
				reached = reached || tr.Rows == top && tr.Scored()
			}
		}
		if !reached {
			t.Errorf("rule %d: the protected candidate did not reach the top rung (%d rows)", rule, top)
		}
		if res.Best.Index == 1 {
			t.Errorf("rule %d: the useless protected candidate was chosen", rule)
		}
	}
	opt := options(ds, 3)
	opt.Protected = []Point{{Config: opt.Base, Scaling: "none"}}
	if _, err := Run(t.Context(), opt); err == nil || !strings.Contains(err.Error(), "protected candidate 1") {
		t.Errorf("protected candidate without data: %v", err)
	}
}
