package synth

import (
	"bufio"
	"io"
	"strconv"
)

// WriteCSV writes the rows as CSV: a header x0 ... x{d-1},y, then one line
// a row, numbers in the shortest form that reads back exactly.
func WriteCSV(w io.Writer, s *Data) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	for j := 0; j < s.D; j++ {
		line = append(line, 'x')
		line = strconv.AppendInt(line, int64(j), 10)
		line = append(line, ',')
	}
	line = append(line, "y\n"...)
	if _, err := bw.Write(line); err != nil {
		return err
	}
	for i := 0; i < s.N; i++ {
		line = line[:0]
		for _, v := range s.X[i*s.D : (i+1)*s.D] {
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
			line = append(line, ',')
		}
		line = strconv.AppendFloat(line, s.Y[i], 'g', -1, 64)
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteMatrixCSV writes a d×d row-major matrix (an EGOP) as CSV without a
// header, numbers in the shortest form that reads back exactly.
func WriteMatrixCSV(w io.Writer, m []float64, d int) error {
	bw := bufio.NewWriter(w)
	var line []byte
	for i := 0; i < d; i++ {
		line = line[:0]
		for j, v := range m[i*d : (i+1)*d] {
			if j > 0 {
				line = append(line, ',')
			}
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}
