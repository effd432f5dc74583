package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

var update = flag.Bool("update", false, "rewrite testdata/v1.rfm")

// Values whose bits a careless float conversion would change.
var (
	nanQuiet   = math.Float64frombits(0x7ff8000000000001) // quiet NaN with payload
	nanSignal  = math.Float64frombits(0x7ff0000000000001) // signalling NaN
	nanNeg     = math.Float64frombits(0xfff8dead0000beef) // negative NaN with payload
	negZero    = math.Copysign(0, -1)
	subnormal  = math.Float64frombits(1)
	nan32Quiet = math.Float32frombits(0x7fc00001)
	nan32Sig   = math.Float32frombits(0x7f800001)
	nan32Neg   = math.Float32frombits(0xffc0beef)
	negZero32  = float32(math.Copysign(0, -1))
)

// sample is a small file using every feature: both dtypes, odd float32
// lengths (padding), a scalar, an empty array, special values and meta.
func sample() *File {
	return &File{
		Kind:      "rfm.Model",
		CreatedBy: "modelfile test",
		Meta:      json.RawMessage(`{"kernel":"laplace","bandwidth":10,"classes":["a","b<c>"]}`),
		Arrays: []Array{
			{Name: "M", Shape: []int{2, 2}, F64: []float64{1, negZero, nanQuiet, math.Inf(-1)}},
			{Name: "alpha", Shape: []int{3}, F32: []float32{nan32Quiet, negZero32, 1.5}},
			{Name: "bias", Shape: []int{}, F64: []float64{nanSignal}},
			{Name: "empty", Shape: []int{0, 4}, F32: []float32{}},
			{Name: "centers", Shape: []int{1, 3}, F64: []float64{nanNeg, subnormal, -math.MaxFloat64}},
			{Name: "f32tail", Shape: []int{1}, F32: []float32{nan32Sig}},
		},
	}
}

func encode(t testing.TB, f *File) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Write(&buf, f); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return buf.Bytes()
}

// onlyReader hides every method but Read, so Read cannot learn the size.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// readers are the ways a file reaches Read: with a known size (Len, Seek)
// and as a stream of unknown length, in big or one-byte reads.
var readers = []struct {
	name string
	wrap func([]byte) io.Reader
}{
	{"bytes.Reader", func(b []byte) io.Reader { return bytes.NewReader(b) }},
	{"seeker", func(b []byte) io.Reader { return io.NewSectionReader(bytes.NewReader(b), 0, int64(len(b))) }},
	{"stream", func(b []byte) io.Reader { return onlyReader{bytes.NewReader(b)} }},
	{"one-byte", func(b []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(b)) }},
}

