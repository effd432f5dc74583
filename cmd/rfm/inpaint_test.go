package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/cntk"
)

func writeTestPNG(t *testing.T, path string, m *cntk.Image) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := m.WritePNG(f); err != nil {
		t.Fatal(err)
	}
}

// smoothRGB is an h×w RGB image of slow waves.
func smoothRGB(h, w int) *cntk.Image {
	m := &cntk.Image{H: h, W: w, C: 3, Pix: make([]float64, h*w*3)}
	for i := range h {
		for j := range w {
			x, y := float64(i)/float64(h), float64(j)/float64(w)
			m.Pix[(i*w+j)*3] = 0.5 + 0.3*math.Sin(3*x+2*y)
			m.Pix[(i*w+j)*3+1] = 0.5 + 0.3*math.Cos(2*x-y)
			m.Pix[(i*w+j)*3+2] = 0.3 + 0.4*x*y
		}
	}
	return m
}

func TestInpaintCommand(t *testing.T) {
	dir := t.TempDir()
	writeTestPNG(t, filepath.Join(dir, "img.png"), smoothRGB(34, 40))
	r := rfmCmd(t, dir, "inpaint", "--image", "img.png", "--missing", "0.5", "--s", "2", "--out", "out.png", "--report", "r.json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "40×34 does not fit s = 2; padded to 40×36") {
		t.Errorf("the padding is not reported: %s", r.stderr)
	}
	out, err := cntk.LoadPNG(filepath.Join(dir, "out.png"))
	if err != nil {
		t.Fatal(err)
	}
	if out.H != 34 || out.W != 40 || out.C != 3 {
		t.Fatalf("result %d×%d×%d, want 40×34×3", out.W, out.H, out.C)
	}
	mask, err := cntk.LoadPNG(filepath.Join(dir, "out-mask.png"))
	if err != nil {
		t.Fatal(err)
	}
	obs := cntk.MaskFromImage(mask)
	missing := 0
	for _, o := range obs {
		if !o {
			missing++
		}
	}
	if missing != 34*40/2 {
		t.Errorf("the saved mask hides %d pixels, want %d", missing, 34*40/2)
	}
	var rep map[string]any
	data, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if p, _ := rep["psnr_missing"].(float64); p < 30 {
		t.Errorf("PSNR %v on the missing pixels of a smooth image: want ≥ 30 dB", rep["psnr_missing"])
	}
	// The same mask through --mask gives the same image; the Laplace kernel runs too.
	r = rfmCmd(t, dir, "inpaint", "--image", "img.png", "--mask", "out-mask.png", "--s", "2", "--out", "again.png", "--quiet")
	if r.code != 0 {
		t.Fatalf("--mask: exit %d: %s", r.code, r.stderr)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "out.png"))
	b, _ := os.ReadFile(filepath.Join(dir, "again.png"))
	if string(a) != string(b) {
		t.Error("--mask with the saved mask gives another image")
	}
	if r := rfmCmd(t, dir, "inpaint", "--image", "img.png", "--mask", "out-mask.png", "--kernel", "laplace", "--out", "lap.png", "--quiet"); r.code != 0 {
		t.Fatalf("--kernel laplace: exit %d: %s", r.code, r.stderr)
	}
}

func TestInpaintHeatmaps(t *testing.T) {
	dir := t.TempDir()
	r := rfmCmd(t, dir, "inpaint", "--heatmap", "5,6", "--heatmap-size", "16", "--heatmap-s", "1,2", "--hole-size", "3", "--out", "heat.png", "--kernel-out", "k.png")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, p := range []string{"uniform", "onehot", "identity", "meshgrid"} {
		for _, f := range []string{"heat-" + p + ".png", "k-" + p + ".png"} {
			if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
				t.Errorf("%s not written: %v", f, err)
			}
		}
	}
}

