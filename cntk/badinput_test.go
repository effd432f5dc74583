package cntk

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestBadInput(t *testing.T) {
	ctx := context.Background()
	a := Arch{S: 2}
	img := &Image{H: 16, W: 16, C: 1, Pix: make([]float64, 256)}
	all := func(v bool) []bool {
		m := make([]bool, 256)
		for i := range m {
			m[i] = v
		}
		return m
	}
	half := all(true)
	for i := 0; i < 256; i += 2 {
		half[i] = false
	}
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"mask of the wrong size", func() error {
			_, _, err := InpaintImage(ctx, a, Prior{}, img, make([]bool, 100), Options{})
			return err
		}, "mask of 100 pixels for a 16×16 image"},
		{"nothing observed", func() error {
			_, _, err := InpaintImage(ctx, a, Prior{}, img, all(false), Options{})
			return err
		}, "observes no pixel"},
		{"everything observed", func() error {
			_, _, err := InpaintImage(ctx, a, Prior{}, img, all(true), Options{})
			return err
		}, "observes every pixel"},
		{"size the architecture does not admit", func() error {
			_, err := Expand(ctx, Arch{S: 3}, Prior{}, 12, 16)
			return err
		}, "multiples of 8 and at least 16"},
		{"meshgrid has no expansion", func() error {
			_, err := Expand(ctx, a, Prior{Kind: PriorMeshgrid}, 16, 16)
			return err
		}, "not stationary"},
		{"direct kernel too large", func() error {
			_, err := Direct(ctx, a, Prior{}, 128, 128)
			return err
		}, "at most 4096 pixels"},
		{"NaN in an observed pixel", func() error {
			bad := &Image{H: 16, W: 16, C: 1, Pix: make([]float64, 256)}
			bad.Pix[5] = nan()
			_, _, err := InpaintImage(ctx, a, Prior{}, bad, half, Options{})
			return err
		}, "observed pixel (5, 0) channel 0 is NaN"},
		{"bad PNG", func() error {
			_, err := ReadPNG(bytes.NewReader([]byte("\x89PNG\r\n\x1a\nnot really")))
			return err
		}, "not a readable PNG"},
		{"even filter", func() error { return Arch{S: 1, Filter: 4}.Validate() }, "odd"},
		{"too many samplings", func() error { return Arch{S: 9}.Validate() }, "want 0..6"},
		{"rate out of range", func() error { _, err := RandomMask(8, 8, 1.5, 1); return err }, "missing rate 1.5"},
		{"holes larger than the image", func() error { _, err := HolesMask(8, 8, 1, 20, 1); return err }, "holes of 20 px"},
		{"negative ridge", func() error {
			_, _, err := InpaintImage(ctx, a, Prior{}, img, half, Options{Ridge: -1})
			return err
		}, "ridge -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func nan() float64 { return math.NaN() }

// A smooth image with random missing pixels is recovered well, by both the
// exact and the CG solve, and they agree; padding an odd size works.
func TestInpaintSmoothImage(t *testing.T) {
	ctx := context.Background()
	h, w := 30, 37 // padded to 32×40 for s = 2
	img := &Image{H: h, W: w, C: 2, Pix: make([]float64, h*w*2)}
	for i := range h {
		for j := range w {
			x, y := float64(i)/float64(h), float64(j)/float64(w)
			img.Pix[(i*w+j)*2] = 0.5 + 0.3*math.Sin(3*x+2*y)
			img.Pix[(i*w+j)*2+1] = 0.4 + 0.2*x*y
		}
	}
	obs, err := RandomMask(h, w, 0.5, 3)
	if err != nil {
		t.Fatal(err)
	}
	a := Arch{S: 2}
	exact, rep, err := InpaintImage(ctx, a, Prior{}, img, obs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Exact || rep.PadH != 32 || rep.PadW != 40 {
		t.Fatalf("report %+v: want an exact solve on a 40×32 grid", rep)
	}
	cg, rep2, err := InpaintImage(ctx, a, Prior{}, img, obs, Options{ExactMax: 1, Tol: 1e-9, MaxIter: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Exact || !rep2.Converged {
		t.Fatalf("report %+v: want a converged CG solve", rep2)
	}
	se, seMean, n := 0.0, 0.0, 0
	for p, o := range obs {
		for ch := range 2 {
			v := img.Pix[p*2+ch]
			if o {
				if exact.Pix[p*2+ch] != v {
					t.Fatalf("observed pixel %d changed", p)
				}
				continue
			}
			d := exact.Pix[p*2+ch] - v
			se += d * d
			seMean += (v - 0.5) * (v - 0.5)
			n++
			if dd := exact.Pix[p*2+ch] - cg.Pix[p*2+ch]; dd*dd > 1e-8 {
				t.Fatalf("pixel %d: exact %g, CG %g", p, exact.Pix[p*2+ch], cg.Pix[p*2+ch])
			}
		}
	}
	if se > 0.05*seMean {
		t.Errorf("squared error %g on the missing pixels: not much better than a constant (%g)", se, seMean)
	}
}

// A cancelled context stops the kernel and the solve with its error.
func TestCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	img := &Image{H: 32, W: 32, C: 1, Pix: make([]float64, 1024)}
	obs, err := RandomMask(32, 32, 0.5, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := InpaintImage(ctx, Arch{S: 2}, Prior{}, img, obs, Options{ExactMax: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	k, err := Expand(context.Background(), Arch{S: 2}, Prior{}, 32, 32)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Inpaint(ctx, k, img.Pix, 1, obs, Options{ExactMax: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("CG: error %v, want context.Canceled", err)
	}
	if _, _, err := Inpaint(ctx, k, img.Pix, 1, obs, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Cholesky: error %v, want context.Canceled", err)
	}
}
