package hyperbf

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/cifar10"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/mnist"
)

// Settings are the flags of rfm hyperbf (the errors name them): the data,
// the network and the study. Run runs them.
type Settings struct {
	// Data is a training table (with Test and Target), or "mnist" or
	// "cifar10": the shared image sets of MNISTDir and CIFARDir, their
	// pixels scaled by Pixels.
	Data, Test, Target, Scale  string
	MNISTDir, CIFARDir, Pixels string
	Validation                 float64 // score on this share of the training rows
	Centers, Rank              int
	Bandwidth, LR              float64
	RelativeLR                 bool
	Schedule                   string
	Epochs, Batch, MeasureRows int
	Seed                       uint64
	Compare                    bool
	Rounds                     int
}

func (s *Settings) images() bool { return s.Data == "mnist" || s.Data == "cifar10" }

// Check validates the settings that need no data.
func (s *Settings) Check() error {
	switch {
	case s.images() && (s.Test != "" || s.Target != ""):
		return cli.Usagef("--data %s takes its own test set and labels; --test and --target are for tables", s.Data)
	case !s.images() && (s.Data == "" || (s.Test == "" && s.Validation == 0) || s.Target == ""):
		return cli.Usagef("--data, --test and --target are required")
	case s.Centers < 1:
		return cli.Usagef("--centers %d: must be at least 1", s.Centers)
	case s.Rank < 0 || s.Rounds < 0:
		return cli.Usagef("--rank %d and --compare-rounds %d must be ≥ 0", s.Rank, s.Rounds)
	case s.Epochs < 0 || s.Batch < 1:
		return cli.Usagef("--epochs must be ≥ 0 and --batch ≥ 1")
	case !(s.LR > 0) || math.IsInf(s.LR, 0) || !(s.Bandwidth >= 0) || math.IsInf(s.Bandwidth, 0):
		return cli.Usagef("--lr must be a finite number > 0 and --bandwidth a finite number ≥ 0")
	case !(s.Validation >= 0 && s.Validation < 1):
		return cli.Usagef("--validation %v: must be in [0, 1)", s.Validation)
	case !slices.Contains(Schedules, s.Schedule):
		return cli.Usagef("--lr-schedule %q: want one of %s", s.Schedule, strings.Join(Schedules, ", "))
	case !slices.Contains(PixelScalings, s.Pixels):
		return cli.Usagef("--pixels %q: want one of %s", s.Pixels, strings.Join(PixelScalings, ", "))
	}
	return nil
}

// Run checks the settings, loads the data and runs the study; log, when
// set, receives its progress lines.
func (s *Settings) Run(ctx context.Context, log func(format string, args ...any)) (*StudyResult, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	var tr, te *rfm.Dataset
	var err error
	test := s.Test
	if s.images() {
		tr, te, err = LoadImages(s.Data, s.MNISTDir, s.CIFARDir, s.Pixels)
		test = map[string]string{"mnist": s.MNISTDir, "cifar10": s.CIFARDir}[s.Data] + " (test set)"
	} else {
		tr, te, err = s.tables(ctx)
	}
	if err != nil {
		return nil, err
	}
	if s.Validation > 0 {
		test = fmt.Sprintf("validation: %g of the training rows", s.Validation)
	}
	if s.Centers > tr.N {
		return nil, cli.Usagef("--centers %d: the training table has %d rows", s.Centers, tr.N)
	}
	metric := MetricName(tr)
	if s.Validation > 0 {
		metric = strings.Replace(metric, "test", "validation", 1)
	}
	cfg := Config{Centers: s.Centers, Bandwidth: s.Bandwidth, Rank: s.Rank, LR: s.LR, RelativeLR: s.RelativeLR, Schedule: s.Schedule, Epochs: s.Epochs, BatchSize: s.Batch, Seed: s.Seed}
	opt := StudyOptions{Config: cfg, MeasureRows: s.MeasureRows, Compare: s.Compare, Rounds: s.Rounds, Validation: s.Validation}
	if log != nil {
		opt.Progress = func(p StudyProgress) {
			if p.Fitting != "" {
				log("fitting %s ...", p.Fitting)
				return
			}
			r := p.Epoch
			log("epoch %d: train loss %.4g, %s %.4g, ρ(WᵀW, AGOP) %.3f (%.0fs)", r.Epoch, r.TrainLoss, metric, r.TestScore, r.MetricVsAGOP.Cosine, r.Seconds)
		}
	}
	res, err := Study(ctx, tr, te, opt)
	if err != nil {
		return nil, err
	}
	res.Data, res.Test = s.Data, test
	if s.images() {
		res.Pixels = s.Pixels
	}
	return res, nil
}

