package plot_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rfmkit/rfm/plot"
)

// The figures of `rfm inspect` for a model on tabular data: diag(M) as
// bars and the spectrum of M.
func ExampleFeatureBars() {
	dir, err := os.MkdirTemp("", "rfm-plot-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	names := []string{"age", "income", "hours", "zip"}
	diagM := []float64{0.8, 2.4, 0.3, 0.01}
	if err := plot.FeatureBars(filepath.Join(dir, "diag.png"), names, diagM, 10, "", "diag(M)"); err != nil {
		fmt.Println(err)
		return
	}
	eigenvalues := []float64{2.9, 0.5, 0.1, 1e-17}
	if err := plot.Spectrum(filepath.Join(dir, "spectrum.png"), eigenvalues, "Spectrum of M"); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("wrote diag.png and spectrum.png")

	// Bad input is an error, not a panic.
	err = plot.FeatureBars(filepath.Join(dir, "bad.png"), names, diagM[:3], 10, "", "")
	fmt.Println(err != nil)
	// Output:
	// wrote diag.png and spectrum.png
	// true
}
