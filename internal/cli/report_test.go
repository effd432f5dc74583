package cli

import (
	"context"
	"errors"
	"fmt"
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

// ParseImageShape takes HxW and HxWxC with 1 or 3 channels.
func TestParseImageShape(t *testing.T) {
	if s, err := ParseImageShape("28X28"); err != nil || s.H != 28 || s.W != 28 || s.C != 1 {
		t.Errorf("%v %v", s, err)
	}
	if s, err := ParseImageShape("4x6x3"); err != nil || s.Pixels() != 72 {
		t.Errorf("%v %v", s, err)
	}
	for in, want := range map[string]string{"28": "want HxW", "2x0": `"0" is not a positive`, "2x2x2": "2 channels"} {
		if _, err := ParseImageShape(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v", in, err)
		}
	}
}

// Print writes JSON or the text; Logger is silent when quiet; MkdirOut
// names the flag.
func TestPrintLoggerMkdir(t *testing.T) {
	var b strings.Builder
	if err := Print(&b, true, textRes{A: 1}); err != nil || b.String() != "{\n  \"A\": 1\n}\n" {
		t.Errorf("%q %v", b.String(), err)
	}
	b.Reset()
	Print(&b, false, textRes{A: 1})
	if b.String() != "a = 1\n" {
		t.Errorf("%q", b.String())
	}
	b.Reset()
	Logger(&b, "x: ", false)("n %d", 2)
	Logger(&b, "x: ", true)("hidden")
	if b.String() != "x: n 2\n" {
		t.Errorf("%q", b.String())
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	if err := MkdirOut("out", filepath.Join(file, "d")); err == nil || !strings.HasPrefix(err.Error(), "--out "+file) {
		t.Errorf("%v", err)
	}
}

type textRes struct{ A int }

func (r textRes) WriteText(w io.Writer) { fmt.Fprintf(w, "a = %d\n", r.A) }
