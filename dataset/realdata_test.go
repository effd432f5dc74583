package dataset

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadUCI reads one of the shared UCI-121 files, which live beside the
// repository (../shared, present in CI): tab-separated, an empty first header
// cell (the row number column), integer classes.
func TestReadUCI(t *testing.T) {
	path := filepath.Join("..", "..", "shared", "data", "uci121", "data", "abalone", "abalone_R.dat")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("shared UCI data not found at %s (the repository expects ../shared beside it): %v", path, err)
	}
	tab, err := ReadFile(path, ReadOptions{Ignore: []string{"c0"}})
	if err != nil {
		t.Fatal(err)
	}
	if tab.NRows() != 4177 || len(tab.Columns) != 9 || tab.Columns[0].Name != "f1" {
		t.Fatalf("got %d rows, columns %v", tab.NRows(), tab.Names())
	}
	_, tg := fitTarget(t, tab, "clase")
	if tg.Task != TaskClassification || len(tg.Classes) != 3 {
		t.Errorf("target %+v", tg)
	}
	p, err := FitPipeline(tab, tab.NamesExcept("clase"))
	if err != nil {
		t.Fatal(err)
	}
	if _, n, d, err := p.Transform(tab); err != nil || n != 4177 || d != 8 {
		t.Errorf("Transform: %d×%d %v", n, d, err)
	}
}