func TestInpaintBadInput(t *testing.T) {
	dir := t.TempDir()
	writeTestPNG(t, filepath.Join(dir, "img.png"), smoothRGB(16, 16))
	small := &cntk.Image{H: 8, W: 8, C: 1, Pix: make([]float64, 64)}
	writeTestPNG(t, filepath.Join(dir, "small-mask.png"), small)
	black := &cntk.Image{H: 16, W: 16, C: 1, Pix: make([]float64, 256)}
	writeTestPNG(t, filepath.Join(dir, "black.png"), black)
	white := &cntk.Image{H: 16, W: 16, C: 1, Pix: make([]float64, 256)}
	for i := range white.Pix {
		white.Pix[i] = 1
	}
	writeTestPNG(t, filepath.Join(dir, "white.png"), white)
	writeFile(t, filepath.Join(dir, "bad.png"), "not a png")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--image", "img.png", "--mask", "small-mask.png"}, 1, "is 8×8 but the image is 16×16"},
		{[]string{"--image", "img.png", "--mask", "black.png"}, 1, "observes no pixel"},
		{[]string{"--image", "img.png", "--mask", "white.png"}, 1, "observes every pixel"},
		{[]string{"--image", "bad.png", "--missing", "0.5"}, 1, "not a readable PNG"},
		{[]string{"--image", "img.png", "--missing", "1.5"}, 2, "--missing 1.5"},
		{[]string{"--image", "img.png", "--missing", "0.5", "--s", "7"}, 2, "want 0..6"},
		{[]string{"--image", "img.png"}, 2, "give a mask"},
		{[]string{"--image", "img.png", "--missing", "0.5", "--holes", "2"}, 2, "one of --mask, --missing, --holes"},
		{[]string{"--image", "img.png", "--missing", "0.5", "--prior", "meshgrid", "--s", "1"}, 0, ""},
		{[]string{"--image", "img.png", "--missing", "0.5", "--kernel", "rbf"}, 2, "--kernel \"rbf\""},
		{[]string{"--heatmap", "99,1", "--heatmap-size", "16", "--heatmap-s", "1"}, 2, "0 ≤ X < 16"},
	}
	for _, c := range cases {
		os.Remove(filepath.Join(dir, "out.png"))
		r := rfmCmd(t, dir, append([]string{"inpaint", "--out", "out.png", "--quiet"}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, r.code, r.stderr, c.code, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "out.png")); c.code != 0 && err == nil {
			t.Errorf("%v: failed but wrote out.png", c.args)
		}
	}
}

// TestInpaintSelectAndPrecond: --select-* chooses among the candidates and
// says so in the report; --precond and --tile reach the solve.
func TestInpaintSelectAndPrecond(t *testing.T) {
	dir := t.TempDir()
	writeTestPNG(t, filepath.Join(dir, "img.png"), smoothRGB(32, 32))
	r := rfmCmd(t, dir, "inpaint", "--image", "img.png", "--missing", "0.5", "--out", "out.png", "--report", "r.json",
		"--select-s", "1,2", "--select-ridge", "0,100", "--select-crop", "16", "--select-crops", "2",
		"--exact-max", "1", "--precond", "jacobi", "--tol", "1e-8")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "chosen on held-out observed pixels") || !strings.Contains(r.stderr, "jacobi preconditioner") {
		t.Errorf("the summary does not say what was chosen and how it was solved: %s", r.stderr)
	}
	var rep cntk.RunReport
	data, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Selection) != 4 || rep.Precond != "jacobi" || !rep.Converged || rep.Residual > 1e-8 || rep.Tol != 1e-8 {
		t.Fatalf("report: %d candidates, precond %q, converged %v, residual %g, tol %g", len(rep.Selection), rep.Precond, rep.Converged, rep.Residual, rep.Tol)
	}
	best := rep.Selection[0]
	for _, s := range rep.Selection {
		if s.PSNR > best.PSNR {
			best = s
		}
	}
	if rep.S != best.S || rep.Ridge != best.Ridge {
		t.Errorf("ran s = %d, ridge %g; the best held-out candidate was s = %d, ridge %g", rep.S, rep.Ridge, best.S, best.Ridge)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--precond", "multigrid"}, "--precond \"multigrid\""},
		{[]string{"--tile", "-1"}, "--tile -1"},
		{[]string{"--select-holdout", "1"}, "--select-holdout 1"},
		{[]string{"--select-s", "x"}, "--select-s \"x\""},
		{[]string{"--select-ridge", "-1"}, "--select-ridge \"-1\""},
	} {
		r := rfmCmd(t, dir, append([]string{"inpaint", "--image", "img.png", "--missing", "0.5", "--out", "bad.png", "--quiet"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, r.code, r.stderr, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "bad.png")); err == nil {
			t.Errorf("%v: failed but wrote bad.png", c.args)
		}
	}
}
