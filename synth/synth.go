// Package synth generates the synthetic regression tasks with known
// ground-truth features that the RFM papers use to show feature learning
// (SPEC §7): the low-rank product, x0·x1, the chain monomial, a single-index
// model and a linear target. Every generator is deterministic for a seed.
// AlignmentReversingData draws the centred-NFA paper's alignment reversing
// dataset (a classification-like construction with a balance γ, no EGOP).
//
// It is for tests, examples and the CLI's synth command, not for modelling.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Data is n rows of d features and one target.
type Data struct {
	X    []float64 // n×d
	Y    []float64 // n
	N, D int
}

// Task names a generator.
type Task string

// The tasks.
const (
	LowRank      Task = "lowrank"      // x ~ N(0, 0.5² I), y = x0·x1·1[x5 > 0]
	Product      Task = "product"      // x ~ N(0, I), y = x0·x1
	Chain        Task = "chain"        // y = Σ_{k<r} x_k x_{(k+1) mod r}
	SingleIndex  Task = "single-index" // y = He2(uᵀx) + He4(uᵀx)
	Linear       Task = "linear"       // y = βᵀx
	defaultChain      = 5
)

// Tasks lists the generators.
func Tasks() []Task { return []Task{LowRank, Product, Chain, SingleIndex, Linear} }

// Generate draws n rows of d features for task. The direction u
// (single-index) and β (linear) are drawn from the seed too; Truth returns
// them.
func Generate(task Task, n, d int, seed uint64) (*Data, error) {
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("synth: need n ≥ 1 and d ≥ 1 (got %d, %d)", n, d)
	}
	need := map[Task]int{LowRank: 6, Product: 2, Chain: defaultChain, SingleIndex: 1, Linear: 1}
	min, ok := need[task]
	if !ok {
		return nil, fmt.Errorf("synth: unknown task %q", task)
	}
	if d < min {
		return nil, fmt.Errorf("synth: task %s needs d ≥ %d", task, min)
	}
	r := rand.New(rand.NewPCG(seed, 0x5e7))
	dir := direction(task, d, seed)
	scale := 1.0
	if task == LowRank {
		scale = 0.5
	}
	x := make([]float64, n*d)
	for i := range x {
		x[i] = scale * r.NormFloat64()
	}
	y := make([]float64, n)
	for i := 0; i < n; i++ {
		row := x[i*d : i*d+d]
		switch task {
		case LowRank:
			if row[5] > 0 {
				y[i] = row[0] * row[1]
			}
		case Product:
			y[i] = row[0] * row[1]
		case Chain:
			for k := 0; k < defaultChain; k++ {
				y[i] += row[k] * row[(k+1)%defaultChain]
			}
		case SingleIndex:
			t := dot(dir, row)
			y[i] = (t*t - 1) + (t*t*t*t - 6*t*t + 3)
		case Linear:
			y[i] = dot(dir, row)
		}
	}
	return &Data{X: x, Y: y, N: n, D: d}, nil
}

// Truth returns the unit direction u (single-index) or β (linear) that
// Generate uses for this seed and d; nil for the other tasks.
func Truth(task Task, d int, seed uint64) []float64 { return direction(task, d, seed) }

func direction(task Task, d int, seed uint64) []float64 {
	if task != SingleIndex && task != Linear {
		return nil
	}
	r := rand.New(rand.NewPCG(seed, 0xd1))
	u := make([]float64, d)
	s := 0.0
	for i := range u {
		u[i] = r.NormFloat64()
		s += u[i] * u[i]
	}
	for i := range u {
		u[i] /= math.Sqrt(s)
	}
	return u
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// Classes labels a regression target in three classes by its sign with a
// dead zone of ±margin: 2 above margin, 1 below −margin, 0 between. On
// LowRank with margin 0.02 it is the three-class task the tests of the
// classifiers (tree, tune, ensemble) share.
func Classes(y []float64, margin float64) []int {
	labels := make([]int, len(y))
	for i, v := range y {
		switch {
		case v > margin:
			labels[i] = 2
		case v < -margin:
			labels[i] = 1
		}
	}
	return labels
}

// IsTask reports whether name is one of Tasks.
func IsTask(name string) bool {
	for _, t := range Tasks() {
		if string(t) == name {
			return true
		}
	}
	return false
}

// TaskNames lists Tasks comma-separated, for messages.
func TaskNames() string {
	var names []string
	for _, t := range Tasks() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}
