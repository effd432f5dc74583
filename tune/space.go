package tune

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
)

// Space is the set of configurations the search draws from. Every list is
// a choice drawn uniformly (a list of one value fixes that setting); the
// two ranges are drawn log-uniformly (equal ends fix the value). The zero
// value of a field means its default (DefaultSpace).
type Space struct {
	// Bandwidth is the range of L as a multiple of the median pairwise
	// distance of the training rows (after scaling and row normalization):
	// the same range then suits any table. Absolute, when BandwidthAbsolute.
	Bandwidth         [2]float64
	BandwidthAbsolute bool
	// Ridge is the range of λ.
	Ridge [2]float64
	// Kernels: laplace, gen-laplace (exponent q drawn from Exponent),
	// gaussian and lp-laplace (power p drawn from Power, q from Exponent
	// and kept ≤ p). nil means DefaultSpace's, plus lp-laplace when the
	// data has at most LpMaxFeatures features.
	Kernels  []kernel.Kind
	Exponent [2]float64 // q of gen-laplace and lp-laplace, drawn uniformly
	// Power is the range of p of lp-laplace: half the draws take p = 1 (the
	// product Laplace kernel when q = 1), the others are uniform over the
	// multiples of ½ in it (0.5, 1, 1.5, 2 by default: powers the kernel
	// computes without Pow, which made lp-laplace trials 10× slower), or
	// uniform in the range when it holds none.
	Power [2]float64
	// Diag: diagonal M (true) or full M (false).
	Diag []bool
	// AGOPPower: M = AGOP^p.
	AGOPPower []float64
	// MNorm: the scaling of each new M.
	MNorm []rfm.MNormalization
	// Centered: centred gradients in the AGOP.
	Centered []bool
	// NormalizeRows: unit-norm input rows.
	NormalizeRows []bool
	// Loss: the predictor's loss (classification; regression always
	// fits the squared loss). nil: squared and logistic.
	Loss []rfm.Loss
	// Iters: the number of AGOP rounds (the round kept is chosen on the
	// validation rows, so round 0, the plain kernel, is always a candidate).
	Iters []int
	// Scalings names the versions of the data the caller supplies (see
	// Options.Data), e.g. "standard", "none"; empty means the one given.
	Scalings []string
}

// DefaultSpace is the space searched when a field of Space is left zero
// (lp-laplace joins its kernels on narrow tables, see Space.Kernels).
func DefaultSpace() Space {
	return Space{
		Bandwidth:     [2]float64{0.1, 10},
		Ridge:         [2]float64{1e-6, 1},
		Kernels:       []kernel.Kind{kernel.Laplace, kernel.GenLaplace, kernel.Gaussian},
		Exponent:      [2]float64{0.5, 1.6},
		Power:         [2]float64{0.5, 2},
		Diag:          []bool{false, true},
		AGOPPower:     []float64{1, 0.5},
		MNorm:         []rfm.MNormalization{rfm.MNormMean, rfm.MNormMax},
		Centered:      []bool{false, true},
		NormalizeRows: []bool{false, true},
		Iters:         []int{1, 3, 5, 8},
	}
}

// LpMaxFeatures is the most features for which the default space draws
// lp-laplace: its kernel blocks and gradients are vectorized passes over
// every coordinate of every pair, where the other kernels run one GEMM, so
// its cost grows faster with width (fits of 3 rounds on 1 593 rows of
// semeion's columns, loaded machine, medians of 3: 1–1.3× the Laplace
// kernel's time at 100 and 128 features, 2.6–3.3× at 256; on images, 784,
// its blocks would take much of the budget). A cap of 128 was measured
// on the four UCI sets of 65–128 features with the tuned protocol and
// did not pay: hill-valley 95.70 → 93.54%, libras 85.28 → 85.83%,
// low-res-spect 92.67 → 92.29%, ozone 97.36 → 97.28%.
const LpMaxFeatures = 64

// orDefault is s, or d when s is nil (an unset list of choices).
func orDefault[S ~[]E, E any](s, d S) S {
	if s == nil {
		return d
	}
	return s
}

