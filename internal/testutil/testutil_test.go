package testutil

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
)

func TestRandn(t *testing.T) {
	a := Randn(rand.New(rand.NewPCG(1, 2)), 2000)
	b := Randn(rand.New(rand.NewPCG(1, 2)), 2000)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different draws")
	}
	mean, sq := 0.0, 0.0
	for _, v := range a {
		mean += v
		sq += v * v
	}
	mean /= 2000
	sd := math.Sqrt(sq/2000 - mean*mean)
	// 2000 draws: the mean's standard error is 0.022, the sd's 0.016.
	if math.Abs(mean) > 0.1 || math.Abs(sd-1) > 0.1 {
		t.Errorf("mean %.3f, sd %.3f: not standard normal", mean, sd)
	}
}

// RandFit draws the centres, then the coefficients, from the seeded
// source it returns, which goes on where they stopped.
func TestRandFit(t *testing.T) {
	r, x, alpha := RandFit(3, 4, 5, 2, 3)
	ref := rand.New(rand.NewPCG(3, 4))
	if !slices.Equal(x, Randn(ref, 10)) || !slices.Equal(alpha, Randn(ref, 15)) {
		t.Error("centres or coefficients differ from Randn's draws in order")
	}
	if r.Uint64() != ref.Uint64() {
		t.Error("the returned source is not where the draws stopped")
	}
}

// WriteFile writes the text where the path it returns says.
func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := WriteFile(t, dir, "a.csv", "x,y\n1,2\n")
	if b, err := os.ReadFile(filepath.Join(dir, "a.csv")); p != filepath.Join(dir, "a.csv") || err != nil || string(b) != "x,y\n1,2\n" {
		t.Errorf("path %q, text %q, %v", p, b, err)
	}
}

func TestDirNames(t *testing.T) {
	dir := t.TempDir()
	if got := DirNames(t, dir); len(got) != 0 {
		t.Errorf("empty dir: %v", got)
	}
	for _, n := range []string{"b", "a"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if got := DirNames(t, dir); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("got %v, want [a b]", got)
	}
}

func TestRandPSD(t *testing.T) {
	d := 4
	m := RandPSD(rand.New(rand.NewPCG(3, 4)), d)
	for i := 0; i < d; i++ {
		if m[i*d+i] <= 0 {
			t.Errorf("diagonal %d = %v, want > 0", i, m[i*d+i])
		}
		for j := 0; j < d; j++ {
			if m[i*d+j] != m[j*d+i] {
				t.Errorf("(%d,%d) = %v but (%d,%d) = %v", i, j, m[i*d+j], j, i, m[j*d+i])
			}
		}
	}
	// vᵀMv = ‖Bᵀv‖²/d ≥ 0 for any v; try a few.
	r := rand.New(rand.NewPCG(5, 6))
	for range 20 {
		v := Randn(r, d)
		q := 0.0
		for i := 0; i < d; i++ {
			for j := 0; j < d; j++ {
				q += v[i] * m[i*d+j] * v[j]
			}
		}
		if q < -1e-12 {
			t.Fatalf("vᵀMv = %v < 0", q)
		}
	}
}

func TestCSV(t *testing.T) {
	got := string(CSV(2, 3, "y", func(i, j int) string { return fmt.Sprint(10*i + j) }))
	want := "c0,c1,c2,y\n0,1,2,3\n10,11,12,13\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// NormalRows is Randn on a fresh PCG(seed, stream): the same draws, and a
// different stream gives different ones.
func TestNormalRows(t *testing.T) {
	got := NormalRows(3, 4, 7, 5)
	want := Randn(rand.New(rand.NewPCG(7, 5)), 12)
	if !slices.Equal(got, want) {
		t.Fatalf("NormalRows(3, 4, 7, 5) = %v, want %v", got, want)
	}
	if slices.Equal(got, NormalRows(3, 4, 7, 1)) {
		t.Fatal("streams 5 and 1 gave the same draws")
	}
}

type fakePredictor struct{ err error }

func (f fakePredictor) Predict(_ context.Context, x []float64, n int) ([]float64, error) {
	return []float64{float64(n), x[0]}, f.err
}

// MustPredict hands back the predictor's outputs.
func TestMustPredict(t *testing.T) {
	got := MustPredict(t, fakePredictor{}, []float64{2.5}, 1)
	if !slices.Equal(got, []float64{1, 2.5}) {
		t.Fatalf("MustPredict = %v, want [1 2.5]", got)
	}
	got = MustOutputs(t, func(_ context.Context, x []float64, n int) ([]float64, error) { return []float64{x[0] * 2}, nil }, []float64{3}, 1)
	if !slices.Equal(got, []float64{6}) {
		t.Fatalf("MustOutputs = %v, want [6]", got)
	}
}

// errorRecorder is a testing.TB that keeps what Error is given.
type errorRecorder struct {
	testing.TB
	errs []string
}

func (r *errorRecorder) Helper()           {}
func (r *errorRecorder) Error(args ...any) { r.errs = append(r.errs, fmt.Sprint(args...)) }

// Parallel runs every f(g) and reports each error once, after all ran.
func TestParallel(t *testing.T) {
	var ran [6]atomic.Bool
	r := &errorRecorder{TB: t}
	Parallel(r, 6, func(g int) error {
		ran[g].Store(true)
		if g%3 == 1 {
			return fmt.Errorf("goroutine %d", g)
		}
		return nil
	})
	for g := range ran {
		if !ran[g].Load() {
			t.Errorf("f(%d) did not run", g)
		}
	}
	slices.Sort(r.errs)
	if want := []string{"goroutine 1", "goroutine 4"}; !slices.Equal(r.errs, want) {
		t.Errorf("errors %q, want %q", r.errs, want)
	}
}
