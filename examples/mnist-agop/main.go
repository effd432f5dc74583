// Command mnist-agop measures what one AGOP round does to M on MNIST
// digits (docs/images.md): for the papers' update (uncentred gradients,
// M = AGOP), centred gradients, M = AGOP^½ and both, it fits round 0 (the
// plain Laplace kernel on unit-norm raw pixels) and round 1 on --train
// training digits, scores both on --valid other training digits (never the
// test set), and prints the spectrum of the learned M: its trace, the share
// of the trace in the top 1, 9 and 50 eigenvalues, the effective rank
// tr(M)²/‖M‖²_F, and the share of diag(M) on the border pixels (outside
// the central 20×20, nearly always blank in MNIST). The last row fits the
// papers' update to centred targets: the one-hot columns as a regression
// (each standardized to mean 0, variance 1), classes by the largest output.
//
// Usage: go run -tags openblas ./examples/mnist-agop [--data DIR] [--train N] [--valid N] [--seed S]
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/mnist"
)

func main() {
	data := flag.String("data", "../shared/data/mnist", "the MNIST folder")
	nTrain := flag.Int("train", 3000, "training digits")
	nValid := flag.Int("valid", 2000, "validation digits (other training digits)")
	seed := flag.Uint64("seed", 1, "seed of the split")
	flag.Parse()
	if err := run(*data, *nTrain, *nValid, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "mnist-agop:", err)
		os.Exit(1)
	}
}

func run(dir string, nTrain, nValid int, seed uint64) error {
	train, _, err := mnist.Load(dir)
	if err != nil {
		return err
	}
	if nTrain < 10 || nValid < 10 || nTrain+nValid > train.N {
		return fmt.Errorf("--train %d and --valid %d: want at least 10 each and at most %d together", nTrain, nValid, train.N)
	}
	perm := rand.New(rand.NewPCG(seed, 2)).Perm(train.N)
	subset := func(idx []int) *rfm.Dataset {
		ds := &rfm.Dataset{N: len(idx), D: train.D, Classes: mnist.NumClasses}
		for _, i := range idx {
			ds.X = append(ds.X, train.Image(i)...)
			ds.Labels = append(ds.Labels, train.Y[i])
		}
		return ds
	}
	tr, va := subset(perm[:nTrain]), subset(perm[nTrain:nTrain+nValid])
	ctx := context.Background()
	fmt.Printf("%d training digits, %d validation digits (seed %d); Laplace L = 10, λ = 1e-3, unit-norm rows\n", nTrain, nValid, seed)
	fmt.Printf("%-18s %8s %8s %8s %8s %9s %6s %6s %6s %8s %7s\n", "update", "acc0", "loss0", "acc1", "loss1", "trace", "top1", "top9", "top50", "eff.rank", "border")
	for _, u := range []struct {
		name     string
		centered bool
		power    float64
		targets  bool // centred targets
	}{{"AGOP (papers)", false, 1, false}, {"centred", true, 1, false}, {"AGOP^½", false, 0.5, false},
		{"centred AGOP^½", true, 0.5, false}, {"centred targets", false, 1, true}} {
		cfg := rfm.DefaultConfig()
		cfg.NormalizeRows, cfg.Iters, cfg.Selection, cfg.Refit = true, 1, rfm.SelectLoss, false
		cfg.Centered, cfg.AGOPPower = u.centered, u.power
		fa, fv := tr, va
		if u.targets {
			fa, fv = oneHot(tr), oneHot(va)
		}
		m, err := rfm.Fit(ctx, cfg, fa, fv, nil)
		if err != nil {
			return err
		}
		if m.BestRound != 1 || m.M.Form != kernel.Full {
			return fmt.Errorf("%s: round %d kept (%s M): want round 1's full M", u.name, m.BestRound, m.M.Form)
		}
		d := m.M.D
		vals, _, err := kernel.EigSym(d, m.M.Values)
		if err != nil {
			return err
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(vals)))
		var trace, frob, border float64
		for _, v := range vals {
			trace += v
			frob += v * v
		}
		share := func(k int) float64 {
			s := 0.0
			for _, v := range vals[:k] {
				s += v
			}
			return s / trace
		}
		for p := range d {
			if r, c := p/train.W, p%train.W; r < 4 || r >= train.H-4 || c < 4 || c >= train.W-4 {
				border += m.M.Values[p*d+p]
			}
		}
		h0, h1 := m.History[0], m.History[1]
		if u.targets {
			// A regression's rounds are scored by loss only: the accuracy
			// of round 1 (the model) and of round 0 (refitted) by hand.
			if h1.ValAccuracy, err = accuracy(ctx, m, va); err != nil {
				return err
			}
			cfg.Iters = 0
			m0, err := rfm.Fit(ctx, cfg, fa, fv, nil)
			if err != nil {
				return err
			}
			if h0.ValAccuracy, err = accuracy(ctx, m0, va); err != nil {
				return err
			}
		}
		fmt.Printf("%-18s %8.4f %8.5f %8.4f %8.5f %9.4g %6.3f %6.3f %6.3f %8.1f %7.3f\n", u.name, h0.ValAccuracy, h0.ValLoss,
			h1.ValAccuracy, h1.ValLoss, trace, share(1), share(9), share(50), trace*trace/frob, border/trace)
	}
	return nil
}

// oneHot is ds as a regression on its one-hot label columns.
func oneHot(ds *rfm.Dataset) *rfm.Dataset {
	out := &rfm.Dataset{N: ds.N, D: ds.D, X: ds.X, Outputs: ds.Classes, Y: make([]float64, ds.N*ds.Classes)}
	for i, l := range ds.Labels {
		out.Y[i*ds.Classes+l] = 1
	}
	return out
}

// accuracy is the share of ds's rows whose largest output is their label.
func accuracy(ctx context.Context, m *rfm.Model, ds *rfm.Dataset) (float64, error) {
	p, err := m.Predict(ctx, ds.X, ds.N)
	if err != nil {
		return 0, err
	}
	c, ok := ds.Classes, 0
	for i, l := range ds.Labels {
		row := p[i*c : (i+1)*c]
		best := 0
		for k, v := range row {
			if v > row[best] {
				best = k
			}
		}
		if best == l {
			ok++
		}
	}
	return float64(ok) / float64(ds.N), nil
}
