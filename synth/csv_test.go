package synth

import (
	"encoding/csv"
	"strconv"
	"strings"
	"testing"
)

// WriteCSV's numbers read back exactly, under the header x0 ... y.
func TestWriteCSV(t *testing.T) {
	s, err := Generate(Product, 5, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteCSV(&b, s); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 || strings.Join(rows[0], ",") != "x0,x1,x2,y" {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	for i, row := range rows[1:] {
		for j, cell := range row {
			v, err := strconv.ParseFloat(cell, 64)
			want := s.Y[i]
			if j < 3 {
				want = s.X[i*3+j]
			}
			if err != nil || v != want {
				t.Errorf("row %d column %d: %q, want %v", i, j, cell, want)
			}
		}
	}
}

// The EGOP file is d lines of d numbers that read back exactly.
func TestWriteMatrixCSV(t *testing.T) {
	var b strings.Builder
	m := []float64{1, 0.1, 1.0 / 3, -2e-300}
	if err := WriteMatrixCSV(&b, m, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "1,0.1\n0.3333333333333333,-2e-300\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !IsTask("chain") || IsTask("alignment-reversing") || !strings.Contains(TaskNames(), "single-index") {
		t.Errorf("IsTask/TaskNames: %s", TaskNames())
	}
}
