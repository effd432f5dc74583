package cntk

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/internal/cli"
	"github.com/rfmkit/rfm/plot"
)

// Settings are the mask, kernel and solve flags of rfm inpaint (the errors
// name the flags): Check turns them into the kernel, the architecture and
// the solve's options, LoadMask into the mask.
type Settings struct {
	Mask            string  // a mask PNG: white observed, black missing
	Missing         float64 // or this share of pixels missing at random
	Holes, HoleSize int     // or this many square holes of this side
	Seed            uint64  // of the random masks and the selection's crops
	Kernel          string  // cntk, laplace or gaussian
	Bandwidth       float64 // σ in pixels of laplace and gaussian
	S, Filter       int
	Slope           float64
	Prior           string // uniform, onehot, identity, meshgrid
	Low, High       float64
	Ridge, Tol      float64
	MaxIter         int
	ExactMax        int
	Precond         string // block, jacobi, none
	Tile            int
	SelectHoldout   float64
	SelectCrop      int
	SelectCrops     int
}

// MaskSources counts the mask settings given (Mask, Missing, Holes).
func (s *Settings) MaskSources() int {
	n := 0
	for _, set := range []bool{s.Mask != "", s.Missing != 0, s.Holes != 0} {
		if set {
			n++
		}
	}
	return n
}

// Check validates the settings that need no image and returns the kernel
// on coordinates (< 0: the CNTK), the architecture and the solve's
// options.
func (s *Settings) Check() (CoordKind, Arch, Options, error) {
	coord := CoordKind(-1)
	arch := Arch{S: s.S, Filter: s.Filter, Slope: s.Slope}
	pc, pcErr := ParsePreconditioner(s.Precond)
	opt := Options{Ridge: s.Ridge, Tol: s.Tol, MaxIter: s.MaxIter, ExactMax: s.ExactMax, Precond: pc, Tile: s.Tile}
	fail := func(err error) (CoordKind, Arch, Options, error) { return coord, arch, opt, err }
	switch s.Kernel {
	case "cntk":
	case "laplace":
		coord = CoordLaplace
	case "gaussian":
		coord = CoordGaussian
	default:
		return fail(cli.Usagef("--kernel %q: want cntk, laplace or gaussian", s.Kernel))
	}
	if _, err := ParsePrior(s.Prior); err != nil {
		return fail(cli.Usagef("--prior %q: want uniform, onehot, identity or meshgrid", s.Prior))
	}
	if !(s.Low < s.High) {
		return fail(cli.Usagef("--prior-low %g must be below --prior-high %g", s.Low, s.High))
	}
	if err := arch.Validate(); err != nil {
		return fail(cli.Usagef("%s", strings.TrimPrefix(err.Error(), "cntk: ")))
	}
	switch {
	case s.Ridge < 0:
		return fail(cli.Usagef("--ridge %g: want ≥ 0", s.Ridge))
	case !(s.Tol > 0 && s.Tol < 1):
		return fail(cli.Usagef("--tol %g: want in (0, 1)", s.Tol))
	case s.MaxIter < 1:
		return fail(cli.Usagef("--max-iter %d: want ≥ 1", s.MaxIter))
	case s.ExactMax < 0:
		return fail(cli.Usagef("--exact-max %d: want ≥ 0", s.ExactMax))
	case pcErr != nil:
		return fail(cli.Usagef("--precond %q: want block, jacobi or none", s.Precond))
	case s.Tile < 0:
		return fail(cli.Usagef("--tile %d: want ≥ 1 (0: the default)", s.Tile))
	case !(s.SelectHoldout > 0 && s.SelectHoldout < 1):
		return fail(cli.Usagef("--select-holdout %g: want a share in (0, 1)", s.SelectHoldout))
	case s.SelectCrop < 8 || s.SelectCrops < 1:
		return fail(cli.Usagef("--select-crop %d --select-crops %d: want a side ≥ 8 and ≥ 1 crop", s.SelectCrop, s.SelectCrops))
	case s.MaskSources() > 1:
		return fail(cli.Usagef("give one of --mask, --missing, --holes"))
	}
	return coord, arch, opt, nil
}