// assertSameFile compares bit patterns, so NaN payloads and -0 count.
func assertSameFile(t *testing.T, want, got *File) {
	t.Helper()
	if got.Kind != want.Kind {
		t.Errorf("Kind = %q, want %q", got.Kind, want.Kind)
	}
	wantVersion := want.FormatVersion
	if wantVersion == 0 {
		wantVersion = BaseVersion
	}
	if got.FormatVersion != wantVersion {
		t.Errorf("FormatVersion = %d, want %d", got.FormatVersion, wantVersion)
	}
	wantBy := want.CreatedBy
	if wantBy == "" {
		wantBy = DefaultCreatedBy()
	}
	if got.CreatedBy != wantBy {
		t.Errorf("CreatedBy = %q, want %q", got.CreatedBy, wantBy)
	}
	if w := compactJSON(t, want.Meta); !bytes.Equal(got.Meta, w) {
		t.Errorf("Meta = %s, want %s", got.Meta, w)
	}
	if len(got.Arrays) != len(want.Arrays) {
		t.Fatalf("%d arrays, want %d", len(got.Arrays), len(want.Arrays))
	}
	for i := range want.Arrays {
		w, g := &want.Arrays[i], &got.Arrays[i]
		if g.Name != w.Name {
			t.Errorf("array %d: name %q, want %q", i, g.Name, w.Name)
		}
		if fmt.Sprint(g.Shape) != fmt.Sprint(w.Shape) || g.Shape == nil {
			t.Errorf("array %q: shape %#v, want %v", w.Name, g.Shape, w.Shape)
		}
		if (g.F64 == nil) != (w.F64 == nil) || (g.F32 == nil) != (w.F32 == nil) {
			t.Fatalf("array %q: dtype changed (F64 nil %v, F32 nil %v)", w.Name, g.F64 == nil, g.F32 == nil)
		}
		if len(g.F64) != len(w.F64) || len(g.F32) != len(w.F32) {
			t.Fatalf("array %q: length %d, want %d", w.Name, g.Len(), w.Len())
		}
		for j := range w.F64 {
			if math.Float64bits(g.F64[j]) != math.Float64bits(w.F64[j]) {
				t.Errorf("array %q[%d] = %#016x, want %#016x", w.Name, j, math.Float64bits(g.F64[j]), math.Float64bits(w.F64[j]))
			}
		}
		for j := range w.F32 {
			if math.Float32bits(g.F32[j]) != math.Float32bits(w.F32[j]) {
				t.Errorf("array %q[%d] = %#08x, want %#08x", w.Name, j, math.Float32bits(g.F32[j]), math.Float32bits(w.F32[j]))
			}
		}
	}
}

func compactJSON(t *testing.T, m json.RawMessage) []byte {
	t.Helper()
	if len(bytes.TrimSpace(m)) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Compact(&b, m); err != nil {
		t.Fatalf("compact %s: %v", m, err)
	}
	if b.String() == "null" {
		return nil
	}
	return b.Bytes()
}

func seq64(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(i)*1.25 - 7
	}
	return v
}

func seq32(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i)*0.5 + 3
	}
	return v
}

func TestRoundTrip(t *testing.T) {
	chunk64 := ioBufSize / 8 // values per conversion chunk
	tests := []struct {
		name string
		f    *File
	}{
		{"sample", sample()},
		{"no arrays, no meta", &File{Kind: "k"}},
		{"meta null", &File{Kind: "k", Meta: json.RawMessage(" null ")}},
		{"meta with whitespace", &File{Kind: "k", Meta: json.RawMessage("{ \"a\" : [1, 2],\n \"b\": \"<&>\" }")}},
		{"meta scalar", &File{Kind: "k", Meta: json.RawMessage(`"just a string"`)}},
		{"default created-by", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{1}, F64: []float64{2}}}}},
		{"unicode and json-special names", &File{Kind: "rfm.Model/ü", Arrays: []Array{
			{Name: `a"b\c`, Shape: []int{1}, F64: []float64{1}},
			{Name: "名前<>&", Shape: []int{1}, F32: []float32{1}},
		}}},
		{"f64 chunk-1", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{chunk64 - 1}, F64: seq64(chunk64 - 1)}}}},
		{"f64 chunk", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{chunk64}, F64: seq64(chunk64)}}}},
		{"f64 chunk+1", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{chunk64 + 1}, F64: seq64(chunk64 + 1)}}}},
		{"f32 2chunks+1", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{2*chunk64*2 + 1}, F32: seq32(2*chunk64*2 + 1)}}}},
		// Bigger than growStartBytes, so the stream readers must grow the slice.
		{"grow past initial allocation", &File{Kind: "k", Arrays: []Array{
			{Name: "a", Shape: []int{300, 1000}, F64: seq64(300_000)},
			{Name: "b", Shape: []int{3, 100_001}, F32: seq32(300_003)},
		}}},
	}
	for _, tt := range tests {
		data := encode(t, tt.f)
		for _, rd := range readers {
			if rd.name == "one-byte" && len(data) > 1<<16 {
				continue // slow and adds nothing over "stream"
			}
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				got, err := Read(rd.wrap(data))
				if err != nil {
					t.Fatalf("Read: %v", err)
				}
				assertSameFile(t, tt.f, got)
				for _, a := range got.Arrays {
					if cap(a.F64) != len(a.F64) || cap(a.F32) != len(a.F32) {
						t.Errorf("array %q: capacity %d for %d values: memory wasted", a.Name, max(cap(a.F64), cap(a.F32)), a.Len())
					}
				}
				// Reading and writing again reproduces the same bytes.
				if again := encode(t, got); !bytes.Equal(again, data) {
					t.Errorf("rewrite of the read file differs from the original (%d vs %d bytes)", len(again), len(data))
				}
			})
		}
	}
}

