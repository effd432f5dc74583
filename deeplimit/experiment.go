package deeplimit

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// DepthRow is one depth of a taxonomy sweep: how often the depth-L NTK
// machine agrees with the three reference classifiers on the test rows.
type DepthRow struct {
	// Depth is L, or 0 for the infinitely deep limit (singular-kernel
	// case: LimitTable).
	Depth int `json:"depth"`
	// Agreement with the majority vote, the 1-NN classifier and the
	// singular kernel smoother of order Alpha (NaN when the activation is
	// not in the singular-kernel case and no order was given).
	Majority float64 `json:"agree_majority"`
	Nearest  float64 `json:"agree_1nn"`
	Singular float64 `json:"agree_singular"`
	// TestError is the machine's error rate on the test labels.
	TestError float64 `json:"test_error"`
	// Identity: the normalized train matrix was the identity to working
	// precision (no factorization needed); MaxOffDiag its largest
	// off-diagonal row sum.
	Identity   bool    `json:"identity"`
	MaxOffDiag float64 `json:"max_offdiag"`
	// Ridge added to the unit diagonal when K_n was singular (see
	// MachineInfo).
	Ridge float64 `json:"ridge"`
}

// directBudget: below this many recursion steps the kernel values are
// computed exactly rather than interpolated from a table.
const directBudget = 4e7

