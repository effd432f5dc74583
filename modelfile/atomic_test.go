package modelfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

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
			if names := testutil.DirNames(t, dir); !slices.Equal(names, want) {
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
	if names := testutil.DirNames(t, dir); !slices.Equal(names, []string{"m.rfm"}) {
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
			if names := testutil.DirNames(t, dir); !slices.Equal(names, []string{"sub"}) {
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
	if names := testutil.DirNames(t, dir); !slices.Equal(names, []string{"model.rfm"}) {
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

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

// A symbolic link is written through: the target is replaced (or created,
// for a dangling link) and the link itself stays a link.
func TestWriteAtomicFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.csv")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink("real.csv", link); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(link, writeString("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("target holds %q, want %q", b, "new")
	}
	dangling := filepath.Join(dir, "dangling.csv")
	if err := os.Symlink("sub/../later.csv", dangling); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if err := WriteAtomic(dangling, writeString("made")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "later.csv")); string(b) != "made" {
		t.Fatalf("dangling link's target holds %q, want %q", b, "made")
	}
	if fi, err := os.Lstat(dangling); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("the dangling link was replaced: %v %v", fi, err)
	}
}

// Devices and pipes are never replaced by a regular file: /dev/null stays a
// device (this matters most when tests run as root), a FIFO receives the
// whole output, and a failed write sends nothing.
func TestWriteAtomicDevicesAndPipes(t *testing.T) {
	if err := WriteAtomic(os.DevNull, writeString("discarded")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a character device: %v %v", os.DevNull, fi, err)
	}
	if err := CheckWritable(os.DevNull); err != nil {
		t.Fatalf("CheckWritable(%s) = %v", os.DevNull, err)
	}

	dir := t.TempDir()
	fifo := filepath.Join(dir, "pipe")
	if !haveFIFOs {
		return // not a Unix system: no named pipes to test
	}
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	got := make(chan string)
	go func() {
		b, _ := os.ReadFile(fifo) // blocks until the writer opens and closes
		got <- string(b)
	}()
	if err := WriteAtomic(fifo, writeString("through the pipe")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "through the pipe" {
		t.Fatalf("reader got %q", s)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi, err)
	}
	if got := testutil.DirNames(t, dir); !slices.Equal(got, []string{"pipe"}) {
		t.Fatalf("directory holds %v, want only the pipe", got)
	}
	// A failing write never opens the pipe (opening would block here
	// without a reader, so returning at all shows it was not opened).
	errWrite := errors.New("boom")
	if err := WriteAtomic(fifo, func(io.Writer) error { return errWrite }); !errors.Is(err, errWrite) {
		t.Fatalf("error = %v, want %v", err, errWrite)
	}
}

// CheckWritable refuses a directory without write permission before any
// work is done (skipped as root, who may write anywhere).
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable(filepath.Join(dir, "ok.rfm")); err != nil {
		t.Fatalf("writable directory: %v", err)
	}
	if got := testutil.DirNames(t, dir); len(got) != 0 {
		t.Fatalf("CheckWritable left %v behind", got)
	}
	if err := CheckWritable(dir); err == nil {
		t.Fatal("a directory as output was accepted")
	}
	if os.Geteuid() == 0 {
		return // root writes anywhere: the permission case cannot be set up
	}
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	if err := CheckWritable(filepath.Join(ro, "x.rfm")); err == nil {
		t.Fatal("a read-only directory was accepted")
	}
}

// packer is a Model whose file form is fixed, or an error.
type packer struct{ err error }

func (p packer) ToFile(extra map[string]json.RawMessage) (*File, error) {
	if p.err != nil {
		return nil, p.err
	}
	return &File{Kind: "test.Model", Meta: extra["m"]}, nil
}

// WriteModel and WriteModelFile write what ToFile packs, and pass its error
// on without writing anything.
func TestWriteModel(t *testing.T) {
	extra := map[string]json.RawMessage{"m": json.RawMessage(`{"a":1}`)}
	var buf bytes.Buffer
	if err := WriteModel(&buf, packer{}, extra); err != nil {
		t.Fatal(err)
	}
	f, err := Read(&buf)
	if err != nil || f.Kind != "test.Model" || string(f.Meta) != `{"a":1}` {
		t.Fatalf("read back %+v, %v", f, err)
	}
	boom := errors.New("boom")
	buf.Reset()
	if err := WriteModel(&buf, packer{boom}, nil); !errors.Is(err, boom) || buf.Len() != 0 {
		t.Errorf("ToFile error: %v, %d bytes written", err, buf.Len())
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "m.rfm")
	if err := WriteModelFile(path, packer{boom}, nil); !errors.Is(err, boom) {
		t.Errorf("ToFile error: %v", err)
	}
	if names := testutil.DirNames(t, dir); len(names) != 0 {
		t.Errorf("a failed write left %v", names)
	}
	if err := WriteModelFile(path, packer{}, extra); err != nil {
		t.Fatal(err)
	}
	if f, err := ReadFile(path); err != nil || f.Kind != "test.Model" {
		t.Errorf("read back %+v, %v", f, err)
	}
}
