package cntk

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// MaxS is the largest number of down/upsamplings accepted: the kernel of a
// 2^(s+1)×2^(s+1) image needs 4^(2s+1) float64 per tensor (537 MB at s = 6).
const MaxS = 6

// Arch is the encoder–decoder architecture (see the package comment).
type Arch struct {
	S      int     // number of stride-2 convolutions, and of upsamplings
	Filter int     // q, odd filter size (default 3)
	Slope  float64 // α of the leaky ReLU max(u, αu): 0 = ReLU, 1 = linear, −1 = |u|
}

// filter returns q with the default applied.
func (a Arch) filter() int {
	if a.Filter == 0 {
		return 3
	}
	return a.Filter
}

// Validate reports an unusable architecture.
func (a Arch) Validate() error {
	switch {
	case a.S < 0 || a.S > MaxS:
		return fmt.Errorf("cntk: %d down/upsamplings: want 0..%d", a.S, MaxS)
	case a.filter() < 1 || a.filter()%2 == 0:
		return fmt.Errorf("cntk: filter size %d: want a positive odd number", a.Filter)
	case math.IsNaN(a.Slope) || a.Slope < -1 || a.Slope > 1:
		return fmt.Errorf("cntk: activation slope %g: want a number in [-1, 1]", a.Slope)
	}
	return nil
}

// Period is P = 2^s: the kernel depends on pixel positions modulo P.
func (a Arch) Period() int { return 1 << a.S }

// CheckSize reports whether the architecture admits an h×w image: both
// sides multiples of 2^s and at least 2^(s+1) (the expansion's base size).
func (a Arch) CheckSize(h, w int) error {
	p := a.Period()
	if h < 2*p || w < 2*p || h%p != 0 || w%p != 0 {
		return fmt.Errorf("cntk: a %d×%d image does not fit s = %d: both sides must be multiples of %d and at least %d (pad or crop it)", w, h, a.S, p, 2*p)
	}
	return nil
}

// FitSize is the smallest admissible size at least h×w.
func (a Arch) FitSize(h, w int) (int, int) {
	p := a.Period()
	up := func(n int) int { return max(2*p, (n+p-1)/p*p) }
	return up(h), up(w)
}

// dual returns the normalised dual activation φ̌(ρ) = E[φ(u)φ(v)]/E[φ(g)²]
// for unit Gaussians of correlation ρ, and φ̌'(ρ) = E[φ'(u)φ'(v)]/E[φ(g)²].
// φ(u) = max(u, αu) = (1+α)/2·u + (1−α)/2·|u|.
func (a Arch) dual(rho float64) (v, d float64) {
	rho = max(-1, min(1, rho))
	lin := (1 + a.Slope) / 2
	abs := (1 - a.Slope) / 2
	norm := lin*lin + abs*abs // E φ(g)²
	as := math.Asin(rho)
	eAbs := 2 / math.Pi * (math.Sqrt(1-rho*rho) + rho*as) // E|u||v|
	eSign := 2 / math.Pi * as                             // E sign(u)sign(v)
	v = (lin*lin*rho + abs*abs*eAbs) / norm
	d = (lin*lin + abs*abs*eSign) / norm
	return v, d
}

// PriorKind names a feature prior.
type PriorKind int

// The feature priors of the thesis's figure 3-4.
const (
	PriorUniform  PriorKind = iota
	PriorIdentity           // one channel: the identity matrix as an image
	PriorMeshgrid           // two channels: row and column coordinates
	PriorOneHot             // one channel per pixel (Gram = identity)
)

var priorNames = []string{"uniform", "identity", "meshgrid", "onehot"}

func (k PriorKind) String() string { return enumString(priorNames, "PriorKind", int(k)) }

// ParsePrior reads a prior name.
func ParsePrior(s string) (PriorKind, error) {
	i, err := parseEnum(priorNames, "prior", s)
	return PriorKind(i), err
}

// enumString is names[i], or typ(i) when i is out of range.
func enumString(names []string, typ string, i int) string {
	if i >= 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, i)
}

// parseEnum is the index of s in names, or an error that names what s
// was meant to be and lists the names ("want a, b or c").
func parseEnum(names []string, what, s string) (int, error) {
	if i := slices.Index(names, s); i >= 0 {
		return i, nil
	}
	last := len(names) - 1
	return 0, fmt.Errorf("cntk: %s %q: want %s or %s", what, s, strings.Join(names[:last], ", "), names[last])
}

// Prior is a feature prior Z.
type Prior struct {
	Kind PriorKind
	// Low and High bound the uniform prior's entries (both 0: U[0, 0.1]).
	Low, High float64
	// Channels > 0 draws that many uniform channels with Seed instead of
	// the infinite-channel limit (direct kernel only).
	Channels int
	Seed     uint64
}

func (p Prior) bounds() (float64, float64) {
	if p.Low == 0 && p.High == 0 {
		return 0, 0.1
	}
	return p.Low, p.High
}

// Validate reports an unusable prior.
func (p Prior) Validate() error {
	lo, hi := p.bounds()
	switch {
	case p.Kind < 0 || int(p.Kind) >= len(priorNames):
		return fmt.Errorf("cntk: unknown prior %d", int(p.Kind))
	case p.Channels < 0:
		return fmt.Errorf("cntk: %d prior channels: want ≥ 0", p.Channels)
	case p.Kind == PriorUniform && !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0):
		return fmt.Errorf("cntk: uniform prior U[%g, %g]: want finite low < high", lo, hi)
	case p.Kind == PriorUniform && lo == 0 && hi == 0:
		return errors.New("cntk: uniform prior U[0, 0] is degenerate")
	}
	return nil
}

// Stationary reports whether the prior's Gram takes one value on the
// diagonal and one off it (condition B.6 of the expansion theorem).
func (p Prior) Stationary() bool {
	switch p.Kind {
	case PriorUniform:
		return p.Channels == 0
	case PriorOneHot:
		return true
	}
	return false
}

// twoValues returns the diagonal and off-diagonal Gram of a stationary prior.
func (p Prior) twoValues() (c1, c2 float64) {
	if p.Kind == PriorOneHot {
		return 1, 0
	}
	a, b := p.bounds()
	return (a*a + a*b + b*b) / 3, (a + b) * (a + b) / 4
}
