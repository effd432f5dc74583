package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/dataset"
)

// A data error names the file once; the target defaults to a column named
// label or y; an output path that is the input or a folder is refused
// before any work.
func TestTableHelpers(t *testing.T) {
	if got := InFile("a.csv", fmt.Errorf("dataset: no rows")).Error(); got != "a.csv: no rows" {
		t.Errorf("InFile = %q", got)
	}
	if got := InFile("a.csv", fmt.Errorf("a.csv: line 3: bad")).Error(); got != "a.csv: line 3: bad" {
		t.Errorf("InFile named the file twice: %q", got)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(in, []byte("x,label\n1,a\n2,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tab, err := ReadTable(context.Background(), in, dataset.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ChooseTarget(tab, "", in); err != nil || got != "label" {
		t.Errorf("ChooseTarget default = %q, %v", got, err)
	}
	if _, err := ChooseTarget(tab, "nope", in); err == nil || !strings.Contains(err.Error(), in) {
		t.Errorf("ChooseTarget of a missing column: %v", err)
	}
	if _, err := ReadTable(context.Background(), "", dataset.ReadOptions{}); err == nil {
		t.Error("ReadTable without a path")
	}
	for out, want := range map[string]string{in: "would overwrite the input", dir: "is a directory", filepath.Join(dir, "no", "x"): "does not exist"} {
		if err := CheckOutPath("out", out, in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckOutPath(%s) = %v, want %q", out, err, want)
		}
	}
	if err := CheckOutPath("out", filepath.Join(dir, "model.rfm"), in); err != nil {
		t.Errorf("a fresh path refused: %v", err)
	}
}
