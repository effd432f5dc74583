package hyperbf

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Settings check themselves naming the flag; Run reads and encodes the
// tables, logs each epoch and prints the study.
func TestSettingsRun(t *testing.T) {
	dir := t.TempDir()
	var train, test strings.Builder
	train.WriteString("a,b,y\n")
	test.WriteString("a,b,y\n")
	for i := range 60 {
		x, z := float64(i%7)/7, float64(i%5)/5
		b := &train
		if i >= 40 {
			b = &test
		}
		b.WriteString(strings.Join([]string{ftoa(x), ftoa(z), ftoa(x * z)}, ",") + "\n")
	}
	tr, te := filepath.Join(dir, "tr.csv"), filepath.Join(dir, "te.csv")
	os.WriteFile(tr, []byte(train.String()), 0o644)
	os.WriteFile(te, []byte(test.String()), 0o644)
	s := Settings{Data: tr, Test: te, Target: "y", Scale: "standard", Pixels: PixelsUnit, Centers: 10, LR: 1e-3, Schedule: Constant, Epochs: 1, Batch: 8, MeasureRows: 10, Seed: 1}
	for _, c := range []struct {
		edit func(*Settings)
		want string
	}{
		{func(s *Settings) { s.Target = "" }, "--data, --test and --target are required"},
		{func(s *Settings) { s.Data = "mnist" }, "--data mnist takes its own test set"},
		{func(s *Settings) { s.Schedule = "x" }, `--lr-schedule "x"`},
		{func(s *Settings) { s.Validation = 1 }, "--validation 1"},
	} {
		s2 := s
		c.edit(&s2)
		if err := s2.Check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
	var lines []string
	res, err := s.Run(context.Background(), func(f string, a ...any) { lines = append(lines, f) })
	if err != nil {
		t.Fatal(err)
	}
	if res.Rows != 40 || res.ScoredRows != 20 || res.Test != te || len(res.Epochs) != 2 || len(lines) != 2 || !strings.HasPrefix(lines[0], "epoch") {
		t.Errorf("rows %d, scored %d, test %q, epochs %d, lines %v", res.Rows, res.ScoredRows, res.Test, len(res.Epochs), lines)
	}
	var b bytes.Buffer
	res.WriteText(&b)
	if !strings.Contains(b.String(), "(40 rows), scored on "+te+" (20 rows); 10 centres") {
		t.Errorf("text:\n%s", b.String())
	}
	s.Centers = 50
	if _, err := s.Run(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "--centers 50: the training table has 40 rows") {
		t.Errorf("too many centres: %v", err)
	}
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
