package hyperbf

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/experiment"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/nn"
)

// StudyOptions are the options of Study.
type StudyOptions struct {
	Config Config // the network (its Epochs are the epochs trained)
	// MeasureRows is how many seeded training rows the learned metric is
	// compared with the AGOP on, each epoch (0: none).
	MeasureRows int
	// Compare also fits a Laplace kernel machine, an RFM (the defaults) and
	// AGOP-HyperBF (an RFM with the Gaussian kernel of the same bandwidth).
	Compare bool
	// Rounds is the AGOP updates of the compared RFM and AGOP-HyperBF
	// (0: the RFM default, 5); each still chooses its round on a holdout.
	Rounds int
	// Validation, if > 0, holds out this fraction of the training rows
	// (seeded, stratified by class) and scores every model on it instead
	// of test, which is not used (it may be nil): the split to choose
	// settings on without looking at the test set.
	Validation float64
	// Progress, if set, is called after each epoch is measured (Epoch set)
	// and before each compared model is fitted (Fitting set).
	Progress func(StudyProgress)
}

// StudyProgress is one step of Study.
type StudyProgress struct {
	Epoch   *StudyEpoch
	Fitting string
}

// StudyEpoch is one epoch's measures.
type StudyEpoch struct {
	Epoch     int     `json:"epoch"`
	TrainLoss float64 `json:"train_mse,omitempty"` // the epoch's mean batch loss (none at epoch 0)
	TestScore float64 `json:"test_score"`          // accuracy % (classification) or MSE, on the scored set
	LR        float64 `json:"lr,omitempty"`        // the epoch's learning rate (none at epoch 0)
	// Alignment of the learned metric WᵀW with the AGOP of the function
	// the network computes, on the measurement rows.
	MetricVsAGOP nn.Comparison `json:"metric_vs_agop"`
	Seconds      float64       `json:"seconds"`
}

// StudyResult is what Study measured. Data, Test and Pixels name the files
// and their scaling; the caller fills them in.
type StudyResult struct {
	Data    string  `json:"data"`
	Test    string  `json:"test"`
	Pixels  string  `json:"pixels,omitempty"` // the images' pixel scaling (ScalePixels), filled in by the caller
	Rows    int     `json:"train_rows"`
	Centers int     `json:"centers"`
	Rank    int     `json:"rank"` // rows of W
	L       float64 `json:"bandwidth"`
	// Scored is what the scores are on: "test", or "validation" (a held-out
	// share of the training rows; Rows is then what was trained on).
	Scored     string             `json:"scored"`
	ScoredRows int                `json:"scored_rows"`
	Config     Config             `json:"config"`
	Epochs     []StudyEpoch       `json:"epochs"`
	Compare    map[string]float64 `json:"compare,omitempty"` // model → test score
	// Rounds are the RFM round (AGOP updates) each compared kernel machine
	// chose on its holdout.
	Rounds map[string]int `json:"rounds,omitempty"`
	Metric string         `json:"metric"`
}

// CompareOrder is the order the compared models are reported in.
var CompareOrder = []string{"Laplace", "RFM", "AGOP-HyperBF", "GD-HyperBF"}