func TestWriteDeterministic(t *testing.T) {
	a, b := encode(t, sample()), encode(t, sample())
	if !bytes.Equal(a, b) {
		t.Fatal("two writes of the same File differ")
	}
}

// TestLayout checks the byte layout documented in doc.go and FORMAT.md
// field by field, independently of Read.
func TestLayout(t *testing.T) {
	f := sample()
	data := encode(t, f)
	if string(data[:8]) != "RFMMODEL" {
		t.Errorf("magic = %q", data[:8])
	}
	if v := binary.LittleEndian.Uint32(data[8:12]); v != 1 {
		t.Errorf("version = %d, want 1", v)
	}
	h := binary.LittleEndian.Uint64(data[12:20])
	if h == 0 || 20+h > uint64(len(data)) {
		t.Fatalf("header length %d out of range for a %d-byte file", h, len(data))
	}
	var hdr struct {
		Kind      string          `json:"kind"`
		CreatedBy string          `json:"created_by"`
		Meta      json.RawMessage `json:"meta"`
		Arrays    []struct {
			Name   string `json:"name"`
			DType  string `json:"dtype"`
			Shape  []int  `json:"shape"`
			Offset int    `json:"offset"`
			Length int    `json:"length"`
		} `json:"arrays"`
	}
	if err := json.Unmarshal(data[20:20+h], &hdr); err != nil {
		t.Fatalf("header is not JSON: %v", err)
	}
	if hdr.Kind != f.Kind || hdr.CreatedBy != f.CreatedBy || !bytes.Equal(hdr.Meta, compactJSON(t, f.Meta)) {
		t.Errorf("header fields: kind %q created_by %q meta %s", hdr.Kind, hdr.CreatedBy, hdr.Meta)
	}
	start := int((20 + h + 7) / 8 * 8)
	for _, b := range data[20+h : start] {
		if b != 0 {
			t.Errorf("header padding not zero: % x", data[20+h:start])
		}
	}
	end := start
	for i, e := range hdr.Arrays {
		a := f.Arrays[i]
		size := map[string]int{"float64": 8, "float32": 4}[e.DType]
		if e.Name != a.Name || fmt.Sprint(e.Shape) != fmt.Sprint(a.Shape) || size == 0 || e.Length != a.Len()*size {
			t.Errorf("directory entry %d = %+v, array %q shape %v len %d", i, e, a.Name, a.Shape, a.Len())
		}
		if e.Offset%8 != 0 || e.Offset < end-start {
			t.Errorf("array %q: offset %d not aligned or overlapping (previous end %d)", e.Name, e.Offset, end-start)
		}
		raw := data[start+e.Offset : start+e.Offset+e.Length]
		for j := range a.Len() {
			var ok bool
			if a.F64 != nil {
				ok = binary.LittleEndian.Uint64(raw[8*j:]) == math.Float64bits(a.F64[j])
			} else {
				ok = binary.LittleEndian.Uint32(raw[4*j:]) == math.Float32bits(a.F32[j])
			}
			if !ok {
				t.Errorf("array %q value %d: wrong raw bytes % x", e.Name, j, raw)
			}
		}
		end = start + e.Offset + e.Length
	}
	trailer := len(data) - 32
	if trailer%8 != 0 || trailer < end || trailer-end >= 8 {
		t.Errorf("trailer at %d, arrays end at %d: want the next multiple of 8", trailer, end)
	}
	if sum := sha256.Sum256(data[:trailer]); !bytes.Equal(sum[:], data[trailer:]) {
		t.Error("trailer is not the SHA-256 of the preceding bytes")
	}
}

