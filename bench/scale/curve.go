package scale

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rfmkit/rfm/plot"
)

// Point is a score reached after some wall seconds of fitting.
type Point struct {
	Seconds float64 `json:"seconds"`
	Score   float64 `json:"score"`
}

// CurveFile is where the XGBoost script writes its curve for a set: one
// row per configuration that became the best on the validation rows, with
// the fit seconds so far and that model's test score (for the curve only:
// the choice never reads the test rows).
func CurveFile(dir, set string) string {
	return filepath.Join(dir, set+"-xgboost.curve.csv")
}

// ReadCurve reads a curve file (header seconds,validation,test); a missing
// file has no points.
func ReadCurve(path string) ([]Point, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []Point
	for i, r := range rows[min(1, len(rows)):] {
		if len(r) != 3 {
			return nil, fmt.Errorf("%s: line %d: %d fields, want seconds,validation,test", path, i+2, len(r))
		}
		s, err1 := strconv.ParseFloat(r[0], 64)
		v, err2 := strconv.ParseFloat(r[2], 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, i+2, err)
		}
		out = append(out, Point{Seconds: s, Score: v})
	}
	return out, nil
}

// atLeast reports whether score a is at least as good as b for metric.
func atLeast(metric string, a, b float64) bool {
	if metric == "accuracy" {
		return a >= b
	}
	return a <= b
}

// TimeToScore is the first point of pts (in time order) whose score is at
// least target's for metric, and whether there is one.
func TimeToScore(metric string, pts []Point, target float64) (Point, bool) {
	best := Point{Seconds: -1}
	for _, p := range pts {
		if atLeast(metric, p.Score, target) && (best.Seconds < 0 || p.Seconds < best.Seconds) {
			best = p
		}
	}
	return best, best.Seconds >= 0
}

// writeTimeToScore writes, for each set with an XGBoost curve, the points
// of score against fit seconds of XGBoost (the curve) and of each RFM run,
// and the time each takes to reach XGBoost's final score.
func writeTimeToScore(w io.Writer, dir string, runs []Run) error {
	var sets []string
	for _, r := range runs {
		if r.Method == "xgboost" && r.Error == "" {
			sets = append(sets, r.Set)
		}
	}
	if len(sets) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n## Time to score (score against wall seconds of fitting, search included)\n\n")
	fmt.Fprintf(w, "XGBoost: each configuration that became the best on the validation rows (the fit seconds so far, that model's test score); RFM: each run's fit and score.\n\n")
	fmt.Fprintf(w, "| set | method | points (s: score) | time to XGBoost's final score |\n|---|---|---|---|\n")
	for _, set := range sets {
		var xgb Run
		for _, r := range runs {
			if r.Set == set && r.Method == "xgboost" {
				xgb = r
			}
		}
		curve, err := ReadCurve(CurveFile(dir, set))
		if err != nil {
			return err
		}
		for _, r := range runs {
			if r.Set != set || r.Error != "" {
				continue
			}
			pts := []Point{{r.FitSeconds, r.Value}}
			if r.Method == "xgboost" && len(curve) > 0 {
				pts = curve
			}
			text := ""
			for i, p := range pts {
				if i > 0 {
					text += ", "
				}
				text += fmt.Sprintf("%.0f: %.5g", p.Seconds, p.Score)
			}
			reach := "not reached"
			if p, ok := TimeToScore(r.Metric, pts, xgb.Value); ok {
				reach = fmt.Sprintf("%.0f s", p.Seconds)
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", set, r.Method, text, reach)
		}
	}
	return nil
}

// plotTimeToScore draws, for each set with an XGBoost run, its score
// against fit seconds: XGBoost's curve points and each RFM run, labelled
// by method, in SET_time_to_score.png.
func plotTimeToScore(dir string, runs []Run) error {
	for _, x := range runs {
		if x.Method != "xgboost" || x.Error != "" {
			continue
		}
		curve, err := ReadCurve(CurveFile(dir, x.Set))
		if err != nil {
			return err
		}
		if len(curve) == 0 {
			curve = []Point{{x.FitSeconds, x.Value}}
		}
		var xs, ys []float64
		var labels []string
		for _, p := range curve {
			xs, ys, labels = append(xs, p.Seconds), append(ys, p.Score), append(labels, "xgboost")
		}
		for _, r := range runs {
			if r.Set == x.Set && r.Method != "xgboost" && r.Error == "" {
				xs, ys, labels = append(xs, r.FitSeconds), append(ys, r.Value), append(labels, r.Method)
			}
		}
		title := fmt.Sprintf("%s: test %s against fit seconds (search included)", x.Set, x.Metric)
		if err := plot.Scatter(filepath.Join(dir, x.Set+"_time_to_score.png"), xs, ys, labels, "fit seconds", "test "+x.Metric, title, false); err != nil {
			return err
		}
	}
	return nil
}