// tables reads the training table, fits the encoding on it and encodes the
// test table with it (none with a validation share).
func (s *Settings) tables(ctx context.Context) (tr, te *rfm.Dataset, err error) {
	sc := dataset.Scaling(s.Scale)
	if err := sc.Check(); err != nil {
		return nil, nil, cli.Usagef("--scale: %v", err)
	}
	t, err := cli.ReadTable(ctx, s.Data, dataset.ReadOptions{})
	if err != nil {
		return nil, nil, err
	}
	tg, p, err := cli.FitEncoding(t, s.Data, s.Target, "auto", sc)
	if err != nil {
		return nil, nil, err
	}
	if tr, err = cli.EncodeRows(t, s.Data, p, tg); err != nil || s.Validation > 0 {
		return tr, nil, err
	}
	opt := p.ReadOptions()
	opt.Delimiter = 0 // the test table's own
	if tg.IsClassification() {
		opt.Categorical = append(opt.Categorical, tg.Name)
	} else {
		opt.Numeric = append(opt.Numeric, tg.Name)
	}
	tt, err := cli.ReadRows(ctx, s.Test, opt, map[string]string{s.Target: "target column"})
	if err != nil {
		return nil, nil, err
	}
	te, err = cli.EncodeRows(tt, s.Test, p, tg)
	return tr, te, err
}

// LoadImages loads the shared MNIST or CIFAR-10 images (source "mnist" or
// "cifar10") as training and test sets, the pixels scaled with the
// training statistics (ScalePixels).
func LoadImages(source, mnistDir, cifarDir, pixels string) (tr, te *rfm.Dataset, err error) {
	if source == "mnist" {
		a, b, err := mnist.Load(mnistDir)
		if err != nil {
			return nil, nil, err
		}
		tr = &rfm.Dataset{X: a.X, N: a.N, D: a.D, Labels: a.Y, Classes: mnist.NumClasses}
		te = &rfm.Dataset{X: b.X, N: b.N, D: b.D, Labels: b.Y, Classes: mnist.NumClasses}
	} else {
		a, b, err := cifar10.Load(cifarDir)
		if err != nil {
			return nil, nil, err
		}
		tr = &rfm.Dataset{X: a.X, N: a.N, D: a.D, Labels: a.Y, Classes: cifar10.NumClasses}
		te = &rfm.Dataset{X: b.X, N: b.N, D: b.D, Labels: b.Y, Classes: cifar10.NumClasses}
	}
	return tr, te, ScalePixels(pixels, tr, te)
}

// WriteText prints the study: the data, a row per epoch and the compared
// models' scores.
func (res *StudyResult) WriteText(w io.Writer) {
	metric := res.Metric
	fmt.Fprintf(w, "data     %s (%d rows), scored on %s (%d rows); %d centres, W of %d rows, L = %.4g\n\n", res.Data, res.Rows, res.Test, res.ScoredRows, res.Centers, res.Rank, res.L)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "epoch\ttrain MSE\t%s\tρ(WᵀW, AGOP)\ttop-eig\tseconds\t\n", metric)
	for _, r := range res.Epochs {
		loss := "-"
		if r.Epoch > 0 {
			loss = fmt.Sprintf("%.4g", r.TrainLoss)
		}
		fmt.Fprintf(tw, "%d\t%s\t%.4g\t%.3f\t%.3f\t%.0f\t\n", r.Epoch, loss, r.TestScore, r.MetricVsAGOP.Cosine, r.MetricVsAGOP.TopEig, r.Seconds)
	}
	tw.Flush()
	if res.Compare != nil {
		fmt.Fprintln(w)
		for _, name := range CompareOrder {
			note := ""
			if r, ok := res.Rounds[name]; ok && name != "Laplace" {
				note = fmt.Sprintf("  (M after %d AGOP updates, chosen on a holdout)", r)
			}
			fmt.Fprintf(w, "%-13s %s %.4g%s\n", name, strings.TrimSuffix(metric, " %"), res.Compare[name], note)
		}
	}
}