// Study trains GD-HyperBF on train (classification: one-hot outputs of its
// labels) and measures after every epoch the test score and how the
// learned metric WᵀW aligns with the AGOP of the function the network
// computes. With opt.Compare it fits the kernel machines beside it.
func Study(ctx context.Context, train, test *rfm.Dataset, opt StudyOptions) (*StudyResult, error) {
	cfg := opt.Config
	scored := "test"
	if !(opt.Validation >= 0 && opt.Validation < 1) {
		return nil, fmt.Errorf("hyperbf: validation fraction %v must be in [0, 1)", opt.Validation)
	}
	if opt.Validation > 0 {
		tr, va := rfm.Holdout(train.N, train.Labels, opt.Validation, cfg.Seed)
		if len(tr) == 0 || len(va) == 0 {
			return nil, fmt.Errorf("hyperbf: a validation fraction of %v leaves %d training and %d validation rows", opt.Validation, len(tr), len(va))
		}
		train, test, scored = train.Subset(tr), train.Subset(va), "validation"
	}
	if test == nil {
		return nil, fmt.Errorf("hyperbf: no test set and no validation fraction")
	}
	classify := train.Labels != nil
	k, ytr := 1, train.Y
	if classify {
		k = train.Classes
		ytr = oneHot(train.Labels, k)
	}
	score := func(out []float64) float64 {
		if classify {
			return experiment.AccuracyPct(out, test.Labels, k)
		}
		mse, _ := nn.MSE(out, test.Y)
		return mse
	}
	metric := strings.Replace(MetricName(train), "test", scored, 1)
	start := time.Now()
	m, err := Init(cfg, train.X, ytr, train.N, train.D, k)
	if err != nil {
		return nil, err
	}
	res := &StudyResult{Rows: train.N, Centers: cfg.Centers, Rank: m.R, L: m.L, Metric: metric, Scored: scored, ScoredRows: test.N, Config: cfg}
	// The AGOP is measured on a seeded sample of the training rows (a
	// class-sorted file's first rows would be one class).
	mrows := min(opt.MeasureRows, train.N)
	mx := make([]float64, 0, mrows*train.D)
	for _, i := range rand.New(rand.NewPCG(cfg.Seed, 0x3e)).Perm(train.N)[:mrows] {
		mx = append(mx, train.X[i*train.D:(i+1)*train.D]...)
	}
	trainer := NewTrainer(m, cfg)
	for ep := 0; ep <= cfg.Epochs; ep++ {
		loss := 0.0
		if ep > 0 {
			if loss, err = trainer.Epoch(ctx, train.X, ytr, train.N); err != nil {
				return nil, err
			}
			if math.IsNaN(loss) || math.IsInf(loss, 0) {
				return nil, fmt.Errorf("training diverged in epoch %d; lower --lr (now %g)", ep, cfg.LR)
			}
		}
		out := m.Predict(test.X, test.N)
		for _, v := range out {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("training diverged by epoch %d (a test prediction is %v); lower --lr (now %g)", ep, v, cfg.LR)
			}
		}
		rec := StudyEpoch{Epoch: ep, TrainLoss: loss, LR: trainer.Rate() * float64(min(ep, 1)), TestScore: score(out), Seconds: time.Since(start).Seconds()}
		if mrows > 0 {
			if rec.MetricVsAGOP, err = nn.Compare(m.Metric(), m.AGOP(mx, mrows), train.D); err != nil {
				return nil, err
			}
		}
		res.Epochs = append(res.Epochs, rec)
		if opt.Progress != nil {
			opt.Progress(StudyProgress{Epoch: &rec})
		}
	}
	if opt.Compare {
		if err := compareKernelMachines(ctx, res, train, test, m.L, cfg.Seed, opt.Rounds, score, opt.Progress); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// compareKernelMachines fits Laplace, RFM and AGOP-HyperBF on train and
// records their test scores and chosen rounds beside GD-HyperBF's.
func compareKernelMachines(ctx context.Context, res *StudyResult, train, test *rfm.Dataset, bandwidth float64, seed uint64, rounds int,
	score func([]float64) float64, progress func(StudyProgress)) error {
	res.Compare = map[string]float64{"GD-HyperBF": res.Epochs[len(res.Epochs)-1].TestScore}
	res.Rounds = map[string]int{}
	lap := rfm.DefaultConfig()
	lap.Iters, lap.Seed = 0, seed
	rf := rfm.DefaultConfig()
	rf.Seed = seed
	// AGOP-HyperBF: centres at the training rows, c solved, WᵀW the AGOP:
	// an RFM with the Gaussian kernel, its round chosen on a holdout as
	// an RFM's is (the chosen round is reported: round 0 would be
	// M = I, no AGOP). Five rounds with no holdout were measured worse
	// (MNIST: 85.9% against 95.9%).
	gauss := rfm.DefaultConfig()
	gauss.Seed = seed
	gauss.Kernel = kernel.Spec{Kind: kernel.Gaussian, Bandwidth: math.Sqrt(bandwidth / 2)}
	if rounds > 0 {
		rf.Iters, gauss.Iters = rounds, rounds
	}
	for _, c := range []struct {
		name string
		cfg  rfm.Config
	}{{"Laplace", lap}, {"RFM", rf}, {"AGOP-HyperBF", gauss}} {
		c.cfg.Float32 = train.N > 5000
		if progress != nil {
			progress(StudyProgress{Fitting: c.name})
		}
		fm, err := rfm.Fit(ctx, c.cfg, train, nil, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		out, err := fm.Predict(ctx, test.X, test.N)
		if err != nil {
			return err
		}
		res.Compare[c.name] = score(out)
		res.Rounds[c.name] = fm.BestRound
	}
	return nil
}

// MetricName is what Study's test score is on train's task.
func MetricName(train *rfm.Dataset) string {
	if train.Labels != nil {
		return "test accuracy %"
	}
	return "test MSE (standardized target)"
}

// oneHot expands n class indices into an n×k 0/1 matrix.
func oneHot(labels []int, k int) []float64 {
	out := make([]float64, len(labels)*k)
	for i, c := range labels {
		out[i*k+c] = 1
	}
	return out
}
