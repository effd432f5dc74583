package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"github.com/rfmkit/rfm/internal/experiment"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/synth"
)

// nfaRecord is one layer's measures at one point of training.
type nfaRecord struct {
	Epoch     int     `json:"epoch"`
	Step      int     `json:"step"`
	Layer     int     `json:"layer"` // 1-based
	TrainLoss float64 `json:"train_mse"`
	TestLoss  float64 `json:"test_mse"`
	TestAcc   float64 `json:"test_accuracy,omitempty"`
	// UC-NFA: NFM against the layer's AGOP; C-NFA: the centred ones.
	NFA  nn.Comparison  `json:"nfa"`
	CNFA *nn.Comparison `json:"cnfa,omitempty"` // nil at initialization
}

type nfaJSON struct {
	Data    string         `json:"data"`
	Rows    int            `json:"train_rows"`
	Test    int            `json:"test_rows"`
	Inputs  int            `json:"inputs"`
	Network nn.Config      `json:"network"`
	Records []nfaRecord    `json:"records"`
	Final   map[string]any `json:"final"`
	Seconds float64        `json:"seconds"`
}

type nfaOptions struct {
	task, data, target, widths, act, opt, initScale, out, imageShape string
	n, d, testN, epochs, batch, points                               int
	lr, momentum, wd                                                 float64
	bias, withRFM, asJSON                                            bool
	seed                                                             uint64
	common                                                           commonFlags
}

