package memory

import (
	"context"
	"math"
	"slices"

	"github.com/rfmkit/rfm/nn"
)

// Recovery is one kind of start to recover examples from.
type Recovery struct {
	Name  string     // its name in reports (e.g. "noise", "random-uniform")
	Kind  Corruption // how the starts are made
	Count int        // copies per example (Noise, Mask) or points (Random, Gaussian)
	Sigma float64    // the noise's or the Gaussian's standard deviation
}

// Recovered is the outcome of one Recovery: its starts, their limits and
// sources (as Starts and Iterate give them) and the counts.
type Recovered struct {
	Starts, Limits []float64
	Sources        []int
	Summary        Summary
}

// Recover makes r's starts (images of height rows when height > 0, from
// seed), iterates the network's f^P from each (it) and classifies the
// limits, a limit within matchTol of an example being that example.
func Recover(ctx context.Context, net *nn.Network, s *Set, r Recovery, height int, seed uint64, it IterateOptions, matchTol float64) (*Recovered, error) {
	starts, src, err := Starts(s, r.Kind, r.Count, r.Sigma, height, seed)
	if err != nil {
		return nil, err
	}
	lim, steps, conv, err := Iterate(ctx, net, starts, len(src), it)
	if err != nil {
		return nil, err
	}
	_, sum := Classify(s, lim, steps, conv, src, matchTol)
	return &Recovered{Starts: starts, Limits: lim, Sources: src, Summary: sum}, nil
}

// CountStored counts the stored examples of a verification and the cycles
// all of whose examples are stored.
func CountStored(s *Set, verified []Example) (stored, stableCycles int) {
	cycleOK := make([]bool, len(s.Cycles))
	for i := range cycleOK {
		cycleOK[i] = true
	}
	for _, ex := range verified {
		if ex.Stored {
			stored++
		} else {
			cycleOK[ex.Cycle] = false
		}
	}
	for _, ok := range cycleOK {
		if ok {
			stableCycles++
		}
	}
	return stored, stableCycles
}

// StripStarts picks up to count of the starts whose limits are given (as
// Iterate returns them) for a recovery figure: one per cycle their limits
// came nearest to, the first start reaching each, then the first others.
// So the figure shows different cycles when the starts found them.
func StripStarts(s *Set, limits []float64, count int) []int {
	var picked []int
	seen := map[int]bool{}
	n := len(limits) / s.D
	for k := 0; k < n && len(picked) < count; k++ {
		lim := limits[k*s.D : (k+1)*s.D]
		best, bestD := -1, math.Inf(1)
		for i := 0; i < s.N; i++ {
			d := 0.0
			for j, v := range s.Example(i) {
				d += (lim[j] - v) * (lim[j] - v)
			}
			if d < bestD {
				best, bestD = i, d
			}
		}
		if best < 0 { // a diverged limit (NaN) is near no example
			continue
		}
		if c := s.CycleOf(best); !seen[c] {
			seen[c] = true
			picked = append(picked, k)
		}
	}
	for k := 0; k < n && len(picked) < count; k++ {
		if !slices.Contains(picked, k) {
			picked = append(picked, k)
		}
	}
	return picked
}
