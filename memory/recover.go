package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/rfmkit/rfm/nn"
)

// IterateOptions says when an iteration of f^P has converged.
type IterateOptions struct {
	Period   int     // P: applications of f per step (Set.Period; ≥ 1)
	Tol      float64 // converged when ‖f^P(x) − x‖ < Tol (default 1e-8, the thesis's)
	MaxSteps int     // cap on the steps (default 1000)
}

func (o IterateOptions) withDefaults() IterateOptions {
	if o.Period < 1 {
		o.Period = 1
	}
	if o.Tol == 0 {
		o.Tol = 1e-8
	}
	if o.MaxSteps == 0 {
		o.MaxSteps = 1000
	}
	return o
}

// Iterate runs x ← f^P(x) from rows starting points (rows × In) until
// each has converged or the cap is reached, and returns the last points,
// the steps each took and whether it converged. Converged rows leave the
// batch, so the cost falls as they settle.
func Iterate(ctx context.Context, net *nn.Network, starts []float64, rows int, o IterateOptions) (limits []float64, steps []int, converged []bool, err error) {
	o = o.withDefaults()
	d := net.In()
	limits = append([]float64(nil), starts[:rows*d]...)
	steps = make([]int, rows)
	converged = make([]bool, rows)
	active := seq(rows)
	for step := 1; step <= o.MaxSteps && len(active) > 0; step++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, err
		}
		x := make([]float64, len(active)*d)
		for r, i := range active {
			copy(x[r*d:(r+1)*d], limits[i*d:(i+1)*d])
		}
		fx := Apply(net, x, len(active), o.Period)
		still := active[:0]
		for r, i := range active {
			nx := fx[r*d : (r+1)*d]
			moved := dist(nx, limits[i*d:(i+1)*d])
			copy(limits[i*d:(i+1)*d], nx)
			steps[i] = step
			switch {
			case moved < o.Tol:
				converged[i] = true
			case math.IsNaN(moved) || math.IsInf(moved, 0):
				// diverged: stays not converged
			default:
				still = append(still, i)
			}
		}
		active = still
	}
	return limits, steps, converged, nil
}

