package cntk

import (
	"fmt"
	"math"
)

// PSNR is the peak signal-to-noise ratio in dB of res against orig over
// the whole image (all channels, data range 1, res clipped to [0, 1]);
// +Inf when they are equal.
func PSNR(orig, res *Image) (float64, error) {
	if err := sameShape(orig, res); err != nil {
		return 0, err
	}
	se := 0.0
	for i, v := range orig.Pix {
		d := min(1, max(0, res.Pix[i])) - v
		se += d * d
	}
	if se == 0 {
		return math.Inf(1), nil
	}
	return 10 * math.Log10(float64(len(orig.Pix))/se), nil
}

// SSIM is the mean structural similarity of res against orig with the
// defaults of scikit-image's structural_similarity for data range 1: 7×7
// uniform windows, K1 = 0.01, K2 = 0.03, sample (co)variances, the mean
// over the windows that lie inside the image, averaged over the channels.
// (Those windows never touch the border, so no padding rule matters.)
func SSIM(orig, res *Image) (float64, error) {
	if err := sameShape(orig, res); err != nil {
		return 0, err
	}
	const win, pad = 7, 3
	if orig.H < win || orig.W < win {
		return 0, fmt.Errorf("cntk: SSIM of a %d×%d image: want sides ≥ %d", orig.W, orig.H, win)
	}
	const c1, c2 = 0.01 * 0.01, 0.03 * 0.03
	const np = win * win
	cov := float64(np) / float64(np-1)
	c := orig.C
	total := 0.0
	for ch := range c {
		sum, n := 0.0, 0
		for i := pad; i < orig.H-pad; i++ {
			for j := pad; j < orig.W-pad; j++ {
				var sx, sy, sxx, syy, sxy float64
				for a := i - pad; a <= i+pad; a++ {
					for b := j - pad; b <= j+pad; b++ {
						x := orig.Pix[(a*orig.W+b)*c+ch]
						y := min(1, max(0, res.Pix[(a*orig.W+b)*c+ch]))
						sx += x
						sy += y
						sxx += x * x
						syy += y * y
						sxy += x * y
					}
				}
				ux, uy := sx/np, sy/np
				vx := cov * (sxx/np - ux*ux)
				vy := cov * (syy/np - uy*uy)
				vxy := cov * (sxy/np - ux*uy)
				sum += (2*ux*uy + c1) * (2*vxy + c2) / ((ux*ux + uy*uy + c1) * (vx + vy + c2))
				n++
			}
		}
		total += sum / float64(n)
	}
	return total / float64(c), nil
}

func sameShape(a, b *Image) error {
	if a.H != b.H || a.W != b.W || a.C != b.C {
		return fmt.Errorf("cntk: a %d×%d×%d image against a %d×%d×%d one", a.W, a.H, a.C, b.W, b.H, b.C)
	}
	return nil
}
