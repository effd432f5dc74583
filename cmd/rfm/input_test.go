package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rfmkit/rfm/internal/testutil"
)

// Hostile inputs end in one clear line and exit code 1, at once: binary
// data at its first byte, a gzip bomb of zeros at its first decompressed
// byte, a truncated gzip file as such.
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	var zeros bytes.Buffer
	zw := gzip.NewWriter(&zeros)
	zw.Write(make([]byte, 64<<20)) // 64 MiB of NULs, about 64 KiB compressed
	zw.Close()
	writeFile(t, filepath.Join(dir, "zeros.csv.gz"), zeros.String())

	var csv strings.Builder
	csv.WriteString("x,y\n")
	for i := range 5000 {
		csv.WriteString(strings.Repeat("1", i%7+1) + ",2\n")
	}
	var gz bytes.Buffer
	zw = gzip.NewWriter(&gz)
	zw.Write([]byte(csv.String()))
	zw.Close()
	writeFile(t, filepath.Join(dir, "cut.csv.gz"), gz.String()[:gz.Len()/2])

	rng := rand.New(rand.NewPCG(1, 2))
	noise := make([]byte, 1<<20)
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	noise[0] = 0xC3 // a lead byte followed by ...
	noise[1] = 'a'  // ... no continuation byte: invalid at byte 1
	writeFile(t, filepath.Join(dir, "noise.bin"), string(noise))

	for _, tc := range []struct {
		data, want string
	}{
		{"/dev/zero", "rfm fit: /dev/zero: line 1, column 1: NUL byte: this is binary data, not a text table\n"},
		{"zeros.csv.gz", "rfm fit: zeros.csv.gz: line 1, column 1: NUL byte: this is binary data, not a text table\n"},
		{"cut.csv.gz", "rfm fit: cut.csv.gz: truncated gzip stream: the file ends before the compressed data does\n"},
		{"noise.bin", "rfm fit: noise.bin: line 1, column 1: invalid UTF-8; save the file as UTF-8\n"},
	} {
		r := rfmCmd(t, dir, "fit", "--data", tc.data, "--target", "y", "--out", "m.rfm")
		if r.code != exitError || r.stderr != tc.want {
			t.Errorf("--data %s: exit %d, stderr %q; want exit %d, %q", tc.data, r.code, r.stderr, exitError, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "m.rfm")); err == nil {
		t.Error("a failed fit wrote a model file")
	}
}

// startRead starts "rfm fit" reading --data src (with stdin, if not nil)
// and returns the command with its stderr buffer.
func startRead(t *testing.T, dir string, stdin io.Reader, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"fit", "--target", "y", "--out", "m.rfm"}, args...)...)
	cmd.Dir = dir
	cmd.Stdin = stdin
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &errb
}

// startPipedRead is startRead with --data - on a new pipe; it returns the
// pipe's write end, which is closed when the test ends.
func startPipedRead(t *testing.T, dir string) (*exec.Cmd, *bytes.Buffer, *os.File) {
	t.Helper()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pw.Close() })
	cmd, errb := startRead(t, dir, pr, "--data", "-")
	pr.Close()
	return cmd, errb, pw
}

// waitBlockedIn waits until a thread of process pid sleeps in a kernel
// function whose name contains fn (from /proc/PID/task/*/wchan), which
// shows the process has got as far as the blocking call. The deadline only
// guards the test against hanging.
func waitBlockedIn(t *testing.T, pid int, fn string) {
	t.Helper()
	guard := time.Now().Add(60 * time.Second)
	for time.Now().Before(guard) {
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
		for _, w := range tasks {
			if b, err := os.ReadFile(w); err == nil && strings.Contains(string(b), fn) {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d never blocked in %s", pid, fn)
}

// interruptAndWait sends SIGINT and checks the command ends with the
// interrupt code and message and writes nothing. The timeout is a guard
// against a hang, not the claim: the claim is that it ends at all.
func interruptAndWait(t *testing.T, dir string, cmd *exec.Cmd, errb *bytes.Buffer) {
	t.Helper()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running a minute after SIGINT; stderr %q", errb.String())
	}
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitInterrupt {
		t.Fatalf("exit %v, want code %d; stderr %q", err, exitInterrupt, errb.String())
	}
	if got := errb.String(); got != "rfm fit: interrupted; nothing was written\n" {
		t.Errorf("stderr %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "m.rfm")); err == nil {
		t.Error("an interrupted fit wrote a model file")
	}
}

// A FIFO that no writer ever opens: the open waits, and Ctrl-C ends it.
func TestInterruptFIFOWithoutWriter(t *testing.T) {
	dir := t.TempDir()
	testutil.FIFO(t, dir, "in.csv")
	cmd, errb := startRead(t, dir, nil, "--data", "in.csv")
	waitBlockedIn(t, cmd.Process.Pid, "wait_for_partner")
	interruptAndWait(t, dir, cmd, errb)
}

// Standard input open but silent: the read waits, and Ctrl-C ends it.
func TestInterruptSilentStdin(t *testing.T) {
	dir := t.TempDir()
	// The write end stays open (silent) until the test ends.
	cmd, errb, _ := startPipedRead(t, dir)
	waitBlockedIn(t, cmd.Process.Pid, "pipe_read")
	interruptAndWait(t, dir, cmd, errb)
}

// An endless stream of valid rows: Ctrl-C in the middle of the read ends
// it. Once a write larger than the pipe's buffer has gone through, the
// process is reading, so the signal lands in the read.
func TestInterruptEndlessStream(t *testing.T) {
	dir := t.TempDir()
	cmd, errb, pw := startPipedRead(t, dir)
	chunk := []byte("x,y\n" + strings.Repeat("1.5,2\n", 1<<18)) // 1.5 MiB
	if _, err := pw.Write(chunk); err != nil {
		t.Fatal(err)
	}
	// Keep the stream going while the signal arrives.
	go func() {
		rows := []byte(strings.Repeat("1.5,2\n", 1<<14))
		for {
			if _, err := pw.Write(rows); err != nil {
				return
			}
		}
	}()
	interruptAndWait(t, dir, cmd, errb)
}

// A line with no end (as from "tr -d '\n' < /dev/urandom" with text) is
// refused at the line bound, naming it.
func TestEndlessLine(t *testing.T) {
	dir := t.TempDir()
	cmd, errb, pw := startPipedRead(t, dir)
	go func() {
		a := bytes.Repeat([]byte("a"), 1<<16)
		for {
			if _, err := pw.Write(a); err != nil {
				return
			}
		}
	}()
	err := cmd.Wait()
	pw.Close()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != exitError {
		t.Fatalf("exit %v, want %d; stderr %q", err, exitError, errb.String())
	}
	if want := "rfm fit: <stdin>: line 1: line is longer than 16 MiB; is this a text table?\n"; errb.String() != want {
		t.Errorf("stderr %q, want %q", errb.String(), want)
	}
}

// A table larger than --memory-limit is refused while it is read.
func TestReadMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("x,z,y\n")
	for range 100000 {
		b.WriteString("1.25,3.5,2\n")
	}
	writeFile(t, filepath.Join(dir, "big.csv"), b.String())
	r := rfmCmd(t, dir, "fit", "--data", "big.csv", "--target", "y", "--memory-limit", "1M", "--out", "m.rfm")
	if r.code != exitError || !strings.Contains(r.stderr, "exceeds the memory budget for reading (1.0 MiB)") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