// LoadMask reads or draws the mask of an h×w image (nil when no mask
// setting is given).
func (s *Settings) LoadMask(h, w int) ([]bool, error) {
	switch {
	case s.Mask != "":
		m, err := LoadPNG(s.Mask)
		if err != nil {
			return nil, fmt.Errorf("--mask %w", err)
		}
		if m.H != h || m.W != w {
			return nil, fmt.Errorf("--mask %s is %d×%d but the image is %d×%d", s.Mask, m.W, m.H, w, h)
		}
		return MaskFromImage(m), nil
	case s.Missing != 0:
		observed, err := RandomMask(h, w, s.Missing, s.Seed)
		if err != nil {
			return nil, cli.Usagef("--missing %g: want a share in (0, 1)", s.Missing)
		}
		return observed, nil
	case s.Holes != 0:
		observed, err := HolesMask(h, w, s.Holes, s.HoleSize, s.Seed)
		if err != nil {
			return nil, cli.Usagef("--holes %d --hole-size %d: %s", s.Holes, s.HoleSize, strings.TrimPrefix(err.Error(), "cntk: "))
		}
		return observed, nil
	}
	return nil, nil
}

// Candidates are the combinations of the --select-s, --select-filter and
// --select-ridge lists (an empty list: the value of arch or ridge).
func Candidates(selS, selFilter, selRidge []string, arch Arch, ridge float64) ([]Candidate, error) {
	ss, err := cli.ParseWhole("select-s", selS, arch.S)
	if err != nil {
		return nil, err
	}
	fs, err := cli.ParseWhole("select-filter", selFilter, arch.Filter)
	if err != nil {
		return nil, err
	}
	ridges := []float64{ridge}
	if len(selRidge) > 0 {
		ridges = nil
		for _, v := range selRidge {
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !(x >= 0) || math.IsInf(x, 0) {
				return nil, cli.Usagef("--select-ridge %q: want numbers ≥ 0", v)
			}
			ridges = append(ridges, x)
		}
	}
	var cands []Candidate
	for _, s := range ss {
		for _, q := range fs {
			a := Arch{S: s, Filter: q, Slope: arch.Slope}
			if err := a.Validate(); err != nil {
				return nil, cli.Usagef("--select-s %d --select-filter %d: %s", s, q, strings.TrimPrefix(err.Error(), "cntk: "))
			}
			for _, r := range ridges {
				cands = append(cands, Candidate{S: s, Filter: q, Ridge: r})
			}
		}
	}
	return cands, nil
}

// ParseHeatmap parses --heatmap X,Y and the --heatmap-s list (default
// 1,2,3,4) for an h×w grid.
func ParseHeatmap(at string, sList []string, arch Arch, h, w int) (x, y int, ss []int, err error) {
	parts := strings.Split(at, ",")
	if len(parts) != 2 {
		return 0, 0, nil, cli.Usagef("--heatmap %q: want X,Y (column, row)", at)
	}
	var errX, errY error
	x, errX = strconv.Atoi(strings.TrimSpace(parts[0]))
	y, errY = strconv.Atoi(strings.TrimSpace(parts[1]))
	if errX != nil || errY != nil || x < 0 || y < 0 || x >= w || y >= h {
		return 0, 0, nil, cli.Usagef("--heatmap %q: want X,Y with 0 ≤ X < %d and 0 ≤ Y < %d", at, w, h)
	}
	if len(sList) == 0 {
		sList = []string{"1", "2", "3", "4"}
	}
	for _, v := range sList {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > MaxS {
			return 0, 0, nil, cli.Usagef("--heatmap-s %q: want numbers in 0..%d", v, MaxS)
		}
		a := Arch{S: n, Filter: arch.Filter, Slope: arch.Slope}
		if err := a.CheckSize(h, w); err != nil {
			return 0, 0, nil, cli.Usagef("--heatmap-s %d: %s", n, strings.TrimPrefix(err.Error(), "cntk: "))
		}
		ss = append(ss, n)
	}
	if len(ss) > plot.MaxGridImages {
		return 0, 0, nil, cli.Usagef("--heatmap-s: at most %d values", plot.MaxGridImages)
	}
	return x, y, ss, nil
}
