package metrics

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestEvaluateClassification(t *testing.T) {
	// Same data as TestMacroAUC's absent-class case: argmax predictions are
	// 0, 2, 0, 2 → accuracy 2/4; AUC (1 + 1/4)/2; class 2 skipped.
	yTrue, prob := absentClass()
	r, err := EvaluateClassification(yTrue, nil, prob, 3, []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 4 || r.Classes != 3 || r.Accuracy != 0.5 {
		t.Errorf("n, classes, accuracy = %d, %d, %g; want 4, 3, 0.5", r.N, r.Classes, r.Accuracy)
	}
	if r.AUC == nil || !near(*r.AUC, 0.625, tol) {
		t.Errorf("AUC = %v, want 0.625", r.AUC)
	}
	if len(r.AUCSkipped) != 1 || r.AUCSkipped[0] != 2 {
		t.Errorf("AUCSkipped = %v, want [2]", r.AUCSkipped)
	}
	// −(ln 0.6 + ln 0.3 + ln 0.5 + ln 0.1)/4
	wantLL := -(math.Log(0.6) + math.Log(0.3) + math.Log(0.5) + math.Log(0.1)) / 4
	if r.LogLoss == nil || !near(*r.LogLoss, wantLL, tol) {
		t.Errorf("LogLoss = %v, want %g", r.LogLoss, wantLL)
	}
	if r.ConfusionMatrix[1][2] != 2 || r.ConfusionMatrix[0][0] != 2 {
		t.Errorf("confusion = %v, want [[2 0 0] [0 0 2] [0 0 0]]", r.ConfusionMatrix)
	}

	// JSON keys are snake_case; the CLI's --json output depends on them.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"n":4`, `"accuracy":0.5`, `"log_loss":`, `"auc":0.625`, `"auc_skipped_classes":[2]`, `"confusion_matrix":[[2,0,0],[0,0,2],[0,0,0]]`, `"labels":["a","b","c"]`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}

	var text strings.Builder
	if err := r.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "accuracy  0.5000") || !strings.Contains(text.String(), "true\\pred") {
		t.Errorf("text report lacks accuracy or matrix:\n%s", text.String())
	}
}

func TestEvaluateClassificationNulls(t *testing.T) {
	// Without probabilities: no log loss, no AUC, and JSON says null.
	r, err := EvaluateClassification([]int{0, 1}, []int{0, 0}, nil, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"log_loss":null`) || !strings.Contains(string(b), `"auc":null`) {
		t.Errorf("JSON %s: want null log_loss and auc", b)
	}
	// One class in the truth: log loss exists, AUC does not (and no error).
	r, err = EvaluateClassification([]int{1, 1}, nil, []float64{0.2, 0.8, 0.6, 0.4}, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.AUC != nil || r.LogLoss == nil {
		t.Errorf("single class: AUC = %v, LogLoss = %v; want nil, set", r.AUC, r.LogLoss)
	}

	errCases := []struct {
		name   string
		yTrue  []int
		yPred  []int
		prob   []float64
		c      int
		labels []string
		want   string
	}{
		{"neither", []int{0}, nil, nil, 2, nil, "need predictions or probabilities"},
		{"labels", []int{0}, []int{0}, nil, 2, []string{"x"}, "1 labels for 2 classes"},
		{"prob size", []int{0, 1}, nil, []float64{1, 0, 1}, 2, nil, "prob has 3 values"},
		{"pred mismatch", []int{0, 1}, []int{0}, nil, 2, nil, "yTrue has 2 values but yPred has 1"},
		{"c", []int{0}, []int{0}, nil, 0, nil, "c = 0"},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := EvaluateClassification(tc.yTrue, tc.yPred, tc.prob, tc.c, tc.labels); !errMatches(err, tc.want) {
				t.Errorf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}

func TestEvaluateRegression(t *testing.T) {
	// Single output, values from TestRegressionMetrics: MSE 0.25, MAE 0.25, R² 0.8.
	r, err := EvaluateRegression([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r.MSE, 0.25, tol) || !near(r.RMSE, 0.5, tol) || !near(r.MAE, 0.25, tol) || r.R2 == nil || !near(*r.R2, 0.8, tol) {
		t.Errorf("report = %+v, want MSE 0.25, RMSE 0.5, MAE 0.25, R2 0.8", r)
	}
	if r.R2PerOutput != nil {
		t.Errorf("single output has r2_per_output %v", r.R2PerOutput)
	}

	// Two outputs, the second constant (see TestR2MultiOutput).
	r, err = EvaluateRegression([]float64{1, 10, 2, 10, 3, 10}, []float64{1, 10, 2, 11, 4, 10}, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	for _, key := range []string{`"n":3`, `"outputs":2`, `"r2":0.5`, `"r2_per_output":[0.5,null]`, `"rmse":`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}
	var text strings.Builder
	if err := r.WriteText(&text); err != nil || !strings.Contains(text.String(), "r2[1]    n/a") {
		t.Errorf("text report (err %v):\n%s", err, text.String())
	}

	if _, err := EvaluateRegression([]float64{1, 2, 3}, []float64{1, 2, 3}, 2); !errMatches(err, "not a multiple of c = 2") {
		t.Errorf("bad c: err = %v", err)
	}
	if _, err := EvaluateRegression([]float64{1, 2}, []float64{1}, 1); !errMatches(err, "yTrue has 2 values but yPred has 1") {
		t.Errorf("mismatch: err = %v", err)
	}
}