func cmdNFA(e *env, args []string) error {
	var o nfaOptions
	f := newFlagSet("nfa", "rfm nfa [--task chain --n 256 --d 32 | --data FILE --target COL] [flags]",
		`Train a fully connected network and measure the Neural Feature Ansatz layer by
layer along training (SPEC §7): the correlation of each layer's neural feature
matrix WᵀW with the network's AGOP with respect to the layer's input, WᵀKW (K:
the average outer product of the output's gradients with respect to the
layer's pre-activations), the UC-NFA; and of the centred W̄ᵀW̄ with W̄ᵀKW̄, W̄ =
W − W⁰ (the C-NFA). Each is reported as the cosine ρ = tr(AᵀB)/√(tr(AᵀA)tr(BᵀB)),
the Pearson correlation of the entries, the overlap of the top eigenvectors
and the correlation of the diagonals.

The data is a synthetic task of 'rfm synth' (its exact EGOP is then compared
with the first layer's matrices too) or a table (numeric and categorical
columns through the pipeline; a classification target becomes one-hot
outputs). With --rfm an RFM is fitted on the same training rows and its M
compared with the network's first-layer matrices.

Writes nfa.csv, nfa.json and figures (correlations over training; the first
layer's matrices, or with --image-shape their diagonals as images) to --out.`,
		`rfm nfa --task chain --n 256 --d 32 --widths 256,256 --epochs 2000 --out out/nfa-chain
rfm nfa --task chain --n 256 --d 32 --init-scale 0.1 --out out/nfa-small-init
rfm nfa --data digits.csv --target label --widths 1024,1024 --epochs 20 --rfm --image-shape 28x28 --out out/nfa-mnist`)
	f.Section("Data")
	f.String(&o.task, "task", "chain", "synthetic task `NAME` of 'rfm synth' (when no --data)")
	f.Int(&o.n, "n", 256, "training rows `N` of the synthetic task")
	f.Int(&o.d, "d", 32, "inputs `D` of the synthetic task")
	f.Int(&o.testN, "test-n", 2000, "test rows `N` of the synthetic task (a later seed)")
	f.String(&o.data, "data", "", "train on this table `FILE` instead (20% held out for the test figures)")
	f.String(&o.target, "target", "", "the table's target `COL`")
	f.Section("Network")
	f.String(&o.widths, "widths", "256,256", "hidden layer `WIDTHS` (1 to 5 of them)")
	f.String(&o.act, "activation", "relu", "`ACT`: relu, leaky-relu, tanh or sine")
	f.Bool(&o.bias, "bias", false, "give the layers biases")
	f.String(&o.initScale, "init-scale", "1", "multiply the initial weights' std, `S` for every layer or a list per layer (first layer first)")
	f.Section("Training")
	f.String(&o.opt, "optimizer", "sgd", "`OPT`: sgd (with --momentum) or adam")
	f.Float(&o.lr, "lr", 0.05, "learning `RATE`")
	f.Float(&o.momentum, "momentum", 0.9, "SGD momentum `M`")
	f.Float(&o.wd, "weight-decay", 0, "L2 weight decay `W` of the weights (not the biases)")
	f.Int(&o.batch, "batch", 128, "rows per step `N` (0: full batch)")
	f.Int(&o.epochs, "epochs", 500, "passes over the training rows `N`")
	f.Int(&o.points, "points", 14, "measure at `K` log-spaced epochs (and at initialization)")
	f.Uint64(&o.seed, "seed", 1, "random `SEED` (data, initialization, batch order)")
	f.Bool(&o.withRFM, "rfm", false, "also fit an RFM (the defaults) and compare its M")
	f.Section("Output")
	f.String(&o.out, "out", "", "write nfa.csv, nfa.json and figures into `DIR`")
	f.String(&o.imageShape, "image-shape", "", "inputs are `HxW` pixels: draw diagonals as images")
	f.Bool(&o.asJSON, "json", false, "print the result as JSON on stdout")
	f.Int(&o.common.threads, "threads", 0, "threads for the linear algebra (`N`; 0 = one per CPU, at most 256)")
	pos, err := f.Parse(args, e.stderr)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	if err := o.common.apply(); err != nil {
		return err
	}
	if o.data != "" && (f.IsSet("task") || f.IsSet("n") || f.IsSet("d") || f.IsSet("test-n")) {
		return usagef("--task, --n, --d and --test-n describe the synthetic data; with --data they do not apply (20%% of the table is the test split)")
	}
	cfg, err := o.netConfig()
	if err != nil {
		return err
	}
	var shape *imageDims
	if o.imageShape != "" {
		if shape, err = parseImageShape(o.imageShape); err != nil {
			return err
		}
	}
	if o.out != "" {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return fmt.Errorf("--out %s: %w", o.out, err)
		}
	}
	tr, te, egop, label, classes, err := o.loadData(e)
	if err != nil {
		return err
	}
	if shape != nil && shape.h*shape.w*shape.c != tr.D {
		return usagef("--image-shape %s has %d pixels but the data has %d inputs", o.imageShape, shape.h*shape.w*shape.c, tr.D)
	}
	start := time.Now()
	res, last, err := runNFA(e.ctx, cfg, tr, te, classes, o, func(line string) {
		if !o.asJSON {
			fmt.Fprintln(e.stderr, line)
		}
	})
	if err != nil {
		return err
	}
	res.Data, res.Seconds = label, time.Since(start).Seconds()
	first := last[0]
	final := map[string]any{}
	if egop != nil {
		for name, m := range map[string][]float64{"nfm_vs_egop": first.NFM, "agop_vs_egop": first.AGOP, "cnfm_vs_egop": first.CNFM} {
			c, err := nn.Compare(m, egop, tr.D)
			if err != nil {
				return err
			}
			final[name] = c
		}
	}
	if o.withRFM {
		// All training rows and the last round's M: a learned M always
		// (validation rows could select round 0, the identity).
		rcfg := rfm.DefaultConfig()
		rcfg.Seed, rcfg.ValFraction = o.seed, 0
		ds := &rfm.Dataset{X: tr.X, N: tr.N, D: tr.D}
		if classes > 0 {
			ds.Labels, ds.Classes = rfm.Argmax(tr.Y, tr.N, classes), classes
		} else {
			ds.Y, ds.Outputs = tr.Y, tr.K
		}
		model, err := rfm.Fit(e.ctx, rcfg, ds, nil, nil)
		if err != nil {
			return fmt.Errorf("--rfm: %w", err)
		}
		m := denseM(model.M, tr.D)
		for name, a := range map[string][]float64{"rfm_m_vs_nfm": first.NFM, "rfm_m_vs_agop": first.AGOP, "rfm_m_vs_cnfm": first.CNFM} {
			c, err := nn.Compare(m, a, tr.D)
			if err != nil {
				return err
			}
			final[name] = c
		}
		if egop != nil {
			c, err := nn.Compare(m, egop, tr.D)
			if err != nil {
				return err
			}
			final["rfm_m_vs_egop"] = c
		}
		if o.out != "" {
			if err := o.matrixFigure(m, tr.D, shape, "rfm_m", "RFM M"); err != nil {
				return err
			}
		}
	}
	res.Final = final
	if o.out != "" {
		if err := o.writeOutputs(e, res, last, tr.D, shape); err != nil {
			return err
		}
	}
	if o.asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	printNFA(e.stdout, res)
	return nil
}

