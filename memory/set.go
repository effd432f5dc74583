package memory

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
)

// Set is what a network is trained to store: N examples of D values, row
// i in X[i*D:(i+1)*D], grouped into cycles. Autoencoding stores every
// example as a cycle of length 1 (a fixed point, f(x_i) = x_i); sequence
// encoding stores each sequence as a cycle (f(x_i) = the next example of
// its sequence, the last one mapping back to the first).
type Set struct {
	X      []float64
	N, D   int
	Cycles [][]int // every example in exactly one cycle, in order
	cycle  []int   // cycle of each example
	next   []int   // target example of each example
}

// NewSet checks rows and cycles and builds a set. Rows must all have the
// same length and finite values; cycles must use every row exactly once.
// A nil cycles autoencodes (every row its own cycle).
func NewSet(rows [][]float64, cycles [][]int) (*Set, error) {
	if len(rows) == 0 {
		return nil, errors.New("memory: no examples")
	}
	d := len(rows[0])
	if d == 0 {
		return nil, errors.New("memory: example 1 has no values")
	}
	x := make([]float64, 0, len(rows)*d)
	for i, r := range rows {
		if len(r) != d {
			return nil, fmt.Errorf("memory: example %d has %d values, example 1 has %d: every example must have the same length", i+1, len(r), d)
		}
		for j, v := range r {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("memory: example %d, value %d is %v", i+1, j+1, v)
			}
		}
		x = append(x, r...)
	}
	n := len(rows)
	if cycles == nil {
		for i := 0; i < n; i++ {
			cycles = append(cycles, []int{i})
		}
	}
	s := &Set{X: x, N: n, D: d, cycle: make([]int, n), next: make([]int, n)}
	for i := range s.cycle {
		s.cycle[i] = -1
	}
	for c, cyc := range cycles {
		if len(cyc) == 0 {
			return nil, fmt.Errorf("memory: cycle %d is empty", c+1)
		}
		for k, i := range cyc {
			if i < 0 || i >= n {
				return nil, fmt.Errorf("memory: cycle %d names example %d of %d", c+1, i+1, n)
			}
			if s.cycle[i] >= 0 {
				return nil, fmt.Errorf("memory: example %d is in cycle %d and again in cycle %d", i+1, s.cycle[i]+1, c+1)
			}
			s.cycle[i] = c
			s.next[i] = cyc[(k+1)%len(cyc)]
		}
		s.Cycles = append(s.Cycles, slices.Clone(cyc))
	}
	for i, c := range s.cycle {
		if c < 0 {
			return nil, fmt.Errorf("memory: example %d is in no cycle", i+1)
		}
	}
	return s, nil
}

// CyclesFromOrder builds the cycles of a table's rows from an order
// column and an optional group column (nil: one sequence): within each
// group the order values must be integers that run consecutively with no
// gap and no repeat (any start); the rows are sorted by them. Groups are
// numbered in order of first appearance.
func CyclesFromOrder(order []float64, group []string) ([][]int, error) {
	if group != nil && len(group) != len(order) {
		return nil, fmt.Errorf("memory: %d group values for %d order values", len(group), len(order))
	}
	var names []string
	members := map[string][]int{}
	for i, v := range order {
		if math.IsNaN(v) || v != math.Trunc(v) || math.Abs(v) > 1<<52 {
			return nil, fmt.Errorf("memory: row %d: order value %v is not an integer", i+1, v)
		}
		g := ""
		if group != nil {
			g = group[i]
		}
		if _, ok := members[g]; !ok {
			names = append(names, g)
		}
		members[g] = append(members[g], i)
	}
	var cycles [][]int
	for _, g := range names {
		rows := members[g]
		sort.SliceStable(rows, func(a, b int) bool { return order[rows[a]] < order[rows[b]] })
		where := ""
		if group != nil {
			where = fmt.Sprintf(" of sequence %q", g)
		}
		for k := 1; k < len(rows); k++ {
			prev, cur := order[rows[k-1]], order[rows[k]]
			if cur == prev {
				return nil, fmt.Errorf("memory: rows %d and %d%s both have order %v: an order value repeats", rows[k-1]+1, rows[k]+1, where, cur)
			}
			if cur != prev+1 {
				return nil, fmt.Errorf("memory: order%s jumps from %v (row %d) to %v (row %d): a gap in the sequence", where, prev, rows[k-1]+1, cur, rows[k]+1)
			}
		}
		cycles = append(cycles, rows)
	}
	return cycles, nil
}

// Example returns the values of example i (a slice of X).
func (s *Set) Example(i int) []float64 { return s.X[i*s.D : (i+1)*s.D] }

// Targets returns the training targets: row i is the example that f must
// map example i to.
func (s *Set) Targets() []float64 {
	y := make([]float64, len(s.X))
	for i, j := range s.next {
		copy(y[i*s.D:(i+1)*s.D], s.Example(j))
	}
	return y
}

// Sequential reports whether some cycle is longer than one example.
func (s *Set) Sequential() bool {
	for _, c := range s.Cycles {
		if len(c) > 1 {
			return true
		}
	}
	return false
}

// CycleOf is the cycle (0-based) example i belongs to, CycleLen the
// length of that cycle and Next the example f maps example i to.
func (s *Set) CycleOf(i int) int  { return s.cycle[i] }
func (s *Set) CycleLen(i int) int { return len(s.Cycles[s.cycle[i]]) }
func (s *Set) Next(i int) int     { return s.next[i] }

// Period is the least common multiple of the cycle lengths: f^Period maps
// every stored example to itself. Recovery iterates f^Period.
func (s *Set) Period() (int, error) {
	p := 1
	for _, c := range s.Cycles {
		p = p / gcd(p, len(c)) * len(c)
		if p > MaxPeriod {
			return 0, fmt.Errorf("memory: the cycles' lengths have a least common multiple above %d; use cycles of equal (or dividing) lengths", MaxPeriod)
		}
	}
	return p, nil
}

// MaxPeriod bounds Period.
const MaxPeriod = 10000

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
