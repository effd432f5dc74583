package cifar10

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const imageSize = Height * Width * Channels

// tinySet is n images whose pixel j of image i is ((7i + j) mod 256)/255,
// labelled i mod 10.
func tinySet(n int) *Set {
	s := &Set{X: make([]float64, n*imageSize), Y: make([]int, n), N: n, D: imageSize, H: Height, W: Width, C: Channels}
	for i := 0; i < n; i++ {
		s.Y[i] = i % NumClasses
		for j := 0; j < imageSize; j++ {
			s.X[i*imageSize+j] = float64((7*i+j)%256) / 255
		}
	}
	return s
}

// writeGz writes b gzip-compressed to dir/name.
func writeGz(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Save writes the folder format and Load reads the same pixels (exactly
// k/255), labels and sizes back.
func TestSaveLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	train, test := tinySet(3), tinySet(2)
	if err := Save(context.Background(), dir, train, test); err != nil {
		t.Fatal(err)
	}
	gotTr, gotTe, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ got, want *Set }{{gotTr, train}, {gotTe, test}} {
		if c.got.N != c.want.N || c.got.D != imageSize || c.got.H != Height || c.got.W != Width || c.got.C != Channels {
			t.Fatalf("sizes %d×%d (%d×%d×%d), want %d images", c.got.N, c.got.D, c.got.H, c.got.W, c.got.C, c.want.N)
		}
		for i := range c.want.X {
			if c.got.X[i] != c.want.X[i] {
				t.Fatalf("value %d: %v, want %v", i, c.got.X[i], c.want.X[i])
			}
		}
		for i := range c.want.Y {
			if c.got.Y[i] != c.want.Y[i] {
				t.Fatalf("label %d: %d, want %d", i, c.got.Y[i], c.want.Y[i])
			}
		}
	}
	if got := gotTr.ClassCounts(); got[0] != 1 || got[2] != 1 || got[3] != 0 {
		t.Errorf("class counts %v", got)
	}
	if img := gotTe.Image(1); len(img) != imageSize || img[0] != 7.0/255 {
		t.Errorf("image 1 starts %v (%d values)", img[0], len(img))
	}
}

// An uncompressed NPY file is read as well as a gzip-compressed one.
func TestLoadPlainNPY(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "labels.npy")
	if err := os.WriteFile(path, npyBytes("(4,)", []byte{0, 9, 3, 3}), 0o644); err != nil {
		t.Fatal(err)
	}
	y, err := LoadLabels(path)
	if err != nil || len(y) != 4 || y[1] != 9 || y[3] != 3 {
		t.Fatalf("%v %v", y, err)
	}
}

// Malformed files give an error naming the file and what is wrong.
func TestMalformedFiles(t *testing.T) {
	img := make([]byte, 2*imageSize)
	gzOf := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	cases := []struct {
		name, want           string
		imagesRaw, labelsRaw []byte // the files' contents, if not the valid default
	}{
		{name: "float dtype", imagesRaw: []byte(strings.Replace(string(npyBytes("(2, 32, 32, 3)", make([]byte, 16*imageSize))), "|u1", "<f8", 1)), want: `dtype "<f8"; want uint8`},
		{name: "3-D images", imagesRaw: npyBytes("(2, 32, 96)", img), want: "shape [2 32 96]; want (n, 32, 32, 3)"},
		{name: "channels first", imagesRaw: npyBytes("(2, 3, 32, 32)", img), want: "want (n, 32, 32, 3)"},
		{name: "truncated data", imagesRaw: npyBytes("(2, 32, 32, 3)", img[:imageSize+5]), want: "data is 3077 bytes but shape (2, 32, 32, 3) of |u1 needs 6144"},
		{name: "trailing bytes", imagesRaw: npyBytes("(2, 32, 32, 3)", append(append([]byte{}, img...), 1)), want: "needs 6144"},
		{name: "not NPY", imagesRaw: []byte("hello, world"), want: "not an NPY file"},
		{name: "fortran", imagesRaw: []byte(strings.Replace(string(npyBytes("(2, 32, 32, 3)", img)), "False", "True ", 1)), want: "Fortran order"},
		{name: "label out of range", labelsRaw: npyBytes("(2,)", []byte{1, 10}), want: "label 10 of image 1 is not a class 0..9"},
		{name: "2-D labels", labelsRaw: npyBytes("(2, 1)", []byte{1, 2}), want: "want (n,) labels"},
		{name: "count mismatch", labelsRaw: npyBytes("(3,)", []byte{1, 2, 3}), want: "has 2 images but"},
		{name: "no images", imagesRaw: npyBytes("(0, 32, 32, 3)", nil), want: "holds no images"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			images, labels := npyBytes("(2, 32, 32, 3)", img), npyBytes("(2,)", []byte{0, 1})
			if c.imagesRaw != nil {
				images = c.imagesRaw
			}
			if c.labelsRaw != nil {
				labels = c.labelsRaw
			}
			writeGz(t, dir, TrainImagesFile, images)
			writeGz(t, dir, TrainLabelsFile, labels)
			_, err := LoadSet(filepath.Join(dir, TrainImagesFile), filepath.Join(dir, TrainLabelsFile))
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("error %v, want one naming the file and containing %q", err, c.want)
			}
		})
	}
	// A corrupted gzip stream and a missing file.
	dir := t.TempDir()
	bad := gzOf(npyBytes("(2,)", []byte{0, 1}))
	bad = bad[:len(bad)-6]
	path := filepath.Join(dir, "labels.npy.gz")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLabels(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("truncated gzip: %v", err)
	}
	if _, _, err := Load(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), TrainImagesFile) {
		t.Errorf("missing folder: %v", err)
	}
}

// Save refuses sets it cannot store, and writes nothing then.
func TestSaveRefusesBadSets(t *testing.T) {
	dir := t.TempDir()
	bad := tinySet(2)
	bad.X[5] = 1.5
	if err := Save(context.Background(), dir, tinySet(1), bad); err == nil || !strings.Contains(err.Error(), "value 1.5 of image 0 is outside [0, 1]") {
		t.Errorf("pixel 1.5: %v", err)
	}
	bad = tinySet(2)
	bad.Y[1] = 12
	if err := Save(context.Background(), dir, bad, tinySet(1)); err == nil || !strings.Contains(err.Error(), "label 12 of image 1") {
		t.Errorf("label 12: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused save left %d files", len(entries))
	}
}
