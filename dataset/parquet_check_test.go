package dataset

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// The Thrift walk refuses lengths and counts that the bytes cannot back,
// which the library would otherwise allocate before noticing.
func TestThriftScanBounds(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"empty struct", []byte{0}, true},
		{"i32 field and binary", []byte{0x15, 0x04, 0x18, 0x02, 'h', 'i', 0}, true},
		{"binary of 2 GiB", []byte{0x18, 0xff, 0xff, 0xff, 0xff, 0x07, 'x', 0}, false},
		{"list of a billion", []byte{0x19, 0xf5, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0}, false},
		{"map of a billion", []byte{0x1b, 0x80, 0x94, 0xeb, 0xdc, 0x03, 0x55, 0}, false},
		{"no stop", []byte{0x15, 0x04}, false},
		{"unknown type", []byte{0x1e, 0}, false},
		{"deep nesting", append(bytes.Repeat([]byte{0x1c}, 100), bytes.Repeat([]byte{0}, 101)...), false},
	} {
		s := &thriftScan{b: tc.b}
		err := s.structure(0, nil)
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// A column chunk whose recorded size cuts its last page short is refused
// before any page is decoded.
func TestParquetPagesInsideChunk(t *testing.T) {
	data := sampleParquet(t)
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := f.Metadata()
	lim := &limits{ctx: context.Background(), budget: 1 << 30}
	if err := checkParquetPages(bytes.NewReader(data), md, lim); err != nil {
		t.Fatalf("good file: %v", err)
	}
	md.RowGroups[0].Columns[2].MetaData.TotalCompressedSize -= 3
	err = checkParquetPages(bytes.NewReader(data), md, lim)
	if err == nil || !strings.HasPrefix(err.Error(), "row group 1, column 3: page at byte") {
		t.Fatalf("shortened chunk: %v", err)
	}
	md.RowGroups[0].Columns[2].MetaData.TotalCompressedSize += 3
	lim.budget = 10
	if err := checkParquetPages(bytes.NewReader(data), md, lim); err == nil || !strings.Contains(err.Error(), "exceed the memory budget") {
		t.Fatalf("tiny budget: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ReadContext(ctx, bytes.NewReader(data), "d.parquet", ReadOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled read: %v", err)
	}
}

// The row and cell counts of the footer are checked against the budget
// before decoding.
func TestParquetCellBudget(t *testing.T) {
	data := sampleParquet(t)
	path := filepath.Join(t.TempDir(), "d.parquet")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The file itself fits; its cells do not.
	_, err := ReadFile(path, ReadOptions{MemoryBudget: uint64(len(data)) + 100})
	if err == nil || !strings.Contains(err.Error(), "d.parquet: 3 rows × 8 columns") || !strings.Contains(err.Error(), "exceeds the memory budget for reading") {
		t.Fatalf("err %v", err)
	}
}
