package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// craft builds a file around an arbitrary header, with a valid checksum, so
// that header validation is tested behind an intact trailer.
func craft(version uint32, hdrLen uint64, hdr string, data []byte) []byte {
	var b bytes.Buffer
	b.WriteString(Magic)
	b.Write(binary.LittleEndian.AppendUint32(nil, version))
	b.Write(binary.LittleEndian.AppendUint64(nil, hdrLen))
	b.WriteString(hdr)
	for b.Len()%8 != 0 {
		b.WriteByte(0)
	}
	b.Write(data)
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	return b.Bytes()
}

// file crafts a version-1 file whose header length is correct.
func file(hdr string, data []byte) []byte {
	return craft(1, uint64(len(hdr)), hdr, data)
}

func TestCraftMatchesWrite(t *testing.T) {
	// If craft and Write agree on a valid file, the crafted cases below fail
	// only because of the field each one breaks.
	f := &File{Kind: "k", CreatedBy: "c", Arrays: []Array{
		{Name: "a", Shape: []int{1}, F32: []float32{1}},
		{Name: "b", Shape: []int{1}, F64: []float64{2}},
	}}
	hdr := `{"kind":"k","created_by":"c","meta":null,"arrays":[` +
		`{"name":"a","dtype":"float32","shape":[1],"offset":0,"length":4},` +
		`{"name":"b","dtype":"float64","shape":[1],"offset":8,"length":8}]}`
	data := append(binary.LittleEndian.AppendUint32(nil, 0x3f800000), 0, 0, 0, 0)
	data = binary.LittleEndian.AppendUint64(data, 0x4000000000000000)
	if got, want := file(hdr, data), encode(t, f); !bytes.Equal(got, want) {
		t.Fatalf("crafted file differs from Write output:\n%q\n%q", got, want)
	}
}

