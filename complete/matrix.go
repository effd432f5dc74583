package complete

import (
	"fmt"
	"math"
)

// Matrix is an m×n matrix with missing cells: Values is row-major and
// Observed marks the cells that hold data (Values is ignored elsewhere).
// RowIDs and ColIDs name the rows and columns for messages and output;
// they may be nil (then rows and columns are named by their 1-based index).
type Matrix struct {
	Rows, Cols int
	Values     []float64
	Observed   []bool
	RowIDs     []string
	ColIDs     []string
	// RowLabel names the row ids (the header of their column in a file).
	RowLabel string
}

// NewMatrix returns an m×n matrix with every cell missing.
func NewMatrix(m, n int) *Matrix {
	return &Matrix{Rows: m, Cols: n, Values: make([]float64, m*n), Observed: make([]bool, m*n)}
}

// RowName is the id of row i (or "row i+1").
func (y *Matrix) RowName(i int) string {
	if i < len(y.RowIDs) && y.RowIDs[i] != "" {
		return fmt.Sprintf("row %q", y.RowIDs[i])
	}
	return fmt.Sprintf("row %d", i+1)
}

// ColName is the id of column j (or "column j+1").
func (y *Matrix) ColName(j int) string {
	if j < len(y.ColIDs) && y.ColIDs[j] != "" {
		return fmt.Sprintf("column %q", y.ColIDs[j])
	}
	return fmt.Sprintf("column %d", j+1)
}

// Count returns the number of observed cells.
func (y *Matrix) Count() int {
	c := 0
	for _, o := range y.Observed {
		if o {
			c++
		}
	}
	return c
}

// Clone returns a deep copy.
func (y *Matrix) Clone() *Matrix {
	c := *y
	c.Values = append([]float64(nil), y.Values...)
	c.Observed = append([]bool(nil), y.Observed...)
	return &c
}

// Transpose returns the n×m transpose (ids swapped).
func (y *Matrix) Transpose() *Matrix {
	t := NewMatrix(y.Cols, y.Rows)
	for i := 0; i < y.Rows; i++ {
		for j := 0; j < y.Cols; j++ {
			t.Values[j*y.Rows+i] = y.Values[i*y.Cols+j]
			t.Observed[j*y.Rows+i] = y.Observed[i*y.Cols+j]
		}
	}
	t.RowIDs, t.ColIDs = y.ColIDs, y.RowIDs
	t.RowLabel = "column"
	return t
}

// Validate checks the shape and that every observed cell is finite.
func (y *Matrix) Validate() error {
	if y.Rows < 1 || y.Cols < 1 {
		return fmt.Errorf("matrix is %d×%d: it needs at least one row and one column", y.Rows, y.Cols)
	}
	if len(y.Values) != y.Rows*y.Cols || len(y.Observed) != y.Rows*y.Cols {
		return fmt.Errorf("matrix is %d×%d but holds %d values and %d flags", y.Rows, y.Cols, len(y.Values), len(y.Observed))
	}
	if y.RowIDs != nil && len(y.RowIDs) != y.Rows {
		return fmt.Errorf("matrix has %d rows but %d row ids", y.Rows, len(y.RowIDs))
	}
	if y.ColIDs != nil && len(y.ColIDs) != y.Cols {
		return fmt.Errorf("matrix has %d columns but %d column ids", y.Cols, len(y.ColIDs))
	}
	for k, o := range y.Observed {
		if o {
			if v := y.Values[k]; math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("%s, %s: observed value %v is not a finite number", y.RowName(k/y.Cols), y.ColName(k%y.Cols), v)
			}
		}
	}
	return nil
}