// Sweep runs the depth-L NTK machine of d for each depth and compares it
// with majority vote, 1-NN and the singular kernel smoother of order alpha
// (NaN: skip that comparison). Rows must be in the positive orthant of the
// sphere; labels ±1.
func Sweep(ctx context.Context, d *Dual, depths []int, train Points, y []float64, test Points, yTest []float64, alpha float64, progress func(string)) ([]DepthRow, error) {
	if len(depths) == 0 {
		return nil, errorf("no depths to sweep")
	}
	if err := checkLabels(yTest, test.N); err != nil {
		return nil, err
	}
	if err := checkLabels(y, train.N); err != nil {
		return nil, err
	}
	if err := CheckOrthant(train); err != nil {
		return nil, fmt.Errorf("training rows: %w", err)
	}
	if err := CheckOrthant(test); err != nil {
		return nil, fmt.Errorf("test rows: %w", err)
	}
	say := func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	say("tabulating K_L for depths %v", depths)
	tabs, err := d.Tables(ctx, depths, nil)
	if err != nil {
		return nil, err
	}
	maj := MajorityVote(y, test.N)
	nn := NearestNeighbor(train, y, test)
	var sing []float64
	if !math.IsNaN(alpha) {
		sing = SingularSmoother(train, y, test, alpha)
	}
	ds := slices.Clone(depths)
	slices.Sort(ds)
	ds = slices.Compact(ds)
	var rows []DepthRow
	for _, L := range ds {
		say("depth %d: kernel machine on %d training rows", L, train.N)
		var trainK, testK Kernel = tabs[L], tabs[L]
		if float64(train.N)*float64(train.N)/2*float64(L) <= directBudget {
			trainK = Direct{d, L}
		}
		if float64(train.N)*float64(test.N)*float64(L) <= directBudget {
			testK = Direct{d, L}
		}
		pred, info, err := MachineWith(ctx, trainK, testK, train, y, test)
		if err != nil {
			return nil, err
		}
		r := DepthRow{Depth: L, Majority: Agreement(pred, maj), Nearest: Agreement(pred, nn),
			Singular: math.NaN(), TestError: ErrorRate(pred, yTest), Identity: info.Identity, MaxOffDiag: info.MaxOffDiag, Ridge: info.Ridge}
		if sing != nil {
			r.Singular = Agreement(pred, sing)
		}
		rows = append(rows, r)
	}
	if d.Case == CaseSingular {
		say("the infinitely deep limit ψ")
		lim, err := d.LimitTable(ctx)
		if err != nil {
			return nil, err
		}
		pred, info, err := Machine(ctx, lim, train, y, test)
		if err != nil {
			return nil, err
		}
		r := DepthRow{Depth: 0, Majority: Agreement(pred, maj), Nearest: Agreement(pred, nn),
			Singular: math.NaN(), TestError: ErrorRate(pred, yTest), Identity: info.Identity, MaxOffDiag: info.MaxOffDiag}
		if sing != nil {
			r.Singular = Agreement(pred, sing)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// ConsistencyRow is one training-set size of the consistency experiment:
// test error rates by classifier name.
type ConsistencyRow struct {
	N      int                `json:"n"`
	Errors map[string]float64 `json:"errors"`
	// Identity says, per activation, whether its train matrix was the
	// identity to working precision at this n.
	Identity map[string]bool `json:"identity"`
}

// LimitName is the name of d's infinitely deep machine in results.
func LimitName(d *Dual) string { return d.Act.Name + " L=∞" }

// Consistency trains the depth-L NTK machines (and, for activations in
// the singular-kernel case, the infinitely deep machine of LimitTable) of the duals on nested
// training sets of the task (the first n rows of one seeded sample, for
// each n in ns) and reports their test error on nTest fresh rows, beside
// 1-NN, the majority vote and the Hilbert estimate (the singular kernel
// smoother of order equal to the data's dimension).
func Consistency(ctx context.Context, task Dirichlet, duals []*Dual, ns []int, nTest, L int, seed uint64, progress func(string)) ([]ConsistencyRow, error) {
	if len(ns) == 0 {
		return nil, errorf("no training sizes")
	}
	maxN := slices.Max(ns)
	if slices.Min(ns) < 1 {
		return nil, errorf("training sizes must be ≥ 1")
	}
	say := func(format string, args ...any) {
		if progress != nil {
			progress(fmt.Sprintf(format, args...))
		}
	}
	all, yAll, err := task.Sample(maxN, seed)
	if err != nil {
		return nil, err
	}
	test, yTest, err := task.Sample(nTest, seed+1_000_003)
	if err != nil {
		return nil, err
	}
	tabs := make([]*Table, len(duals))
	limits := make([]*Table, len(duals))
	for i, d := range duals {
		say("tabulating the depth-%d NTK of %s", L, d.Act.Name)
		t, err := d.Tables(ctx, []int{L}, nil)
		if err != nil {
			return nil, err
		}
		tabs[i] = t[L]
		if d.Case == CaseSingular {
			say("tabulating the infinitely deep limit ψ of %s", d.Act.Name)
			if limits[i], err = d.LimitTable(ctx); err != nil {
				return nil, err
			}
		}
	}
	var rows []ConsistencyRow
	for _, n := range ns {
		train := Points{X: all.X[:n*all.D], N: n, D: all.D}
		y := yAll[:n]
		row := ConsistencyRow{N: n, Errors: map[string]float64{}, Identity: map[string]bool{}}
		say("n = %d: 1-NN, majority vote, Hilbert estimate", n)
		row.Errors["1-NN"] = ErrorRate(NearestNeighbor(train, y, test), yTest)
		row.Errors["majority"] = ErrorRate(MajorityVote(y, test.N), yTest)
		row.Errors["hilbert"] = ErrorRate(SingularSmoother(train, y, test, float64(task.Dim())), yTest)
		bayes := make([]float64, test.N)
		for t := range bayes {
			bayes[t] = task.Bayes(test.Row(t))
		}
		row.Errors["bayes-classifier"] = ErrorRate(bayes, yTest)
		for i, d := range duals {
			say("n = %d: depth-%d NTK machine, %s", n, L, d.Act.Name)
			pred, info, err := Machine(ctx, tabs[i], train, y, test)
			if err != nil {
				return nil, err
			}
			row.Errors[d.Act.Name] = ErrorRate(pred, yTest)
			row.Identity[d.Act.Name] = info.Identity
			if limits[i] != nil {
				say("n = %d: infinitely deep NTK machine, %s", n, d.Act.Name)
				pred, info, err := Machine(ctx, limits[i], train, y, test)
				if err != nil {
					return nil, err
				}
				row.Errors[LimitName(d)] = ErrorRate(pred, yTest)
				row.Identity[LimitName(d)] = info.Identity
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}
