package cifar10

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/rfmkit/rfm/dataset"
	"github.com/rfmkit/rfm/internal/atomicfile"
)

// The image size and the number of classes.
const (
	Height     = 32
	Width      = 32
	Channels   = 3
	NumClasses = 10
)

// File names inside the CIFAR-10 folder.
const (
	TrainImagesFile = "train_images.npy.gz"
	TrainLabelsFile = "train_labels.npy.gz"
	TestImagesFile  = "test_images.npy.gz"
	TestLabelsFile  = "test_labels.npy.gz"
)

// MaxBytes bounds the decompressed size of one file (the training images
// are 30.7 MB): a corrupted or hostile gzip stream cannot make the loader
// allocate more.
const MaxBytes = 1 << 30

// ClassNames are the names of classes 0..9.
var ClassNames = [NumClasses]string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// Set is a labelled set of images: N rows of D = H·W·C values in [0, 1],
// row-major in X (image i is X[i*D : (i+1)*D], channel c of pixel (y, x) at
// (y*W+x)*C+c), and the class 0..9 of each image in Y.
type Set struct {
	X       []float64
	Y       []int
	N, D    int
	H, W, C int
}

// Image returns the values of image i (a slice of X, not a copy).
func (s *Set) Image(i int) []float64 { return s.X[i*s.D : (i+1)*s.D] }

// ClassCounts returns the number of images of each class.
func (s *Set) ClassCounts() [NumClasses]int {
	var c [NumClasses]int
	for _, y := range s.Y {
		c[y]++
	}
	return c
}

// Load reads the CIFAR-10 folder dir: the training set from
// train_images.npy.gz and train_labels.npy.gz, the test set from the
// test_ files.
func Load(dir string) (train, test *Set, err error) {
	if train, err = LoadSet(filepath.Join(dir, TrainImagesFile), filepath.Join(dir, TrainLabelsFile)); err != nil {
		return nil, nil, err
	}
	if test, err = LoadSet(filepath.Join(dir, TestImagesFile), filepath.Join(dir, TestLabelsFile)); err != nil {
		return nil, nil, err
	}
	return train, test, nil
}

// LoadSet reads one image file and its label file and checks that they
// hold the same number of images.
func LoadSet(images, labels string) (*Set, error) {
	s, err := LoadImages(images)
	if err != nil {
		return nil, err
	}
	y, err := LoadLabels(labels)
	if err != nil {
		return nil, err
	}
	if len(y) != s.N {
		return nil, fmt.Errorf("cifar10: %s has %d images but %s has %d labels", images, s.N, labels, len(y))
	}
	s.Y = y
	return s, nil
}

// LoadImages reads an array of shape (n, 32, 32, 3), uint8, as a Set
// without labels, the pixels scaled to [0, 1].
func LoadImages(path string) (*Set, error) {
	h, err := readNPY(path)
	if err != nil {
		return nil, err
	}
	if len(h.Shape) != 4 || h.Shape[1] != Height || h.Shape[2] != Width || h.Shape[3] != Channels {
		return nil, fmt.Errorf("cifar10: %s: the array has shape %v; want (n, %d, %d, %d) images (height, width, channel)", path, h.Shape, Height, Width, Channels)
	}
	n, d := h.Shape[0], Height*Width*Channels
	if n == 0 {
		return nil, fmt.Errorf("cifar10: %s holds no images", path)
	}
	x := make([]float64, n*d)
	for i, b := range h.Data {
		x[i] = float64(b) / 255
	}
	return &Set{X: x, N: n, D: d, H: Height, W: Width, C: Channels}, nil
}

// LoadLabels reads an array of shape (n,), uint8, of classes 0..9.
func LoadLabels(path string) ([]int, error) {
	h, err := readNPY(path)
	if err != nil {
		return nil, err
	}
	if len(h.Shape) != 1 {
		return nil, fmt.Errorf("cifar10: %s: the array has shape %v; want (n,) labels", path, h.Shape)
	}
	y := make([]int, len(h.Data))
	for i, b := range h.Data {
		if b >= NumClasses {
			return nil, fmt.Errorf("cifar10: %s: label %d of image %d is not a class 0..9", path, b, i)
		}
		y[i] = int(b)
	}
	return y, nil
}

