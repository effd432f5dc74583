package nfa

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/internal/experiment"
	"github.com/rfmkit/rfm/nn"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/synth"
)

// Data is a training or test set: N rows of D inputs and K targets
// (row-major X and Y).
type Data struct {
	X, Y    []float64
	N, D, K int
}

// Options say how to train and what to measure.
type Options struct {
	Network nn.Config
	Epochs  int // passes over the training rows (≥ 1)
	Points  int // measure at about this many log-spaced epochs (≥ 1), and at initialization
	// Classes > 0 says Y is one-hot over that many classes: the test
	// accuracy is measured and the RFM is a classifier.
	Classes int
	// EGOP, if set, is the target's exact d×d EGOP, compared with the
	// first layer's matrices (and the RFM's M).
	EGOP []float64
	// WithRFM fits an RFM (the defaults, all training rows, the last
	// round's M) and compares its M with the first layer's matrices.
	WithRFM bool
	Seed    uint64 // of the RFM
	// Progress, if set, is called at each measurement.
	Progress func(Measurement)
}

// Record is one layer's measures at one point of training.
type Record struct {
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

// Measurement is what Progress is told: the records of every hidden layer
// at one epoch.
type Measurement struct {
	Epoch, Step       int
	TrainMSE, TestMSE float64
	Records           []Record
}

// Result is what Run measured. Data names the data; the caller fills it
// in. The last measurement's matrices and the RFM's M are for the figures
// and are not part of the JSON.
type Result struct {
	Data    string         `json:"data"`
	Rows    int            `json:"train_rows"`
	Test    int            `json:"test_rows"`
	Inputs  int            `json:"inputs"`
	Network nn.Config      `json:"network"`
	Records []Record       `json:"records"`
	Final   map[string]any `json:"final"`
	Seconds float64        `json:"seconds"` // of the training and its measurements

	Last []nn.LayerFeatures `json:"-"` // the hidden layers at the last measurement
	RFMM []float64          `json:"-"` // the RFM's M, dense (WithRFM)
}

// Synthetic draws n training and testN test rows of a task of package
// synth (one draw split in two, so both share the target) and returns the
// task's exact EGOP (nil for lowrank, which has none).
func Synthetic(task synth.Task, n, testN, d int, seed uint64) (tr, te *Data, egop []float64, err error) {
	a, err := synth.Generate(task, n+testN, d, seed)
	if err != nil {
		return nil, nil, nil, err
	}
	if task != synth.LowRank {
		egop, _ = synth.EGOP(task, d, seed)
	}
	d = a.D
	return &Data{X: a.X[:n*d], Y: a.Y[:n], N: n, D: d, K: 1}, &Data{X: a.X[n*d:], Y: a.Y[n:], N: testN, D: d, K: 1}, egop, nil
}

// Run trains the network on tr, measures at the recorded epochs, and then
// makes the final comparisons (EGOP, RFM).
func Run(ctx context.Context, tr, te *Data, o Options) (*Result, error) {
	if o.Epochs < 1 || o.Points < 1 {
		return nil, fmt.Errorf("nfa: epochs %d and points %d must be at least 1", o.Epochs, o.Points)
	}
	start := time.Now()
	res, err := train(ctx, tr, te, o)
	if err != nil {
		return nil, err
	}
	res.Seconds = time.Since(start).Seconds()
	if err := res.compare(ctx, tr, o); err != nil {
		return nil, err
	}
	return res, nil
}

// train trains and measures at the recorded epochs.
func train(ctx context.Context, tr, te *Data, o Options) (*Result, error) {
	cfg := o.Network
	net, err := nn.New(cfg, tr.D, tr.K)
	if err != nil {
		return nil, err
	}
	init := net.Clone()
	trainer, err := nn.NewTrainer(net, cfg)
	if err != nil {
		return nil, err
	}
	res := &Result{Rows: tr.N, Test: te.N, Inputs: tr.D, Network: cfg.WithDefaults()}
	record := experiment.LogEpochs(o.Epochs, o.Points)
	measure := func(epoch int) error {
		trainMSE, _ := nn.MSE(net.Predict(tr.X, tr.N), tr.Y)
		if math.IsNaN(trainMSE) || math.IsInf(trainMSE, 0) {
			return fmt.Errorf("training diverged by epoch %d (the training MSE is %v); lower --lr (now %g) or --init-scale", epoch, trainMSE, cfg.LR)
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
		if o.Classes > 0 {
			acc = experiment.AccuracyPct(testOut, rfm.Argmax(te.Y, te.N, o.Classes), o.Classes)
		}
		m := Measurement{Epoch: epoch, Step: trainer.Steps(), TrainMSE: trainMSE, TestMSE: testMSE}
		for _, lf := range feats {
			r := Record{Epoch: epoch, Step: trainer.Steps(), Layer: lf.Layer + 1, TrainLoss: trainMSE, TestLoss: testMSE, TestAcc: acc}
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
			m.Records = append(m.Records, r)
		}
		res.Records = append(res.Records, m.Records...)
		if o.Progress != nil {
			o.Progress(m)
		}
		res.Last = feats
		return nil
	}
	if err := measure(0); err != nil {
		return nil, err
	}
	for ep := 1; ep <= o.Epochs; ep++ {
		loss, err := trainer.Epoch(ctx, tr.X, tr.Y, tr.N)
		if err != nil {
			return nil, err
		}
		if math.IsNaN(loss) || math.IsInf(loss, 0) || loss > 1e30 {
			return nil, fmt.Errorf("training diverged in epoch %d (mean batch loss %v); lower --lr (now %g) or --init-scale", ep, loss, cfg.LR)
		}
		if record[ep] {
			if err := measure(ep); err != nil {
				return nil, err
			}
		}
	}
	return res, nil
}

// compare fills in Final: the first layer's matrices against the EGOP,
// and the RFM's M against both.
func (res *Result) compare(ctx context.Context, tr *Data, o Options) error {
	first := res.Last[0]
	res.Final = map[string]any{}
	// compareAll compares each named matrix, as a, with b: Compare(a, b).
	compareAll := func(as map[string][]float64, b []float64) error {
		for name, a := range as {
			c, err := nn.Compare(a, b, tr.D)
			if err != nil {
				return err
			}
			res.Final[name] = c
		}
		return nil
	}
	if o.EGOP != nil {
		if err := compareAll(map[string][]float64{"nfm_vs_egop": first.NFM, "agop_vs_egop": first.AGOP, "cnfm_vs_egop": first.CNFM}, o.EGOP); err != nil {
			return err
		}
	}
	if !o.WithRFM {
		return nil
	}
	// All training rows and the last round's M: a learned M always
	// (validation rows could select round 0, the identity).
	rcfg := rfm.DefaultConfig()
	rcfg.Seed, rcfg.ValFraction = o.Seed, 0
	ds := &rfm.Dataset{X: tr.X, N: tr.N, D: tr.D}
	if o.Classes > 0 {
		ds.Labels, ds.Classes = rfm.Argmax(tr.Y, tr.N, o.Classes), o.Classes
	} else {
		ds.Y, ds.Outputs = tr.Y, tr.K
	}
	model, err := rfm.Fit(ctx, rcfg, ds, nil, nil)
	if err != nil {
		return fmt.Errorf("--rfm: %w", err)
	}
	m := model.M.Dense()
	res.RFMM = m
	for name, a := range map[string][]float64{"rfm_m_vs_nfm": first.NFM, "rfm_m_vs_agop": first.AGOP, "rfm_m_vs_cnfm": first.CNFM, "rfm_m_vs_egop": o.EGOP} {
		if a == nil {
			continue
		}
		if err := compareAll(map[string][]float64{name: m}, a); err != nil {
			return err
		}
	}
	return nil
}

// WriteFiles writes nfa.csv, nfa.json, the correlations over training and
// the first layer's matrices (and the RFM's M) as images into dir, which
// must exist. With a shape, the inputs are pixels and each matrix is drawn
// as its diagonal on the image.
func WriteFiles(ctx context.Context, dir string, res *Result, shape *plot.ImageShape) error {
	d := res.Inputs
	if res.RFMM != nil {
		if err := matrixFigure(dir, res.RFMM, d, shape, "rfm_m", "RFM M"); err != nil {
			return err
		}
	}
	if err := atomicfile.Write(ctx, filepath.Join(dir, "nfa.csv"), res.writeCSV); err != nil {
		return err
	}
	if err := writeJSONFile(ctx, filepath.Join(dir, "nfa.json"), res); err != nil {
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
		uc, c := fmt.Sprintf("layer %d UC-NFA", r.Layer), fmt.Sprintf("layer %d C-NFA", r.Layer)
		series[uc] = append(series[uc], r.NFA.Cosine)
		series[c] = append(series[c], r.CNFA.Cosine)
	}
	if len(xs) > 1 {
		if err := plot.Curve(filepath.Join(dir, "nfa_correlations.png"), xs, series, "epoch", "ρ (cosine)", "NFA correlations over training"); err != nil {
			return err
		}
	}
	first := res.Last[0]
	for _, m := range []struct {
		name, title string
		v           []float64
	}{{"layer1_nfm", "W₁ᵀW₁", first.NFM}, {"layer1_agop", "layer-1 AGOP", first.AGOP}, {"layer1_cnfm", "centred W̄₁ᵀW̄₁", first.CNFM}} {
		if err := matrixFigure(dir, m.v, d, shape, m.name, m.title); err != nil {
			return err
		}
	}
	return nil
}

// writeJSONFile writes v as indented JSON to path, atomically.
func writeJSONFile(ctx context.Context, path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(ctx, path, func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	})
}

// writeCSV writes the records, one row per layer and measurement.
func (res *Result) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"epoch", "step", "layer", "train_mse", "test_mse", "test_accuracy", "nfa_cosine", "nfa_pearson", "nfa_top_eig", "nfa_diag",
		"cnfa_cosine", "cnfa_pearson", "cnfa_top_eig", "cnfa_diag"})
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range res.Records {
		row := []string{strconv.Itoa(r.Epoch), strconv.Itoa(r.Step), strconv.Itoa(r.Layer), num(r.TrainLoss), num(r.TestLoss), num(r.TestAcc),
			num(r.NFA.Cosine), num(r.NFA.Pearson), num(r.NFA.TopEig), num(r.NFA.Diag)}
		if r.CNFA != nil {
			row = append(row, num(r.CNFA.Cosine), num(r.CNFA.Pearson), num(r.CNFA.TopEig), num(r.CNFA.Diag))
		} else {
			row = append(row, "", "", "", "")
		}
		cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// matrixFigure draws a d×d matrix (its top-left 100×100 block at most) as
// an image, or with an image shape its diagonal as the image.
func matrixFigure(dir string, m []float64, d int, shape *plot.ImageShape, name, title string) error {
	path := filepath.Join(dir, name+".png")
	if shape != nil {
		return plot.Image(path, nn.Diagonal(m, d), shape.H, shape.W, shape.C, "diagonal of "+title)
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

// LayerSummary is the progress line's part for the layers: "L1 0.912/0.874,
// L2 ..." (UC-NFA / C-NFA cosines; "-" at initialization).
func (m Measurement) LayerSummary() string {
	var parts []string
	for _, r := range m.Records {
		cn := "-"
		if r.CNFA != nil {
			cn = fmt.Sprintf("%.3f", r.CNFA.Cosine)
		}
		parts = append(parts, fmt.Sprintf("L%d %.3f/%s", r.Layer, r.NFA.Cosine, cn))
	}
	return strings.Join(parts, ", ")
}
