package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/science/figures"
)

// imageDims is the --image-shape of pixel inputs.
type imageDims = plot.ImageShape

func parseImageShape(s string) (*imageDims, error) {
	parts := strings.Split(strings.ToLower(s), "x")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, usagef("--image-shape %q: want HxW or HxWxC, e.g. 28x28", s)
	}
	dims := make([]int, 3)
	dims[2] = 1
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return nil, usagef("--image-shape %q: %q is not a positive whole number", s, p)
		}
		dims[i] = v
	}
	if c := dims[2]; c != 1 && c != 3 {
		return nil, usagef("--image-shape %q: %d channels; images have 1 (grey) or 3 (RGB)", s, c)
	}
	return &imageDims{H: dims[0], W: dims[1], C: dims[2]}, nil
}

// writeFigures draws what the model learned into dir and returns the files.
func writeFigures(dir string, lm *loadedModel, names []string, top int, shape *imageDims) ([]string, error) {
	// Check everything that can fail on the arguments before the first file
	// is written, so that a bad call leaves no partial set of figures.
	if shape != nil {
		if px := shape.Pixels(); px != rfmModel(lm).D {
			return nil, usagef("--image-shape %dx%dx%d has %d pixels but the model has %d features", shape.H, shape.W, shape.C, px, rfmModel(lm).D)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--plots %s: %w", dir, err)
	}
	return figures.Model(dir, rfmModel(lm), lm.Name, names, top, shape)
}
