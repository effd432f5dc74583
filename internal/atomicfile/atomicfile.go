// Package atomicfile writes output files so that a reader never sees a
// partial one: a temporary file beside the target, synced, then renamed
// over it. It is the one writer behind model files, prediction tables,
// benchmark results and figures. It also removes the temporary files that
// a killed writer (kill -9, power loss) left behind, and writes devices
// and named pipes directly, interruptibly.
package atomicfile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const ioBufSize = 1 << 20

// Write creates or replaces path with what write produces, without ever
// exposing a partial file. write receives a buffered writer on a new
// temporary file in path's directory; if write returns an error (or
// panics), the temporary file is removed and path is untouched. Otherwise
// the data is flushed, fsynced and renamed over path, and the directory is
// synced so the rename survives a crash.
//
// A new file gets the permissions os.Create would give it (0666 minus the
// umask); a replaced file keeps its permissions. A symbolic link is
// followed: its target is replaced and the link stays. Only regular files
// are ever replaced: a device, FIFO or socket (/dev/stdout, /dev/null, a
// named pipe; anything under /dev or /proc) receives the complete output
// in one write once write has succeeded, and nothing if it fails. Waiting
// for a pipe's reader, or for it to drain, ends when ctx is cancelled.
//
// Temporary files of earlier writes to the same path whose writer is gone
// are removed first (see Stale).
func Write(ctx context.Context, path string, write func(io.Writer) error) (err error) {
	if write == nil {
		return fmt.Errorf("write %s: nil write function", path)
	}
	target, direct, err := outputTarget(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if direct {
		return writeDirect(ctx, path, write)
	}
	path = target
	dir, base := filepath.Split(path)
	if base == "" {
		return fmt.Errorf("write %s: path names a directory", path)
	}
	if dir == "" {
		dir = "."
	}
	removeStale(dir, base, time.Now())
	tmp, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, reason(err))
	}
	tmpName := tmp.Name()
	committed := false
	defer func() {
		// Runs on error and on panic in write: leave no temporary behind.
		if !committed {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()

	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
			return fmt.Errorf("write %s: keep permissions: %w", path, reason(err))
		}
	}
	bw := bufio.NewWriterSize(tmp, ioBufSize)
	if err := write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, reason(err))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, reason(err))
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, reason(err))
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", path, reason(err))
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("write %s: rename: %w", path, reason(err))
	}
	committed = true
	// Best effort: the new file is already in place, so a failure here (some
	// file systems and Windows cannot sync directories) must not be reported
	// as a failed write.
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// reason drops the *PathError or *LinkError wrapper, whose path is either
// ours (the caller's message already names it: "write X: write X: ..."
// otherwise) or a temporary name the user never chose, and keeps the cause.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

// outputTarget decides how path is written: direct for what must not be
// replaced (an existing non-regular file, or anything under /dev or
// /proc), otherwise atomically at target, path with its symbolic links
// followed (a dangling link names the file to create).
func outputTarget(path string) (target string, direct bool, err error) {
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return "", false, fmt.Errorf("path names a directory")
		}
		if !st.Mode().IsRegular() {
			return path, true, nil
		}
		if t, err := filepath.EvalSymlinks(path); err == nil {
			path = t
		}
	} else if target, err = followLinks(path); err == nil {
		path = target
	}
	if abs, err := filepath.Abs(path); err == nil {
		for _, sys := range []string{"/dev/", "/proc/"} {
			if strings.HasPrefix(abs, sys) {
				return path, true, nil
			}
		}
	}
	return path, false, nil
}

// followLinks resolves a chain of symbolic links that may end nowhere (a
// link to a file yet to be created), which filepath.EvalSymlinks refuses.
func followLinks(path string) (string, error) {
	for range 40 {
		fi, err := os.Lstat(path)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		dest, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(path), dest)
		}
		path = dest
	}
	return "", fmt.Errorf("too many levels of symbolic links")
}

