package plot

import (
	"fmt"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sample is one figure drawn from synthetic but realistic data.
type sample struct {
	name       string
	draw       func(path string) error
	minW, minH int
}

// samples returns the figures the tests draw. Set PLOT_SAMPLES=/some/dir to
// keep them for viewing: go test ./plot/ -run TestFigures with that variable
// writes every PNG there.
func samples() []sample {
	rng := rand.New(rand.NewPCG(1, 2))

	// A tabular model: 14 named features, a few of them relevant.
	names := []string{"age", "workclass", "fnlwgt", "education", "education-num",
		"marital-status", "occupation", "relationship", "race", "sex",
		"capital-gain", "capital-loss", "hours-per-week", "native-country-with-a-rather-long-name"}
	diag := make([]float64, len(names))
	for i := range diag {
		diag[i] = 0.02 + 0.05*rng.Float64()
	}
	diag[10], diag[4], diag[0], diag[12] = 2.1, 1.3, 0.71, 0.45

	// 40 features for the 30-bar chart.
	many := make([]float64, 40)
	manyNames := make([]string, 40)
	for i := range many {
		many[i] = math.Exp(-float64(i)/8) * (0.8 + 0.4*rng.Float64())
		manyNames[i] = fmt.Sprintf("feature_%02d", i)
	}

	// A spectrum with fast decay and a round-off tail (rank 20 of 60).
	spec := make([]float64, 60)
	for i := range spec {
		if i < 20 {
			spec[i] = 3 * math.Pow(0.45, float64(i))
		} else {
			spec[i] = (rng.Float64() - 0.5) * 4e-16
		}
	}
	flat := []float64{4.1, 3.3, 2.9, 2.2, 1.7, 1.1, 0.9, 0.4, 0.1, -1e-17}

	// Eigenvectors of a 14-feature model and of a 784-pixel model.
	vecs := make([][]float64, 4)
	for k := range vecs {
		v := make([]float64, len(names))
		for i := range v {
			v[i] = rng.NormFloat64() * 0.1
		}
		v[(k*3+10)%len(names)] = 0.9
		v[(k*5+4)%len(names)] = -0.5
		vecs[k] = normalize(v)
	}
	pixVecs, pixDiag := mnistLike(rng)
	pixNames := make([]string, 784)
	for i := range pixNames {
		pixNames[i] = fmt.Sprintf("px(%d,%d)", i/28, i%28)
	}

	// An RGB 32×32 eigenvector, interleaved HWC.
	rgb := make([]float64, 32*32*3)
	for y := range 32 {
		for x := range 32 {
			r := math.Hypot(float64(x)-15.5, float64(y)-15.5)
			rgb[(y*32+x)*3+0] = math.Exp(-r * r / 60)
			rgb[(y*32+x)*3+1] = 0.5 * math.Sin(float64(x)/4)
			rgb[(y*32+x)*3+2] = -0.7 * math.Exp(-r*r/200)
		}
	}

	rounds := []float64{0, 1, 2, 3, 4, 5}
	curves := map[string][]float64{
		"validation accuracy": {0.912, 0.951, 0.963, 0.968, 0.967, 0.969},
		"train accuracy":      {0.95, 0.985, 0.994, 0.997, 0.998, 0.999},
	}

	// 121 data sets: RFM error against Laplace error.
	nsets := 121
	lap, rfmErr := make([]float64, nsets), make([]float64, nsets)
	setNames := make([]string, nsets)
	for i := range nsets {
		lap[i] = 0.02 + 0.5*rng.Float64()*rng.Float64()
		rfmErr[i] = math.Max(0, lap[i]*(0.9+0.15*rng.NormFloat64()))
		setNames[i] = fmt.Sprintf("dataset-%03d", i)
	}
	setNames[7] = "breast-cancer-wisc-diag"

	return []sample{
		{"feature_bars", func(p string) error {
			return FeatureBars(p, names, diag, 10, "", "diag(M): top features (adult)")
		}, 900, 300},
		{"feature_bars_30", func(p string) error {
			return FeatureBars(p, manyNames, many, 30, "", "diag(M): 30 of 40 features")
		}, 900, 780},
		{"feature_bars_signed", func(p string) error {
			return FeatureBars(p, nil, []float64{0.5, -0.3, 0.1, -0.9, 0.7}, 0, "", "signed values")
		}, 900, 300},
		{"spectrum_log", func(p string) error { return Spectrum(p, spec, "Spectrum of M (rank 20 + round-off)") }, 900, 500},
		{"spectrum_linear", func(p string) error { return Spectrum(p, flat, "Spectrum of M") }, 900, 500},
		{"spectrum_784", func(p string) error { return Spectrum(p, mnistSpectrum(), "Spectrum of M, MNIST (d = 784)") }, 900, 500},
		{"eigenvectors", func(p string) error {
			return Eigenvectors(p, names, vecs, []float64{2.3, 0.8, 0.31, 0.05}, 4, "Top eigenvectors of M")
		}, 1000, 600},
		{"eigenvectors_784", func(p string) error {
			return Eigenvectors(p, pixNames, pixVecs, []float64{1.9, 0.7, 0.2}, 3, "Top eigenvectors of M (MNIST)")
		}, 1500, 400},
		{"image_diag", func(p string) error { return Image(p, pixDiag, 28, 28, 1, "diag(M), MNIST") }, 400, 400},
		{"image_signed", func(p string) error {
			return Image(p, pixVecs[0], 28, 28, 1, "Top eigenvector of M, RFM on 10 000 MNIST training digits after 5 rounds")
		}, 400, 400},
		{"image_rgb", func(p string) error { return Image(p, rgb, 32, 32, 3, "eigenvector, CIFAR-like 32×32×3") }, 900, 300},
		{"image_grid", func(p string) error {
			return ImageGrid(p, [][]float64{pixDiag, pixVecs[0], pixVecs[1], pixVecs[2]}, 28, 28,
				[]string{"diag(M)", "v1 (λ = 1.9)", "v2 (λ = 0.7)", "v3 (λ = 0.2)"}, "MNIST: diag(M) and top eigenvectors")
		}, 1000, 250},
		{"image_grid_7", func(p string) error {
			return ImageGrid(p, [][]float64{pixDiag, pixVecs[0], pixVecs[1], pixVecs[2], pixDiag, pixVecs[1], pixVecs[2]}, 28, 28,
				nil, "seven images")
		}, 1000, 400},
		{"curve", func(p string) error {
			return Curve(p, rounds, curves, "round", "accuracy", "Accuracy by RFM round")
		}, 900, 500},
		{"curve_long", func(p string) error {
			xs := make([]float64, 200)
			loss := make([]float64, 200)
			for i := range xs {
				xs[i] = float64(i) * 0.5
				loss[i] = 1/(1+xs[i]) + 0.02*rng.Float64()
			}
			return Curve(p, xs, map[string][]float64{"loss": loss}, "epoch", "loss", "Loss")
		}, 900, 500},
		{"scatter_diag", func(p string) error {
			return Scatter(p, lap, rfmErr, setNames, "Laplace kernel error", "RFM error", "RFM vs Laplace, 121 data sets", true)
		}, 800, 700},
		{"scatter_plain", func(p string) error {
			return Scatter(p, []float64{1, 2, 3, 4.5, 6}, []float64{10, 40, 35, 80, 60}, []string{"a", "b", "c", "d", "e"},
				"n (thousands)", "seconds", "Fit time", false)
		}, 900, 500},
	}
}

func normalize(v []float64) []float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	s = math.Sqrt(s)
	for i := range v {
		v[i] /= s
	}
	return v
}

