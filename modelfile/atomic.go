package modelfile

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// WriteFileAtomic writes f to path with WriteAtomic: either the complete,
// synced file appears at path, or path is left as it was.
func WriteFileAtomic(path string, f *File) error {
	// Validate before creating anything, so a bad File leaves no trace.
	if _, _, _, err := encodeHeader(f); err != nil {
		return fmt.Errorf("write model file %s: %w", path, err)
	}
	return WriteAtomic(path, func(w io.Writer) error { return Write(w, f) })
}

// ReadFile opens path and reads it with Read.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read model file: %w", err)
	}
	defer fh.Close()
	f, err := Read(fh)
	if err != nil {
		return nil, fmt.Errorf("read model file %s: %w", path, err)
	}
	return f, nil
}

// WriteAtomic creates or replaces path with what write produces, without
// ever exposing a partial file. write receives a buffered writer on a new
// temporary file in path's directory; if write returns an error (or panics),
// the temporary file is removed and path is untouched. Otherwise the data is
// flushed, fsynced and renamed over path, and the directory is synced so the
// rename survives a crash.
//
// A new file gets the permissions os.Create would give it (0666 minus the
// umask); a replaced file keeps its permissions. A symbolic link is
// followed: its target is replaced and the link stays. Only regular files
// are ever replaced: a device, FIFO or socket (/dev/stdout, /dev/null, a
// named pipe; anything under /dev or /proc) receives the complete output in
// one write once write has succeeded, and nothing if it fails.
func WriteAtomic(path string, write func(io.Writer) error) (err error) {
	if write == nil {
		return fmt.Errorf("write %s: nil write function", path)
	}
	target, direct, err := outputTarget(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if direct {
		return writeDirect(path, write)
	}
	path = target
	dir, base := filepath.Split(path)
	if base == "" {
		return fmt.Errorf("write %s: path names a directory", path)
	}
	if dir == "" {
		dir = "."
	}
	tmp, err := createTemp(dir, base)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
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
			return fmt.Errorf("write %s: keep permissions: %w", path, err)
		}
	}
	bw := bufio.NewWriterSize(tmp, ioBufSize)
	if err := write(bw); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("write %s: sync: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: close: %w", path, err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
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
func writeDirect(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// CheckWritable reports, before any long computation, whether WriteAtomic
// could write path: for a file it replaces or creates, that a temporary file
// can be made beside it (the file made is removed at once). A device or
// pipe is not opened (opening a pipe would block, or take the reader's
// open); its own write reports any error, and writes nothing partial.
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
		return err
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// createTemp is os.CreateTemp with os.Create's 0666 mode, so that the umask,
// not a hard-coded 0600, decides the final file's permissions.
func createTemp(dir, base string) (*os.File, error) {
	var lastErr error
	for range 10 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return nil, err
		}
		if len(base) > 100 {
			base = base[:100] // keep the name under NAME_MAX
		}
		name := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:]))
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
