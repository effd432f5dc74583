package cntk

import (
	"math"
	"testing"
)

// TestSSIMAndPSNR checks the metrics on images whose values are known in
// closed form: equal images, and two constant images (zero variances, so
// SSIM = (2·x·y + C1)/(x² + y² + C1)).
func TestSSIMAndPSNR(t *testing.T) {
	const n = 10
	x := &Image{H: n, W: n, C: 3, Pix: make([]float64, n*n*3)}
	y := &Image{H: n, W: n, C: 3, Pix: make([]float64, n*n*3)}
	for i := range x.Pix {
		x.Pix[i], y.Pix[i] = 0.5, 0.6
	}
	s, err := SSIM(x, y)
	if err != nil {
		t.Fatal(err)
	}
	const c1 = 1e-4
	if want := (2*0.5*0.6 + c1) / (0.25 + 0.36 + c1); math.Abs(s-want) > 1e-12 {
		t.Errorf("SSIM of constants = %v, want %v", s, want)
	}
	if s, _ := SSIM(x, x); math.Abs(s-1) > 1e-12 {
		t.Errorf("SSIM(x, x) = %v", s)
	}
	p, err := PSNR(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if want := 10 * math.Log10(1/0.01); math.Abs(p-want) > 1e-9 {
		t.Errorf("PSNR = %v, want %v", p, want)
	}
	if p, _ := PSNR(x, x); !math.IsInf(p, 1) {
		t.Errorf("PSNR(x, x) = %v", p)
	}
	if _, err := SSIM(x, &Image{H: n, W: n, C: 1, Pix: make([]float64, n*n)}); err == nil {
		t.Error("shapes differ: no error")
	}
	if _, err := SSIM(&Image{H: 5, W: 5, C: 1, Pix: make([]float64, 25)}, &Image{H: 5, W: 5, C: 1, Pix: make([]float64, 25)}); err == nil {
		t.Error("a 5×5 image has no 7×7 window: no error")
	}
}
