package deeplimit

import (
	"math"
	"math/rand/v2"
)

// TaxonomyRecord is one activation's constants and depth sweep as the
// taxonomy experiment records them (rfm deep-limit's results file).
type TaxonomyRecord struct {
	Activation string        `json:"activation"`
	Scale      float64       `json:"scale"`
	A          float64       `json:"A"`
	A1         float64       `json:"A_prime"`
	B1         float64       `json:"B_prime"`
	Case       string        `json:"case"`
	Alpha      *float64      `json:"alpha"` // nil outside the singular-kernel case
	RefAlpha   float64       `json:"reference_alpha"`
	Rows       []DepthRecord `json:"depths"`
}

// DepthRecord is a DepthRow with an undefined agreement (NaN) as null.
type DepthRecord struct {
	Depth      int      `json:"depth"`
	Majority   float64  `json:"agree_majority"`
	Nearest    float64  `json:"agree_1nn"`
	Singular   *float64 `json:"agree_singular"`
	TestError  float64  `json:"test_error"`
	Identity   bool     `json:"identity"`
	MaxOffDiag float64  `json:"max_offdiag"`
	Ridge      float64  `json:"ridge"`
}

// NewTaxonomyRecord records d's constants and its sweep rows, run with the
// singular smoother's order ref.
func NewTaxonomyRecord(d *Dual, ref float64, rows []DepthRow) TaxonomyRecord {
	rec := TaxonomyRecord{Activation: d.Act.Name, Scale: d.Scale, A: d.A, A1: d.A1, B1: d.B1, Case: d.Case.String(), Alpha: finiteOrNil(d.Alpha), RefAlpha: ref}
	for _, r := range rows {
		rec.Rows = append(rec.Rows, DepthRecord{r.Depth, r.Majority, r.Nearest, finiteOrNil(r.Singular), r.TestError, r.Identity, r.MaxOffDiag, r.Ridge})
	}
	return rec
}

func finiteOrNil(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// ReferenceAlpha is the order of the singular kernel smoother a sweep of d
// compares with: given when > 0, else d's own α, else the data's dimension
// dim (activations outside the singular-kernel case have no α).
func (d *Dual) ReferenceAlpha(given float64, dim int) float64 {
	switch {
	case given > 0:
		return given
	case math.IsNaN(d.Alpha):
		return float64(dim)
	}
	return d.Alpha
}

// SplitOrthant prepares a two-class table for the taxonomy: the rows of
// all are min-max scaled (on all rows) and projected to the positive
// orthant of the sphere, shuffled with seed, and the first nTrain become
// the training rows and the next nTest the test rows; labels (0 or 1)
// become −1 and +1.
func SplitOrthant(all Points, labels []int, nTrain, nTest int, seed uint64) (train Points, y []float64, test Points, yTest []float64, err error) {
	if len(labels) != all.N {
		return train, nil, test, nil, errorf("%d labels for %d rows", len(labels), all.N)
	}
	if nTrain < 1 || nTest < 1 || nTrain+nTest > all.N {
		return train, nil, test, nil, errorf("%d training and %d test rows of %d", nTrain, nTest, all.N)
	}
	mm, err := FitMinMax(all)
	if err != nil {
		return train, nil, test, nil, err
	}
	proj, err := ProjectOrthant(all, mm)
	if err != nil {
		return train, nil, test, nil, err
	}
	perm := rand.New(rand.NewPCG(seed, 0x7370_6c69)).Perm(all.N)
	pick := func(idx []int) (Points, []float64) {
		pt := Points{X: make([]float64, 0, len(idx)*all.D), N: len(idx), D: all.D}
		lab := make([]float64, len(idx))
		for k, i := range idx {
			pt.X = append(pt.X, proj.Row(i)...)
			lab[k] = float64(2*labels[i] - 1)
		}
		return pt, lab
	}
	train, y = pick(perm[:nTrain])
	test, yTest = pick(perm[nTrain : nTrain+nTest])
	return train, y, test, yTest, nil
}

// ConsistencyColumns names the classifiers whose errors Consistency
// reports for the duals, in table order: each activation (and its
// infinitely deep limit in the singular-kernel case), then 1-NN, the
// Hilbert estimate, the majority vote and the Bayes classifier.
func ConsistencyColumns(duals []*Dual) []string {
	names := []string{}
	for _, d := range duals {
		names = append(names, d.Act.Name)
		if d.Case == CaseSingular {
			names = append(names, LimitName(d))
		}
	}
	return append(names, "1-NN", "hilbert", "majority", "bayes-classifier")
}
