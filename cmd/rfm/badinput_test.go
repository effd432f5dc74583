package main

import (
	"crypto/sha256"
	bin "encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/modelfile"
)

// Bad inputs: each must exit non-zero with one line on stderr that names
// what is wrong (file, line, column, flag), never panic, and leave no
// output file behind.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	// A good classification model and a regression model to predict with.
	fitChurn(t, dir, 11, "good.rfm")
	mustRun(t, dir, "synth", "--task", "linear", "--n", "30", "--d", "3", "--out", "reg.csv")
	mustRun(t, dir, "fit", "--data", "reg.csv", "--target", "y", "--iters", "1", "--out", "reg.rfm", "--quiet")
	model, err := os.ReadFile(filepath.Join(dir, "good.rfm"))
	if err != nil {
		t.Fatal(err)
	}
	corrupt := append([]byte(nil), model...)
	corrupt[len(corrupt)/2] ^= 0x40
	// A well-formed file from a future release: the next format version,
	// checksum recomputed (preamble: 8-byte magic, then the little-endian
	// version).
	future := append([]byte(nil), model...)
	bin.LittleEndian.PutUint32(future[8:], modelfile.CurrentVersion+1)
	sum := sha256.Sum256(future[:len(future)-sha256.Size])
	copy(future[len(future)-sha256.Size:], sum[:])
	stray := "a,b,y\n" + strings.Repeat("1,2,x\n3,4,y\n", 12) + "5,abc,x\n"

	files := map[string]string{
		"empty.csv":      "",
		"header.csv":     "a,b,y\n",
		"ragged.csv":     "a,b,y\n1,2,x\n3,4\n5,6,y\n",
		"text.csv":       "a,b,y\n1,2,x\n3,abc,y\n4,5,x\n1,1,y\n",
		"oneclass.csv":   "a,b,y\n1,2,x\n3,4,x\n4,5,x\n",
		"nantarget.csv":  "a,b,y\n1,2,1.5\n3,4,NaN\n4,5,2\n",
		"onerow.csv":     "a,b,y\n1,2,x\n",
		"overflow.csv":   "a,b,y\n1,2,x\n3,1e999,y\n4,5,x\n",
		"utf8.csv":       "a,b,y\n1,2,x\n3,\xff\xfe,y\n4,5,x\n",
		"notarget.csv":   "a,b\n1,2\n3,4\n",
		"onlytarget.csv": "y\nx\ny\n",
		// predict-time inputs for good.rfm (inputs age, plan, income, region, score)
		"badnum.csv":   "age,plan,income,region,score\n30,pro,1000,north,0.5\nabc,pro,1000,north,0.5\n",
		"otherset.csv": "age,plan,income,region,height\n30,pro,1000,north,180\n",
		"newclass.csv": "age,plan,income,region,score,churn\n30,pro,1000,north,0.5,no\n40,max,900,south,0.2,maybe\n",
		"trunc.rfm":    string(model[:len(model)/3]),
		"corrupt.rfm":  string(corrupt),
		"empty.rfm":    "",
		"future.rfm":   string(future),
		"stray.csv":    stray,
	}
	for name, content := range files {
		writeFile(t, filepath.Join(dir, name), content)
	}
	fit := func(data string, extra ...string) []string {
		return append([]string{"fit", "--data", data, "--target", "y", "--out", "out.rfm"}, extra...)
	}
	predict := func(model, data string, extra ...string) []string {
		return append([]string{"predict", "--model", model, "--data", data, "--out", "out.csv"}, extra...)
	}
	goodFit := []string{"fit", "--data", "train.csv", "--target", "churn", "--out", "out.rfm"}

	cases := []struct {
		name string
		args []string
		code int
		want []string // substrings of the one-line message
	}{
		{"empty file", fit("empty.csv"), 1, []string{"empty.csv", "empty"}},
		{"header only", fit("header.csv"), 1, []string{"header.csv: line 1", "no data rows"}},
		{"ragged rows", fit("ragged.csv"), 1, []string{"ragged.csv: line 3", "2 fields", "header has 3"}},
		{"text in a forced-numeric column", fit("text.csv", "--numeric", "b"), 1, []string{"text.csv: line 3, column 2 (\"b\")", "\"abc\" is not a number"}},
		{"unknown target column", []string{"fit", "--data", "text.csv", "--target", "zz", "--out", "out.rfm"}, 1, []string{"text.csv", "target column \"zz\" not found", "\"a\", \"b\", \"y\""}},
		{"no target and no default", []string{"fit", "--data", "notarget.csv", "--out", "out.rfm"}, 2, []string{"--target is required", "\"a\", \"b\""}},
		{"target is the only column", fit("onlytarget.csv"), 1, []string{"onlytarget.csv", "no feature columns"}},
		{"one class only", fit("oneclass.csv"), 1, []string{"oneclass.csv", "only one class"}},
		{"NaN target", fit("nantarget.csv"), 1, []string{"nantarget.csv: line 3, column 3 (\"y\")", "missing"}},
		{"one row", fit("onerow.csv"), 1, []string{"onerow.csv", "1 row"}},
		{"value overflows float64", fit("overflow.csv"), 1, []string{"overflow.csv: line 3, column 2 (\"b\")", "overflows float64"}},
		{"invalid UTF-8", fit("utf8.csv"), 1, []string{"utf8.csv: line 3, column 2 (\"b\")", "invalid UTF-8"}},
		{"text in an auto-typed numeric column", fit("stray.csv"), 1, []string{"stray.csv: line 26, column 2 (\"b\")", "\"abc\" is not a number", "add it to --na", "--categorical b"}},
		{"unreadable path", fit("nope.csv"), 1, []string{"nope.csv", "no such file"}},
		{"directory as data", fit("."), 1, []string{"is a directory"}},
		{"unseen class in --valid", append(goodFit, "--ignore", "id", "--valid", "newclass.csv"), 1, []string{"newclass.csv: line 3", "\"maybe\"", "not seen in training"}},
		{"task that cannot be", fit("text.csv", "--task", "ranking"), 2, []string{"--task \"ranking\""}},
		{"regression on text", fit("oneclass.csv", "--task", "regression"), 1, []string{"oneclass.csv: line 2, column 3 (\"y\")", "not a number"}},
		{"ignored target", fit("text.csv", "--ignore", "y"), 2, []string{"--target \"y\" is also in --ignore"}},

		{"text in a numeric column at predict time", predict("good.rfm", "badnum.csv"), 1, []string{"badnum.csv: line 3, column 1 (\"age\")", "\"abc\" is not a number"}},
		{"model for another feature set", predict("good.rfm", "otherset.csv"), 1, []string{"otherset.csv", "input column \"score\" is missing", "\"height\""}},
		{"truncated model file", predict("trunc.rfm", "badnum.csv"), 1, []string{"trunc.rfm", "truncated"}},
		{"corrupted model file", predict("corrupt.rfm", "badnum.csv"), 1, []string{"corrupt.rfm", "corrupted"}},
		{"empty model file", predict("empty.rfm", "badnum.csv"), 1, []string{"empty.rfm"}},
		{"model file from a future version", predict("future.rfm", "badnum.csv"), 1, []string{"future.rfm", fmt.Sprintf("version %d is newer than this build", modelfile.CurrentVersion+1)}},
		{"data file as model", predict("train.csv", "badnum.csv"), 1, []string{"train.csv", "not an rfm model file"}},
		{"missing model file", predict("none.rfm", "badnum.csv"), 1, []string{"none.rfm", "no such file"}},
		{"missing --keep column", predict("good.rfm", "newclass.csv", "--keep", "id"), 1, []string{"newclass.csv", "--keep column \"id\" is missing"}},
		{"--proba on a regression model", predict("reg.rfm", "reg.csv", "--proba"), 2, []string{"--proba needs a classification model"}},
		{"no --model", []string{"predict", "--data", "badnum.csv"}, 2, []string{"--model is required"}},
		{"unseen class in eval", []string{"eval", "--model", "good.rfm", "--data", "newclass.csv"}, 1, []string{"newclass.csv: line 3, column 6 (\"churn\")", "\"maybe\""}},
		{"eval without the target column", []string{"eval", "--model", "good.rfm", "--data", "badnum.csv"}, 1, []string{"badnum.csv", "target column \"churn\" is missing"}},
		{"output over the input", []string{"predict", "--model", "good.rfm", "--data", "badnum.csv", "--out", "badnum.csv"}, 2, []string{"--out badnum.csv would overwrite the input"}},
		{"output in a missing directory", []string{"predict", "--model", "good.rfm", "--data", "badnum.csv", "--out", "no/such/dir/p.csv"}, 1, []string{"--out no/such/dir/p.csv", "does not exist"}},

		{"unknown flag", append(goodFit, "--frobnicate"), 2, []string{"unknown flag --frobnicate"}},
		{"misspelt flag", append(goodFit, "--rigde", "1"), 2, []string{"unknown flag --rigde", "did you mean --ridge?"}},
		{"negative ridge", append(goodFit, "--ridge", "-1"), 2, []string{"--ridge -1", "≥ 0"}},
		{"zero bandwidth", append(goodFit, "--bandwidth", "0"), 2, []string{"--bandwidth 0", "> 0"}},
		{"exponent out of range", append(goodFit, "--kernel", "gen-laplace", "--exponent", "3"), 2, []string{"--exponent 3", "(0, 2]"}},
		{"exponent without gen-laplace", append(goodFit, "--exponent", "1.5"), 2, []string{"--exponent applies to the gen-laplace and lp-laplace kernels only"}},
		{"unknown kernel", append(goodFit, "--kernel", "cosine"), 2, []string{"--kernel \"cosine\"", "laplace"}},
		{"iters not a number", append(goodFit, "--iters", "five"), 2, []string{"--iters \"five\"", "want an integer"}},
		{"NaN bandwidth", append(goodFit, "--bandwidth", "NaN"), 2, []string{"--bandwidth NaN", "finite"}},
		{"val-fraction 1", append(goodFit, "--val-fraction", "1"), 2, []string{"--val-fraction 1", "[0, 1)"}},
		{"early-stop below 1", append(goodFit, "--early-stop", "0.5"), 2, []string{"--early-stop 0.5", "> 1"}},
		{"bad norm", append(goodFit, "--norm", "l2"), 2, []string{"--norm \"l2\"", "mean or max"}},
		{"negative threads", append(goodFit, "--threads", "-2"), 2, []string{"--threads -2"}},
		{"bool flag with a value", append(goodFit, "--diag=maybe"), 2, []string{"--diag \"maybe\"", "true or false"}},
		{"flag without its value", append(goodFit, "--ridge"), 2, []string{"--ridge needs a value"}},
		{"--valid with --val-fraction", append(goodFit, "--valid", "train.csv", "--val-fraction", "0.3"), 2, []string{"--valid and --val-fraction"}},
		{"bad memory limit", append(goodFit, "--memory-limit", "lots"), 2, []string{"--memory-limit", "\"lots\""}},
		{"two data files", []string{"fit", "train.csv", "other.csv", "--target", "churn"}, 2, []string{"unexpected argument \"other.csv\""}},
		{"one fold", []string{"cv", "--data", "train.csv", "--target", "churn", "--folds", "1"}, 2, []string{"--folds 1", "≥ 2"}},
		{"more folds than rows", []string{"cv", "--data", "onerow.csv", "--target", "y", "--folds", "3"}, 1, []string{"onerow.csv", "1 row"}},
		{"synth unknown task", []string{"synth", "--task", "spiral", "--out", "out.csv"}, 2, []string{"--task \"spiral\"", "lowrank"}},
		{"synth d too small", []string{"synth", "--task", "lowrank", "--d", "3", "--out", "out.csv"}, 2, []string{"lowrank needs d ≥ 6"}},
		{"rfm-t with a final kernel", append(goodFit, "--rfm-t", "--final-kernel", "ntk"), 2, []string{"--final-kernel does not apply with --rfm-t"}},
		{"image with 4 channels", []string{"inspect", "--model", "good.rfm", "--plots", "figs", "--image-shape", "1x1x4"}, 2, []string{"--image-shape \"1x1x4\"", "4 channels"}},
		{"inspect negative top", []string{"inspect", "--model", "good.rfm", "--top-features", "-1"}, 2, []string{"--top-features -1"}},
		{"unknown command", []string{"fitt"}, 2, []string{"unknown command \"fitt\"", "did you mean \"fit\""}},
		{"unknown bench suite", []string{"bench", "mnist"}, 2, []string{"unknown benchmark suite \"mnist\""}},
	}
	before := listDir(t, dir)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rfmCmd(t, dir, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit code %d, want %d (stderr %q)", r.code, tc.code, r.stderr)
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") {
				t.Errorf("stderr is not one line: %q", r.stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("message %q does not contain %q", strings.TrimSpace(r.stderr), w)
				}
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty on error: %q", r.stdout)
			}
			for name := range listDir(t, dir) {
				if !before[name] {
					t.Errorf("left %s behind", name)
					os.Remove(filepath.Join(dir, name))
				}
			}
		})
	}
}