func TestReadErrors(t *testing.T) {
	valid := encode(t, sample())
	flipped := bytes.Clone(valid)
	flipped[len(flipped)-40] ^= 0x10 // inside the data section
	eight := make([]byte, 8)
	entry := func(name, dtype, shape string, off, length int64) string {
		return fmt.Sprintf(`{"name":%q,"dtype":%q,"shape":%s,"offset":%d,"length":%d}`, name, dtype, shape, off, length)
	}
	hdr := func(entries ...string) string {
		return `{"kind":"k","arrays":[` + strings.Join(entries, ",") + `]}`
	}
	okEntry := entry("a", "float64", "[1]", 0, 8)
	hugeHdr := hdr(entry("a", "float32", "[1125899906842624]", 0, 4<<50))

	tests := []struct {
		name    string
		data    []byte
		target  error
		message string
	}{
		{"empty", nil, ErrTruncated, "empty"},
		{"magic prefix", []byte("RFMMO"), ErrTruncated, "after 5 bytes, inside the preamble"},
		{"text file", []byte("x,y\n1,2\n3,4\n"), ErrNotModelFile, `not an rfm model file: it starts with "x,y\n1,2\n"`},
		{"short text", []byte("hi"), ErrNotModelFile, "not an rfm model file"},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), ErrNotModelFile, "not an rfm model file"},
		{"preamble cut", valid[:15], ErrTruncated, "after 15 bytes, inside the preamble"},
		{"version 0", craft(0, 2, "{}", nil), &VersionError{}, "version 0 is not a valid version"},
		{"absurd version", craft(1<<24, 2, "{}", nil), &VersionError{}, "version 16777216 is newer"},
		{"damaged version", func() []byte { b := bytes.Clone(valid); b[8] = 7; return b }(), ErrCorrupted, "version field reads 7"},
		{"damaged version 0", func() []byte { b := bytes.Clone(valid); b[8] = 0; return b }(), ErrCorrupted, "version field reads 0"},
		{"header length over limit", craft(1, MaxHeaderBytes+1, "{}", nil), ErrCorrupted, "over the 67108864-byte limit"},
		{"header length past end", craft(1, 1000, "{}", nil), ErrTruncated, "header length 1000"},
		{"header not json", file("kind=k", nil), ErrMalformedHeader, "invalid character"},
		{"header is array", file("[]", nil), ErrMalformedHeader, "cannot unmarshal array"},
		{"header trailing garbage", file(`{"kind":"k"}x`, nil), ErrMalformedHeader, "after top-level value"},
		{"missing kind", file(`{"arrays":[]}`, nil), ErrMalformedHeader, `missing "kind"`},
		{"no name", file(hdr(entry("", "float64", "[1]", 0, 8)), eight), ErrMalformedHeader, "array 0 has no name"},
		{"duplicate name", file(hdr(okEntry, entry("a", "float64", "[1]", 8, 8)), append(eight, eight...)), ErrDuplicateName, `"a" appears twice`},
		{"unknown dtype", file(hdr(entry("a", "int64", "[1]", 0, 8)), eight), ErrMalformedHeader, `unknown dtype "int64"`},
		{"length mismatch", file(hdr(entry("a", "float64", "[2]", 0, 8)), eight), ErrShapeMismatch, "needs 16 bytes, but its length is 8"},
		{"dtype size mismatch", file(hdr(entry("a", "float32", "[1]", 0, 8)), eight), ErrShapeMismatch, "needs 4 bytes"},
		{"negative length", file(hdr(entry("a", "float64", "[0]", 0, -8)), nil), ErrShapeMismatch, "its length is -8"},
		{"negative dim", file(hdr(entry("a", "float64", "[-1,-8]", 0, 64)), nil), ErrMalformedHeader, "negative dimension"},
		{"fractional dim", file(hdr(entry("a", "float64", "[1.5]", 0, 12)), nil), ErrMalformedHeader, "cannot unmarshal number 1.5"},
		{"overflowing shape", file(hdr(entry("a", "float64", "[4611686018427387904,4]", 0, 0)), nil), ErrMalformedHeader, "dimension above"},
		{"product overflow", file(hdr(entry("a", "float64", "[4294967296,4294967296]", 0, 0)), nil), ErrMalformedHeader, "holds more than"},
		{"zero dim beside huge dim", file(hdr(entry("a", "float64", "[0,4611686018427387904]", 0, 0)), nil), ErrMalformedHeader, "dimension above"},
		{"unaligned offset", file(hdr(entry("a", "float32", "[1]", 0, 4), entry("b", "float32", "[1]", 4, 4)), append(eight, eight...)), ErrMalformedHeader, "offset 4, expected 8"},
		{"gap before array", file(hdr(entry("a", "float64", "[1]", 8, 8)), append(eight, eight...)), ErrMalformedHeader, "offset 8, expected 0"},
		{"nonzero header padding", func() []byte {
			b := file(`{"kind":"kk"}`, nil) // 13-byte header: padding at bytes 33..39
			b[33] = 1
			sum := sha256.Sum256(b[:len(b)-32])
			copy(b[len(b)-32:], sum[:])
			return b
		}(), ErrCorrupted, "non-zero padding byte at offset 33"},
		{"nonzero array padding", file(hdr(entry("a", "float32", "[1]", 0, 4)), []byte{0, 0, 0, 0, 0, 9, 0, 0}), ErrCorrupted, "non-zero padding"},
		{"checksum mismatch", flipped, ErrCorrupted, "model file is corrupted: SHA-256 checksum mismatch"},
		{"trailer cut", valid[:len(valid)-1], ErrTruncated, fmt.Sprintf("expected %d bytes, got %d", len(valid), len(valid)-1)},
		{"data cut", valid[:len(valid)-40], ErrTruncated, fmt.Sprintf("expected %d bytes, got %d", len(valid), len(valid)-40)},
		{"array larger than input", file(hugeHdr, nil), ErrTruncated, fmt.Sprintf("expected %d bytes", int64(align(int64(20+len(hugeHdr))))+4<<50+32)},
		{"trailing data", append(bytes.Clone(valid), 0), ErrTrailingData, "extra data appended"},
		{"two files", append(bytes.Clone(valid), valid...), ErrTrailingData, "extra data appended"},
	}
	for _, tt := range tests {
		for _, rd := range readers {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				f, err := Read(rd.wrap(tt.data))
				if f != nil {
					t.Errorf("Read returned a File with error %v", err)
				}
				var ve *VersionError
				if _, isVersion := tt.target.(*VersionError); isVersion {
					if !errors.As(err, &ve) {
						t.Fatalf("error = %v, want a *VersionError", err)
					}
				} else if !errors.Is(err, tt.target) {
					t.Fatalf("error = %v, want %v", err, tt.target)
				}
				if !strings.Contains(err.Error(), tt.message) {
					t.Errorf("error %q does not contain %q", err, tt.message)
				}
				// Crafted files carry a valid checksum: not "corrupted".
				if tt.target != ErrCorrupted && errors.Is(err, ErrCorrupted) {
					t.Errorf("error %q claims corruption", err)
				}
			})
		}
	}
}