// writeDirect produces the whole output in memory, then writes it to path
// (opened for writing, neither created nor truncated: a device or pipe).
func writeDirect(ctx context.Context, path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("write %s: %w", path, reason(err))
	}
	f, err := openDirect(ctx, path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, reason(err))
	}
	// A pipe whose reader stops reading would block the write: a
	// cancelled ctx ends it through a deadline (pollable files only; a
	// device write does not block for long).
	stop := context.AfterFunc(ctx, func() { f.SetWriteDeadline(time.Unix(1, 0)) })
	_, err = f.Write(buf.Bytes())
	stop()
	if err != nil {
		f.Close()
		if ctx.Err() != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("interrupted before the reader took the output: %w", ctx.Err())
		}
		return fmt.Errorf("write %s: %w", path, reason(err))
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, reason(err))
	}
	return nil
}

// CheckWritable reports, before any long computation, whether Write could
// write path: for a file it replaces or creates, that a temporary file can
// be made beside it (the file made is removed at once). A device or pipe is
// not opened (opening a pipe would block, or take the reader's open); its
// own write reports any error, and writes nothing partial.
func CheckWritable(path string) error {
	target, direct, err := outputTarget(path)
	if err != nil {
		return err
	}
	if direct {
		return nil
	}
	dir, base := filepath.Split(target)
	if base == "" {
		return fmt.Errorf("names a directory")
	}
	if dir == "" {
		dir = "."
	}
	tmp, err := createTemp(dir, base)
	if err != nil {
		return reason(err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// Temporary names are "." + base + ".tmp-" + the writer's pid + "-" + 12
// random hex digits: hidden, next to the target (a rename does not cross
// file systems), and telling whether their writer still runs.
func tempPrefix(base string) string {
	if len(base) > 100 {
		base = base[:100] // keep the name under NAME_MAX
	}
	return "." + base + ".tmp"
}

// createTemp is os.CreateTemp with os.Create's 0666 mode, so that the
// umask, not a hard-coded 0600, decides the final file's permissions.
func createTemp(dir, base string) (*os.File, error) {
	var lastErr error
	for range 10 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		name := filepath.Join(dir, fmt.Sprintf("%s-%d-%s", tempPrefix(base), os.Getpid(), hex.EncodeToString(r[:])))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		lastErr = err
	}
	return nil, lastErr
}

// Ages after which a temporary file is taken as abandoned: one whose name
// does not say its writer (older versions wrote ".NAME.tmp-HEX" or
// ".NAME.tmpDIGITS"), and one whose writer's pid runs but may be another
// process that reused the number. A write streams its data as it goes, so
// a live writer's file is never that old.
const (
	staleUnknown = time.Hour
	staleReused  = 24 * time.Hour
)

// Stale reports whether name, an entry of the target's directory with
// modification time mtime, is a temporary file of an earlier write to
// base that nobody will finish: its writer's pid is not running on this
// machine, or the file is too old to belong to a running write. A
// concurrent writer's file (its pid is alive, including this process's
// own) is never stale, so two processes writing the same output do not
// delete each other's work.
func Stale(name, base string, mtime, now time.Time) bool {
	rest, ok := strings.CutPrefix(name, tempPrefix(base))
	if !ok {
		return false
	}
	age := now.Sub(mtime)
	r, ok := strings.CutPrefix(rest, "-")
	if !ok {
		// os.CreateTemp's ".NAME.tmpDIGITS" of older versions.
		return isDigits(rest) && age > staleUnknown
	}
	if pidText, hexPart, ok := strings.Cut(r, "-"); ok && isHex(hexPart, 12) {
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			return false
		}
		if alive, known := processAlive(pid); known && !alive {
			return true
		}
		return age > staleReused
	}
	// ".NAME.tmp-HEX" of older versions.
	return isHex(r, 12) && age > staleUnknown
}

func isHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// removeStale deletes abandoned temporary files of earlier writes to base
// in dir. Best effort: a failure only leaves them for the next write.
func removeStale(dir, base string, now time.Time) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	defer d.Close()
	prefix := tempPrefix(base)
	for {
		entries, err := d.ReadDir(256)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), prefix) || !e.Type().IsRegular() {
				continue
			}
			fi, err := e.Info()
			if err != nil {
				continue
			}
			if Stale(e.Name(), base, fi.ModTime(), now) {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
		if err != nil {
			return
		}
	}
}
