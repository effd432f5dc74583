package modelfile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"math"
	"unicode/utf8"
	"unsafe"
)

// ioBufSize is the bufio buffer size and the chunk size used to convert
// array values to and from bytes. Arrays are never copied whole.
const ioBufSize = 256 << 10

// Write validates f and writes it to w in format version f.FormatVersion
// (BaseVersion when 0). Nothing is written when f is invalid. Array values
// are streamed from f's slices in chunks and hashed on the way, so Write
// needs no second copy of the data.
func Write(w io.Writer, f *File) error {
	hdr, entries, dataLen, err := encodeHeader(f)
	if err != nil {
		return err
	}
	dataStart := align(preambleLen + int64(len(hdr)))
	total := dataStart + dataLen + checksumLen

	bw := bufio.NewWriterSize(w, int(min(total, ioBufSize)))
	hw := &hashWriter{w: bw, h: sha256.New()}
	version := f.FormatVersion
	if version == 0 {
		version = BaseVersion
	}
	if err := writeBody(hw, version, hdr, entries, f.Arrays, dataStart, dataLen); err != nil {
		return fmt.Errorf("write model file: %w", err)
	}
	if hw.n != total-checksumLen {
		// Only possible if the caller changed f while Write was running.
		return fmt.Errorf("write model file: wrote %d bytes before the checksum, expected %d (was the File modified during Write?)",
			hw.n, total-checksumLen)
	}
	if _, err := bw.Write(hw.h.Sum(nil)); err != nil {
		return fmt.Errorf("write model file checksum: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write model file: %w", err)
	}
	return nil
}

func writeBody(hw *hashWriter, version int, hdr []byte, entries []arrayEntry, arrays []Array, dataStart, dataLen int64) error {
	var pre [preambleLen]byte
	copy(pre[:], Magic)
	binary.LittleEndian.PutUint32(pre[8:], uint32(version))
	binary.LittleEndian.PutUint64(pre[12:], uint64(len(hdr)))
	if _, err := hw.Write(pre[:]); err != nil {
		return err
	}
	if _, err := hw.Write(hdr); err != nil {
		return err
	}
	if err := hw.zeros(dataStart - hw.n); err != nil {
		return err
	}
	buf := make([]byte, min(dataLen, ioBufSize))
	for i, e := range entries {
		if err := hw.zeros(dataStart + e.Offset - hw.n); err != nil {
			return err
		}
		var err error
		if a := &arrays[i]; a.F64 != nil {
			err = writeFloats(hw, buf, a.F64)
		} else {
			err = writeFloats(hw, buf, a.F32)
		}
		if err != nil {
			return fmt.Errorf("array %q: %w", e.Name, err)
		}
	}
	return hw.zeros(dataStart + dataLen - hw.n)
}

// writeFloats writes v little-endian through buf, len(buf)/size values at
// a time.
func writeFloats[T float32 | float64](w io.Writer, buf []byte, v []T) error {
	size := int(unsafe.Sizeof(T(0)))
	for len(v) > 0 {
		k := min(len(v), len(buf)/size)
		b := buf[:k*size]
		encodeLE(b, v[:k])
		if _, err := w.Write(b); err != nil {
			return err
		}
		v = v[k:]
	}
	return nil
}

// encodeLE puts v into b little-endian (len(v)·size bytes).
func encodeLE[T float32 | float64](b []byte, v []T) {
	switch v := any(v).(type) {
	case []float64:
		for i, x := range v {
			binary.LittleEndian.PutUint64(b[i*8:], math.Float64bits(x))
		}
	case []float32:
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[i*4:], math.Float32bits(x))
		}
	}
}