// TestDamagedHeaderIsCorrupted: damage that breaks the header is reported
// as corruption (the checksum fails), wrapping what broke.
func TestDamagedHeaderIsCorrupted(t *testing.T) {
	valid := encode(t, sample())
	hdr := string(valid[20 : 20+binary.LittleEndian.Uint64(valid[12:20])])
	after := func(s string) int {
		i := strings.Index(hdr, s)
		if i < 0 {
			t.Fatalf("%q not in header %s", s, hdr)
		}
		return 20 + i + len(s)
	}
	tests := []struct {
		name  string
		pos   int
		value byte
		cause error // nil: the header still parses, only the checksum fails
	}{
		{"broken JSON", 20, 'x', ErrMalformedHeader},
		{"shape digit", after(`"shape":[`), '3', ErrShapeMismatch},
		{"dtype", after(`"dtype":"float`), '1', ErrMalformedHeader},
		{"offset digit", after(`"name":"bias","dtype":"float64","shape":[],"offset":`), '9', ErrMalformedHeader},
		{"renamed array", after(`"name":"`), 'N', nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bad := bytes.Clone(valid)
			bad[tt.pos] = tt.value
			for _, rd := range readers {
				_, err := Read(rd.wrap(bad))
				if !errors.Is(err, ErrCorrupted) {
					t.Fatalf("%s: error = %v, want %v", rd.name, err, ErrCorrupted)
				}
				if tt.cause == nil {
					continue
				}
				if !errors.Is(err, tt.cause) || !strings.HasPrefix(err.Error(), "model file is corrupted (SHA-256 checksum mismatch): ") {
					t.Errorf("%s: error = %v, want corrupted wrapping %v", rd.name, err, tt.cause)
				}
			}
		})
	}
}

// TestEveryByteFlip changes each byte of a small file in several ways; Read
// must fail every time, with any reader.
func TestEveryByteFlip(t *testing.T) {
	valid := encode(t, sample())
	if len(valid) > 1024 {
		t.Fatalf("sample is %d bytes; keep it small so this test stays fast", len(valid))
	}
	bad := make([]byte, len(valid))
	for pos := range valid {
		// What the error must say depends on the field hit. Only a damaged
		// header length cannot be told from a cut file.
		want := []error{ErrCorrupted}
		switch {
		case pos < 8:
			want = []error{ErrNotModelFile}
		case pos >= 12 && pos < 20:
			want = []error{ErrCorrupted, ErrTruncated}
		}
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			copy(bad, valid)
			bad[pos] ^= mask
			for _, rd := range readers {
				f, err := Read(rd.wrap(bad))
				if err == nil || f != nil {
					t.Fatalf("%s: byte %d ^ %#02x: Read succeeded", rd.name, pos, mask)
				}
				if !slices.ContainsFunc(want, func(target error) bool { return errors.Is(err, target) }) {
					t.Fatalf("%s: byte %d ^ %#02x: error = %v, want one of %v", rd.name, pos, mask, err, want)
				}
			}
		}
	}
}

