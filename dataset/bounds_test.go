package dataset

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

// countingReader serves an endless repetition of unit, counting reads.
type countingReader struct {
	prefix []byte // served once, first
	unit   []byte
	off    int
	reads  int
	// onRead runs before each read (after the count), e.g. to cancel.
	onRead func(n int)
}

func (r *countingReader) Read(p []byte) (int, error) {
	r.reads++
	if r.onRead != nil {
		r.onRead(r.reads)
	}
	n := copy(p, r.prefix)
	r.prefix = r.prefix[n:]
	for n < len(p) {
		k := copy(p[n:], r.unit[r.off:])
		n += k
		r.off = (r.off + k) % len(r.unit)
	}
	return n, nil
}

// Cancelling during a read of an endless stream stops it at the next
// check: the reader makes at most a couple more reads of the source.
func TestReadCancelledMidStream(t *testing.T) {
	for _, format := range []string{"csv", "libsvm", "npy"} {
		t.Run(format, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			unit, prefix := []byte("1,2\n"), []byte(nil)
			switch format {
			case "libsvm":
				unit = []byte("1 1:2\n")
			case "npy":
				unit, prefix = []byte{1, 2, 3, 4}, npyBytes(1, "|u1", false, "(1000000000, 1)", nil)
			}
			const cancelAt = 50
			src := &countingReader{prefix: prefix, unit: unit, onRead: func(n int) {
				if n == cancelAt {
					cancel()
				}
			}}
			_, err := ReadContext(ctx, src, "endless", ReadOptions{Format: format, MemoryBudget: 1 << 40})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want context.Canceled", err)
			}
			if src.reads > cancelAt+2 {
				t.Errorf("%d reads of the source, cancelled at read %d", src.reads, cancelAt)
			}
		})
	}
}

