// Package modelfile stores fitted models in a versioned, self-contained,
// checksummed container file.
//
// The container knows nothing about RFM. A caller hands it a File: a Kind
// string (e.g. "rfm.Model"), a JSON metadata document, and named float64 or
// float32 arrays. Write stores them; Read verifies and returns them. Arrays
// may be hundreds of megabytes: both directions stream through bufio and
// hash on the way, and Read never allocates more than the input can hold.
//
// # Layout (format version 1)
//
// All integers are little-endian. Offsets are in bytes.
//
//	offset    size  field
//	0         8     magic "RFMMODEL"
//	8         4     format version, uint32 (1)
//	12        8     header length H, uint64 (at most MaxHeaderBytes)
//	20        H     header: UTF-8 JSON, see below
//	20+H      P     zero padding to the next multiple of 8 (P < 8)
//	D=20+H+P  L     data section: the arrays' raw values, see below
//	D+L       32    SHA-256 of bytes [0, D+L)
//
// The file ends right after the checksum. The header is a JSON object:
//
//	{"kind":"rfm.Model","created_by":"rfm v1.2.0","meta":{...},
//	 "arrays":[{"name":"alpha","dtype":"float64","shape":[1000,3],"offset":0,"length":24000}, ...]}
//
// meta is the caller's document (compacted). For each array, dtype is
// "float64" or "float32"; shape lists the dimensions ([] is a scalar), with
// values in row-major order; offset is relative to D; length is
// product(shape) × 8 or × 4. Arrays lie in directory order, each starting
// at the next multiple of 8 after the previous one, gaps filled with zero
// bytes; L is the end of the last array rounded up to a multiple of 8.
// FORMAT.md in this directory describes the format for users, with a
// reader in Python.
//
// # Errors
//
// Read distinguishes: not a model file (ErrNotModelFile), a newer format
// (*VersionError: "model file version 7 is newer than this build supports
// (1); upgrade rfm"), truncation (ErrTruncated, with expected and actual
// lengths), damage (ErrCorrupted: "model file is corrupted", e.g. checksum
// mismatch), a malformed header (ErrMalformedHeader), duplicate names
// (ErrDuplicateName), shapes that do not match lengths (ErrShapeMismatch)
// and extra bytes after the checksum (ErrTrailingData). When the header or
// version looks wrong, Read first checks the checksum over the rest of the
// input: a damaged file is reported as ErrCorrupted (still wrapping the
// specific error), so "malformed header" means a file that was written that
// way. Write rejects a File it could not read back with ErrInvalid,
// ErrDuplicateName or ErrShapeMismatch, before writing anything.
//
// # Model kinds
//
// A File's Kind names what it holds ("rfm.Model", "rfm.Tree",
// "rfm.Ensemble"). Each model package registers a decoder for its kind in
// its init function (RegisterKind), as image formats register with package
// image; Decode reads any registered kind. Adding a model kind is one
// package and one registration: readers that import the package read its
// files, with no switch to edit elsewhere. A kind no imported package
// registered is an error naming it and the kinds this program reads.
//
// # Files on disk
//
// WriteFileAtomic and ReadFile work on paths. WriteAtomic is the general
// helper behind WriteFileAtomic: any output (CSV predictions, JSON reports)
// written through it appears complete or not at all, and temporary files of
// a killed earlier writer are cleaned up. The ...Context variants let a
// cancelled context end the wait for a named pipe's reader.
//
// What this package is not: a general serialization library (no integer or
// string arrays, no compression, no memory mapping), nor the place that
// decides what an RFM model contains; that belongs to the rfm package.
// Files contain no timestamps, so writing the same File with the same
// CreatedBy gives the same bytes.
package modelfile