// TestGolden pins format version 1: files written today must stay readable,
// and the writer must not drift. Regenerate only on a deliberate format
// change (which also bumps CurrentVersion): go test -run Golden -update.
func TestGolden(t *testing.T) {
	path := filepath.Join("testdata", "v1.rfm")
	data := encode(t, sample())
	if *update {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	golden, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update once to create it)", err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatalf("ReadFile(golden): %v", err)
	}
	assertSameFile(t, sample(), got)
	if !bytes.Equal(data, golden) {
		t.Errorf("Write output (%d bytes) differs from %s (%d bytes): the format changed", len(data), path, len(golden))
	}
}

func TestArrayLookup(t *testing.T) {
	f := sample()
	for _, tt := range []struct {
		name string
		ok   bool
		len  int
	}{{"M", true, 4}, {"alpha", true, 3}, {"empty", true, 0}, {"m", false, 0}, {"", false, 0}} {
		a, ok := f.Array(tt.name)
		if ok != tt.ok || (ok && (a.Name != tt.name || a.Len() != tt.len)) {
			t.Errorf("Array(%q) = %v, %v; want ok=%v len %d", tt.name, a, ok, tt.ok, tt.len)
		}
	}
	// The result points into f, not at a copy.
	a, _ := f.Array("M")
	a.F64[0] = 42
	if f.Arrays[0].F64[0] != 42 {
		t.Error("Array returned a copy")
	}
	var nilFile *File
	if _, ok := nilFile.Array("M"); ok {
		t.Error("nil File found an array")
	}
}

func TestWriteRejects(t *testing.T) {
	ok := []float64{1, 2}
	tests := []struct {
		name    string
		f       *File
		target  error
		message string
	}{
		{"nil file", nil, ErrInvalid, "nil *File"},
		{"empty kind", &File{}, ErrInvalid, "Kind is empty"},
		{"future version", &File{Kind: "k", FormatVersion: CurrentVersion + 1}, ErrInvalid, fmt.Sprintf("cannot write format version %d", CurrentVersion+1)},
		{"version below the first", &File{Kind: "k", FormatVersion: -1}, ErrInvalid, "cannot write format version -1"},
		{"kind not utf-8", &File{Kind: "\xff"}, ErrInvalid, "not valid UTF-8"},
		{"bad meta", &File{Kind: "k", Meta: json.RawMessage(`{"a":`)}, ErrInvalid, "Meta is not valid JSON"},
		{"empty name", &File{Kind: "k", Arrays: []Array{{Shape: []int{2}, F64: ok}}}, ErrInvalid, "empty name"},
		{"name not utf-8", &File{Kind: "k", Arrays: []Array{{Name: "a\xfe", Shape: []int{2}, F64: ok}}}, ErrInvalid, "not valid UTF-8"},
		{"duplicate", &File{Kind: "k", Arrays: []Array{
			{Name: "x", Shape: []int{2}, F64: ok}, {Name: "y", Shape: []int{2}, F64: ok}, {Name: "x", Shape: []int{1}, F32: []float32{1}},
		}}, ErrDuplicateName, `"x"`},
		{"both dtypes", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{2}, F64: ok, F32: []float32{1, 2}}}}, ErrInvalid, "both F64 and F32"},
		{"no data", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{0}}}}, ErrInvalid, "no data"},
		{"shape too small", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{1}, F64: ok}}}, ErrShapeMismatch, "shape [1] holds 1 values, but F64 has 2"},
		{"missing shape", &File{Kind: "k", Arrays: []Array{{Name: "x", F32: []float32{1, 2}}}}, ErrShapeMismatch, "F32 has 2"},
		{"negative dim", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{-1, -2}, F64: ok}}}, ErrShapeMismatch, "negative"},
		{"overflowing shape", &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{1 << 20, 1 << 20, 1 << 20}, F64: ok}}}, ErrShapeMismatch, "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, tt.f)
			if !errors.Is(err, tt.target) || !strings.Contains(fmt.Sprint(err), tt.message) {
				t.Fatalf("Write error = %v; want %v containing %q", err, tt.target, tt.message)
			}
			if buf.Len() != 0 {
				t.Errorf("Write wrote %d bytes for an invalid File", buf.Len())
			}
		})
	}
}

