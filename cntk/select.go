package cntk

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Candidate is one setting tried by Select.
type Candidate struct {
	S      int     // down/upsamplings
	Filter int     // filter side
	Ridge  float64 // relative ridge (Options.Ridge)
}

func (c Candidate) String() string {
	return fmt.Sprintf("s=%d filter=%d ridge=%g", c.S, c.Filter, c.Ridge)
}

// Score is a candidate's PSNR in dB on the held-out observed pixels.
type Score struct {
	Candidate
	PSNR float64
}

// SelectOptions tunes Select.
type SelectOptions struct {
	// Holdout is the share of the observed pixels of each crop hidden and
	// predicted (default 0.1).
	Holdout float64
	// HoleSize, if positive, hides squares of this side (the large-hole
	// task) instead of scattered pixels.
	HoleSize int
	// Crop is the side of the square crops scored (default 128; the whole
	// image if it is smaller), Crops their number (default 4), placed at
	// random with Seed.
	Crop, Crops int
	Seed        uint64
	// Solve is passed to every solve (its Progress is not used).
	Solve Options
	// Progress, if set, is called after each candidate with the share done.
	Progress func(frac float64, c Candidate)
}

// Select chooses among cands (the other parameters of the architecture
// from base) by predicting observed pixels only: in each crop it hides a
// seeded share of the observed pixels, inpaints the crop from the rest with
// every candidate, and scores the PSNR over the hidden pixels, pooled over
// the crops. The pixels the mask hides are never read, so the choice
// cannot see them. Ties go to the earlier candidate.
func Select(ctx context.Context, m *Image, observed []bool, base Arch, p Prior, cands []Candidate, so SelectOptions) (Candidate, []Score, error) {
	if len(cands) == 0 {
		return Candidate{}, nil, errors.New("cntk: no candidate to select from")
	}
	if _, err := CheckMask(observed, m.H, m.W); err != nil {
		return Candidate{}, nil, err
	}
	if so.Holdout == 0 {
		so.Holdout = 0.1
	}
	if so.Crop == 0 {
		so.Crop = 128
	}
	if so.Crops == 0 {
		so.Crops = 4
	}
	switch {
	case !(so.Holdout > 0 && so.Holdout < 1):
		return Candidate{}, nil, fmt.Errorf("cntk: hold-out share %g: want in (0, 1)", so.Holdout)
	case so.Crop < 8 || so.Crops < 1 || so.HoleSize < 0:
		return Candidate{}, nil, fmt.Errorf("cntk: %d crops of %d px, holes of %d px: want ≥ 1 crop of ≥ 8 px", so.Crops, so.Crop, so.HoleSize)
	}
	for _, c := range cands {
		a := Arch{S: c.S, Filter: c.Filter, Slope: base.Slope}
		if err := a.Validate(); err != nil {
			return Candidate{}, nil, fmt.Errorf("candidate %s: %w", c, err)
		}
		if c.Ridge < 0 || math.IsNaN(c.Ridge) {
			return Candidate{}, nil, fmt.Errorf("cntk: candidate %s: ridge must be ≥ 0", c)
		}
	}
	crops := selectCrops(m, observed, so)
	if len(crops) == 0 {
		return Candidate{}, nil, errors.New("cntk: no crop has observed pixels left to hold out and to train on")
	}
	scores := make([]Score, len(cands))
	for ci, c := range cands {
		a := Arch{S: c.S, Filter: c.Filter, Slope: base.Slope}
		opt := so.Solve
		opt.Ridge, opt.Progress = c.Ridge, nil
		// The crops share a size: one kernel serves them all.
		ph, pw := a.FitSize(crops[0].img.H, crops[0].img.W)
		k, err := NewKernel(ctx, a, p, ph, pw)
		if err != nil {
			return Candidate{}, nil, fmt.Errorf("candidate %s: %w", c, err)
		}
		se, n := 0.0, 0
		for _, cr := range crops {
			res, _, err := InpaintImageWith(ctx, k, cr.img, cr.train, opt)
			if err != nil {
				return Candidate{}, nil, fmt.Errorf("candidate %s: %w", c, err)
			}
			for q, held := range cr.held {
				if !held {
					continue
				}
				for ch := range m.C {
					d := min(1, max(0, res.Pix[q*m.C+ch])) - cr.img.Pix[q*m.C+ch]
					se += d * d
					n++
				}
			}
		}
		scores[ci] = Score{Candidate: c, PSNR: math.Inf(1)}
		if se > 0 {
			scores[ci].PSNR = 10 * math.Log10(float64(n)/se)
		}
		if so.Progress != nil {
			so.Progress(float64(ci+1)/float64(len(cands)), c)
		}
	}
	best := 0
	for i, s := range scores {
		if s.PSNR > scores[best].PSNR {
			best = i
		}
	}
	return cands[best], scores, nil
}

// selCrop is a crop with its training mask and held-out pixels.
type selCrop struct {
	img         *Image
	train, held []bool
}

// selectCrops draws the crops and hides the held-out pixels in each.
func selectCrops(m *Image, observed []bool, so SelectOptions) []selCrop {
	rng := rand.New(rand.NewPCG(so.Seed, 0x73656c65))
	ch, cw := min(so.Crop, m.H), min(so.Crop, m.W)
	var out []selCrop
	for range so.Crops {
		y0, x0 := rng.IntN(m.H-ch+1), rng.IntN(m.W-cw+1)
		img := &Image{H: ch, W: cw, C: m.C, Pix: make([]float64, ch*cw*m.C)}
		train := make([]bool, ch*cw)
		held := make([]bool, ch*cw)
		for i := range ch {
			src := ((y0+i)*m.W + x0) * m.C
			copy(img.Pix[i*cw*m.C:(i+1)*cw*m.C], m.Pix[src:src+cw*m.C])
			copy(train[i*cw:(i+1)*cw], observed[(y0+i)*m.W+x0:(y0+i)*m.W+x0+cw])
		}
		nObs := 0
		for _, o := range train {
			if o {
				nObs++
			}
		}
		if so.HoleSize > 0 && so.HoleSize+2 <= min(ch, cw) {
			// Squares until the share of the observed pixels is hidden.
			for tries := 0; countTrue(held) < int(so.Holdout*float64(nObs)) && tries < 1000; tries++ {
				i0, j0 := 1+rng.IntN(ch-so.HoleSize-1), 1+rng.IntN(cw-so.HoleSize-1)
				for i := i0; i < i0+so.HoleSize; i++ {
					for j := j0; j < j0+so.HoleSize; j++ {
						if train[i*cw+j] {
							train[i*cw+j], held[i*cw+j] = false, true
						}
					}
				}
			}
		} else {
			for q, o := range train {
				if o && rng.Float64() < so.Holdout {
					train[q], held[q] = false, true
				}
			}
		}
		if countTrue(held) == 0 || countTrue(train) == 0 {
			continue
		}
		// Pixels the mask hides stay unobserved and unscored; zero them so
		// that nothing downstream can read them.
		for q := range train {
			if !train[q] && !held[q] {
				clear(img.Pix[q*m.C : (q+1)*m.C])
			}
		}
		out = append(out, selCrop{img: img, train: train, held: held})
	}
	return out
}

func countTrue(b []bool) int {
	n := 0
	for _, v := range b {
		if v {
			n++
		}
	}
	return n
}
