package tree

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/rfmkit/rfm"
	"gonum.org/v1/gonum/stat"
)

// ProbeCandidate is a leaf configuration that Probe scores, with its own
// version of the rows (its column scaling): Train and Valid hold the same
// rows, in the same order, as the routing's training and validation rows.
type ProbeCandidate struct {
	Config       rfm.Config
	Train, Valid *rfm.Dataset
}

// ProbeResult scores each candidate on the validation rows that reach the
// probed leaves.
type ProbeResult struct {
	// LeafRows are the training rows of each probed leaf, LeafValid its
	// validation rows (indices into the Valid rows).
	LeafRows, LeafValid [][]int
	// Rows are the validation rows scored, leaf after leaf (indices into
	// the Valid rows).
	Rows []int
	// Loss[k][i] is candidate k's squared error on Rows[i], averaged over
	// the outputs (the one-hot labels for classification: the Brier
	// score); Correct[k][i] whether it classified the row right (nil for
	// regression).
	Loss    [][]float64
	Correct [][]bool
}

// MeanLoss is candidate k's mean loss over the scored rows.
func (r *ProbeResult) MeanLoss(k int) float64 { return stat.Mean(r.Loss[k], nil) }

// Accuracy is candidate k's share of scored rows classified right (0 for
// regression).
func (r *ProbeResult) Accuracy(k int) float64 {
	if r.Correct == nil || len(r.Rows) == 0 {
		return 0
	}
	right := 0
	for _, ok := range r.Correct[k] {
		if ok {
			right++
		}
	}
	return float64(right) / float64(len(r.Rows))
}

