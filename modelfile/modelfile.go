package modelfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
)

// CurrentVersion is the newest format version this build writes and reads.
// The layout is the same in every version; a version says which readers
// may interpret the content (see FORMAT.md, "Versions"): a writer sets the
// lowest one its content needs, so that older builds keep reading what
// they can interpret and refuse, with a clear message, what they cannot.
const CurrentVersion = 2

// BaseVersion is the version written when File.FormatVersion is 0.
const BaseVersion = 1

// VersionScaledOrCalibrated is the version a file needs when it holds a
// pipeline scaling other than standardization or a calibrated model: a
// version-1 reader would ignore either and compute other numbers.
const VersionScaledOrCalibrated = 2

// Magic is the 8-byte signature at the start of every model file.
const Magic = "RFMMODEL"

// MaxHeaderBytes bounds the JSON header. Big data belongs in arrays; a header
// length above this is treated as corruption instead of being allocated.
const MaxHeaderBytes = 64 << 20

// Fixed layout constants (see FORMAT.md).
const (
	preambleLen = 8 + 4 + 8 // magic, version, header length
	checksumLen = 32        // SHA-256
	alignment   = 8
	// maxDataBytes keeps all offset arithmetic far away from int64 overflow.
	// 2^56 bytes is 64 PiB, well beyond any real model.
	maxDataBytes = 1 << 56
)

// Data types as spelled in the header's array directory.
const (
	dtypeF64 = "float64"
	dtypeF32 = "float32"
)

// Errors returned by Read and Write. They are wrapped with details; test for
// them with errors.Is. A future format version is reported as *VersionError.
var (
	// ErrNotModelFile: the input does not start with the magic bytes.
	ErrNotModelFile = errors.New("not an rfm model file")
	// ErrTruncated: the input ends before the length its header announces.
	ErrTruncated = errors.New("model file is truncated")
	// ErrCorrupted: the SHA-256 trailer does not match, or a field that a
	// correct writer never produces was found (non-zero padding, absurd version).
	ErrCorrupted = errors.New("model file is corrupted")
	// ErrMalformedHeader: the JSON header cannot be parsed or is inconsistent.
	ErrMalformedHeader = errors.New("malformed model file header")
	// ErrDuplicateName: two arrays share a name.
	ErrDuplicateName = errors.New("duplicate array name")
	// ErrShapeMismatch: an array's shape does not match its data length.
	ErrShapeMismatch = errors.New("array shape does not match its data length")
	// ErrTrailingData: bytes follow the checksum trailer.
	ErrTrailingData = errors.New("unexpected data after the model file checksum")
	// ErrInvalid: Write was given a File it cannot store (empty Kind, invalid
	// Meta JSON, an array with no data or with both F64 and F32 set, ...).
	ErrInvalid = errors.New("invalid model file contents")
)

// VersionError reports a format version this build cannot read.
type VersionError struct {
	Version   uint32 // version found in the file
	Supported uint32 // newest version this build reads (CurrentVersion)
}

func (e *VersionError) Error() string {
	if e.Version == 0 {
		return "model file version 0 is not a valid version; the file is damaged or was not written by rfm"
	}
	return fmt.Sprintf("model file version %d is newer than this build supports (%d); upgrade rfm",
		e.Version, e.Supported)
}

// Array is one named numeric array. Exactly one of F64 and F32 is non-nil;
// it holds the values in row-major (C) order. Shape lists the dimensions;
// an empty Shape is a scalar holding one value, and a zero dimension gives
// an empty array (whose F64 or F32 must then be a non-nil empty slice).
type Array struct {
	Name  string
	Shape []int
	F64   []float64
	F32   []float32
}

// Len is the number of values stored in a, whichever type they have.
func (a *Array) Len() int {
	if a.F64 != nil {
		return len(a.F64)
	}
	return len(a.F32)
}

// File is the content of a model file.
type File struct {
	// Kind names what the file holds, e.g. "rfm.Model". Required.
	Kind string
	// FormatVersion is set by Read. Write writes it, from BaseVersion to
	// CurrentVersion; 0 means BaseVersion. Set a higher one when the
	// content needs a reader that knows what it added (see
	// VersionScaledOrCalibrated).
	FormatVersion int
	// CreatedBy identifies the writing program. Write fills in a default
	// ("rfm <module version>") when it is empty.
	CreatedBy string
	// Meta is the caller's JSON document. Write stores it compacted; Read
	// returns it as stored. nil is stored as JSON null and read back as nil.
	Meta json.RawMessage
	// Arrays are stored in order; names must be unique and non-empty.
	Arrays []Array
	// Checksum is the SHA-256 stored in the file's trailer, set by Read
	// (which has verified it). It identifies the file's exact content;
	// Write ignores it.
	Checksum [32]byte
}