// A context cancelled before the read starts stops it before any parsing.
func TestReadCancelledBefore(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	src := &countingReader{unit: []byte("a,b\n")}
	if _, err := ReadContext(ctx, src, "x.csv", ReadOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if src.reads > 0 {
		t.Errorf("%d reads after cancellation", src.reads)
	}
}

// blockingReader blocks every read until closed, as a silent pipe does.
type blockingReader struct{ release chan struct{} }

func (b blockingReader) Read(p []byte) (int, error) {
	<-b.release
	return 0, io.EOF
}

// A source that never delivers (a silent pipe or terminal) does not pin the
// reader: cancelling returns at once with context.Canceled.
func TestReadCancelWhileBlocked(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	src := blockingReader{make(chan struct{})}
	defer close(src.release)
	done := make(chan error, 1)
	go func() {
		_, err := ReadContext(ctx, src, "<stdin>", ReadOptions{Format: "csv"})
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

func TestReadBounds(t *testing.T) {
	gz := func(s string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.String()
	}
	rows := "a,b,y\n" + strings.Repeat("1.5,2.5,3\n", 10000)
	long := "a,b\n1," + strings.Repeat("7", MaxLineBytes) + "\n"
	for _, tc := range []struct {
		name, in string
		opt      ReadOptions
		want     string
	}{
		{"nul byte", "a,b\n1,2\n3,\x004\n", ReadOptions{}, `t.csv: line 3, column 2 ("b"): NUL byte: this is binary data, not a text table`},
		{"nul first", "\x00\x00\x00", ReadOptions{}, `t.csv: line 1, column 1: NUL byte: this is binary data, not a text table`},
		{"utf8 split", "a,b\n1,\xe2\x82\n", ReadOptions{}, `t.csv: line 2, column 2 ("b"): invalid UTF-8; save the file as UTF-8`},
		{"long line", long, ReadOptions{}, `t.csv: line 2: line is longer than 16 MiB; is this a text table?`},
		{"text budget", rows, ReadOptions{MemoryBudget: 50000}, "exceeds the memory budget for reading (48.8 KiB) after"},
		{"cells budget", rows, ReadOptions{MemoryBudget: 400000}, "t.csv: line 3138: the table (3136 rows of 3 columns so far) exceeds the memory budget for reading (390.6 KiB)"},
		{"libsvm nul", "1 1:2\n1 1:\x00\n", ReadOptions{Format: "libsvm"}, "t.csv: line 2: NUL byte: this is binary data, not a text table (byte 5 of the line)"},
		{"libsvm budget", strings.Repeat("1 1:2 2:3 3:4\n", 10000), ReadOptions{Format: "libsvm", MemoryBudget: 100000}, "t.csv: line 521: the data (521 lines so far) exceeds the memory budget for reading (97.7 KiB)"},
		{"gzip truncated", gz(rows)[:200], ReadOptions{}, "t.csv: truncated gzip stream: the file ends before the compressed data does"},
		{"gzip header cut", gz(rows)[:5], ReadOptions{}, "t.csv: truncated gzip stream: the file ends inside the gzip header"},
		{"gzip of zeros", gz(string(make([]byte, 1<<20))), ReadOptions{}, "t.csv: line 1, column 1: NUL byte"},
		{"npy budget", string(npyBytes(1, "<f8", false, "(1000, 10)", make([]byte, 80000))), ReadOptions{Format: "npy", MemoryBudget: 200000}, "t.csv: the array of shape (1000, 10) exceeds the memory budget for reading (195.3 KiB)"},
		{"npy past its shape", string(npyBytes(1, "|u1", false, "(100,)", make([]byte, 300000))), ReadOptions{Format: "npy", MemoryBudget: 200000}, "t.csv: the data runs past the 228 bytes that the NPY header's shape and type make"},
		{"npz budget", "PK" + strings.Repeat("x", 300000), ReadOptions{Format: "npz", MemoryBudget: 200000}, "t.csv: the input (more than 200000 bytes) exceeds the memory budget"},
		{"npy header budget", string(npyBytes(1, "<f8", false, "(1000000, 100)", make([]byte, 100000))), ReadOptions{Format: "npy", MemoryBudget: 1 << 30}, "t.csv: the array of shape (1000000, 100) exceeds the memory budget for reading (1.0 GiB)"},
		{"not npy", strings.Repeat("\x00", 100000), ReadOptions{Format: "npy"}, `t.csv: not an NPY file (it does not start with \x93NUMPY)`},
		{"not parquet", strings.Repeat("\x00", 100000), ReadOptions{Format: "parquet"}, `t.csv: not a readable Parquet file: no PAR1 magic at the start`},
		{"not npz", strings.Repeat("\x00", 100000), ReadOptions{Format: "npz"}, `t.csv: not a valid .npz (zip) archive: it does not start with PK`},
		{"npz bomb", string(npzBytes(t, zip.Deflate, map[string][]byte{"X.npy": npyBytes(1, "<f8", false, "(100000, 10)", make([]byte, 8000000))})), ReadOptions{Format: "npz", MemoryBudget: 1 << 20}, `t.csv: array "X" (8000128 bytes uncompressed) exceeds the memory budget for reading (1.0 MiB)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in), "t.csv", tc.opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got  %v\nwant %s", err, tc.want)
			}
			checkErr(t, err)
		})
	}
}

// The same table reads the same whatever chunk boundaries the source has,
// including boundaries inside multi-byte characters.
func TestReadChunkBoundaries(t *testing.T) {
	in := "名前,y\n" + strings.Repeat("αβγ,1\n€uro,2\n", 300)
	want, err := Read(strings.NewReader(in), "t.csv", ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []int{1, 2, 3, 5, 4093} {
		got, err := Read(&stepReader{s: in, step: step}, "t.csv", ReadOptions{})
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		c0, _ := got.Column("名前")
		w0, _ := want.Column("名前")
		if got.NRows() != want.NRows() || c0.Str[599] != w0.Str[599] || c0.Str[0] != "αβγ" {
			t.Fatalf("step %d: %d rows, last %q", step, got.NRows(), c0.Str[got.NRows()-1])
		}
	}
}

// stepReader returns at most step bytes per read.
type stepReader struct {
	s    string
	step int
}

func (r *stepReader) Read(p []byte) (int, error) {
	if r.s == "" {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.step)], r.s)
	r.s = r.s[n:]
	return n, nil
}

func TestColumnBound(t *testing.T) {
	in := strings.Repeat("a,", MaxColumns) + "b\n"
	_, err := Read(strings.NewReader(in), "wide.csv", ReadOptions{})
	if want := "wide.csv: line 1: 1048577 fields; at most 1048576 columns are supported"; err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}