// mnistLike returns three signed 784-vectors with digit-like structure and
// a non-negative diag(M)-like map concentrated in the centre.
func mnistLike(rng *rand.Rand) ([][]float64, []float64) {
	diag := make([]float64, 784)
	vecs := make([][]float64, 3)
	for k := range vecs {
		vecs[k] = make([]float64, 784)
	}
	for y := range 28 {
		for x := range 28 {
			dx, dy := float64(x)-13.5, float64(y)-13.5
			r := math.Hypot(dx, dy)
			i := y*28 + x
			diag[i] = math.Max(0, math.Exp(-r*r/40)*(0.8+0.4*rng.Float64())-0.02)
			vecs[0][i] = math.Exp(-r*r/50) * math.Cos(r/2.5)
			vecs[1][i] = math.Exp(-r*r/60) * dx / 10
			vecs[2][i] = math.Exp(-r*r/60) * dx * dy / 60
		}
	}
	for k := range vecs {
		normalize(vecs[k])
	}
	return vecs, diag
}

// mnistSpectrum decays like the AGOP of a digit classifier.
func mnistSpectrum() []float64 {
	s := make([]float64, 784)
	for i := range s {
		s[i] = 5 / math.Pow(float64(i+1), 1.6)
	}
	return s
}

// sampleDir is where the tests draw: $PLOT_SAMPLES, to keep the figures
// for a look, else a temporary directory.
func sampleDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PLOT_SAMPLES")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestFigures draws every sample and checks that a PNG of at least the
// expected size was written atomically (no temporary file left behind).
func TestFigures(t *testing.T) {
	dir := sampleDir(t)
	for _, s := range samples() {
		t.Run(s.name, func(t *testing.T) {
			path := filepath.Join(dir, s.name+".png")
			if err := s.draw(path); err != nil {
				t.Fatalf("draw: %v", err)
			}
			checkPNG(t, path, s.minW, s.minH)
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func checkPNG(t *testing.T, path string, minW, minH int) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat: %v", err)
	}
	if st.Size() < 4000 {
		t.Errorf("%s: only %d bytes", path, st.Size())
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s does not decode as PNG: %v", path, err)
	}
	b := img.Bounds()
	if b.Dx() < minW || b.Dy() < minH {
		t.Errorf("%s: %d×%d px, want at least %d×%d", path, b.Dx(), b.Dy(), minW, minH)
	}
	// A figure is not blank: some pixels must be dark (text, axes).
	dark := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bb, _ := img.At(x, y).RGBA()
			if r+g+bb < 3*0x4000 {
				dark++
			}
		}
	}
	if dark < 100 {
		t.Errorf("%s looks blank (%d dark pixels sampled)", path, dark)
	}
}