// withDefaults fills the zero fields from DefaultSpace (d features) and
// checks ranges.
func (s Space) withDefaults(features int, task rfm.Task) (Space, error) {
	def := DefaultSpace()
	if task != rfm.Classification {
		s.Loss = []rfm.Loss{rfm.LossSquared}
	} else if s.Loss == nil {
		s.Loss = []rfm.Loss{rfm.LossSquared, rfm.LossLogistic}
	}
	if s.Kernels == nil && features <= LpMaxFeatures {
		s.Kernels = append(def.Kernels, kernel.LpLaplace)
	}
	d := def
	if s.Bandwidth == ([2]float64{}) {
		s.Bandwidth = d.Bandwidth
		s.BandwidthAbsolute = false
	}
	s.Power, s.Ridge, s.Exponent = cmp.Or(s.Power, d.Power), cmp.Or(s.Ridge, d.Ridge), cmp.Or(s.Exponent, d.Exponent)
	s.Kernels, s.Diag, s.AGOPPower = orDefault(s.Kernels, d.Kernels), orDefault(s.Diag, d.Diag), orDefault(s.AGOPPower, d.AGOPPower)
	s.MNorm, s.Centered = orDefault(s.MNorm, d.MNorm), orDefault(s.Centered, d.Centered)
	s.NormalizeRows, s.Iters = orDefault(s.NormalizeRows, d.NormalizeRows), orDefault(s.Iters, d.Iters)
	for _, r := range []struct {
		name string
		v    [2]float64
		zero bool // 0 allowed at the low end
	}{{"bandwidth", s.Bandwidth, false}, {"ridge", s.Ridge, true}} {
		lo, hi := r.v[0], r.v[1]
		if !(lo > 0 || r.zero && lo == 0) || !(hi >= lo) || math.IsInf(hi, 0) {
			return s, fmt.Errorf("tune: %s range [%v, %v] must satisfy 0 < low ≤ high < ∞", r.name, lo, hi)
		}
	}
	if s.Ridge[0] == 0 && s.Ridge[1] != 0 {
		return s, fmt.Errorf("tune: a ridge range that starts at 0 must end there (λ is drawn on a log scale)")
	}
	if !(s.Exponent[0] > 0 && s.Exponent[1] >= s.Exponent[0] && s.Exponent[1] <= 2) {
		return s, fmt.Errorf("tune: exponent range [%v, %v] must lie in (0, 2]", s.Exponent[0], s.Exponent[1])
	}
	if !(s.Power[0] > 0 && s.Power[1] >= s.Power[0] && s.Power[1] <= 2) {
		return s, fmt.Errorf("tune: power range [%v, %v] must lie in (0, 2]", s.Power[0], s.Power[1])
	}
	for _, k := range s.Kernels {
		switch k {
		case kernel.Laplace, kernel.GenLaplace, kernel.Gaussian, kernel.LpLaplace:
		default:
			return s, fmt.Errorf("tune: kernel %q cannot be searched (laplace, gen-laplace, gaussian, lp-laplace)", k)
		}
	}
	for _, p := range s.AGOPPower {
		if !(p > 0 && p <= 2) {
			return s, fmt.Errorf("tune: AGOP power %v is outside (0, 2]", p)
		}
	}
	for _, it := range s.Iters {
		if it < 0 {
			return s, fmt.Errorf("tune: %d rounds", it)
		}
	}
	for name, n := range map[string]int{"kernels": len(s.Kernels), "diag": len(s.Diag), "agop power": len(s.AGOPPower),
		"M normalization": len(s.MNorm), "centred": len(s.Centered), "row normalization": len(s.NormalizeRows), "rounds": len(s.Iters),
		"loss": len(s.Loss)} {
		if n == 0 {
			return s, fmt.Errorf("tune: the %s choice is empty", name)
		}
	}
	return s, nil
}

// Point is one drawn configuration before the bandwidth is made absolute.
type Point struct {
	Config  rfm.Config
	Scaling string
	// Ratio is the bandwidth as a multiple of the median distance (0 when
	// the space gives it absolutely).
	Ratio float64
}

func pick[T any](rng *rand.Rand, v []T) T { return v[rng.IntN(len(v))] }

func logUniform(rng *rand.Rand, r [2]float64) float64 {
	if r[0] == r[1] {
		return r[0]
	}
	return math.Exp(math.Log(r[0]) + rng.Float64()*(math.Log(r[1])-math.Log(r[0])))
}

// draw samples one configuration on top of base (which keeps every field
// the space does not cover: seed, float32, AGOP samples, solver...).
func (s Space) draw(rng *rand.Rand, base rfm.Config) Point {
	p := Point{Config: base}
	p.Config.Kernel = s.drawKernel(rng)
	bw := logUniform(rng, s.Bandwidth)
	if s.BandwidthAbsolute {
		p.Config.Kernel.Bandwidth = roundSig(bw)
	} else {
		p.Ratio = roundSig(bw)
	}
	p.Config.Ridge = roundSig(logUniform(rng, s.Ridge))
	p.Config.AdaptiveBandwidth = 0
	for _, set := range s.discrete() {
		set(rng, &p)
	}
	return p
}

