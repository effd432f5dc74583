// Package dataset turns user tables into typed columns and typed columns into
// the float64 design matrix that the RFM engine trains on.
//
// It has three layers:
//
//   - Readers (ReadFile, Read) parse delimited text (CSV/TSV), Parquet, NPY/NPZ
//     and LIBSVM files, optionally gzip-compressed, into a *Table of Numeric and
//     Categorical columns with explicit missing cells. Errors are *ParseError
//     values that name the file, line (or row) and column. ReadFileContext and
//     ReadContext give way to a context (also while a pipe or FIFO waits for
//     data); every reader is bounded: MaxLineBytes per line, MaxColumns
//     columns, and the input plus its cells within ReadOptions.MemoryBudget.
//   - A Pipeline, fitted on training rows only, imputes, standardizes and
//     one-hot encodes the input columns. It is plain data with exported fields
//     so it can be stored (as JSON) inside a model file, and it turns raw rows
//     read at prediction time into the same feature layout.
//   - A Target encodes the output column: class indices for classification,
//     standardized values for regression, and maps predictions back.
//
// The package knows nothing about kernels, solvers or RFM, and it does not
// split data into training and validation rows (Table.SelectRows is the
// building block for that). It holds whole tables in memory.
package dataset