// failWriter accepts limit bytes, then fails.
type failWriter struct {
	limit int
	n     int
}

var errDiskFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		k := max(w.limit-w.n, 0)
		w.n += k
		return k, errDiskFull
	}
	w.n += len(p)
	return len(p), nil
}

func TestWriteReportsWriterErrors(t *testing.T) {
	f := &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{100_000}, F64: seq64(100_000)}}}
	size := len(encode(t, f))
	for _, limit := range []int{0, 1, 19, 20, ioBufSize - 1, ioBufSize, 3 * ioBufSize, size - 32, size - 1} {
		err := Write(&failWriter{limit: limit}, f)
		if !errors.Is(err, errDiskFull) {
			t.Errorf("writer failing after %d of %d bytes: Write error = %v, want %v", limit, size, err, errDiskFull)
		}
	}
	if err := Write(&failWriter{limit: size}, f); err != nil {
		t.Errorf("writer with exactly enough room: %v", err)
	}
}

func BenchmarkWrite(b *testing.B) {
	f := &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{1 << 20}, F64: seq64(1 << 20)}}}
	b.SetBytes(8 << 20)
	for b.Loop() {
		if err := Write(io.Discard, f); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	f := &File{Kind: "k", Arrays: []Array{{Name: "x", Shape: []int{1 << 20}, F64: seq64(1 << 20)}}}
	data := encode(b, f)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

// DecodeMeta refuses another kind and bad JSON with the caller's words,
// and decodes the metadata of the right kind.
func TestDecodeMeta(t *testing.T) {
	var meta struct{ N int }
	f := &File{Kind: "x.Model", Meta: json.RawMessage(`{"N": 3}`)}
	if err := f.DecodeMeta("y.Model", "a y model", "y", &meta); err == nil || err.Error() != `model file holds a "x.Model", not a y model` {
		t.Errorf("other kind: %v", err)
	}
	if err := f.DecodeMeta("x.Model", "an x model", "x", &meta); err != nil || meta.N != 3 {
		t.Errorf("decoded N = %d, err %v", meta.N, err)
	}
	f.Meta = json.RawMessage(`{"N": "three"}`)
	if err := f.DecodeMeta("x.Model", "an x model", "x", &meta); err == nil || !strings.HasPrefix(err.Error(), "x metadata: ") {
		t.Errorf("bad JSON: %v", err)
	}
}

// Each version from BaseVersion to CurrentVersion is written as asked (0
// as BaseVersion) into the version field and read back; the layout is the
// same.
func TestWriteVersions(t *testing.T) {
	for v := 0; v <= CurrentVersion; v++ {
		f := sample()
		f.FormatVersion = v
		data := encode(t, f)
		want := max(v, BaseVersion)
		if got := binary.LittleEndian.Uint32(data[8:12]); got != uint32(want) {
			t.Errorf("FormatVersion %d: version field %d, want %d", v, got, want)
		}
		got, err := Read(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("version %d: %v", want, err)
		}
		assertSameFile(t, f, got)
		base := encode(t, sample())
		if v > BaseVersion && !bytes.Equal(data[12:len(data)-checksumLen], base[12:len(base)-checksumLen]) {
			t.Errorf("version %d: the bytes between the version field and the checksum differ from version %d's", v, BaseVersion)
		}
	}
}