// TestEveryTruncation cuts the file at every length; Read must report
// truncation, with the lengths once the header has been read.
func TestEveryTruncation(t *testing.T) {
	valid := encode(t, sample())
	hdrEnd := 20 + int(binary.LittleEndian.Uint64(valid[12:20]))
	for n := range len(valid) {
		for _, rd := range readers {
			f, err := Read(rd.wrap(valid[:n]))
			if !errors.Is(err, ErrTruncated) || f != nil {
				t.Fatalf("%s: cut at %d of %d bytes: error = %v, want %v", rd.name, n, len(valid), err, ErrTruncated)
			}
			want := fmt.Sprintf("expected %d bytes, got %d", len(valid), n)
			if n >= hdrEnd && !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: cut at %d: error %q does not say %q", rd.name, n, err, want)
			}
		}
	}
}

// TestAbsurdSizesDoNotAllocate reads headers that announce far more data
// than the input holds, from a stream of unknown length, and checks that
// Read fails without allocating anything near the announced size.
func TestAbsurdSizesDoNotAllocate(t *testing.T) {
	many := make([]string, 100)
	for i := range many {
		many[i] = fmt.Sprintf(`{"name":"a%d","dtype":"float64","shape":[1099511627776],"offset":%d,"length":8796093022208}`, i, int64(i)*8796093022208)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"header length at the limit", craft(1, MaxHeaderBytes, `{"kind":"k"}`, nil)},
		{"4 PiB float32 array", file(`{"kind":"k","arrays":[{"name":"a","dtype":"float32","shape":[1125899906842624],"offset":0,"length":4503599627370496}]}`, bytes.Repeat([]byte{1}, 4096))},
		{"100 arrays of 8 TiB", file(`{"kind":"k","arrays":[`+strings.Join(many, ",")+`]}`, nil)},
	}
	for _, tt := range tests {
		for _, rd := range readers[:3] {
			t.Run(tt.name+"/"+rd.name, func(t *testing.T) {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				_, err := Read(rd.wrap(tt.data))
				runtime.ReadMemStats(&after)
				if !errors.Is(err, ErrTruncated) {
					t.Errorf("error = %v, want %v", err, ErrTruncated)
				}
				if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
					t.Errorf("Read allocated %d MiB for a %d-byte input", got>>20, len(tt.data))
				}
			})
		}
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	valid := encode(t, sample())

	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(dir, "missing.rfm")
		_, err := ReadFile(path)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("error = %v, want not-exist naming %s", err, path)
		}
	})
	t.Run("corrupted", func(t *testing.T) {
		path := filepath.Join(dir, "bad.rfm")
		bad := bytes.Clone(valid)
		bad[len(bad)-1] ^= 1
		if err := os.WriteFile(path, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path)
		if !errors.Is(err, ErrCorrupted) || !strings.Contains(err.Error(), path) {
			t.Errorf("error = %v, want %v naming %s", err, ErrCorrupted, path)
		}
	})
	t.Run("truncated on disk", func(t *testing.T) {
		path := filepath.Join(dir, "short.rfm")
		n := len(valid) - 10
		if err := os.WriteFile(path, valid[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := ReadFile(path)
		if !errors.Is(err, ErrTruncated) || !strings.Contains(err.Error(), fmt.Sprintf("expected %d bytes, got %d", len(valid), n)) {
			t.Errorf("error = %v", err)
		}
	})
	t.Run("os.File at an offset", func(t *testing.T) {
		// The size check must measure from the current position, not from 0.
		path := filepath.Join(dir, "embedded.bin")
		if err := os.WriteFile(path, append([]byte("prefix--"), valid...), 0o644); err != nil {
			t.Fatal(err)
		}
		fh, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.Seek(8, 0); err != nil {
			t.Fatal(err)
		}
		got, err := Read(fh)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		assertSameFile(t, sample(), got)
	})
	t.Run("pipe", func(t *testing.T) {
		// An *os.File that is not a regular file: size unknown, streamed.
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		go func() {
			w.Write(valid)
			w.Close()
		}()
		got, err := Read(r)
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		assertSameFile(t, sample(), got)
	})
}
