// Package testutil holds the small helpers that the tests of several
// packages share (random data, directory listings), so that each is
// written once.
package testutil

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Randn returns n standard normal draws from r.
func Randn(r *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// RandFit is a random kernel machine: n centres in d inputs and their n×c
// coefficients, standard normal, drawn in that order from a PCG source
// seeded (s1, s2), which it returns for the test's further draws.
func RandFit(s1, s2 uint64, n, d, c int) (r *rand.Rand, x, alpha []float64) {
	r = rand.New(rand.NewPCG(s1, s2))
	x = Randn(r, n*d)
	return r, x, Randn(r, n*c)
}

// RandPSD is a random symmetric positive semi-definite d×d matrix, BBᵀ/d
// with B standard normal (d·d draws from r).
func RandPSD(r *rand.Rand, d int) []float64 {
	b := Randn(r, d*d)
	m := make([]float64, d*d)
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				m[i*d+j] += b[i*d+k] * b[j*d+k] / float64(d)
			}
		}
	}
	return m
}

// CSV is a rows×cols table with the header c0, c1, …, last: cell gives
// row i's value in column j, the last column's at j = cols.
func CSV(rows, cols int, last string, cell func(i, j int) string) []byte {
	var b bytes.Buffer
	for j := 0; j < cols; j++ {
		fmt.Fprintf(&b, "c%d,", j)
	}
	b.WriteString(last + "\n")
	for i := 0; i < rows; i++ {
		for j := 0; j <= cols; j++ {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(cell(i, j))
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// WriteFile writes text to the file name in dir and returns its path,
// failing the test if it cannot.
func WriteFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// DirNames lists the names in dir (sorted, as os.ReadDir gives them),
// failing the test if it cannot be read.
func DirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// Predictor is what MustPredict calls: any model with the package's
// Predict signature (n rows of x in, n·outputs values out).
type Predictor interface {
	Predict(ctx context.Context, x []float64, n int) ([]float64, error)
}

// MustPredict returns p's outputs for the n rows of x, failing the test
// on an error.
func MustPredict(t testing.TB, p Predictor, x []float64, n int) []float64 {
	t.Helper()
	return MustOutputs(t, p.Predict, x, n)
}

// MustOutputs is MustPredict for any method of Predict's signature
// (PredictProba, UncalibratedProba, ...).
func MustOutputs(t testing.TB, f func(context.Context, []float64, int) ([]float64, error), x []float64, n int) []float64 {
	t.Helper()
	out, err := f(context.Background(), x, n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// NormalRows returns n×d standard normal draws from the PCG source
// (seed, stream), row-major: the random inputs of many tests.
func NormalRows(n, d int, seed, stream uint64) []float64 {
	return Randn(rand.New(rand.NewPCG(seed, stream)), n*d)
}

// Parallel runs f(0), …, f(k−1) at once, in k goroutines, waits for all,
// then reports every error they returned as a test error.
func Parallel(t testing.TB, k int, f func(g int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for g := 0; g < k; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			if err := f(g); err != nil {
				errs <- err
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// WriteGzip writes data gzipped to path, creating its folder.
func WriteGzip(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	if _, err := z.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
