package modelfile

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"unsafe"
)

// growStartBytes is how much Read allocates up front for an array or header
// when the input size is unknown (a pipe): it grows the slice only as data
// actually arrives, so a corrupt length field cannot trigger a huge allocation.
const growStartBytes = 64 << 10

// streamBufSize is the bufio size when the input size is unknown. Array
// chunks of ioBufSize bypass it, so it only serves the small reads.
const streamBufSize = 64 << 10

// Read reads a model file from r and verifies it: magic bytes, version,
// header, shapes against byte lengths, and the SHA-256 trailer. The input
// must end right after the trailer. Read returns no File unless every check
// passes.
//
// When r is an *os.File on a regular file, or has a Len method
// (bytes.Reader, bytes.Buffer, strings.Reader), or is an io.Seeker, Read
// compares the sizes announced by the header with the real remaining size
// before allocating, and allocates each array exactly once. Otherwise it
// grows arrays as bytes arrive.
func Read(r io.Reader) (*File, error) {
	size, known, err := remainingSize(r)
	if err != nil {
		return nil, fmt.Errorf("read model file: %w", err)
	}
	bufSize := streamBufSize
	if known {
		bufSize = int(min(size+1, ioBufSize)) // small files get small buffers
	}
	d := &decoder{
		r:         bufio.NewReaderSize(r, bufSize),
		h:         sha256.New(),
		size:      size,
		sizeKnown: known,
		section:   "preamble",
	}
	return d.decode()
}

// remainingSize reports how many bytes are left in r, when that can be known
// without consuming anything.
func remainingSize(r io.Reader) (size int64, known bool, err error) {
	switch v := r.(type) {
	case *os.File:
		fi, err := v.Stat()
		if err != nil || !fi.Mode().IsRegular() {
			return 0, false, nil
		}
		pos, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false, nil
		}
		return max(fi.Size()-pos, 0), true, nil
	case interface{ Len() int }:
		return int64(v.Len()), true, nil
	case io.Seeker:
		pos, err := v.Seek(0, io.SeekCurrent)
		if err != nil {
			return 0, false, nil
		}
		end, endErr := v.Seek(0, io.SeekEnd)
		if _, err := v.Seek(pos, io.SeekStart); err != nil {
			return 0, false, fmt.Errorf("restore position after measuring size: %w", err)
		}
		if endErr != nil {
			return 0, false, nil
		}
		return max(end-pos, 0), true, nil
	}
	return 0, false, nil
}

type decoder struct {
	r         *bufio.Reader
	h         hash.Hash
	n         int64 // bytes consumed so far
	size      int64 // bytes available, if sizeKnown
	sizeKnown bool
	expected  int64  // total length announced by the header, once known
	section   string // what is being read, for truncation messages
	buf       []byte
}

// readFull fills p from the input, hashing what it reads.
func (d *decoder) readFull(p []byte) error {
	m, err := io.ReadFull(d.r, p)
	d.h.Write(p[:m])
	d.n += int64(m)
	if err != nil {
		return d.readErr(err)
	}
	return nil
}

func (d *decoder) readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		if d.expected > 0 {
			return fmt.Errorf("%w: expected %d bytes, got %d", ErrTruncated, d.expected, d.n)
		}
		if d.n == 0 {
			return fmt.Errorf("%w: the input is empty", ErrTruncated)
		}
		return fmt.Errorf("%w: input ends after %d bytes, inside the %s", ErrTruncated, d.n, d.section)
	}
	return fmt.Errorf("read model file at byte %d: %w", d.n, err)
}

// padding reads n bytes that a correct writer sets to zero.
func (d *decoder) padding(n int64) error {
	var p [alignment]byte
	if n < 0 || n > alignment {
		return fmt.Errorf("%w: internal error: padding of %d bytes", ErrMalformedHeader, n)
	}
	start := d.n
	if err := d.readFull(p[:n]); err != nil {
		return err
	}
	for i, b := range p[:n] {
		if b != 0 {
			return fmt.Errorf("%w: non-zero padding byte at offset %d", ErrCorrupted, start+int64(i))
		}
	}
	return nil
}

