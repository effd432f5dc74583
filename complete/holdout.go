package complete

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Holdout is a split of the observed cells: Train is the matrix with the
// held-out cells marked missing, Cells the held-out cells (row-major
// indices into the matrix) with their true values in Truth.
type Holdout struct {
	Train *Matrix
	Cells []int
	Truth []float64
	// Columns are the held-out columns when whole columns were held out.
	Columns []int
}

// HoldoutEntries hides a seeded share frac (0 < frac < 1) of the observed
// cells, never the last observed cell of a row (a row without data cannot
// be completed).
func HoldoutEntries(y *Matrix, frac float64, seed uint64) (*Holdout, error) {
	if !(frac > 0 && frac < 1) {
		return nil, fmt.Errorf("holdout share %v: must lie strictly between 0 and 1", frac)
	}
	m, n := y.Rows, y.Cols
	var obs []int
	left := make([]int, m)
	for k, o := range y.Observed {
		if o {
			obs = append(obs, k)
			left[k/n]++
		}
	}
	want := int(math.Round(frac * float64(len(obs))))
	if want == 0 {
		return nil, fmt.Errorf("holdout share %v of %d observed entries is no entry at all: raise it", frac, len(obs))
	}
	r := rand.New(rand.NewPCG(seed, 0xc0117e))
	r.Shuffle(len(obs), func(a, b int) { obs[a], obs[b] = obs[b], obs[a] })
	h := &Holdout{Train: y.Clone()}
	for _, k := range obs {
		if len(h.Cells) == want {
			break
		}
		if left[k/n] <= 1 {
			continue
		}
		left[k/n]--
		h.Train.Observed[k] = false
		h.Cells = append(h.Cells, k)
	}
	sort.Ints(h.Cells)
	h.Truth = make([]float64, len(h.Cells))
	for q, k := range h.Cells {
		h.Truth[q] = y.Values[k]
	}
	return h, nil
}

// HoldoutColumns hides k seeded columns entirely (among the columns with an
// observed cell): the "new drug / cell type" setting.
func HoldoutColumns(y *Matrix, k int, seed uint64) (*Holdout, error) {
	m, n := y.Rows, y.Cols
	var cand []int
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			if y.Observed[i*n+j] {
				cand = append(cand, j)
				break
			}
		}
	}
	if k < 1 || k >= len(cand) {
		return nil, fmt.Errorf("holdout of %d columns: must be 1..%d (the matrix has %d columns with observed entries and one must stay)", k, len(cand)-1, len(cand))
	}
	r := rand.New(rand.NewPCG(seed, 0xc01))
	r.Shuffle(len(cand), func(a, b int) { cand[a], cand[b] = cand[b], cand[a] })
	cols := append([]int(nil), cand[:k]...)
	sort.Ints(cols)
	h := &Holdout{Train: y.Clone(), Columns: cols}
	for i := 0; i < m; i++ {
		for _, j := range cols {
			if y.Observed[i*n+j] {
				h.Train.Observed[i*n+j] = false
				h.Cells = append(h.Cells, i*n+j)
			}
		}
	}
	sort.Ints(h.Cells)
	for i := 0; i < m; i++ {
		seen := false
		for j := 0; j < n && !seen; j++ {
			seen = h.Train.Observed[i*n+j]
		}
		if !seen {
			return nil, fmt.Errorf("holding out %d columns leaves %s without an observed entry; hold out fewer columns", k, y.RowName(i))
		}
	}
	h.Truth = make([]float64, len(h.Cells))
	for q, c := range h.Cells {
		h.Truth[q] = y.Values[c]
	}
	return h, nil
}

// Score scores a completion on the held-out cells.
func (h *Holdout) Score(pred *Matrix) Scores {
	p := make([]float64, len(h.Cells))
	cols := make([]int, len(h.Cells))
	for q, k := range h.Cells {
		p[q] = pred.Values[k]
		cols[q] = k % pred.Cols
	}
	return Score(h.Truth, p, cols)
}
