package cntk

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"time"
)

// Image is an h×w image of c channels (1 gray, 3 RGB) with values in
// [0, 1], interleaved: pixel (i, j) channel ch at Pix[(i*W+j)*C+ch].
type Image struct {
	H, W, C int
	Pix     []float64
}

// ReadPNG decodes a PNG: gray images give one channel, anything else three
// (alpha is dropped).
func ReadPNG(r io.Reader) (*Image, error) {
	m, err := png.Decode(r)
	if err != nil {
		return nil, fmt.Errorf("not a readable PNG: %w", err)
	}
	b := m.Bounds()
	h, w := b.Dy(), b.Dx()
	c := 3
	switch m.ColorModel() {
	case color.GrayModel, color.Gray16Model:
		c = 1
	}
	out := &Image{H: h, W: w, C: c, Pix: make([]float64, h*w*c)}
	for i := range h {
		for j := range w {
			r, g, bl, _ := m.At(b.Min.X+j, b.Min.Y+i).RGBA()
			p := (i*w + j) * c
			if c == 1 {
				out.Pix[p] = float64(r) / 65535
				continue
			}
			out.Pix[p], out.Pix[p+1], out.Pix[p+2] = float64(r)/65535, float64(g)/65535, float64(bl)/65535
		}
	}
	return out, nil
}