// Array returns the array with the given name.
func (f *File) Array(name string) (*Array, bool) {
	if f == nil {
		return nil, false
	}
	for i := range f.Arrays {
		if f.Arrays[i].Name == name {
			return &f.Arrays[i], true
		}
	}
	return nil, false
}

// DecodeMeta checks that f holds the given kind and decodes its JSON
// metadata into meta, the first step of every model type's FromFile. what
// names the kind in the message ("an RFM model"), section the metadata
// ("model" gives "model metadata: …").
func (f *File) DecodeMeta(kind, what, section string, meta any) error {
	if f.Kind != kind {
		return fmt.Errorf("model file holds a %q, not %s", f.Kind, what)
	}
	if err := json.Unmarshal(f.Meta, meta); err != nil {
		return fmt.Errorf("%s metadata: %w", section, err)
	}
	return nil
}

// DefaultCreatedBy is what Write stores when File.CreatedBy is empty.
func DefaultCreatedBy() string {
	createdByOnce.Do(func() {
		const module = "github.com/rfmkit/rfm"
		version := "(devel)"
		if bi, ok := debug.ReadBuildInfo(); ok {
			if bi.Main.Path == module && bi.Main.Version != "" {
				version = bi.Main.Version
			}
			for _, d := range bi.Deps {
				if d.Path == module && d.Version != "" {
					version = d.Version
				}
			}
		}
		createdBy = "rfm " + version
	})
	return createdBy
}

var (
	createdByOnce sync.Once
	createdBy     string
)

// header is the JSON header. Field names are part of the format.
type header struct {
	Kind      string          `json:"kind"`
	CreatedBy string          `json:"created_by"`
	Meta      json.RawMessage `json:"meta"`
	Arrays    []arrayEntry    `json:"arrays"`
}

// arrayEntry is one row of the array directory. Offset is relative to the
// start of the data section; Length is in bytes.
type arrayEntry struct {
	Name   string  `json:"name"`
	DType  string  `json:"dtype"`
	Shape  []int64 `json:"shape"`
	Offset int64   `json:"offset"`
	Length int64   `json:"length"`
}

func dtypeSize(dtype string) (int64, bool) {
	switch dtype {
	case dtypeF64:
		return 8, true
	case dtypeF32:
		return 4, true
	}
	return 0, false
}

// align rounds n up to a multiple of the format's alignment.
func align(n int64) int64 {
	return (n + alignment - 1) &^ (alignment - 1)
}

// shapeElems returns the product of shape, or an error when a dimension is
// negative or the product exceeds limit.
// Every dimension must lie in [0, limit] even when another one is zero, so
// that any shape accepted here converts to []int without overflow.
func shapeElems(shape []int64, limit int64) (int64, error) {
	zero := false
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d > limit {
			return 0, fmt.Errorf("shape %v has a dimension above %d", shape, limit)
		}
		zero = zero || d == 0
	}
	if zero {
		return 0, nil
	}
	n := int64(1)
	for _, d := range shape {
		if n > limit/d {
			return 0, fmt.Errorf("shape %v holds more than %d values", shape, limit)
		}
		n *= d
	}
	return n, nil
}

// maxElems is the largest element count for a given element size that both
// fits an int on this platform and keeps the byte length under maxDataBytes.
func maxElems(size int64) int64 {
	limit := int64(maxDataBytes) / size
	if int64(math.MaxInt) < limit {
		limit = int64(math.MaxInt)
	}
	return limit
}

// Prefixed returns arrays renamed prefix+name: how a container of
// sub-models (a tree's leaves "leaf<i>/", an ensemble's members
// "member<i>/") stores each one's arrays.
func Prefixed(prefix string, arrays []Array) []Array {
	out := make([]Array, len(arrays))
	for i, a := range arrays {
		a.Name = prefix + a.Name
		out[i] = a
	}
	return out
}

// SplitIndexed undoes Prefixed for n sub-models named base+index: it groups
// the arrays named "<base><i>/<name>" by i (0 ≤ i < n, written without sign
// or leading zero) with their names stripped, and returns the arrays that
// do not start with base apart. An array that starts with base but names no
// sub-model is an error naming it.
func SplitIndexed(arrays []Array, base string, n int) (groups [][]Array, rest []Array, err error) {
	groups = make([][]Array, n)
	for _, a := range arrays {
		tail, ok := strings.CutPrefix(a.Name, base)
		if !ok {
			rest = append(rest, a)
			continue
		}
		j := strings.IndexByte(tail, '/')
		i, perr := strconv.Atoi(tail[:max(j, 0)])
		if j < 1 || perr != nil || i < 0 || i >= n || strconv.Itoa(i) != tail[:j] {
			return nil, nil, fmt.Errorf("array %q names no %s", a.Name, base)
		}
		a.Name = tail[j+1:]
		groups[i] = append(groups[i], a)
	}
	return groups, rest, nil
}