func (d *decoder) decode() (*File, error) {
	// Magic. A short input that matches the magic so far is a truncated
	// model file; anything else is not a model file at all.
	var magic [len(Magic)]byte
	m, err := io.ReadFull(d.r, magic[:])
	d.h.Write(magic[:m])
	d.n += int64(m)
	if string(magic[:m]) != Magic[:m] {
		return nil, fmt.Errorf("%w: it starts with %q, a model file starts with %q", ErrNotModelFile, magic[:m], Magic)
	}
	if err != nil {
		return nil, d.readErr(err)
	}

	var fixed [preambleLen - len(Magic)]byte
	if err := d.readFull(fixed[:]); err != nil {
		return nil, err
	}
	version := binary.LittleEndian.Uint32(fixed[:4])
	if version == 0 || version > CurrentVersion {
		// Every version ends with a SHA-256 of all preceding bytes (a
		// promise in FORMAT.md), so a damaged version field can be told
		// from a genuinely newer file without knowing the newer layout.
		if d.checksumMismatch() {
			return nil, fmt.Errorf("%w: SHA-256 checksum mismatch, and the version field reads %d", ErrCorrupted, version)
		}
		return nil, &VersionError{Version: version, Supported: CurrentVersion}
	}
	hdrLen := binary.LittleEndian.Uint64(fixed[4:])
	if hdrLen > MaxHeaderBytes {
		return nil, fmt.Errorf("%w: header length %d is over the %d-byte limit", ErrCorrupted, hdrLen, MaxHeaderBytes)
	}
	if d.sizeKnown && int64(hdrLen) > d.size-d.n {
		return nil, fmt.Errorf("%w (or its header length is corrupted): header length %d, but only %d bytes follow",
			ErrTruncated, hdrLen, max(d.size-d.n, 0))
	}

	d.section = fmt.Sprintf("header (header length %d)", hdrLen)
	hdrBytes, err := d.readBytes(int64(hdrLen))
	if err != nil {
		return nil, err
	}
	var h header
	if err := json.Unmarshal(hdrBytes, &h); err != nil {
		return nil, d.corruptedOr(fmt.Errorf("%w: %v", ErrMalformedHeader, err))
	}
	dataLen, elems, err := checkHeader(&h)
	if err != nil {
		return nil, d.corruptedOr(err)
	}
	dataStart := align(d.n)
	d.expected = dataStart + dataLen + checksumLen
	// The allocation guard: never trust lengths beyond what the input holds.
	// A longer input is read on; the checksum then tells a damaged header
	// from data appended after an intact file.
	if d.sizeKnown && d.size < d.expected {
		return nil, fmt.Errorf("%w: expected %d bytes, got %d", ErrTruncated, d.expected, d.size)
	}
	if err := d.padding(dataStart - d.n); err != nil {
		return nil, err
	}

	f := &File{
		Kind:          h.Kind,
		FormatVersion: int(version),
		CreatedBy:     h.CreatedBy,
		Arrays:        make([]Array, len(h.Arrays)),
	}
	if s := bytes.TrimSpace(h.Meta); len(s) > 0 && string(s) != "null" {
		f.Meta = h.Meta
	}
	d.buf = make([]byte, min(dataLen, ioBufSize))
	for i, e := range h.Arrays {
		if err := d.padding(dataStart + e.Offset - d.n); err != nil {
			return nil, err
		}
		a := &f.Arrays[i]
		a.Name = e.Name
		a.Shape = make([]int, len(e.Shape))
		for j, dim := range e.Shape {
			a.Shape[j] = int(dim) // bounded by checkHeader
		}
		if e.DType == dtypeF64 {
			a.F64, err = readFloats[float64](d, elems[i])
		} else {
			a.F32, err = readFloats[float32](d, elems[i])
		}
		if err != nil {
			return nil, err
		}
	}
	if err := d.padding(dataStart + dataLen - d.n); err != nil {
		return nil, err
	}

	// Trailer: not part of the hash.
	sum := d.h.Sum(nil)
	var stored [checksumLen]byte
	m, err = io.ReadFull(d.r, stored[:])
	d.n += int64(m)
	if err != nil {
		return nil, d.readErr(err)
	}
	if !bytes.Equal(sum, stored[:]) {
		return nil, fmt.Errorf("%w: SHA-256 checksum mismatch (%s); the file was damaged after it was written",
			ErrCorrupted, checksumDiff(stored[:], sum))
	}
	f.Checksum = stored
	if _, err := d.r.ReadByte(); err == nil {
		return nil, fmt.Errorf("%w: the model file ends at byte %d but the input continues (extra data appended?)", ErrTrailingData, d.n)
	} else if err != io.EOF {
		return nil, fmt.Errorf("read model file at byte %d: %w", d.n, err)
	}
	return f, nil
}

// checksumDiff shows two different checksums where they differ: 8 bytes
// from the first differing one, so a damaged trailer (whose first bytes may
// still match) never shows two identical excerpts.
func checksumDiff(stored, computed []byte) string {
	i := 0
	for i < len(stored) && stored[i] == computed[i] {
		i++
	}
	j := min(i+8, len(stored))
	lead, tail := "", ""
	if i > 0 {
		lead = "…"
	}
	if j < len(stored) {
		tail = "…"
	}
	where := "they differ from the first byte"
	if i > 0 {
		where = fmt.Sprintf("they first differ at byte %d of %d", i, len(stored))
	}
	return fmt.Sprintf("stored %s%x%s, computed %s%x%s; %s", lead, stored[i:j], tail, lead, computed[i:j], tail, where)
}

// corruptedOr is called when the header is unusable. A damaged file is far
// more likely than a writer bug, so it hashes the rest of the input: if the
// checksum fails, the file is reported as corrupted (wrapping cause, which
// says where the damage showed); if it holds, cause is returned as it is.
func (d *decoder) corruptedOr(cause error) error {
	if d.checksumMismatch() {
		return fmt.Errorf("%w (SHA-256 checksum mismatch): %w", ErrCorrupted, cause)
	}
	return cause
}

