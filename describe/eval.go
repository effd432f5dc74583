package describe

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rfmkit/rfm/metrics"
)

// EvalFigures draws the figures of an evaluation's report into dir: for
// a classifier (*metrics.Classification), the reliability diagram
// (ReliabilityFigure, reliability.png); a regression has none yet.
func EvalFigures(dir string, report any) ([]string, error) {
	r, ok := report.(*metrics.Classification)
	if !ok {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--plots %s: %w", dir, err)
	}
	path := filepath.Join(dir, "reliability.png")
	if err := ReliabilityFigure(path, r); err != nil {
		return nil, err
	}
	return []string{path}, nil
}
