package describe

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/metrics"
)

// The round table has a solve column only when a round's solve departed
// from the one asked for (solved in float64, jittered, or a float32
// residual left above the tolerance), and it says which.
func TestHistorySolveColumn(t *testing.T) {
	plain := []rfm.Round{{Round: 0, Bandwidth: 10, ValLoss: 0.5}, {Round: 1, Bandwidth: 10, ValLoss: 0.4}}
	var b bytes.Buffer
	WriteHistory(&b, plain, 1, rfm.Regression, true)
	if strings.Contains(b.String(), "solve") {
		t.Errorf("solve column without a note:\n%s", b.String())
	}
	noted := []rfm.Round{{Round: 0, Bandwidth: 10, ValLoss: 0.5, Float64Solve: true}, {Round: 1, Bandwidth: 10, ValLoss: 0.4, Jitter: 1e-6, Residual: 2e-3}}
	b.Reset()
	WriteHistory(&b, noted, 1, rfm.Regression, true)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasSuffix(strings.TrimSpace(lines[0]), "solve") ||
		!strings.HasSuffix(strings.TrimSpace(lines[1]), "float64") || !strings.HasSuffix(strings.TrimSpace(lines[2]), "jitter 1e-06, residual 0.002") {
		t.Errorf("round table:\n%s", b.String())
	}
}

// A cross-validation's summary is the mean and population standard
// deviation over the folds where a metric is defined; a non-finite fold
// value is null in JSON and left out.
func TestFoldSummary(t *testing.T) {
	folds := []Fold{
		{Values: FoldValues(&metrics.Regression{MSE: 1, RMSE: 1, MAE: 1, R2: Finite(0.5)})},
		{Values: FoldValues(&metrics.Regression{MSE: 3, RMSE: math.NaN(), MAE: 2})},
	}
	if folds[1].Values["rmse"].(*float64) != nil {
		t.Fatalf("NaN RMSE kept: %v", folds[1].Values)
	}
	s := FoldSummary(folds, RegMetrics)
	if got := s["mse"]; got.Mean != 2 || got.Std != 1 || got.Folds != 2 {
		t.Errorf("mse %+v, want 2 ± 1 over 2 folds", got)
	}
	if got := s["rmse"]; got.Folds != 1 || got.Mean != 1 {
		t.Errorf("rmse %+v, want the one finite fold", got)
	}
	if got := s["r2"]; got.Folds != 1 || got.Mean != 0.5 {
		t.Errorf("r2 %+v, want the one fold that has it", got)
	}
	if FoldValues("not a report") != nil {
		t.Error("FoldValues of an unknown report")
	}
}

// The one-line descriptions name what is not the default, and long
// lists are cut with a count.
func TestDescriptions(t *testing.T) {
	cfg := rfm.DefaultConfig()
	cfg.Diag, cfg.Float32 = true, true
	got := Config(cfg)
	for _, want := range []string{"diagonal M", "float32 solve", cfg.Kernel.String()} {
		if !strings.Contains(got, want) {
			t.Errorf("Config = %q, want %q in it", got, want)
		}
	}
	if got := JoinLimited([]string{"a", "b", "c", "d"}, 2); got != "a, b, ... 2 more" {
		t.Errorf("JoinLimited = %q", got)
	}
	if got := JoinLimited([]string{"a", "b"}, 2); got != "a, b" {
		t.Errorf("JoinLimited = %q", got)
	}
}

// A progress label counts the rounds from 1 to the last AGOP update.
func TestRoundLabel(t *testing.T) {
	if got := RoundLabel(rfm.Progress{Round: 2, Rounds: 6, Stage: "agop"}); got != "round 2/5 agop" {
		t.Errorf("RoundLabel = %q", got)
	}
	if got := RoundLabel(rfm.Progress{Stage: "done"}); got != "done" {
		t.Errorf("RoundLabel(done) = %q", got)
	}
}
