package modelfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteAtomic(t *testing.T) {
	errWrite := errors.New("boom")
	tests := []struct {
		name     string
		existing string // "" means no file before the call
		write    func(io.Writer) error
		wantErr  error
		want     string // content afterwards; "" with no existing file means absent
	}{
		{"new file", "", func(w io.Writer) error { _, err := io.WriteString(w, "a,b\n1,2\n"); return err }, nil, "a,b\n1,2\n"},
		{"empty output", "", func(w io.Writer) error { return nil }, nil, ""},
		{"replace", "old", func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }, nil, "new"},
		{"error leaves nothing", "", func(w io.Writer) error { return errWrite }, errWrite, ""},
		{"error after partial output keeps old file", "old", func(w io.Writer) error {
			io.WriteString(w, strings.Repeat("x", 3*ioBufSize)) // beyond the buffer: really on disk
			return errWrite
		}, errWrite, "old"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "out.csv")
			if tt.existing != "" {
				if err := os.WriteFile(path, []byte(tt.existing), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := WriteAtomic(path, tt.write)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name %s", err, path)
			}
			got, readErr := os.ReadFile(path)
			absent := errors.Is(readErr, fs.ErrNotExist)
			switch {
			case tt.wantErr != nil && tt.existing == "":
				if !absent {
					t.Errorf("failed write left %s (%d bytes)", path, len(got))
				}
			case readErr != nil:
				t.Fatalf("read back: %v", readErr)
			case string(got) != tt.want:
				t.Errorf("content = %q, want %q", got, tt.want)
			}
			want := []string{"out.csv"}
			if absent {
				want = nil
			}
			if names := dirNames(t, dir); !slices.Equal(names, want) {
				t.Errorf("directory holds %q, want %q (temporary file left behind?)", names, want)
			}
		})
	}
}

func TestWriteAtomicPanicLeavesNoTrace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.rfm")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("panic was swallowed")
			}
		}()
		WriteAtomic(path, func(w io.Writer) error {
			io.WriteString(w, "partial")
			panic("bug in caller")
		})
	}()
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("content = %q, want the old file", got)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"m.rfm"}) {
		t.Errorf("directory holds %q", names)
	}
}

func TestWriteAtomicPermissions(t *testing.T) {
	dir := t.TempDir()
	// A new file gets what os.Create would give it under the current umask.
	ref := filepath.Join(dir, "ref")
	fh, err := os.Create(ref)
	if err != nil {
		t.Fatal(err)
	}
	fh.Close()
	refInfo, err := os.Stat(ref)
	if err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh")
	if err := WriteAtomic(fresh, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != refInfo.Mode().Perm() {
		t.Errorf("new file mode = %v (%v), want %v like os.Create", fi.Mode().Perm(), err, refInfo.Mode().Perm())
	}
	// A replaced file keeps its mode.
	private := filepath.Join(dir, "private")
	if err := os.WriteFile(private, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(private, func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(private); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("replaced file mode = %v (%v), want 0640", fi.Mode().Perm(), err)
	}
}

func TestWriteAtomicBadPaths(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	ok := func(w io.Writer) error { return nil }
	tests := []struct {
		name  string
		path  string
		write func(io.Writer) error
		msg   string
	}{
		{"missing directory", filepath.Join(dir, "nope", "m.rfm"), ok, "no such file"},
		{"trailing slash", filepath.Join(dir, "sub") + "/", ok, "names a directory"},
		{"existing directory", filepath.Join(dir, "sub"), ok, "sub"},
		{"nil write", filepath.Join(dir, "m.rfm"), nil, "nil write function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := WriteAtomic(tt.path, tt.write)
			if err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error = %v, want one containing %q", err, tt.msg)
			}
			if names := dirNames(t, dir); !slices.Equal(names, []string{"sub"}) {
				t.Errorf("directory holds %q after a failed write", names)
			}
		})
	}
}

func TestWriteAtomicRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := WriteAtomic("out.json", func(w io.Writer) error { _, err := io.WriteString(w, "{}"); return err }); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "out.json")); err != nil || string(got) != "{}" {
		t.Errorf("content = %q, %v", got, err)
	}
}

func TestWriteFileAtomicRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "model.rfm")
	if err := WriteFileAtomic(path, sample()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	assertSameFile(t, sample(), got)

	// An invalid File fails before anything touches the disk; the previous
	// model stays.
	bad := sample()
	bad.Arrays[1].Name = bad.Arrays[0].Name
	err = WriteFileAtomic(path, bad)
	if !errors.Is(err, ErrDuplicateName) || !strings.Contains(err.Error(), path) {
		t.Errorf("error = %v, want %v naming the path", err, ErrDuplicateName)
	}
	if names := dirNames(t, dir); !slices.Equal(names, []string{"model.rfm"}) {
		t.Errorf("directory holds %q", names)
	}
	if _, err := ReadFile(path); err != nil {
		t.Errorf("previous model damaged: %v", err)
	}
}

func TestCreateTempLongName(t *testing.T) {
	dir := t.TempDir()
	base := strings.Repeat("m", 200) + ".rfm" // temp name would exceed NAME_MAX without truncation
	if err := WriteAtomic(filepath.Join(dir, base), func(w io.Writer) error { return nil }); err != nil {
		t.Fatal(fmt.Errorf("long name: %w", err))
	}
}