// Probe grows a few root-to-leaf paths of the tree route would grow on
// train (only the nodes on those paths are split, as tree.Fit splits them),
// fits each candidate's leaf model on each probed leaf's training rows, and
// scores it on the validation rows that the path routes to that leaf. The
// leaves are drawn with probability proportional to their rows (seeded by
// route.Seed), distinct, at most leaves of them. It is what a search can
// afford on a large table to compare leaf configurations on the leaves they
// would be fitted on, at the cost of a few splits and leaves.
func Probe(ctx context.Context, route rfm.Config, train, valid *rfm.Dataset, leaves int, cands []ProbeCandidate) (*ProbeResult, error) {
	cfg, err := prepare(route, train, "training")
	if err != nil {
		return nil, err
	}
	switch {
	case valid == nil || valid.N == 0:
		return nil, errors.New("tree.Probe: no validation rows")
	case valid.D != train.D:
		return nil, fmt.Errorf("tree.Probe: validation rows have %d features, training rows %d", valid.D, train.D)
	case leaves < 1:
		return nil, fmt.Errorf("tree.Probe: %d leaves: want at least 1", leaves)
	case len(cands) == 0:
		return nil, errors.New("tree.Probe: no candidate")
	}
	for k, c := range cands {
		if c.Train == nil || c.Valid == nil || c.Train.N != train.N || c.Valid.N != valid.N {
			return nil, fmt.Errorf("tree.Probe: candidate %d's rows are not the routing's rows", k)
		}
		if err := check(c.Config); err != nil {
			return nil, fmt.Errorf("tree.Probe: candidate %d: %w", k, err)
		}
	}
	c := train.NumOutputs()
	plan, err := MakePlan(cfg, train.N, train.D, c)
	if err != nil {
		return nil, err
	}
	g, _, rows := start(cfg, plan, train, train.N, nil)
	vrows := make([]int, valid.N)
	for i := range vrows {
		vrows[i] = i
	}
	type node struct {
		rows, vrows []int
		n           int // training rows
		leaf        bool
		left, right *node
	}
	root := &node{rows: rows, vrows: vrows, n: len(rows)}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9b0be))
	res := &ProbeResult{}
	seen := map[*node]bool{}
	for try := 0; len(res.LeafRows) < leaves && try < 4*leaves; try++ {
		nd, id := root, 0
		for !nd.leaf {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if nd.left == nil {
				if len(nd.rows) <= g.cfg.LeafSize {
					nd.leaf = true
					break
				}
				l, r, dir, thr, _, err := g.split(ctx, id, nd.rows)
				if err != nil {
					return nil, fmt.Errorf("probe: split node %d (%d rows): %w", id, len(nd.rows), err)
				}
				if l == nil {
					nd.leaf = true
					break
				}
				var vl, vr []int
				for _, v := range nd.vrows {
					if dot(valid.X[v*valid.D:(v+1)*valid.D], dir) <= thr {
						vl = append(vl, v)
					} else {
						vr = append(vr, v)
					}
				}
				nd.left, nd.right = &node{rows: l, vrows: vl, n: len(l)}, &node{rows: r, vrows: vr, n: len(r)}
				nd.rows, nd.vrows = nil, nil
			}
			// Down a side with probability proportional to its rows.
			nl, nr := nd.left.n, nd.right.n
			if rng.IntN(nl+nr) < nl {
				nd, id = nd.left, 2*id+1
			} else {
				nd, id = nd.right, 2*id+2
			}
		}
		if seen[nd] || len(nd.vrows) == 0 {
			continue
		}
		seen[nd] = true
		res.LeafRows = append(res.LeafRows, nd.rows)
		res.LeafValid = append(res.LeafValid, nd.vrows)
		res.Rows = append(res.Rows, nd.vrows...)
	}
	if len(res.Rows) == 0 {
		return nil, errors.New("tree.Probe: no validation row reached a probed leaf")
	}
	res.Loss = make([][]float64, len(cands))
	if train.Labels != nil {
		res.Correct = make([][]bool, len(cands))
	}
	for k, cand := range cands {
		cg := &grower{cfg: g.cfg, ds: cand.Train, classes: c, weight: g.weight}
		if train.Labels != nil {
			cg.ds = withClasses(cand.Train, c)
		}
		leafCfg := leafConfig(cand.Config)
		leafCfg.MemoryLimit = plan.BudgetBytes - min(plan.BudgetBytes, uint64(train.N)*uint64(train.D)*16)
		for l, lr := range res.LeafRows {
			lf, err := cg.fitLeaf(ctx, l, lr, leafCfg)
			if err != nil {
				return nil, fmt.Errorf("probe: candidate %d, leaf %d (%d rows): %w", k, l, len(lr), err)
			}
			s, err := leafScores(ctx, lf, cand.Valid, res.LeafValid[l], c)
			if err != nil {
				return nil, fmt.Errorf("probe: candidate %d, leaf %d: %w", k, l, err)
			}
			for j, v := range res.LeafValid[l] {
				loss, ok := RowLoss(s[j*c:j*c+c], cand.Valid, v)
				res.Loss[k] = append(res.Loss[k], loss)
				if res.Correct != nil {
					res.Correct[k] = append(res.Correct[k], ok)
				}
			}
		}
	}
	return res, nil
}

// leafScores predicts the rows of ds with a fitted leaf (its model, or its
// constant class).
func leafScores(ctx context.Context, lf Leaf, ds *rfm.Dataset, rows []int, c int) ([]float64, error) {
	if lf.Model == nil {
		s := make([]float64, len(rows)*c)
		for j := range rows {
			s[j*c+lf.Class] = 1
		}
		return s, nil
	}
	sub := ds.Subset(rows)
	return lf.Model.Predict(ctx, sub.X, sub.N)
}

// RowLoss is the squared error of the scores s of row v of ds, averaged
// over the outputs (against the one-hot label for classification), and
// whether the argmax is the label.
func RowLoss(s []float64, ds *rfm.Dataset, v int) (float64, bool) {
	c := len(s)
	loss := 0.0
	if ds.Labels != nil {
		best := 0
		for j, x := range s {
			t := 0.0
			if j == ds.Labels[v] {
				t = 1
			}
			loss += (x - t) * (x - t)
			if x > s[best] {
				best = j
			}
		}
		return loss / float64(c), best == ds.Labels[v]
	}
	for j, x := range s {
		d := x - ds.Y[v*c+j]
		loss += d * d
	}
	return loss / float64(c), false
}