// discrete lists the space's discrete settings other than the kernel,
// each as a function that draws it afresh, in the order draw draws them
// (the column scaling last, when the space has scalings).
func (s Space) discrete() []func(*rand.Rand, *Point) {
	set := []func(*rand.Rand, *Point){
		func(r *rand.Rand, p *Point) { p.Config.Diag = pick(r, s.Diag) },
		func(r *rand.Rand, p *Point) { p.Config.AGOPPower = pick(r, s.AGOPPower) },
		func(r *rand.Rand, p *Point) { p.Config.MNorm = pick(r, s.MNorm) },
		func(r *rand.Rand, p *Point) { p.Config.Centered = pick(r, s.Centered) },
		func(r *rand.Rand, p *Point) { p.Config.NormalizeRows = pick(r, s.NormalizeRows) },
		func(r *rand.Rand, p *Point) { p.Config.Iters = pick(r, s.Iters) },
		func(r *rand.Rand, p *Point) { p.Config.Loss = pick(r, s.Loss) },
	}
	if len(s.Scalings) > 0 {
		set = append(set, func(r *rand.Rand, p *Point) { p.Scaling = pick(r, s.Scalings) })
	}
	return set
}

// drawKernel draws a kernel family and its exponents (no bandwidth).
func (s Space) drawKernel(rng *rand.Rand) kernel.Spec {
	kind := pick(rng, s.Kernels)
	k := kernel.Spec{Kind: kind}
	switch kind {
	case kernel.GenLaplace:
		q := s.Exponent[0] + rng.Float64()*(s.Exponent[1]-s.Exponent[0])
		k.Exponent = math.Round(q*100) / 100
	case kernel.LpLaplace:
		p := 1.0
		if rng.IntN(2) == 1 || s.Power[0] > 1 || s.Power[1] < 1 {
			var grid []float64
			for v := math.Ceil(2*s.Power[0]) / 2; v <= s.Power[1]; v += 0.5 {
				grid = append(grid, v)
			}
			if len(grid) > 0 {
				p = pick(rng, grid)
			} else {
				p = math.Round((s.Power[0]+rng.Float64()*(s.Power[1]-s.Power[0]))*100) / 100
			}
		}
		q := math.Round((s.Exponent[0]+rng.Float64()*(s.Exponent[1]-s.Exponent[0]))*100) / 100
		k.Power, k.Exponent = p, min(q, p)
	}
	return k
}

// Local draws move the bandwidth by a factor e^{N(0, σ²)} with σ =
// localBandwidth, λ by one with σ = localRidge (λ matters on a log scale
// over decades) and a kernel exponent by N(0, localExponent²).
const (
	localBandwidth = 0.35
	localRidge     = 1.0
	localExponent  = 0.1
)

// perturb returns a configuration near p (a local draw): bandwidth, λ and
// the kernel exponent moved as the local* constants say and kept in the
// space's ranges, and one discrete setting drawn afresh from the space
// (kernel family, M's shape, AGOP power, M normalization, centring, row
// normalization, rounds, loss or scaling; it may come out the same).
// Settings the space fixes stay fixed.
func (s Space) perturb(rng *rand.Rand, p Point) Point {
	bw := p.Config.Kernel.Bandwidth
	redraw := append([]func(*rand.Rand, *Point){func(r *rand.Rand, p *Point) {
		p.Config.Kernel = s.drawKernel(r)
		p.Config.Kernel.Bandwidth = bw
	}}, s.discrete()...)
	redraw[rng.IntN(len(redraw))](rng, &p)
	c := p.Config
	factor := math.Exp(localBandwidth * rng.NormFloat64())
	switch {
	case p.Ratio > 0:
		p.Ratio = roundSig(clamp(p.Ratio*factor, s.Bandwidth))
	case s.BandwidthAbsolute:
		c.Kernel.Bandwidth = roundSig(clamp(bw*factor, s.Bandwidth))
	default: // Base's own bandwidth, outside the relative range
		c.Kernel.Bandwidth = roundSig(bw * factor)
	}
	c.Ridge = roundSig(clamp(c.Ridge*math.Exp(localRidge*rng.NormFloat64()), s.Ridge))
	if k := c.Kernel.Kind; k == kernel.GenLaplace || k == kernel.LpLaplace {
		hi := s.Exponent[1]
		if k == kernel.LpLaplace {
			hi = min(hi, c.Kernel.Power)
		}
		q := c.Kernel.Exponent + localExponent*rng.NormFloat64()
		c.Kernel.Exponent = math.Round(clamp(q, [2]float64{min(s.Exponent[0], hi), hi})*100) / 100
	}
	p.Config = c
	return p
}

func clamp(v float64, r [2]float64) float64 { return min(max(v, r[0]), r[1]) }

// roundSig keeps 3 significant digits, so that the trials table and the
// model file show the values the search actually used.
func roundSig(v float64) float64 {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return v
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 3, 64), 64)
	return r
}
