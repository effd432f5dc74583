package figures

import (
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/synth"
)

func fitted(t *testing.T, d int) *rfm.Model {
	t.Helper()
	s, err := synth.Generate(synth.LowRank, 300, d, 5)
	if err != nil {
		t.Fatal(err)
	}
	cfg := rfm.DefaultConfig()
	cfg.Iters = 2
	m, err := rfm.Fit(context.Background(), cfg, &rfm.Dataset{X: s.X, N: s.N, D: s.D, Y: s.Y, Outputs: 1}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Every figure is written, in order, as a PNG that decodes; grey image
// inputs get the grid, colour ones an image per eigenvector; a shape that
// does not cover the features is an error before any file.
func TestModel(t *testing.T) {
	m := fitted(t, 12)
	dir := t.TempDir()
	files, err := Model(dir, m, "/some/where/m.rfm", nil, 0, &plot.ImageShape{H: 3, W: 4, C: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"features.png", "spectrum.png", "eigenvectors.png", "rounds.png", "diag_image.png", "eigenvector_images.png"}
	if len(files) != len(want) {
		t.Fatalf("files %v, want %v", files, want)
	}
	for i, f := range files {
		if f != filepath.Join(dir, want[i]) {
			t.Errorf("file %d: %s, want %s", i, f, want[i])
		}
		r, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(r); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		r.Close()
	}
	colour := t.TempDir()
	files, err = Model(colour, m, "m", nil, 5, &plot.ImageShape{H: 2, W: 2, C: 3})
	if err != nil {
		t.Fatal(err)
	}
	if last := filepath.Base(files[len(files)-1]); last != "eigenvector4_image.png" {
		t.Errorf("colour images end with %s", last)
	}
	empty := t.TempDir()
	if _, err := Model(empty, m, "m", nil, 0, &plot.ImageShape{H: 5, W: 5, C: 1}); err == nil || !strings.Contains(err.Error(), "25 pixels but the model has 12 features") {
		t.Errorf("mismatched shape: %v", err)
	}
	if left, _ := os.ReadDir(empty); len(left) != 0 {
		t.Errorf("a refused call wrote %d files", len(left))
	}
}

func TestEigenTitle(t *testing.T) {
	for _, c := range []struct {
		lambda, trace float64
		want          string
	}{{6.3, 10, "v1 · 63% of trace"}, {1e-9, 10, "v1 · ≈0% (noise)"}, {1, 0, "v1"}} {
		if got := eigenTitle(0, c.lambda, c.trace); got != c.want {
			t.Errorf("eigenTitle(0, %v, %v) = %q, want %q", c.lambda, c.trace, got, c.want)
		}
	}
}
