package atomicfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/testutil"
)

func text(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func TestStale(t *testing.T) {
	now := time.Now()
	base := "m.csv"
	tests := []struct {
		name string
		age  time.Duration
		want bool
	}{
		{".m.csv.tmp-0123456789ab", time.Minute, false},
		{".m.csv.tmp-0123456789ab", 2 * time.Hour, true},
		{".m.csv.tmp123456", 2 * time.Hour, true},
		{".m.csv.tmp123456", time.Minute, false},
		{".m.csv.tmpx", 48 * time.Hour, false},
		{fmt.Sprintf(".m.csv.tmp-%d-0123456789ab", os.Getpid()), time.Minute, false},
		{fmt.Sprintf(".m.csv.tmp-%d-0123456789ab", os.Getpid()), 48 * time.Hour, true}, // pid reused
		{".n.csv.tmp-0123456789ab", 48 * time.Hour, false},
		{"m.csv", 48 * time.Hour, false},
	}
	for _, tt := range tests {
		if got := Stale(tt.name, base, now.Add(-tt.age), now); got != tt.want {
			t.Errorf("Stale(%q, age %v) = %v, want %v", tt.name, tt.age, got, tt.want)
		}
	}
}

// Two writers of the same file at once: both succeed, neither deletes the
// other's temporary file, and the file is one of the two outputs whole.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.tsv")
	a, b := strings.Repeat("a", 3<<20), strings.Repeat("b", 3<<20)
	errs := make(chan error, 2)
	for _, s := range []string{a, b} {
		go func() { errs <- Write(context.Background(), out, text(s)) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(got); s != a && s != b {
		t.Fatalf("the file is a mix of the two writes (%d bytes)", len(got))
	}
	if n := testutil.DirNames(t, dir); !slices.Equal(n, []string{"r.tsv"}) {
		t.Fatalf("directory holds %v", n)
	}
}

// A failed write to a temporary file names the target once.
func TestErrorNamesPathOnce(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.csv")
	boom := errors.New("boom")
	err := Write(context.Background(), out, func(io.Writer) error { return &os.PathError{Op: "write", Path: out, Err: boom} })
	if !errors.Is(err, boom) || strings.Count(err.Error(), out) != 1 {
		t.Fatalf("error %v: want %q once and the cause", err, out)
	}
}
