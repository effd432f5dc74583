//go:build unix

package atomicfile

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/testutil"
)

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A writer killed during its write (kill -9) leaves its temporary file;
// the next write removes it, but not the temporary file of a writer that
// still runs, nor files that only look alike.
func TestWriteRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "model.rfm")
	dead := fmt.Sprintf(".model.rfm.tmp-%d-0123456789ab", deadPID(t))
	live := fmt.Sprintf(".model.rfm.tmp-%d-0123456789ab", os.Getpid())
	legacyOld := ".model.rfm.tmp-a1b2c3d4e5f6"
	legacyNew := ".model.rfm.tmp-0a0b0c0d0e0f"
	other := ".other.rfm.tmp-1-0123456789ab"
	mine := "model.rfm.tmp-1-0123456789ab" // not hidden: not ours
	for _, n := range []string{dead, live, legacyOld, legacyNew, other, mine} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleUnknown)
	if err := os.Chtimes(filepath.Join(dir, legacyOld), old, old); err != nil {
		t.Fatal(err)
	}
	if err := Write(context.Background(), out, text("whole")); err != nil {
		t.Fatal(err)
	}
	got := testutil.DirNames(t, dir)
	want := []string{live, legacyNew, other, "model.rfm", mine}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("directory holds %v, want %v", got, want)
	}
}
