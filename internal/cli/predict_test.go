package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/metrics"
	"github.com/rfmkit/rfm/predictor"
)

// model trains a small classifier on the first 300 of n rows "id,x,y"
// and loads it back from its file; it returns it with the table's path.
func model(t *testing.T, n int) (*predictor.Model, string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,x,y\n")
	for i := range n {
		x := float64(i%13) - 6
		y := "no"
		if x > 0 {
			y = "yes"
		}
		fmt.Fprintf(&b, "%03d,%g,%s\n", i, x, y)
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(data, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	head := strings.Join(strings.SplitAfter(text, "\n")[:min(n, 300)+1], "")
	tab, err := dataset.Read(strings.NewReader(head), "t.csv", dataset.ReadOptions{Ignore: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := predictor.Train(context.Background(), tab, predictor.TrainOptions{Target: "y"}) // fit's defaults
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "m.rfm")
	if err := m.WriteFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	lm, err := predictor.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return lm, data
}

// PredictCSV streams the table through the model piece by piece: the
// same rows as one piece, the id kept as written; Evaluate scores them.
func TestPredictCSVAndEvaluate(t *testing.T) {
	lm, data := model(t, 12000)
	opts := func(keep string, piece int) PredictOptions {
		return PredictOptions{Read: predictor.RowReadOptions(lm.Pipeline, lm.Target, false), Roles: InputRoles(lm.Pipeline),
			Keep: keep, Proba: true, PieceBytes: piece}
	}
	var whole, pieces bytes.Buffer
	n, err := PredictCSV(context.Background(), &whole, lm, data, opts("id", 1<<20))
	if err != nil || n != 12000 {
		t.Fatalf("%d rows: %v", n, err)
	}
	chunks := 0
	o := opts("id", 8<<10) // 64 KiB first, then pieces of 8 KiB
	o.Started = func(first, last int) { chunks++ }
	if n, err := PredictCSV(context.Background(), &pieces, lm, data, o); err != nil || n != 12000 || chunks < 3 {
		t.Fatalf("in pieces: %d rows, %d chunks, %v", n, chunks, err)
	}
	if whole.String() != pieces.String() {
		t.Fatal("pieces predict other rows than the whole table")
	}
	rows, err := csv.NewReader(&whole).ReadAll()
	if err != nil || !slices.Equal(rows[0], []string{"id", "prediction", "proba_no", "proba_yes"}) || rows[1][0] != "000" || len(rows) != 12001 {
		t.Fatalf("table %v: %v", rows[:2], err)
	}
	if _, err := PredictCSV(context.Background(), &bytes.Buffer{}, lm, data, opts("nope", 1<<20)); err == nil || !strings.Contains(err.Error(), `--keep column "nope"`) {
		t.Errorf("a missing --keep column: %v", err)
	}
	eo := PredictOptions{Read: predictor.RowReadOptions(lm.Pipeline, lm.Target, true), Roles: InputRoles(lm.Pipeline), PieceBytes: 8 << 10}
	report, n, err := Evaluate(context.Background(), lm, data, eo)
	r, ok := report.(*metrics.Classification)
	if err != nil || !ok || n != 12000 || r.N != 12000 || r.Accuracy < 0.9 {
		t.Fatalf("evaluate: %d rows, %+v, %v", n, report, err)
	}
}
