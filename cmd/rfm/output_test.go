//go:build unix

package main

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rfmkit/rfm/internal/testutil"
)

// Rows from standard input (--data -) predict the same as from the file;
// --out through a symbolic link writes the link's target and keeps the
// link; --out into a named pipe delivers the whole CSV and leaves a pipe.
func TestOutputTargetsAndStdin(t *testing.T) {
	dir := t.TempDir()
	fitChurn(t, dir, 3, "real.rfm")
	if err := os.Symlink("real.rfm", filepath.Join(dir, "link.rfm")); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, "fit", "--data", "train.csv", "--target", "churn", "--ignore", "id", "--iters", "0", "--out", "link.rfm", "--quiet")
	if fi, err := os.Lstat(filepath.Join(dir, "link.rfm")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("--out replaced the symbolic link: %v %v", fi, err)
	}
	info := mustRun(t, dir, "inspect", "--model", "real.rfm", "--json")
	if !bytes.Contains([]byte(info.stdout), []byte(`"iters": 0`)) {
		t.Fatalf("the link's target was not rewritten by the second fit: %s", info.stdout)
	}

	fromFile := mustRun(t, dir, "predict", "--model", "real.rfm", "--data", "train.csv")
	cmd := exec.Command(binary, "predict", "--model", "real.rfm", "--data", "-")
	cmd.Dir = dir
	in, err := os.Open(filepath.Join(dir, "train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	cmd.Stdin = in
	fromStdin, err := cmd.Output()
	if err != nil {
		t.Fatalf("predict --data -: %v", err)
	}
	if string(fromStdin) != fromFile.stdout {
		t.Fatalf("predictions from stdin differ from the file's:\n%s\nvs\n%s", fromStdin, fromFile.stdout)
	}

	fifo := testutil.FIFO(t, dir, "pipe.csv")
	got := make(chan []byte)
	go func() {
		b, _ := os.ReadFile(fifo)
		got <- b
	}()
	mustRun(t, dir, "predict", "--model", "real.rfm", "--data", "train.csv", "--out", "pipe.csv")
	if b := <-got; string(b) != fromFile.stdout {
		t.Fatalf("the pipe received %d bytes, want the %d of the prediction CSV", len(b), len(fromFile.stdout))
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		t.Fatalf("--out replaced the named pipe: %v %v", fi, err)
	}
}
