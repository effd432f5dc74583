package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/modelfile"
	"github.com/rfmkit/rfm/onnx"
)

// exportJSON is what 'rfm export --json' prints.
type exportJSON struct {
	Model       string   `json:"model"`
	Out         string   `json:"out"`
	Format      string   `json:"format"`
	Bytes       int      `json:"bytes"`
	Numeric     []string `json:"numeric"`
	Categorical []string `json:"categorical"`
	Classes     []string `json:"classes,omitempty"`
	Outputs     []string `json:"outputs"`
}

func cmdExport(e *env, args []string) error {
	var (
		model, out, format string
		common             commonFlags
	)
	f := helpFlagSet("export", "rfm export --model FILE --format onnx --out FILE [flags]")
	f.positional = "model"
	f.String(&model, "model", "", "model `FILE` written by 'rfm fit'")
	f.String(&format, "format", "onnx", "output `FORMAT` (onnx)")
	f.String(&out, "out", "", "write the exported model to `FILE` (atomically)")
	f.Section("Output")
	f.Bool(&common.json, "json", false, "print the inputs and outputs as JSON on stdout")
	if err := f.ParsePositional(args, e.stdout, &model); err != nil {
		return err
	}
	if format != "onnx" {
		return usagef("--format %q: the formats are: onnx", format)
	}
	if out == "" {
		return usagef("--out is required: the .onnx file to write")
	}
	if err := checkOutPath("out", out, model); err != nil {
		return err
	}
	lm, err := loadModel(model, true)
	if err != nil {
		return err
	}
	b, lay, err := onnx.Export(lm)
	if err != nil {
		return err
	}
	if err := modelfile.WriteAtomicContext(e.ctx, out, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	}); err != nil {
		return err
	}
	res := exportJSON{Model: model, Out: out, Format: format, Bytes: len(b), Numeric: lay.Numeric, Categorical: lay.Categorical, Classes: lay.Classes}
	res.Outputs = []string{onnx.OutputPrediction}
	if lay.Classes != nil {
		res.Outputs = append(res.Outputs, onnx.OutputProba, onnx.OutputScores)
	}
	if res.Numeric == nil {
		res.Numeric = []string{}
	}
	if res.Categorical == nil {
		res.Categorical = []string{}
	}
	if common.json {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(e.stdout, "exported %s → %s (%d bytes, ONNX IR %d, opset %d)\n", model, out, len(b), onnx.IRVersion, onnx.Opset)
	if len(lay.Numeric) > 0 {
		fmt.Fprintf(e.stdout, "input  %s  double [N, %d], NaN for missing: %s\n", onnx.InputNumeric, len(lay.Numeric), cli.QuoteNames(lay.Numeric))
	}
	if len(lay.Categorical) > 0 {
		fmt.Fprintf(e.stdout, "input  %s  string [N, %d], \"\" for missing: %s\n", onnx.InputCategorical, len(lay.Categorical), cli.QuoteNames(lay.Categorical))
	}
	fmt.Fprintf(e.stdout, "output %s\n", cli.QuoteNames(res.Outputs))
	return nil
}
