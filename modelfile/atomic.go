package modelfile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/rfmkit/rfm/internal/atomicfile"
)

// WriteFileAtomic writes f to path with WriteAtomic: either the complete,
// synced file appears at path, or path is left as it was.
func WriteFileAtomic(path string, f *File) error {
	// Validated before anything is created, so a bad File leaves no trace.
	return WriteFileAtomicContext(context.Background(), path, f)
}

// Model is a model type that packs itself, with the caller's extra JSON
// sections, into a File (rfm.Model, tree.Model).
type Model interface {
	ToFile(extra map[string]json.RawMessage) (*File, error)
}

// WriteModel writes m's file form to w: the Save method of a model type.
func WriteModel(w io.Writer, m Model, extra map[string]json.RawMessage) error {
	f, err := m.ToFile(extra)
	if err != nil {
		return err
	}
	return Write(w, f)
}

// WriteModelFile writes m's file form to path with WriteFileAtomic: the
// SaveFile method of a model type.
func WriteModelFile(path string, m Model, extra map[string]json.RawMessage) error {
	f, err := m.ToFile(extra)
	if err != nil {
		return err
	}
	return WriteFileAtomic(path, f)
}

// ReadFile opens path and reads it with Read. Only a regular file is
// read: a named pipe, device or socket is refused at once (opening a FIFO
// would wait, beyond any interrupt, for a writer), as is a directory.
func ReadFile(path string) (*File, error) {
	return atomicfile.ReadRegular(path, "model file", Read)
}

// WriteAtomic creates or replaces path with what write produces, without
// ever exposing a partial file: WriteAtomicContext with a context that is
// never cancelled.
func WriteAtomic(path string, write func(io.Writer) error) error {
	return atomicfile.Write(context.Background(), path, write)
}

// WriteAtomicContext creates or replaces path with what write produces,
// without ever exposing a partial file. write receives a buffered writer on
// a new temporary file in path's directory; if write returns an error (or
// panics), the temporary file is removed and path is untouched. Otherwise
// the data is flushed, fsynced and renamed over path, and the directory is
// synced so the rename survives a crash. Temporary files left by an
// earlier writer that was killed are removed.
//
// A new file gets the permissions os.Create would give it (0666 minus the
// umask); a replaced file keeps its permissions. A symbolic link is
// followed: its target is replaced and the link stays. Only regular files
// are ever replaced: a device, FIFO or socket (/dev/stdout, /dev/null, a
// named pipe; anything under /dev or /proc) receives the complete output in
// one write once write has succeeded, and nothing if it fails. Waiting for
// a named pipe's reader ends when ctx is cancelled.
func WriteAtomicContext(ctx context.Context, path string, write func(io.Writer) error) error {
	return atomicfile.Write(ctx, path, write)
}

// WriteFileAtomicContext is WriteFileAtomic with a context (see
// WriteAtomicContext).
func WriteFileAtomicContext(ctx context.Context, path string, f *File) error {
	if _, _, _, err := encodeHeader(f); err != nil {
		return fmt.Errorf("write model file %s: %w", path, err)
	}
	return atomicfile.Write(ctx, path, func(w io.Writer) error { return Write(w, f) })
}

// CheckWritable reports, before any long computation, whether WriteAtomic
// could write path: for a file it replaces or creates, that a temporary file
// can be made beside it (the file made is removed at once). A device or
// pipe is not opened (opening a pipe would block, or take the reader's
// open); its own write reports any error, and writes nothing partial.
func CheckWritable(path string) error { return atomicfile.CheckWritable(path) }
