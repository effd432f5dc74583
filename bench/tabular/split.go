package tabular

import (
	"fmt"
	"math/rand/v2"
)

// The benchmark's sizes: the most training rows of a task.
const (
	SizeMedium = "medium"
	SizeLarge  = "large"
)

// MaxTrain returns the training-row cap of a size.
func MaxTrain(size string) (int, error) {
	switch size {
	case SizeMedium:
		return 10000, nil
	case SizeLarge:
		return 50000, nil
	}
	return 0, fmt.Errorf("unknown size %q (known: %s, %s)", size, SizeMedium, SizeLarge)
}

// MaxEvalRows caps the validation and the test rows of a split.
const MaxEvalRows = 50000

// Split is one of a task's random splits: row indices of the task's file
// (0-based, header excluded).
type Split struct {
	Train []int `json:"train"`
	Val   []int `json:"val"`
	Test  []int `json:"test"`
}

// SplitSizes returns the sizes of a split of n rows under a training cap:
// train = ⌊min(0.7, maxTrain/n)·n⌋, the rest 30% validation (rounded down)
// and 70% test, each capped at MaxEvalRows; repeats is the number of
// splits the authors' code runs for that test size ("n_iter auto": 1 above
// 6 000 test rows, 2 above 3 000, 3 above 1 000, else 5).
func SplitSizes(n, maxTrain int) (train, val, test, repeats int) {
	train = min(n*7/10, maxTrain)
	rest := n - train
	val = min(rest*3/10, MaxEvalRows)
	test = min(rest-rest*3/10, MaxEvalRows)
	switch {
	case test > 6000:
		repeats = 1
	case test > 3000:
		repeats = 2
	case test > 1000:
		repeats = 3
	default:
		repeats = 5
	}
	return train, val, test, repeats
}

// Splits draws the splits of a task of n rows: split k is a permutation of
// the rows drawn from PCG(seed, k), cut into train, validation and test by
// SplitSizes. Deterministic for given (n, maxTrain, seed).
func Splits(n, maxTrain int, seed uint64) ([]Split, error) {
	train, val, test, repeats := SplitSizes(n, maxTrain)
	if train < 2 || val < 1 || test < 1 {
		return nil, fmt.Errorf("%d rows are too few for a split (train %d, validation %d, test %d)", n, train, val, test)
	}
	out := make([]Split, repeats)
	for k := range out {
		perm := rand.New(rand.NewPCG(seed, uint64(k))).Perm(n)
		out[k] = Split{Train: perm[:train], Val: perm[train : train+val], Test: perm[train+val : train+val+test]}
	}
	return out, nil
}
