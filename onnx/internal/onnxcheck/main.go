// Command onnxcheck checks exported ONNX graphs against rfm's own
// predictions: it fits small models of several kinds on a mixed table
// (numbers with missing values, categories with missing values), predicts
// held-out rows with the predictor package (what rfm predict and rfm serve
// use), exports each model with package onnx, and runs a Node.js script
// that evaluates the graphs with ONNX Runtime (onnxruntime-node) and
// compares. scripts/onnx_check.sh installs the runtime and runs it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/kernel"
	"github.com/rfmkit/rfm/onnx"
	"github.com/rfmkit/rfm/predictor"
)

// checkCase is what the Node script reads for one model.
type checkCase struct {
	Name        string       `json:"name"`
	Model       string       `json:"model"`
	Rows        int          `json:"rows"`
	Numeric     [][]*float64 `json:"numeric,omitempty"`     // nil: missing (NaN)
	Categorical [][]string   `json:"categorical,omitempty"` // "": missing
	Labels      []string     `json:"labels,omitempty"`
	Proba       [][]float64  `json:"proba,omitempty"`
	Values      []float64    `json:"values,omitempty"`
}

func main() {
	dir := flag.String("dir", "", "work directory (default: a temporary one, removed after)")
	script := flag.String("script", "scripts/onnx_check.js", "the Node.js checker")
	modules := flag.String("node-modules", "", "the node_modules folder holding onnxruntime-node")
	flag.Parse()
	if err := run(*dir, *script, *modules); err != nil {
		fmt.Fprintln(os.Stderr, "onnxcheck:", err)
		os.Exit(1)
	}
}

func run(dir, script, modules string) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "rfm-onnx-check-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	ctx := context.Background()
	train, test := table(600, 1), table(200, 2)
	base := rfm.DefaultConfig()
	base.Iters = 2
	gen := base
	gen.Kernel = kernel.Spec{Kind: kernel.GenLaplace, Bandwidth: 4, Exponent: 1.3}
	gen.Diag, gen.NormalizeRows = true, true
	lp := base
	lp.Kernel = kernel.Spec{Kind: kernel.LpLaplace, Bandwidth: 5, Power: 1.5, Exponent: 1}
	gauss := base
	gauss.Kernel = kernel.Spec{Kind: kernel.Gaussian, Bandwidth: 3}
	temp := base
	temp.Calibrate = rfm.CalibrateTemperature
	diag := base
	diag.Diag, diag.Calibrate = true, rfm.CalibratePower
	ny := base
	ny.Solver, ny.Centers = rfm.SolverNystrom, 150
	cases := []struct {
		name    string
		target  string
		scaling dataset.Scaling
		cfg     rfm.Config
	}{
		{"classifier-full-M-temperature", "y", dataset.ScaleStandard, temp},
		{"classifier-diag-M-power", "y", dataset.ScaleRobust, diag},
		{"classifier-lp-laplace", "y", dataset.ScaleStandard, lp},
		{"classifier-nystrom", "y", dataset.ScaleStandard, ny},
		{"regressor-full-M", "v", dataset.ScaleStandard, base},
		{"regressor-diag-M-gen-laplace-unit-rows", "v", dataset.ScaleMinMax, gen},
		{"regressor-gaussian", "v", dataset.ScaleNone, gauss},
	}
	var files []string
	for _, c := range cases {
		path, err := fitCase(ctx, dir, c.name, train, test, c.target, c.scaling, c.cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		files = append(files, path)
	}
	cmd := exec.Command("node", append([]string{script}, files...)...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if modules != "" {
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("node %s: %w", script, err)
	}
	return nil
}

// table writes n rows of a mixed table: numbers x1..x3 (x2 with missing
// cells), categories color (with missing cells) and size, a class y and a
// value v that depend on them.
func table(n int, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 11))
	var b strings.Builder
	b.WriteString("x1,x2,x3,color,size,y,v\n")
	colors := []string{"red", "green", "blue", "violet"}
	sizes := []string{"S", "M", "L"}
	for i := 0; i < n; i++ {
		x1, x2, x3 := r.NormFloat64(), 3+2*r.NormFloat64(), r.Float64()*10
		c, s := r.IntN(4), r.IntN(3)
		t := x1 + 0.3*(x2-3) + float64(c%2) - 0.1*x3 + 0.5*float64(s)
		y := "low"
		switch {
		case t > 1.2:
			y = "high"
		case t > 0:
			y = "mid"
		}
		v := t + 0.1*r.NormFloat64()
		x2s, cs := fmt.Sprint(x2), colors[c]
		if i%11 == 4 {
			x2s = "NA"
		}
		if i%13 == 6 {
			cs = ""
		}
		if seed != 1 && i%17 == 9 {
			cs = "orange" // a level never seen in training
		}
		fmt.Fprintf(&b, "%v,%s,%v,%s,%s,%s,%v\n", x1, x2s, x3, cs, sizes[s], y, v)
	}
	return b.String()
}

func fitCase(ctx context.Context, dir, name, trainText, testText, target string, scaling dataset.Scaling, cfg rfm.Config) (string, error) {
	other := map[string]string{"y": "v", "v": "y"}[target]
	opt := dataset.ReadOptions{Ignore: []string{other}, Categorical: []string{"color", "size"}}
	tab, err := dataset.Read(strings.NewReader(trainText), "train.csv", opt)
	if err != nil {
		return "", err
	}
	trained, err := predictor.Train(ctx, tab, predictor.TrainOptions{Target: target, Scaling: scaling, Config: &cfg})
	if err != nil {
		return "", err
	}
	modelPath := filepath.Join(dir, name+".rfm")
	if err := trained.WriteFile(ctx, modelPath); err != nil {
		return "", err
	}
	m, err := predictor.Load(modelPath)
	if err != nil {
		return "", err
	}
	tt, err := m.ReadTable(ctx, strings.NewReader(testText), "test.csv", "")
	if err != nil {
		return "", err
	}
	want, err := m.Predict(ctx, tt)
	if err != nil {
		return "", err
	}
	graph, lay, err := onnx.Export(m)
	if err != nil {
		return "", err
	}
	onnxPath := filepath.Join(dir, name+".onnx")
	if err := os.WriteFile(onnxPath, graph, 0o644); err != nil {
		return "", err
	}
	c := checkCase{Name: name, Model: onnxPath, Rows: tt.NRows(), Labels: want.Labels, Values: want.Values}
	for i := 0; i < tt.NRows(); i++ {
		var num []*float64
		for _, name := range lay.Numeric {
			col, _ := tt.Column(name)
			if col.IsMissing(i) {
				num = append(num, nil)
			} else {
				v := col.Num[i]
				num = append(num, &v)
			}
		}
		var cat []string
		for _, name := range lay.Categorical {
			col, _ := tt.Column(name)
			cat = append(cat, col.Str[i]) // "" where missing
		}
		c.Numeric = append(c.Numeric, num)
		c.Categorical = append(c.Categorical, cat)
		if want.Proba != nil {
			k := len(want.Classes)
			c.Proba = append(c.Proba, want.Proba[i*k:(i+1)*k])
		}
	}
	for _, v := range c.Values {
		if math.IsNaN(v) {
			return "", fmt.Errorf("a NaN prediction")
		}
	}
	casePath := filepath.Join(dir, name+".json")
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return casePath, os.WriteFile(casePath, b, 0o644)
}
