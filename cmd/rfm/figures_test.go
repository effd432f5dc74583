package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inspect --plots writes the figures, and with --image-shape the pixel
// images too; each must exist, be a real PNG of a sensible size, and be
// listed in the JSON output.
func TestInspectFigures(t *testing.T) {
	dir := t.TempDir()
	// 16 features drawn as a 4×4 "image".
	fitLowRank(t, dir, 300, 16, 5, 2, "m.rfm")
	r := mustRun(t, dir, "inspect", "--model", "m.rfm", "--plots", "figs", "--image-shape", "4x4", "--json")
	var res struct {
		Figures []string `json:"figures"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("inspect --json: %v", err)
	}
	want := []string{"features.png", "spectrum.png", "eigenvectors.png", "rounds.png", "diag_image.png", "eigenvector_images.png"}
	if len(res.Figures) != len(want) {
		t.Fatalf("figures %v, want %v", res.Figures, want)
	}
	for i, name := range want {
		if filepath.Base(res.Figures[i]) != name {
			t.Errorf("figure %d is %s, want %s", i, res.Figures[i], name)
		}
		path := filepath.Join(dir, "figs", name)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s does not decode as PNG: %v", name, err)
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 || st.Size() < 5000 {
			t.Errorf("%s: %dx%d px, %d bytes: too small to be a readable figure", name, b.Dx(), b.Dy(), st.Size())
		}
	}
	// A shape that does not match the features is a one-line usage error.
	bad := rfmCmd(t, dir, "inspect", "--model", "m.rfm", "--plots", "figs2", "--image-shape", "5x5")
	if bad.code == 0 || !strings.Contains(bad.stderr, "25 pixels but the model has 16 features") || strings.Count(strings.TrimSpace(bad.stderr), "\n") != 0 {
		t.Errorf("mismatched --image-shape: exit %d, stderr %q", bad.code, bad.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "figs2")); !os.IsNotExist(err) {
		t.Errorf("a failed inspect left %s behind", filepath.Join(dir, "figs2"))
	}
	bad = rfmCmd(t, dir, "inspect", "--model", "m.rfm", "--image-shape", "4x4")
	if bad.code != 2 || !strings.Contains(bad.stderr, "--image-shape needs --plots") {
		t.Errorf("--image-shape without --plots: exit %d, stderr %q", bad.code, bad.stderr)
	}
}
