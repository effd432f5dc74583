package scale

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
)

// XGBoost chooses on the rows rfm validates on: ValidRows is rfm.Holdout
// of the training file, stratified by the classes in rfm's order (numeric
// labels by value: −1 before 1), with the bench's seed.
func TestValidRowsAreRFMsHoldout(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("x1,x2,target\n")
	var labels []int
	for i := range 200 {
		y := 1
		if i%7 == 0 || i%5 == 0 {
			y = -1
		}
		labels = append(labels, (y+1)/2)
		b.WriteString(strings.Join([]string{strconv.Itoa(i % 3), strconv.Itoa(i % 11), strconv.Itoa(y)}, ",") + "\n")
	}
	path := filepath.Join(dir, "train.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ValidRows(path, "target", "classification", 3)
	if err != nil {
		t.Fatal(err)
	}
	_, want := rfm.Holdout(200, labels, ValFraction, 3)
	if !slices.Equal(got, want) {
		t.Fatalf("validation rows %v, want rfm's holdout %v", got, want)
	}
	if _, wrong := rfm.Holdout(200, labels, ValFraction, 4); slices.Equal(got, wrong) {
		t.Fatalf("another seed gives the same rows: the test cannot tell")
	}
	reg, err := ValidRows(path, "x2", "regression", 3)
	if _, want := rfm.Holdout(200, nil, ValFraction, 3); err != nil || !slices.Equal(reg, want) {
		t.Errorf("regression: %v, %v", reg, err)
	}
	if _, err := ValidRows(path, "nope", "classification", 3); err == nil {
		t.Errorf("a missing target column: no error")
	}
}

// The time to a score is the earliest point reaching it, higher being
// better for accuracy and lower for errors; the summary lists the points
// of XGBoost's curve and of each RFM run.
func TestTimeToScore(t *testing.T) {
	pts := []Point{{10, 0.80}, {20, 0.85}, {30, 0.84}, {40, 0.86}}
	if p, ok := TimeToScore("accuracy", pts, 0.845); !ok || p.Seconds != 20 {
		t.Errorf("accuracy: %v %v", p, ok)
	}
	if _, ok := TimeToScore("accuracy", pts, 0.9); ok {
		t.Errorf("an accuracy never reached was reached")
	}
	if p, ok := TimeToScore("rmse", pts, 0.845); !ok || p.Seconds != 10 {
		t.Errorf("rmse: %v %v", p, ok)
	}
	dir := t.TempDir()
	curve := "seconds,validation,test\n12.5,0.33,0.841\n40,0.31,0.852\n"
	if err := os.WriteFile(CurveFile(dir, "a9a"), []byte(curve), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := []Run{
		{Set: "a9a", Method: "tree", FitSeconds: 400, Metric: "accuracy", Value: 0.8334},
		{Set: "a9a", Method: "tuned", FitSeconds: 900, Metric: "accuracy", Value: 0.853},
		{Set: "a9a", Method: "xgboost", FitSeconds: 60, Metric: "accuracy", Value: 0.852},
	}
	var b strings.Builder
	if err := writeTimeToScore(&b, dir, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| a9a | tree | 400: 0.8334 | not reached |", "| a9a | tuned | 900: 0.853 | 900 s |", "| a9a | xgboost | 12: 0.841, 40: 0.852 | 40 s |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	if err := plotTimeToScore(dir, runs); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a9a_time_to_score.png")); err != nil {
		t.Errorf("no plot: %v", err)
	}
	if err := os.WriteFile(CurveFile(dir, "a9a"), []byte("seconds,validation,test\n1,x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeTimeToScore(&b, dir, runs); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a bad curve file: %v", err)
	}
}