// readNPY reads a gzip-compressed or plain NPY file of uint8 in C order.
func readNPY(path string) (*dataset.NPYHeader, error) {
	f, err := atomicfile.OpenRegular(path)
	if err != nil {
		return nil, fmt.Errorf("cifar10: %w", err)
	}
	defer f.Close()
	b, err := readAllLimited(f, path)
	if err != nil {
		return nil, err
	}
	h, err := dataset.DecodeNPYRaw(b, path)
	if err != nil {
		return nil, fmt.Errorf("cifar10: %w", err)
	}
	if h.Descr != "|u1" && h.Descr != "u1" && h.Descr != "<u1" {
		return nil, fmt.Errorf("cifar10: %s: dtype %q; want uint8 (|u1)", path, h.Descr)
	}
	if h.Fortran && len(h.Shape) > 1 {
		return nil, fmt.Errorf("cifar10: %s: the array is in Fortran order; want C order", path)
	}
	return h, nil
}

// readAllLimited returns the file's bytes, decompressed if it starts with
// the gzip magic, refusing more than MaxBytes.
func readAllLimited(f io.Reader, path string) ([]byte, error) {
	head := make([]byte, 2)
	k, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, fmt.Errorf("cifar10: %s: %w", path, err)
	}
	r := io.MultiReader(bytes.NewReader(head[:k]), f)
	if k == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("cifar10: %s: not a valid gzip file: %w", path, err)
		}
		r = zr
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cifar10: %s: %w", path, err)
	}
	if len(b) > MaxBytes {
		return nil, fmt.Errorf("cifar10: %s decompresses to more than %d bytes", path, MaxBytes)
	}
	return b, nil
}

// Save writes train and test into dir in Load's format (gzip-compressed
// uint8 NPY files, pixels k/255 stored as k), each file written atomically:
// for subsets and for tests. A set whose sizes disagree, a label outside
// 0..9 or a pixel outside [0, 1] is refused before anything is written.
func Save(ctx context.Context, dir string, train, test *Set) error {
	files := map[string][]byte{}
	for _, s := range []struct {
		set          *Set
		images, labs string
	}{{train, TrainImagesFile, TrainLabelsFile}, {test, TestImagesFile, TestLabelsFile}} {
		x, y := s.set.X, s.set.Y
		if s.set.N != len(y) || len(x) != s.set.N*Height*Width*Channels {
			return fmt.Errorf("cifar10: save %s: %d labels and %d values for %d images of %d×%d×%d", s.images, len(y), len(x), s.set.N, Height, Width, Channels)
		}
		px := make([]byte, len(x))
		for i, v := range x {
			if !(v >= 0 && v <= 1) {
				return fmt.Errorf("cifar10: save %s: value %v of image %d is outside [0, 1]", s.images, v, i/(Height*Width*Channels))
			}
			px[i] = byte(math.Round(v * 255))
		}
		lb := make([]byte, len(y))
		for i, c := range y {
			if c < 0 || c >= NumClasses {
				return fmt.Errorf("cifar10: save %s: label %d of image %d is not a class 0..9", s.labs, c, i)
			}
			lb[i] = byte(c)
		}
		files[s.images] = npyBytes(fmt.Sprintf("(%d, %d, %d, %d)", s.set.N, Height, Width, Channels), px)
		files[s.labs] = npyBytes(fmt.Sprintf("(%d,)", s.set.N), lb)
	}
	for _, name := range []string{TrainImagesFile, TrainLabelsFile, TestImagesFile, TestLabelsFile} {
		err := atomicfile.Write(ctx, filepath.Join(dir, name), func(w io.Writer) error {
			zw := gzip.NewWriter(w)
			if _, err := zw.Write(files[name]); err != nil {
				return err
			}
			return zw.Close()
		})
		if err != nil {
			return fmt.Errorf("cifar10: %w", err)
		}
	}
	return nil
}

// npyBytes is an NPY 1.0 file of uint8 data with the given shape literal.
func npyBytes(shape string, data []byte) []byte {
	h := fmt.Sprintf("{'descr': '|u1', 'fortran_order': False, 'shape': %s, }", shape)
	// Pad with spaces and a newline so that the data starts at a multiple
	// of 64 bytes, as NumPy writes it.
	pad := 64 - (10+len(h)+1)%64
	if pad == 64 {
		pad = 0
	}
	h += string(bytes.Repeat([]byte{' '}, pad)) + "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(h)), byte(len(h)>>8))
	out = append(out, h...)
	return append(out, data...)
}