// encodeHeader validates f and returns the JSON header, the array directory
// and the length of the data section.
func encodeHeader(f *File) (hdr []byte, entries []arrayEntry, dataLen int64, err error) {
	if f == nil {
		return nil, nil, 0, fmt.Errorf("%w: nil *File", ErrInvalid)
	}
	if f.FormatVersion != 0 && (f.FormatVersion < BaseVersion || f.FormatVersion > CurrentVersion) {
		return nil, nil, 0, fmt.Errorf("%w: cannot write format version %d; this build writes versions %d to %d",
			ErrInvalid, f.FormatVersion, BaseVersion, CurrentVersion)
	}
	if f.Kind == "" {
		return nil, nil, 0, fmt.Errorf("%w: Kind is empty (name what the file holds, e.g. \"rfm.Model\")", ErrInvalid)
	}
	if !utf8.ValidString(f.Kind) {
		return nil, nil, 0, fmt.Errorf("%w: Kind %q is not valid UTF-8", ErrInvalid, f.Kind)
	}
	h := header{Kind: f.Kind, CreatedBy: f.CreatedBy, Meta: json.RawMessage("null")}
	if h.CreatedBy == "" {
		h.CreatedBy = DefaultCreatedBy()
	}
	if !utf8.ValidString(h.CreatedBy) {
		return nil, nil, 0, fmt.Errorf("%w: CreatedBy %q is not valid UTF-8", ErrInvalid, h.CreatedBy)
	}
	if len(bytes.TrimSpace(f.Meta)) > 0 {
		var c bytes.Buffer
		if err := json.Compact(&c, f.Meta); err != nil {
			return nil, nil, 0, fmt.Errorf("%w: Meta is not valid JSON: %v", ErrInvalid, err)
		}
		h.Meta = c.Bytes()
	}

	h.Arrays = make([]arrayEntry, len(f.Arrays))
	seen := make(map[string]bool, len(f.Arrays))
	var off int64
	for i := range f.Arrays {
		a := &f.Arrays[i]
		switch {
		case a.Name == "":
			return nil, nil, 0, fmt.Errorf("%w: array %d has an empty name", ErrInvalid, i)
		case !utf8.ValidString(a.Name):
			return nil, nil, 0, fmt.Errorf("%w: array name %q is not valid UTF-8", ErrInvalid, a.Name)
		case seen[a.Name]:
			return nil, nil, 0, fmt.Errorf("%w: %q", ErrDuplicateName, a.Name)
		case a.F64 != nil && a.F32 != nil:
			return nil, nil, 0, fmt.Errorf("%w: array %q has both F64 and F32 set; set exactly one", ErrInvalid, a.Name)
		case a.F64 == nil && a.F32 == nil:
			return nil, nil, 0, fmt.Errorf("%w: array %q has no data; set F64 or F32 (a non-nil empty slice for an empty array)", ErrInvalid, a.Name)
		}
		seen[a.Name] = true
		e := arrayEntry{Name: a.Name, DType: dtypeF64, Shape: make([]int64, len(a.Shape))}
		if a.F32 != nil {
			e.DType = dtypeF32
		}
		size, _ := dtypeSize(e.DType)
		for j, d := range a.Shape {
			e.Shape[j] = int64(d)
		}
		n, err := shapeElems(e.Shape, maxElems(size))
		if err != nil {
			return nil, nil, 0, fmt.Errorf("%w: array %q: %v", ErrShapeMismatch, a.Name, err)
		}
		if n != int64(a.Len()) {
			return nil, nil, 0, fmt.Errorf("%w: array %q: shape %v holds %d values, but %s has %d",
				ErrShapeMismatch, a.Name, a.Shape, n, typeField(e.DType), a.Len())
		}
		e.Offset = align(off)
		e.Length = n * size
		off = e.Offset + e.Length
		if off > maxDataBytes {
			return nil, nil, 0, fmt.Errorf("%w: arrays exceed %d bytes", ErrInvalid, int64(maxDataBytes))
		}
		h.Arrays[i] = e
	}

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep names like "a<b" readable in the header
	if err := enc.Encode(h); err != nil {
		return nil, nil, 0, fmt.Errorf("%w: encode header: %v", ErrInvalid, err)
	}
	hdr = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	if len(hdr) > MaxHeaderBytes {
		return nil, nil, 0, fmt.Errorf("%w: header is %d bytes, over the %d-byte limit; store large data as arrays, not in Meta",
			ErrInvalid, len(hdr), MaxHeaderBytes)
	}
	return hdr, h.Arrays, align(off), nil
}

func typeField(dtype string) string {
	if dtype == dtypeF32 {
		return "F32"
	}
	return "F64"
}

// hashWriter hashes and counts everything written through it.
type hashWriter struct {
	w io.Writer
	h hash.Hash
	n int64
}

func (hw *hashWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n += int64(n)
	return n, err
}

var zeroPad [alignment]byte

// zeros writes n (< alignment) zero bytes of padding.
func (hw *hashWriter) zeros(n int64) error {
	if n < 0 || n >= alignment {
		return fmt.Errorf("internal error: padding of %d bytes", n)
	}
	_, err := hw.Write(zeroPad[:n])
	return err
}
