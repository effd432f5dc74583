package rfm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Dataset is a numeric training or validation set. Exactly one of Labels
// (classification) or Y (regression) is set.
type Dataset struct {
	X    []float64 // N×D, row-major
	N, D int
	// Labels are class indices 0..Classes−1 (classification).
	Labels  []int
	Classes int // 0: max label + 1
	// Y holds N×Outputs regression targets.
	Y       []float64
	Outputs int // 0: 1
}

// Task is Classification when the set has labels, Regression otherwise.
func (ds *Dataset) Task() Task { return ds.task() }

// NumOutputs is the number of classes (Classes, or the largest label + 1)
// or of regression target columns.
func (ds *Dataset) NumOutputs() int { return ds.outputs() }

// Check validates shapes and values (finite features and targets, labels
// in range), naming the set in its message ("training", "validation").
func (ds *Dataset) Check(name string) error { return ds.check(name, 1) }

func (ds *Dataset) task() Task {
	if ds.Labels != nil {
		return Classification
	}
	return Regression
}

func (ds *Dataset) outputs() int {
	if ds.Labels != nil {
		if ds.Classes > 0 {
			return ds.Classes
		}
		m := 0
		for _, l := range ds.Labels {
			m = max(m, l+1)
		}
		return m
	}
	return max(ds.Outputs, 1)
}

// check validates shapes and values; name says which set ("training", "validation").
func (ds *Dataset) check(name string, minRows int) error {
	if ds == nil {
		return fmt.Errorf("%s data is missing", name)
	}
	if ds.N < minRows {
		if ds.N == 0 {
			return fmt.Errorf("%s data is empty", name)
		}
		return fmt.Errorf("%s data has %d row(s); at least %d are needed", name, ds.N, minRows)
	}
	if ds.D < 1 {
		return fmt.Errorf("%s data has no feature columns", name)
	}
	if len(ds.X) != ds.N*ds.D {
		return fmt.Errorf("%s data: X has %d values, want N×D = %d×%d = %d", name, len(ds.X), ds.N, ds.D, ds.N*ds.D)
	}
	for i, v := range ds.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s data: row %d, feature %d is %v; impute or drop non-finite values first", name, i/ds.D, i%ds.D, v)
		}
	}
	if (ds.Labels == nil) == (ds.Y == nil) {
		return fmt.Errorf("%s data: give either class labels or regression targets", name)
	}
	if ds.Labels != nil {
		if len(ds.Labels) != ds.N {
			return fmt.Errorf("%s data: %d labels for %d rows", name, len(ds.Labels), ds.N)
		}
		c := ds.outputs()
		for i, l := range ds.Labels {
			if l < 0 || l >= c {
				return fmt.Errorf("%s data: row %d has class %d outside [0, %d)", name, i, l, c)
			}
		}
		return nil
	}
	c := ds.outputs()
	if len(ds.Y) != ds.N*c {
		return fmt.Errorf("%s data: Y has %d values, want N×outputs = %d×%d", name, len(ds.Y), ds.N, c)
	}
	for i, v := range ds.Y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s data: target of row %d is %v", name, i/c, v)
		}
	}
	return nil
}

// Subset copies the given rows (e.g. the two sides of Holdout) into a new
// data set.
func (ds *Dataset) Subset(rows []int) *Dataset {
	out := &Dataset{N: len(rows), D: ds.D, Classes: ds.Classes, Outputs: ds.Outputs}
	out.X = make([]float64, len(rows)*ds.D)
	for i, r := range rows {
		copy(out.X[i*ds.D:], ds.X[r*ds.D:(r+1)*ds.D])
	}
	if ds.Labels != nil {
		out.Labels = make([]int, len(rows))
		for i, r := range rows {
			out.Labels[i] = ds.Labels[r]
		}
	} else {
		c := ds.outputs()
		out.Y = make([]float64, len(rows)*c)
		for i, r := range rows {
			copy(out.Y[i*c:], ds.Y[r*c:(r+1)*c])
		}
	}
	return out
}

// concat appends b's rows to a's.
func concat(a, b *Dataset) *Dataset {
	out := &Dataset{N: a.N + b.N, D: a.D, Classes: a.Classes, Outputs: a.Outputs}
	out.X = append(append([]float64(nil), a.X...), b.X...)
	if a.Labels != nil {
		out.Labels = append(append([]int(nil), a.Labels...), b.Labels...)
	} else {
		out.Y = append(append([]float64(nil), a.Y...), b.Y...)
	}
	return out
}

// Holdout splits row indices 0..n−1 into (train, validation) with about
// frac of the rows in validation. With labels the split is stratified:
// every class keeps about frac of its rows in validation (and at least one
// row in training). Deterministic for a given seed.
func Holdout(n int, labels []int, frac float64, seed uint64) (train, val []int) {
	rng := rand.New(rand.NewPCG(seed, 0x401d07))
	var groups map[int][]int
	var keys []int
	if labels == nil {
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		groups, keys = map[int][]int{0: all}, []int{0}
	} else {
		groups, keys = classGroups(labels)
	}
	for _, k := range keys {
		g := groups[k]
		rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
		nv := int(math.Round(frac * float64(len(g))))
		if nv >= len(g) {
			nv = len(g) - 1
		}
		val = append(val, g[:nv]...)
		train = append(train, g[nv:]...)
	}
	sort.Ints(train)
	sort.Ints(val)
	return train, val
}

// classGroups groups the row indices by label (each group in row order)
// and returns the labels in increasing order.
func classGroups(labels []int) (map[int][]int, []int) {
	groups := map[int][]int{}
	for i, l := range labels {
		groups[l] = append(groups[l], i)
	}
	keys := make([]int, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return groups, keys
}

// KFold returns k (train, test) index pairs over n rows, stratified when
// labels are given. Deterministic for a given seed.
func KFold(n int, labels []int, k int, seed uint64) (trains, tests [][]int) {
	rng := rand.New(rand.NewPCG(seed, 0xf01d))
	fold := make([]int, n)
	if labels == nil {
		perm := rng.Perm(n)
		for i, p := range perm {
			fold[p] = i % k
		}
	} else {
		groups, keys := classGroups(labels)
		next := 0
		for _, c := range keys {
			g := groups[c]
			rng.Shuffle(len(g), func(i, j int) { g[i], g[j] = g[j], g[i] })
			for _, idx := range g {
				fold[idx] = next % k
				next++
			}
		}
	}
	trains, tests = make([][]int, k), make([][]int, k)
	for i, f := range fold {
		for j := 0; j < k; j++ {
			if j == f {
				tests[j] = append(tests[j], i)
			} else {
				trains[j] = append(trains[j], i)
			}
		}
	}
	return trains, tests
}
