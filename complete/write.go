package complete

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// WriteCSV writes the matrix as CSV: a header of the column ids (after
// the name of the row id column, y.RowLabel or "row", when the rows have
// ids) and one
// line per row; unobserved cells are empty. Ids that need it are quoted.
func WriteCSV(w io.Writer, y *Matrix) error {
	rowHeader := y.RowLabel
	if rowHeader == "" {
		rowHeader = "row"
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var line []byte
	ids := y.RowIDs != nil
	if ids {
		line = appendField(line, rowHeader)
	}
	for j := 0; j < y.Cols; j++ {
		if ids || j > 0 {
			line = append(line, ',')
		}
		name := "c" + strconv.Itoa(j)
		if y.ColIDs != nil {
			name = y.ColIDs[j]
		}
		line = appendField(line, name)
	}
	line = append(line, '\n')
	if _, err := bw.Write(line); err != nil {
		return err
	}
	for i := 0; i < y.Rows; i++ {
		line = line[:0]
		if ids {
			line = appendField(line, y.RowIDs[i])
		}
		for j := 0; j < y.Cols; j++ {
			if ids || j > 0 {
				line = append(line, ',')
			}
			if y.Observed[i*y.Cols+j] {
				line = strconv.AppendFloat(line, y.Values[i*y.Cols+j], 'g', -1, 64)
			}
		}
		line = append(line, '\n')
		if _, err := bw.Write(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

func appendField(b []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\n\r") && strings.TrimSpace(s) == s {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}