// checksumMismatch consumes the rest of the input, hashing all but its last
// 32 bytes, and compares the hash with those 32 bytes. It reports false when
// it cannot tell (read error, or fewer than 32 bytes left).
func (d *decoder) checksumMismatch() bool {
	buf := make([]byte, 32<<10+checksumLen)
	p := 0 // buf[:p] holds bytes read but not yet hashed
	for {
		m, err := d.r.Read(buf[p:])
		p += m
		if p > checksumLen {
			d.h.Write(buf[:p-checksumLen])
			copy(buf, buf[p-checksumLen:p])
			p = checksumLen
		}
		if err == io.EOF {
			return p == checksumLen && !bytes.Equal(d.h.Sum(nil), buf[:checksumLen])
		}
		if err != nil {
			return false
		}
	}
}

// checkHeader validates the parsed header and returns the data section
// length and each array's element count.
func checkHeader(h *header) (dataLen int64, elems []int, err error) {
	if h.Kind == "" {
		return 0, nil, fmt.Errorf("%w: missing \"kind\"", ErrMalformedHeader)
	}
	seen := make(map[string]bool, len(h.Arrays))
	elems = make([]int, len(h.Arrays))
	var off int64
	for i, e := range h.Arrays {
		if e.Name == "" {
			return 0, nil, fmt.Errorf("%w: array %d has no name", ErrMalformedHeader, i)
		}
		if seen[e.Name] {
			return 0, nil, fmt.Errorf("%w: %q appears twice in the header", ErrDuplicateName, e.Name)
		}
		seen[e.Name] = true
		size, ok := dtypeSize(e.DType)
		if !ok {
			return 0, nil, fmt.Errorf("%w: array %q has unknown dtype %q (want %q or %q)",
				ErrMalformedHeader, e.Name, e.DType, dtypeF64, dtypeF32)
		}
		n, err := shapeElems(e.Shape, maxElems(size))
		if err != nil {
			return 0, nil, fmt.Errorf("%w: array %q: %v", ErrMalformedHeader, e.Name, err)
		}
		if e.Length != n*size {
			return 0, nil, fmt.Errorf("%w: array %q: shape %v of %s needs %d bytes, but its length is %d",
				ErrShapeMismatch, e.Name, e.Shape, e.DType, n*size, e.Length)
		}
		if want := align(off); e.Offset != want {
			return 0, nil, fmt.Errorf("%w: array %q is at offset %d, expected %d (arrays are stored in directory order, each 8-byte aligned)",
				ErrMalformedHeader, e.Name, e.Offset, want)
		}
		off = e.Offset + e.Length
		if off > maxDataBytes {
			return 0, nil, fmt.Errorf("%w: arrays exceed %d bytes", ErrMalformedHeader, int64(maxDataBytes))
		}
		elems[i] = int(n)
	}
	return align(off), elems, nil
}

// initialCap is the capacity to allocate for n values of the given size:
// all of them when the input is known to hold them, else a bounded start.
func (d *decoder) initialCap(n int, size int) int {
	if d.sizeKnown {
		return n
	}
	return min(n, growStartBytes/size)
}

// grow returns out with room for k more values. Capacity doubles, capped
// at n (the announced total), so streaming a slice of final size n allocates
// about 2n in all, ends with capacity exactly n, and never holds more than
// twice the values that have actually arrived.
func grow[T any](out []T, k, n int) []T {
	if len(out)+k <= cap(out) {
		return out
	}
	c := min(max(2*cap(out), len(out)+k), n)
	bigger := make([]T, len(out), c)
	copy(bigger, out)
	return bigger
}

func (d *decoder) readBytes(n int64) ([]byte, error) {
	out := make([]byte, 0, d.initialCap(int(n), 1))
	for int64(len(out)) < n {
		k := int(min(n-int64(len(out)), ioBufSize))
		out = grow(out, k, int(n))
		start := len(out)
		out = out[:start+k]
		if err := d.readFull(out[start:]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readFloats reads n little-endian values of T through d.buf, growing the
// result as the values arrive (see grow).
func readFloats[T float32 | float64](d *decoder, n int) ([]T, error) {
	size := int(unsafe.Sizeof(T(0)))
	out := make([]T, 0, d.initialCap(n, size))
	for len(out) < n {
		k := min(n-len(out), len(d.buf)/size)
		b := d.buf[:k*size]
		if err := d.readFull(b); err != nil {
			return nil, err
		}
		out = grow(out, k, n)
		start := len(out)
		out = out[:start+k]
		decodeLE(out[start:], b)
	}
	return out, nil
}

// decodeLE fills dst from the little-endian bytes b (len(dst) values).
func decodeLE[T float32 | float64](dst []T, b []byte) {
	switch dst := any(dst).(type) {
	case []float64:
		for i := range dst {
			dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[i*8:]))
		}
	case []float32:
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[i*4:]))
		}
	}
}