// LoadPNG reads a PNG file.
func LoadPNG(path string) (*Image, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := ReadPNG(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

func to8(v float64) uint8 {
	return uint8(math.Round(255 * max(0, min(1, v))))
}

// WritePNG encodes the image as an 8-bit gray or RGB PNG, values clipped to
// [0, 1].
func (m *Image) WritePNG(w io.Writer) error {
	rect := image.Rect(0, 0, m.W, m.H)
	if m.C == 1 {
		g := image.NewGray(rect)
		for i, v := range m.Pix {
			g.Pix[i] = to8(v)
		}
		return png.Encode(w, g)
	}
	o := image.NewNRGBA(rect)
	for p := range m.H * m.W {
		o.Pix[4*p], o.Pix[4*p+1], o.Pix[4*p+2], o.Pix[4*p+3] = to8(m.Pix[3*p]), to8(m.Pix[3*p+1]), to8(m.Pix[3*p+2]), 255
	}
	return png.Encode(w, o)
}

// MaskImage draws a mask: white where observed, black where missing.
func MaskImage(observed []bool, h, w int) *Image {
	m := &Image{H: h, W: w, C: 1, Pix: make([]float64, h*w)}
	for i, o := range observed {
		if o {
			m.Pix[i] = 1
		}
	}
	return m
}

// MaskFromImage reads a mask drawn as an image: pixels brighter than one
// half (mean over channels) are observed.
func MaskFromImage(m *Image) []bool {
	out := make([]bool, m.H*m.W)
	for p := range out {
		s := 0.0
		for ch := range m.C {
			s += m.Pix[p*m.C+ch]
		}
		out[p] = s/float64(m.C) > 0.5
	}
	return out
}

// Masked returns a copy of the image with the missing pixels set to v.
func (m *Image) Masked(observed []bool, v float64) *Image {
	o := &Image{H: m.H, W: m.W, C: m.C, Pix: append([]float64(nil), m.Pix...)}
	for p, ob := range observed {
		if !ob {
			for ch := range m.C {
				o.Pix[p*m.C+ch] = v
			}
		}
	}
	return o
}

// RandomMask hides round(rate·hw) pixels chosen with the seed.
func RandomMask(h, w int, rate float64, seed uint64) ([]bool, error) {
	if !(rate > 0 && rate < 1) {
		return nil, fmt.Errorf("cntk: missing rate %g: want in (0, 1)", rate)
	}
	n := h * w
	obs := make([]bool, n)
	for i := range obs {
		obs[i] = true
	}
	rng := rand.New(rand.NewPCG(seed, 0x6d61736b))
	perm := rng.Perm(n)
	for _, p := range perm[:int(math.Round(rate*float64(n)))] {
		obs[p] = false
	}
	return obs, nil
}

// HolesMask hides count square holes of side size at seeded positions (they
// may overlap), kept one pixel away from the border.
func HolesMask(h, w, count, size int, seed uint64) ([]bool, error) {
	if count < 1 || size < 1 || size+2 > h || size+2 > w {
		return nil, fmt.Errorf("cntk: %d holes of %d px in a %d×%d image: want count ≥ 1 and 1 ≤ size ≤ min side − 2", count, size, w, h)
	}
	obs := make([]bool, h*w)
	for i := range obs {
		obs[i] = true
	}
	rng := rand.New(rand.NewPCG(seed, 0x686f6c65))
	for range count {
		i0 := 1 + rng.IntN(h-size-1)
		j0 := 1 + rng.IntN(w-size-1)
		for i := i0; i < i0+size; i++ {
			for j := j0; j < j0+size; j++ {
				obs[i*w+j] = false
			}
		}
	}
	return obs, nil
}

// Report describes an inpainting run.
type Report struct {
	Stats
	PadH, PadW  int           // the size the image was padded to (= H, W if none)
	KernelBytes int64         // memory of the expanded kernel
	KernelTime  time.Duration // time to compute and expand the kernel
}

// InpaintImage inpaints m where observed is false with the CNTK of a and
// p. An image whose size the architecture does not admit is padded (bottom
// and right) with unobserved pixels to the next admissible size and the
// result cropped back.
func InpaintImage(ctx context.Context, a Arch, p Prior, m *Image, observed []bool, opt Options) (*Image, Report, error) {
	if _, err := CheckMask(observed, m.H, m.W); err != nil {
		return nil, Report{}, err
	}
	if err := a.Validate(); err != nil {
		return nil, Report{}, err
	}
	ph, pw := a.FitSize(m.H, m.W)
	start := time.Now()
	if opt.Progress != nil {
		opt.Progress(0, "kernel")
	}
	k, err := NewKernel(ctx, a, p, ph, pw)
	if err != nil {
		return nil, Report{}, err
	}
	kt := time.Since(start)
	res, rep, err := InpaintImageWith(ctx, k, m, observed, opt)
	rep.KernelTime = kt
	return res, rep, err
}

// InpaintImageWith inpaints m with the kernel k of a grid at least m's
// size; the grid's extra rows and columns (bottom, right) are unobserved.
func InpaintImageWith(ctx context.Context, k *Kernel, m *Image, observed []bool, opt Options) (*Image, Report, error) {
	rep := Report{PadH: k.H, PadW: k.W, KernelBytes: k.Bytes()}
	if _, err := CheckMask(observed, m.H, m.W); err != nil {
		return nil, rep, err
	}
	if k.H < m.H || k.W < m.W {
		return nil, rep, fmt.Errorf("cntk: a %d×%d kernel for a %d×%d image", k.W, k.H, m.W, m.H)
	}
	pix, obs := padImage(m, observed, k.H, k.W)
	out, st, err := Inpaint(ctx, k, pix, m.C, obs, opt)
	rep.Stats = st
	if err != nil {
		return nil, rep, err
	}
	pw := k.W
	res := &Image{H: m.H, W: m.W, C: m.C, Pix: make([]float64, len(m.Pix))}
	for i := range m.H {
		copy(res.Pix[i*m.W*m.C:(i+1)*m.W*m.C], out[i*pw*m.C:(i*pw+m.W)*m.C])
	}
	return res, rep, nil
}

// padImage embeds the image and mask in a ph×pw grid; the added pixels are
// unobserved.
func padImage(m *Image, observed []bool, ph, pw int) ([]float64, []bool) {
	pix := make([]float64, ph*pw*m.C)
	obs := make([]bool, ph*pw)
	for i := range m.H {
		copy(pix[i*pw*m.C:(i*pw+m.W)*m.C], m.Pix[i*m.W*m.C:(i+1)*m.W*m.C])
		copy(obs[i*pw:i*pw+m.W], observed[i*m.W:(i+1)*m.W])
	}
	return pix, obs
}