func (o *nfaOptions) netConfig() (nn.Config, error) {
	cfg := nn.DefaultConfig()
	cfg.Widths = nil
	for _, s := range strings.Split(o.widths, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || w < 1 {
			return cfg, usagef("--widths %q: want positive widths such as 256,256", o.widths)
		}
		cfg.Widths = append(cfg.Widths, w)
	}
	cfg.Activation, cfg.Optimizer = nn.Activation(o.act), nn.Optimizer(o.opt)
	cfg.LR, cfg.Momentum, cfg.BatchSize, cfg.Bias, cfg.Seed, cfg.WeightDecay = o.lr, o.momentum, o.batch, o.bias, o.seed, o.wd
	if o.opt == string(nn.Adam) {
		cfg.Momentum = 0
	}
	var scales []float64
	for _, s := range strings.Split(o.initScale, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return cfg, usagef("--init-scale %q: want positive numbers such as 1 or 0.1,1,1", o.initScale)
		}
		scales = append(scales, v)
	}
	if len(scales) == 1 {
		for range len(cfg.Widths) {
			scales = append(scales, scales[0])
		}
	}
	cfg.InitScale = scales
	if err := cfg.Validate(); err != nil {
		return cfg, usagef("%s", strings.TrimPrefix(err.Error(), "nn: "))
	}
	switch {
	case o.epochs < 1:
		return cfg, usagef("--epochs %d: must be at least 1", o.epochs)
	case o.points < 1:
		return cfg, usagef("--points %d: must be at least 1", o.points)
	case o.batch < 0:
		return cfg, usagef("--batch %d: must be ≥ 0", o.batch)
	}
	return cfg, nil
}

// nfaData is a training or test set: n rows of d inputs and k targets.
type nfaData struct {
	X, Y    []float64
	N, D, K int
}

