package mnist

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// IDX magic numbers: two zero bytes, the element type (0x08 = unsigned
// byte) and the number of dimensions.
const (
	magicImages = 0x00000803 // 2051: ubyte, 3 dimensions
	magicLabels = 0x00000801 // 2049: ubyte, 1 dimension
)

// maxIDXBytes bounds the data size a header may announce (the full MNIST
// training set is 47 MB), so that a corrupted header cannot ask for an
// enormous buffer.
const maxIDXBytes = 1 << 30

// openMaybeGzip opens path and returns a reader of its content, transparently
// decompressing gzip files (recognised by their magic bytes, not by name).
// Its errors name the file.
func openMaybeGzip(path string) (io.Reader, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 1<<16)
	head, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: gzip: %w", path, err)
		}
		return zr, func() error { zr.Close(); return f.Close() }, nil
	}
	return br, f.Close, nil
}

// readHeader reads the magic number and ndims 32-bit big-endian sizes.
func readHeader(r io.Reader, wantMagic uint32, ndims int) ([]uint32, error) {
	buf := make([]byte, 4*(1+ndims))
	if n, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("truncated header: %d of %d bytes", n, len(buf))
		}
		return nil, fmt.Errorf("read header: %w", err)
	}
	if magic := binary.BigEndian.Uint32(buf); magic != wantMagic {
		return nil, fmt.Errorf("wrong magic number %d (0x%08x), want %d (0x%08x)", magic, magic, wantMagic, wantMagic)
	}
	dims := make([]uint32, ndims)
	for i := range dims {
		dims[i] = binary.BigEndian.Uint32(buf[4*(i+1):])
	}
	return dims, nil
}

// readBody reads exactly size bytes followed by the end of the stream.
// It reads incrementally, so a header announcing more data than the file
// holds costs no more memory than the file.
func readBody(r io.Reader, size uint64, what string) ([]byte, error) {
	if size > maxIDXBytes {
		return nil, fmt.Errorf("header announces %d bytes of %s, more than the %d-byte limit", size, what, maxIDXBytes)
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(size)+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", what, err)
	}
	switch {
	case uint64(len(data)) < size:
		return nil, fmt.Errorf("truncated: header announces %d bytes of %s, file has %d", size, what, len(data))
	case uint64(len(data)) > size:
		return nil, fmt.Errorf("size mismatch: data continues after the %d bytes of %s the header announces", size, what)
	}
	return data, nil
}

// decodeImages reads an IDX3 image stream.
func decodeImages(r io.Reader) (pixels []float64, n, h, w int, err error) {
	dims, err := readHeader(r, magicImages, 3)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	if dims[1] == 0 || dims[2] == 0 {
		return nil, 0, 0, 0, fmt.Errorf("image size %d×%d: rows and columns must be positive", dims[1], dims[2])
	}
	size := uint64(dims[0]) * uint64(dims[1]) * uint64(dims[2])
	what := fmt.Sprintf("%d images of %d×%d", dims[0], dims[1], dims[2])
	data, err := readBody(r, size, what)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	pixels = make([]float64, len(data))
	for i, b := range data {
		pixels[i] = float64(b) / 255
	}
	return pixels, int(dims[0]), int(dims[1]), int(dims[2]), nil
}

// decodeLabels reads an IDX1 label stream.
func decodeLabels(r io.Reader) ([]int, error) {
	dims, err := readHeader(r, magicLabels, 1)
	if err != nil {
		return nil, err
	}
	data, err := readBody(r, uint64(dims[0]), fmt.Sprintf("%d labels", dims[0]))
	if err != nil {
		return nil, err
	}
	labels := make([]int, len(data))
	for i, b := range data {
		labels[i] = int(b)
	}
	return labels, nil
}

// LoadIDXImages reads an IDX3 image file (magic 2051, big-endian header
// n, rows, cols, then n·rows·cols unsigned bytes in row-major order),
// gzip-compressed or not. It returns the pixels scaled to [0, 1] (byte/255),
// image after image, and the dimensions.
func LoadIDXImages(path string) (pixels []float64, n, h, w int, err error) {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("mnist: images: %w", err)
	}
	defer closeFn()
	pixels, n, h, w, err = decodeImages(r)
	if err != nil {
		return nil, 0, 0, 0, fmt.Errorf("mnist: images %s: %w", path, err)
	}
	return pixels, n, h, w, nil
}

// LoadIDXLabels reads an IDX1 label file (magic 2049, big-endian count n,
// then n unsigned bytes), gzip-compressed or not.
func LoadIDXLabels(path string) ([]int, error) {
	r, closeFn, err := openMaybeGzip(path)
	if err != nil {
		return nil, fmt.Errorf("mnist: labels: %w", err)
	}
	defer closeFn()
	labels, err := decodeLabels(r)
	if err != nil {
		return nil, fmt.Errorf("mnist: labels %s: %w", path, err)
	}
	return labels, nil
}
