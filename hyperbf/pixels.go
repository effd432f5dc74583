package hyperbf

import (
	"fmt"
	"math"
	"slices"

	"github.com/rfmkit/rfm"
)

// The pixel scalings of ScalePixels.
const (
	PixelsUnit     = "unit"     // as loaded: [0, 1]
	PixelsL2       = "l2"       // each image divided by its Euclidean norm
	PixelsCenter   = "center"   // the training rows' mean image subtracted
	PixelsStandard = "standard" // each pixel centred and divided by its training standard deviation (constant pixels: centred only)
)

// PixelScalings lists the scalings ScalePixels knows.
var PixelScalings = []string{PixelsUnit, PixelsL2, PixelsCenter, PixelsStandard}

// ScalePixels rescales the rows of train and of each other set in place,
// with statistics of the training rows only (center, standard).
func ScalePixels(mode string, train *rfm.Dataset, others ...*rfm.Dataset) error {
	if !slices.Contains(PixelScalings, mode) {
		return fmt.Errorf("hyperbf: pixel scaling %q: want one of %v", mode, PixelScalings)
	}
	sets := append([]*rfm.Dataset{train}, others...)
	for _, s := range sets[1:] {
		if s.D != train.D {
			return fmt.Errorf("hyperbf: a set has %d columns, the training set %d", s.D, train.D)
		}
	}
	d := train.D
	switch mode {
	case PixelsL2:
		for _, s := range sets {
			for i := 0; i < s.N; i++ {
				row := s.X[i*d : (i+1)*d]
				norm := math.Sqrt(dot(row, row))
				if norm > 0 {
					for j := range row {
						row[j] /= norm
					}
				}
			}
		}
	case PixelsCenter, PixelsStandard:
		mean, sd := make([]float64, d), make([]float64, d)
		for i := 0; i < train.N; i++ {
			for j, v := range train.X[i*d : (i+1)*d] {
				mean[j] += v / float64(train.N)
			}
		}
		for i := 0; i < train.N; i++ {
			for j, v := range train.X[i*d : (i+1)*d] {
				sd[j] += (v - mean[j]) * (v - mean[j]) / float64(train.N)
			}
		}
		for j := range sd {
			sd[j] = math.Sqrt(sd[j])
			if mode == PixelsCenter || sd[j] < 1e-12 {
				sd[j] = 1
			}
		}
		for _, s := range sets {
			for i := 0; i < s.N; i++ {
				for j := 0; j < d; j++ {
					s.X[i*d+j] = (s.X[i*d+j] - mean[j]) / sd[j]
				}
			}
		}
	}
	return nil
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i, v := range a {
		s += v * b[i]
	}
	return s
}