// loadData reads or draws the training and test rows. egop is the
// synthetic task's exact EGOP (nil for a table); classes is the number of
// one-hot outputs of a classification table (0 otherwise).
func (o *nfaOptions) loadData(e *env) (tr, te *nfaData, egop []float64, label string, classes int, err error) {
	if o.data == "" {
		if o.target != "" {
			return nil, nil, nil, "", 0, usagef("--target goes with --data")
		}
		task := synth.Task(o.task)
		if !isTask(o.task) {
			return nil, nil, nil, "", 0, usagef("--task %q: want one of %s", o.task, taskNames())
		}
		if o.n < 2 || o.testN < 1 {
			return nil, nil, nil, "", 0, usagef("--n must be at least 2 and --test-n at least 1")
		}
		// One draw split in two: the training and test rows share the
		// target (the direction of single-index and linear comes from the
		// seed).
		a, err := synth.Generate(task, o.n+o.testN, o.d, o.seed)
		if err != nil {
			return nil, nil, nil, "", 0, usagef("%s", strings.TrimPrefix(err.Error(), "synth: "))
		}
		if task != synth.LowRank {
			egop, _ = synth.EGOP(task, o.d, o.seed)
		}
		d, n := a.D, o.n
		return &nfaData{X: a.X[:n*d], Y: a.Y[:n], N: n, D: d, K: 1}, &nfaData{X: a.X[n*d:], Y: a.Y[n:], N: o.testN, D: d, K: 1}, egop,
			fmt.Sprintf("synthetic %s, n = %d, d = %d", task, o.n, o.d), 0, nil
	}
	if o.target == "" {
		return nil, nil, nil, "", 0, usagef("--target is required with --data")
	}
	t, err := readTable(e.ctx, o.data, dataset.ReadOptions{})
	if err != nil {
		return nil, nil, nil, "", 0, err
	}
	// A seeded 20% test split; the pipeline is fitted on the training
	// rows only.
	n := t.NRows()
	nTest := max(1, n/5)
	if n-nTest < 2 {
		return nil, nil, nil, "", 0, fmt.Errorf("%s: %d rows are too few", o.data, n)
	}
	perm := rand.New(rand.NewPCG(o.seed, 0x7e57)).Perm(n)
	trT, err := t.SelectRows(perm[nTest:])
	if err != nil {
		return nil, nil, nil, "", 0, err
	}
	teT, err := t.SelectRows(perm[:nTest])
	if err != nil {
		return nil, nil, nil, "", 0, err
	}
	tg, p, err := fitEncoding(trT, o.data, o.target, "auto", dataset.ScaleStandard)
	if err != nil {
		return nil, nil, nil, "", 0, err
	}
	encode := func(tab *dataset.Table) (*nfaData, error) {
		ds, err := encodeRows(tab, o.data, p, tg)
		if err != nil {
			return nil, err
		}
		out := &nfaData{X: ds.X, Y: ds.Y, N: ds.N, D: ds.D, K: 1}
		if tg.IsClassification() {
			out.K = tg.NumClasses()
			if out.Y, err = tg.OneHot(ds.Labels); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	if tr, err = encode(trT); err != nil {
		return nil, nil, nil, "", 0, err
	}
	if te, err = encode(teT); err != nil {
		return nil, nil, nil, "", 0, err
	}
	if tg.IsClassification() {
		classes = tg.NumClasses()
	}
	return tr, te, nil, fmt.Sprintf("%s (target %s)", o.data, o.target), classes, nil
}

// runNFA trains and measures at the recorded epochs; it returns the
// records and the last measurement's matrices.
func runNFA(ctx context.Context, cfg nn.Config, tr, te *nfaData, classes int, o nfaOptions, log func(string)) (*nfaJSON, []nn.LayerFeatures, error) {
	net, err := nn.New(cfg, tr.D, tr.K)
	if err != nil {
		return nil, nil, err
	}
	init := net.Clone()
	trainer, err := nn.NewTrainer(net, cfg)
	if err != nil {
		return nil, nil, err
	}
	res := &nfaJSON{Rows: tr.N, Test: te.N, Inputs: tr.D, Network: cfg.WithDefaults()}
	record := logEpochs(o.epochs, o.points)
	var last []nn.LayerFeatures
	measure := func(epoch int) error {
		trainMSE, _ := nn.MSE(net.Predict(tr.X, tr.N), tr.Y)
		if math.IsNaN(trainMSE) || math.IsInf(trainMSE, 0) {
			return fmt.Errorf("training diverged by epoch %d (the training MSE is %v); lower --lr (now %g) or --init-scale", epoch, trainMSE, o.lr)
		}
		feats, err := nn.Features(net, init, tr.X, tr.N)
		if err != nil {
			return err
		}
		// The output layer's K is the identity, so its NFA is 1 by
		// construction: only the hidden layers' are measured.
		feats = feats[:len(feats)-1]
		testOut := net.Predict(te.X, te.N)
		testMSE, _ := nn.MSE(testOut, te.Y)
		acc := 0.0
		if classes > 0 {
			acc = experiment.AccuracyPct(testOut, rfm.Argmax(te.Y, te.N, classes), classes)
		}
		var parts []string
		for _, lf := range feats {
			r := nfaRecord{Epoch: epoch, Step: trainer.Steps(), Layer: lf.Layer + 1, TrainLoss: trainMSE, TestLoss: testMSE, TestAcc: acc}
			if r.NFA, err = nn.Compare(lf.NFM, lf.AGOP, lf.In); err != nil {
				return err
			}
			if epoch > 0 {
				c, err := nn.Compare(lf.CNFM, lf.CAGOP, lf.In)
				if err != nil {
					return err
				}
				r.CNFA = &c
			}
			res.Records = append(res.Records, r)
			cn := "-"
			if r.CNFA != nil {
				cn = fmt.Sprintf("%.3f", r.CNFA.Cosine)
			}
			parts = append(parts, fmt.Sprintf("L%d %.3f/%s", r.Layer, r.NFA.Cosine, cn))
		}
		log(fmt.Sprintf("nfa: epoch %d (step %d): train %.4g, test %.4g; ρ UC/C %s", epoch, trainer.Steps(), trainMSE, testMSE, strings.Join(parts, ", ")))
		last = feats
		return nil
	}
	if err := measure(0); err != nil {
		return nil, nil, err
	}
	for ep := 1; ep <= o.epochs; ep++ {
		loss, err := trainer.Epoch(ctx, tr.X, tr.Y, tr.N)
		if err != nil {
			return nil, nil, err
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) || loss > 1e30 {
			return nil, nil, fmt.Errorf("training diverged in epoch %d (mean batch loss %v); lower --lr (now %g) or --init-scale", ep, loss, o.lr)
		}
		if record[ep] {
			if err := measure(ep); err != nil {
				return nil, nil, err
			}
		}
	}
	return res, last, nil
}

// logEpochs marks about k epochs in [1, epochs], log-spaced, the last
// always included.
func logEpochs(epochs, k int) map[int]bool {
	out := map[int]bool{epochs: true}
	for i := 0; i < k; i++ {
		e := int(math.Round(math.Pow(float64(epochs), float64(i)/float64(max(1, k-1)))))
		out[min(max(e, 1), epochs)] = true
	}
	return out
}

// denseM is a feature matrix as a dense d×d matrix.
func denseM(m kernel.FeatureMatrix, d int) []float64 {
	out := make([]float64, d*d)
	switch m.Form {
	case kernel.Full:
		copy(out, m.Values)
	case kernel.Diagonal:
		for i, v := range m.Values {
			out[i*d+i] = v
		}
	default:
		for i := 0; i < d; i++ {
			out[i*d+i] = 1
		}
	}
	return out
}

// taskNames lists the synthetic tasks for messages.
func taskNames() string {
	var names []string
	for _, t := range synth.Tasks() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}

func (o *nfaOptions) writeOutputs(e *env, res *nfaJSON, last []nn.LayerFeatures, d int, shape *imageDims) error {
	err := modelfile.WriteAtomicContext(e.ctx, filepath.Join(o.out, "nfa.csv"), func(w io.Writer) error {
		cw := csv.NewWriter(w)
		cw.Write([]string{"epoch", "step", "layer", "train_mse", "test_mse", "test_accuracy", "nfa_cosine", "nfa_pearson", "nfa_top_eig", "nfa_diag",
			"cnfa_cosine", "cnfa_pearson", "cnfa_top_eig", "cnfa_diag"})
		for _, r := range res.Records {
			row := []string{strconv.Itoa(r.Epoch), strconv.Itoa(r.Step), strconv.Itoa(r.Layer), formatFloat(r.TrainLoss), formatFloat(r.TestLoss), formatFloat(r.TestAcc),
				formatFloat(r.NFA.Cosine), formatFloat(r.NFA.Pearson), formatFloat(r.NFA.TopEig), formatFloat(r.NFA.Diag)}
			if r.CNFA != nil {
				row = append(row, formatFloat(r.CNFA.Cosine), formatFloat(r.CNFA.Pearson), formatFloat(r.CNFA.TopEig), formatFloat(r.CNFA.Diag))
			} else {
				row = append(row, "", "", "", "")
			}
			cw.Write(row)
		}
		cw.Flush()
		return cw.Error()
	})
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := modelfile.WriteAtomicContext(e.ctx, filepath.Join(o.out, "nfa.json"), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	// Correlations over training, per layer (epochs after initialization).
	series := map[string][]float64{}
	var xs []float64
	for _, r := range res.Records {
		if r.Epoch == 0 {
			continue
		}
		if r.Layer == 1 {
			xs = append(xs, float64(r.Epoch))
		}
		series[fmt.Sprintf("layer %d UC-NFA", r.Layer)] = append(series[fmt.Sprintf("layer %d UC-NFA", r.Layer)], r.NFA.Cosine)
		series[fmt.Sprintf("layer %d C-NFA", r.Layer)] = append(series[fmt.Sprintf("layer %d C-NFA", r.Layer)], r.CNFA.Cosine)
	}
	if len(xs) > 1 {
		if err := plot.Curve(filepath.Join(o.out, "nfa_correlations.png"), xs, series, "epoch", "ρ (cosine)", "NFA correlations over training"); err != nil {
			return err
		}
	}
	for _, m := range []struct {
		name, title string
		v           []float64
	}{{"layer1_nfm", "W₁ᵀW₁", last[0].NFM}, {"layer1_agop", "layer-1 AGOP", last[0].AGOP}, {"layer1_cnfm", "centred W̄₁ᵀW̄₁", last[0].CNFM}} {
		if err := o.matrixFigure(m.v, d, shape, m.name, m.title); err != nil {
			return err
		}
	}
	return nil
}

// matrixFigure draws a d×d matrix (its top-left 100×100 block at most) as
// an image, or with an image shape its diagonal as the image.
func (o *nfaOptions) matrixFigure(m []float64, d int, shape *imageDims, name, title string) error {
	path := filepath.Join(o.out, name+".png")
	if shape != nil {
		return plot.Image(path, nn.Diagonal(m, d), shape.h, shape.w, shape.c, "diagonal of "+title)
	}
	k := min(d, 100)
	block := make([]float64, 0, k*k)
	for i := 0; i < k; i++ {
		block = append(block, m[i*d:i*d+k]...)
	}
	if k < d {
		title += fmt.Sprintf(" (first %d of %d inputs)", k, d)
	}
	return plot.Image(path, block, k, k, 1, title)
}

func printNFA(w io.Writer, res *nfaJSON) {
	fmt.Fprintf(w, "data     %s: %d train / %d test rows, %d inputs\n", res.Data, res.Rows, res.Test, res.Inputs)
	fmt.Fprintf(w, "network  widths %v, %s, bias %v, init scale %v, %s lr %g, batch %d (%.1fs)\n\n",
		res.Network.Widths, res.Network.Activation, res.Network.Bias, res.Network.InitScale, res.Network.Optimizer, res.Network.LR, res.Network.BatchSize, res.Seconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "epoch\tstep\tlayer\ttrain MSE\ttest MSE\tUC-NFA ρ\tC-NFA ρ\tUC top-eig\tC top-eig\t")
	for _, r := range res.Records {
		cn, ce := "-", "-"
		if r.CNFA != nil {
			cn, ce = fmt.Sprintf("%.3f", r.CNFA.Cosine), fmt.Sprintf("%.3f", r.CNFA.TopEig)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%.4g\t%.4g\t%.3f\t%s\t%.3f\t%s\t\n", r.Epoch, r.Step, r.Layer, r.TrainLoss, r.TestLoss, r.NFA.Cosine, cn, r.NFA.TopEig, ce)
	}
	tw.Flush()
	if len(res.Final) > 0 {
		fmt.Fprintln(w)
		keys := make([]string, 0, len(res.Final))
		for k := range res.Final {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c := res.Final[k].(nn.Comparison)
			fmt.Fprintf(w, "%-14s ρ %.3f  pearson %.3f  top-eig %.3f  diag %.3f\n", k, c.Cosine, c.Pearson, c.TopEig, c.Diag)
		}
	}
}