func seq(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// Outcome is where one start ended.
type Outcome struct {
	Source    int     `json:"source"`   // the example it was corrupted from, −1 for a random start
	Limit     int     `json:"limit"`    // the example its limit matches, −1 for none
	Distance  float64 `json:"distance"` // from the limit to the nearest example
	Converged bool    `json:"converged"`
	Steps     int     `json:"steps"`
}

// Summary counts the outcomes of a set of starts.
type Summary struct {
	Starts int `json:"starts"`
	// Recovered: converged to its source example (or, for a cycle, to a
	// member of its source's cycle); for random starts, to any example.
	Recovered int `json:"recovered"`
	// Other: converged to a stored example of another cycle.
	Other int `json:"other_example"`
	// Spurious: converged to a point that is no example; Distinct counts
	// the different such limits (within the matching tolerance).
	Spurious         int `json:"spurious"`
	DistinctSpurious int `json:"distinct_spurious_attractors"`
	NotConverged     int `json:"not_converged"`
	// Examples and Cycles: the examples and the cycles that some start
	// reached.
	Examples int `json:"examples_reached"`
	Cycles   int `json:"cycles_reached"`
}

// MatchTol is the default distance within which a limit is taken for an
// example: a tenth of the smallest distance between two examples (the
// whole scale of the data when there is one example).
func MatchTol(s *Set) float64 {
	best := math.Inf(1)
	for i := 0; i < s.N; i++ {
		for j := i + 1; j < s.N; j++ {
			best = min(best, dist(s.Example(i), s.Example(j)))
		}
	}
	if math.IsInf(best, 1) {
		best = math.Sqrt(dot(s.X, s.X))
	}
	return best / 10
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// Classify matches the limits to the set's examples (within matchTol) and
// counts them. sources has one entry per start (−1: random).
func Classify(s *Set, limits []float64, steps []int, converged []bool, sources []int, matchTol float64) ([]Outcome, Summary) {
	rows := len(sources)
	out := make([]Outcome, rows)
	sum := Summary{Starts: rows}
	reached := map[int]bool{}
	var spurious [][]float64
	for r := 0; r < rows; r++ {
		lim := limits[r*s.D : (r+1)*s.D]
		o := Outcome{Source: sources[r], Limit: -1, Converged: converged[r], Steps: steps[r], Distance: math.Inf(1)}
		for i := 0; i < s.N; i++ {
			if dd := dist(lim, s.Example(i)); dd < o.Distance {
				o.Distance, o.Limit = dd, i
			}
		}
		if o.Distance > matchTol {
			o.Limit = -1
		}
		switch {
		case !o.Converged:
			sum.NotConverged++
		case o.Limit < 0:
			sum.Spurious++
			known := false
			for _, p := range spurious {
				if dist(p, lim) <= matchTol {
					known = true
					break
				}
			}
			if !known {
				spurious = append(spurious, lim)
			}
		case o.Source < 0 || s.CycleOf(o.Limit) == s.CycleOf(o.Source):
			sum.Recovered++
			reached[o.Limit] = true
		default:
			sum.Other++
			reached[o.Limit] = true
		}
		if math.IsInf(o.Distance, 0) || math.IsNaN(o.Distance) {
			o.Distance = -1 // diverged; JSON has no infinity
		}
		out[r] = o
	}
	cycles := map[int]bool{}
	for i := range reached {
		cycles[s.CycleOf(i)] = true
	}
	sum.DistinctSpurious, sum.Examples, sum.Cycles = len(spurious), len(reached), len(cycles)
	return out, sum
}

// Corruption names how starting points are made.
type Corruption string

// The corruptions.
const (
	// Noise adds N(0, σ²) to every value of each example.
	Noise Corruption = "noise"
	// Mask sets half of each example to zero: the bottom half of an image
	// (given its height), else the second half of the values.
	Mask Corruption = "mask"
	// Random draws points uniformly in the box that holds the examples
	// (each coordinate between the data's smallest and largest value).
	Random Corruption = "random"
	// Gaussian draws points from N(0, σ²) in every coordinate.
	Gaussian Corruption = "gaussian"
)

// Starts makes starting points: for Noise and Mask one corrupted copy of
// each example (count copies of each, count ≥ 1), for Random and
// Gaussian count points. height > 0 marks images of height rows (D a
// multiple of it). It returns the points and their sources.
func Starts(s *Set, kind Corruption, count int, sigma float64, height int, seed uint64) ([]float64, []int, error) {
	if count < 1 {
		return nil, nil, fmt.Errorf("memory: %d starts", count)
	}
	r := rand.New(rand.NewPCG(seed, 0xc0))
	var x []float64
	var src []int
	switch kind {
	case Noise, Mask:
		for c := 0; c < count; c++ {
			for i := 0; i < s.N; i++ {
				p := append([]float64(nil), s.Example(i)...)
				if kind == Noise {
					for j := range p {
						p[j] += sigma * r.NormFloat64()
					}
				} else {
					from := s.D / 2
					if height > 1 && s.D%height == 0 {
						from = (height / 2) * (s.D / height)
					}
					clear(p[from:])
				}
				x, src = append(x, p...), append(src, i)
			}
		}
	case Random, Gaussian:
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, v := range s.X {
			lo, hi = min(lo, v), max(hi, v)
		}
		for c := 0; c < count; c++ {
			for j := 0; j < s.D; j++ {
				if kind == Random {
					x = append(x, lo+(hi-lo)*r.Float64())
				} else {
					x = append(x, sigma*r.NormFloat64())
				}
			}
			src = append(src, -1)
		}
	default:
		return nil, nil, fmt.Errorf("memory: unknown corruption %q (known: noise, mask, random, gaussian)", kind)
	}
	if (kind == Noise || kind == Gaussian) && !(sigma > 0) {
		return nil, nil, errors.New("memory: noise needs a standard deviation σ > 0")
	}
	return x, src, nil
}
