package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rfm export writes an ONNX file and says what its inputs are; it refuses
// what it cannot export, leaving no file.
func TestExportCommand(t *testing.T) {
	dir := t.TempDir()
	fitLowRank(t, dir, 300, 6, 3, 1, "m.rfm")
	r := mustRun(t, dir, "export", "--model", "m.rfm", "--format", "onnx", "--out", "m.onnx", "--json")
	var res exportJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "m.onnx"))
	if err != nil || st.Size() != int64(res.Bytes) || len(res.Numeric) != 6 || res.Numeric[0] != "x0" || len(res.Categorical) != 0 || strings.Join(res.Outputs, ",") != "prediction" {
		t.Fatalf("%+v (%v)", res, err)
	}
	txt := mustRun(t, dir, "export", "m.rfm", "--out", "m2.onnx")
	if !strings.Contains(txt.stdout, `input  numeric  double [N, 6], NaN for missing: "x0", "x1"`) || strings.Contains(txt.stdout, "categorical") {
		t.Errorf("text output:\n%s", txt.stdout)
	}
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "y", "--iters", "1", "--solver", "tree", "--leaf-size", "100", "--out", "tree.rfm", "--quiet")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"export", "--model", "m.rfm", "--format", "pmml", "--out", "x"}, 2, `--format "pmml": the formats are: onnx`},
		{[]string{"export", "--model", "m.rfm"}, 2, "--out is required"},
		{[]string{"export", "--model", "tree.rfm", "--out", "t.onnx"}, 1, "a tree of RFMs cannot be exported to ONNX"},
		{[]string{"export", "--model", "m.rfm", "--out", "m.rfm"}, 2, "would overwrite the input file"},
	} {
		r := rfmCmd(t, dir, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, r.code, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "t.onnx")); err == nil {
		t.Error("a refused export left a file")
	}
}
