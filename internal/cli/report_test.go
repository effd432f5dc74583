package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteAllRollsBack: when a later file of the set cannot be written,
// the earlier ones are put back: a new file removed, an existing one given
// its old content.
func TestWriteAllRollsBack(t *testing.T) {
	dir := t.TempDir()
	text := func(s string) func(io.Writer) error {
		return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
	}
	old := filepath.Join(dir, "old.png")
	if err := os.WriteFile(old, []byte("before"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "new.png")
	bad := filepath.Join(dir, "missing-dir", "r.json")
	err := WriteAll(context.Background(), []OutputFile{{old, text("after")}, {fresh, text("new")}, {bad, text("{}")}})
	if err == nil {
		t.Fatal("a write into a missing directory succeeded")
	}
	if b, _ := os.ReadFile(old); string(b) != "before" {
		t.Errorf("the existing file holds %q after the failure, want %q", b, "before")
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("the new file was left behind")
	}
	// An encoding failure writes nothing at all.
	fail := func(io.Writer) error { return errors.New("boom") }
	if err := WriteAll(context.Background(), []OutputFile{{fresh, text("x")}, {old, fail}}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("encoding error: %v", err)
	}
	if _, err := os.Stat(fresh); err == nil {
		t.Error("a file was written although another could not be encoded")
	}
	if err := WriteAll(context.Background(), []OutputFile{{old, text("after")}, {fresh, text("new")}}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(old); string(b) != "after" {
		t.Errorf("old.png holds %q, want %q", b, "after")
	}
}
