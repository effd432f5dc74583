package memory

import (
	"gonum.org/v1/gonum/mat"
)

func invert(q []float64, d int) ([]float64, error) {
	var inv mat.Dense
	if err := inv.Inverse(mat.NewDense(d, d, append([]float64(nil), q...))); err != nil {
		return nil, err
	}
	return inv.RawMatrix().Data, nil
}

func mul(a, b []float64, d int) []float64 {
	var c mat.Dense
	c.Mul(mat.NewDense(d, d, a), mat.NewDense(d, d, b))
	return c.RawMatrix().Data
}
