package main

import (
	"fmt"
	"os"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/plot"
	"github.com/rfmkit/rfm/science/figures"
)

// imageDims is the --image-shape of pixel inputs.
type imageDims = plot.ImageShape

var parseImageShape = cli.ParseImageShape

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