// TestOverwrite checks that drawing over an existing file replaces it.
func TestOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.png")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Spectrum(path, []float64{3, 2, 1}, "s"); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 900, 500)
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "x.png")
	nan := math.NaN()
	inf := math.Inf(1)
	tests := []struct {
		name string
		draw func() error
		want string // substring of the error
	}{
		{"empty path", func() error { return Spectrum("", []float64{1}, "") }, "empty output path"},
		{"not png", func() error { return Spectrum(filepath.Join(dir, "x.jpg"), []float64{1}, "") }, ".png"},
		{"missing dir", func() error { return Spectrum(filepath.Join(dir, "no", "x.png"), []float64{1}, "") }, "no such file"},
		{"bars empty", func() error { return FeatureBars(p, nil, nil, 5, "", "") }, "empty"},
		{"bars NaN", func() error { return FeatureBars(p, nil, []float64{1, nan}, 5, "", "") }, "values[1]"},
		{"bars Inf", func() error { return FeatureBars(p, nil, []float64{inf}, 5, "", "") }, "finite"},
		{"bars names", func() error { return FeatureBars(p, []string{"a"}, []float64{1, 2}, 5, "", "") }, "1 names for 2 features"},
		{"spectrum empty", func() error { return Spectrum(p, []float64{}, "") }, "empty"},
		{"spectrum NaN", func() error { return Spectrum(p, []float64{1, nan}, "") }, "finite"},
		{"eig none", func() error { return Eigenvectors(p, nil, nil, nil, 2, "") }, "no eigenvectors"},
		{"eig zero dim", func() error { return Eigenvectors(p, nil, [][]float64{{}}, nil, 2, "") }, "dimension 0"},
		{"eig ragged", func() error { return Eigenvectors(p, nil, [][]float64{{1, 0}, {1}}, nil, 2, "") }, "vector 1 has 1"},
		{"eig values", func() error { return Eigenvectors(p, nil, [][]float64{{1, 0}}, []float64{1, 2}, 2, "") }, "2 eigenvalues for 1"},
		{"eig NaN", func() error { return Eigenvectors(p, nil, [][]float64{{1, nan}}, nil, 2, "") }, "vecs[0][1]"},
		{"eig NaN value", func() error { return Eigenvectors(p, nil, [][]float64{{1, 0}}, []float64{nan}, 2, "") }, "eigenvalues[0]"},
		{"eig names", func() error { return Eigenvectors(p, []string{"a"}, [][]float64{{1, 0}}, nil, 2, "") }, "1 names"},
		{"image channels", func() error { return Image(p, make([]float64, 8), 2, 2, 2, "") }, "2 channels"},
		{"image size", func() error { return Image(p, make([]float64, 5), 2, 2, 1, "") }, "5 values for a 2×2×1"},
		{"image zero", func() error { return Image(p, nil, 0, 2, 1, "") }, "must be positive"},
		{"image huge", func() error { return Image(p, nil, 5000, 5000, 1, "") }, "larger than"},
		{"image NaN", func() error { return Image(p, []float64{0, 1, nan, 0}, 2, 2, 1, "") }, "values[2]"},
		{"grid empty", func() error { return ImageGrid(p, nil, 2, 2, nil, "") }, "no images"},
		{"grid size", func() error { return ImageGrid(p, [][]float64{make([]float64, 4), make([]float64, 3)}, 2, 2, nil, "") }, "image 1"},
		{"grid titles", func() error { return ImageGrid(p, [][]float64{make([]float64, 4)}, 2, 2, []string{"a", "b"}, "") }, "2 titles for 1"},
		{"grid NaN", func() error { return ImageGrid(p, [][]float64{{0, 0, 0, nan}}, 2, 2, nil, "") }, "images[0][3]"},
		{"grid many", func() error { return ImageGrid(p, make([][]float64, 26), 2, 2, nil, "") }, "at most"},
		{"curve xs", func() error { return Curve(p, nil, map[string][]float64{"a": {}}, "", "", "") }, "xs is empty"},
		{"curve none", func() error { return Curve(p, []float64{1}, nil, "", "", "") }, "no series"},
		{"curve length", func() error { return Curve(p, []float64{1, 2}, map[string][]float64{"a": {1}}, "", "", "") }, `"a" has 1 values for 2`},
		{"curve all NaN", func() error { return Curve(p, []float64{1, 2}, map[string][]float64{"a": {nan, nan}}, "", "", "") }, "has no value"},
		{"curve Inf", func() error {
			return Curve(p, []float64{1, 2}, map[string][]float64{"a": {1, math.Inf(1)}}, "", "", "")
		}, "finite"},
		{"curve x NaN", func() error { return Curve(p, []float64{nan}, map[string][]float64{"a": {1}}, "", "", "") }, "xs[0]"},
		{"scatter empty", func() error { return Scatter(p, nil, nil, nil, "", "", "", true) }, "empty"},
		{"scatter length", func() error { return Scatter(p, []float64{1, 2}, []float64{1}, nil, "", "", "", true) }, "1 y values for 2"},
		{"scatter labels", func() error { return Scatter(p, []float64{1}, []float64{1}, []string{"a", "b"}, "", "", "", true) }, "2 labels for 1"},
		{"scatter NaN", func() error { return Scatter(p, []float64{1}, []float64{nan}, nil, "", "", "", false) }, "y[0]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.draw()
			if err == nil {
				t.Fatalf("no error, want one containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Errorf("a failed call left %s behind (stat: %v)", p, err)
	}
}

// TestDegenerate draws inputs at the edges: a single value, constant
// values, all-zero spectra, topK beyond the data.
func TestDegenerate(t *testing.T) {
	dir := sampleDir(t)
	tests := []struct {
		name string
		draw func(path string) error
	}{
		{"one bar", func(p string) error { return FeatureBars(p, []string{"only"}, []float64{3}, 100, "", "") }},
		{"zero bars", func(p string) error { return FeatureBars(p, nil, []float64{0, 0, 0}, 0, "", "zeros") }},
		{"many bars capped", func(p string) error { return FeatureBars(p, nil, make([]float64, 500), 1000, "", "") }},
		{"one eigenvalue", func(p string) error { return Spectrum(p, []float64{2}, "") }},
		{"zero spectrum", func(p string) error { return Spectrum(p, []float64{0, 0, 0}, "") }},
		{"negative spectrum", func(p string) error { return Spectrum(p, []float64{-1, -2}, "") }},
		{"exact zeros tail", func(p string) error { return Spectrum(p, []float64{5, 1e-3, 1e-5, 0, 0}, "") }},
		{"one vector", func(p string) error { return Eigenvectors(p, nil, [][]float64{{0, 0, 1}}, nil, 0, "") }},
		{"zero vector", func(p string) error { return Eigenvectors(p, nil, [][]float64{{0, 0}}, []float64{0}, 5, "") }},
		{"constant image", func(p string) error { return Image(p, []float64{1, 1, 1, 1}, 2, 2, 1, "") }},
		{"zero image", func(p string) error { return Image(p, make([]float64, 12), 2, 2, 3, "") }},
		{"tall image", func(p string) error { return Image(p, make([]float64, 1000), 1000, 1, 1, "") }},
		{"single grid", func(p string) error {
			return ImageGrid(p, [][]float64{{-1, 1, 0, 0}}, 2, 2, nil, "one signed 2×2 image")
		}},
		{"one point curve", func(p string) error { return Curve(p, []float64{0}, map[string][]float64{"a": {1}}, "", "", "") }},
		{"one point scatter", func(p string) error { return Scatter(p, []float64{1}, []float64{1}, []string{"x"}, "", "", "", true) }},
		{"constant scatter", func(p string) error { return Scatter(p, []float64{0, 0}, []float64{0, 0}, nil, "", "", "", false) }},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("degenerate_%02d.png", i))
			if err := tc.draw(path); err != nil {
				t.Fatalf("draw: %v", err)
			}
			checkPNG(t, path, 300, 200)
		})
	}
}

// TestLongTitle checks that an over-long title and note are shrunk and cut
// rather than drawn past the figure edge (or taking long to fit).
func TestLongTitle(t *testing.T) {
	long := strings.Repeat("a very long title ", 500)
	ts, title, ns, note := header(long, "short note\n"+long, 960)
	if w := toPx(ts.Width(title)); w > 960-24 {
		t.Errorf("title %.0f px wide on a 960 px figure", w)
	}
	for _, l := range strings.Split(note, "\n") {
		if w := toPx(ns.Width(l)); w > 960-24 {
			t.Errorf("note line %.0f px wide on a 960 px figure", w)
		}
	}
	if !strings.HasSuffix(title, "…") || !strings.HasPrefix(note, "short note\n") {
		t.Errorf("title %q, note %q", title, note)
	}
	path := filepath.Join(t.TempDir(), "long.png")
	if err := Curve(path, []float64{1, 2}, map[string][]float64{long: {1, 2}}, long, long, long); err != nil {
		t.Fatal(err)
	}
	checkPNG(t, path, 900, 500)
}
