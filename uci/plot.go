package uci

import (
	"fmt"

	"github.com/rfmkit/rfm/plot"
)

// writePlot draws the per-data-set test error of RFM against that of the
// Laplace kernel: one point per data set, the y = x diagonal (points below
// it are data sets where RFM is better) and the names of the data sets
// furthest from it.
func writePlot(path string, rep *Report) error {
	var lap, rfmErr []float64
	var names []string
	for _, r := range rep.Results {
		if r.Status != StatusOK {
			continue
		}
		lap = append(lap, 100-r.LaplaceAccuracy)
		rfmErr = append(rfmErr, 100-r.TestAccuracy)
		names = append(names, r.Name)
	}
	title := fmt.Sprintf("UCI (%s protocol, %d data sets): test error per data set", rep.Protocol, len(lap))
	return plot.Scatter(path, lap, rfmErr, names, "Laplace kernel test error (%)", "RFM test error (%)", title, true)
}
