package nn

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseWidths reads comma-separated positive hidden layer widths, such as
// "256,256".
func ParseWidths(s string) ([]int, error) {
	var widths []int
	for _, f := range strings.Split(s, ",") {
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w < 1 {
			return nil, fmt.Errorf("nn: widths %q: want positive widths such as 256,256", s)
		}
		widths = append(widths, w)
	}
	return widths, nil
}

// ParseInitScale reads Config.InitScale: comma-separated positive factors
// of the layers' initial standard deviations, first layer first, or one
// factor for all hidden+1 layers.
func ParseInitScale(s string, hidden int) ([]float64, error) {
	var scales []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("nn: init scale %q: want positive numbers such as 1 or 0.1,1,1", s)
		}
		scales = append(scales, v)
	}
	if len(scales) == 1 {
		for range hidden {
			scales = append(scales, scales[0])
		}
	}
	return scales, nil
}
