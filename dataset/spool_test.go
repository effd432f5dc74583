package dataset

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
)

// onlyReader hides a reader's length, as a pipe does.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// allocated is what fn allocates in all (garbage included).
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// An input of unknown size over the in-memory head is spooled and read
// back into one buffer of its size: it allocates about its size (the
// head, a copy buffer, the result), where doubling a buffer allocates
// three to four times it. The bytes come back unchanged; over the limit
// it is the budget error.
func TestReadAllBoundedSpoolsStreams(t *testing.T) {
	defer func(v int) { spoolAfter = v }(spoolAfter)
	spoolAfter = 1 << 20
	data := bytes.Repeat([]byte("0.123456,7.5,abc\n"), 9<<20/17) // ~9 MiB
	lim := &limits{ctx: context.Background(), budget: 64 << 20}
	var got []byte
	var err error
	spooled := allocated(func() { got, err = readAllBounded(onlyReader{bytes.NewReader(data)}, lim, "pipe", 64<<20) })
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("spooled read: %d bytes, %v", len(got), err)
	}
	doubled := allocated(func() { got, err = growRead(onlyReader{bytes.NewReader(data)}, lim, "pipe", 64<<20, nil, 0) })
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("doubling read: %v", err)
	}
	t.Logf("%d bytes: spooled %d allocated, doubling %d", len(data), spooled, doubled)
	if spooled > uint64(len(data))*3/2 {
		t.Errorf("the spooled read allocated %d bytes for %d", spooled, len(data))
	}
	if doubled < 2*uint64(len(data)) {
		t.Errorf("doubling allocated only %d: the comparison means nothing", doubled)
	}
	if _, err := readAllBounded(onlyReader{bytes.NewReader(data)}, lim, "pipe", 4<<20); err == nil || !strings.Contains(err.Error(), "exceeds the memory budget") {
		t.Errorf("over the limit: %v", err)
	}
	// Through the public reader, gzipped: the same table as the plain text.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	io.WriteString(zw, "a,b\n"+strings.Repeat("1.5,2\n", 300000))
	zw.Close()
	tb, err := ReadContext(context.Background(), onlyReader{&z}, "in.csv.gz", ReadOptions{MemoryBudget: 64 << 20})
	if err != nil || tb.NRows() != 300000 {
		t.Fatalf("gzip stream: %v", err)
	}
}

// A NUL byte met while the first piece of a file is read in pieces (the
// delimiter not yet detected) is reported at its column, as a whole read
// reports it.
func TestChunksNULColumn(t *testing.T) {
	path := t.TempDir() + "/x.csv"
	if err := os.WriteFile(path, []byte("a;b;c\n1;2;3\n4;5;6\n7;8\x009;1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, whole := ReadFile(path, ReadOptions{})
	pieces := ReadFileChunks(context.Background(), path, ReadOptions{}, 0, func(*Table) error { return nil })
	for _, err := range []error{whole, pieces} {
		if err == nil || !strings.Contains(err.Error(), `line 4, column 2 ("b"): NUL byte`) {
			t.Errorf("got %v", err)
		}
	}
}
