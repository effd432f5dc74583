package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/plot"
)

// The blocks the experiment commands share: notes on stderr, the --out
// folder, a result printed as JSON or text, and result files written
// atomically, alone or as a set.

// Logger returns a printf that writes prefix, the message and a newline to
// w; nothing when quiet.
func Logger(w io.Writer, prefix string, quiet bool) func(format string, args ...any) {
	return func(format string, args ...any) {
		if !quiet {
			fmt.Fprintf(w, prefix+format+"\n", args...)
		}
	}
}

// MkdirOut creates the output folder dir of the flag --name ("" is none).
func MkdirOut(name, dir string) error {
	if dir == "" {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--%s %s: %w", name, dir, err)
	}
	return nil
}

// TextWriter is a result that prints itself as text.
type TextWriter interface{ WriteText(io.Writer) }

// Print prints res to w: as JSON when asJSON, else as its text.
func Print(w io.Writer, asJSON bool, res TextWriter) error {
	if asJSON {
		return WriteJSON(w, res)
	}
	res.WriteText(w)
	return nil
}

// WriteJSONFile writes v, indented, to path atomically.
func WriteJSONFile(ctx context.Context, path string, v any) error {
	return atomicfile.Write(ctx, path, func(w io.Writer) error { return WriteJSON(w, v) })
}

// OutputFile is one file of a command's output set.
type OutputFile struct {
	Path  string
	Write func(io.Writer) error
}

// WriteAll writes a set of files so that a failure leaves none of them
// changed: each is encoded in memory first, then written atomically in
// turn; if one write fails, the files already written are put back as
// they were (the earlier content restored, a new file removed).
func WriteAll(ctx context.Context, outs []OutputFile) error {
	data := make([][]byte, len(outs))
	for i, f := range outs {
		var b bytes.Buffer
		if err := f.Write(&b); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, err)
		}
		data[i] = b.Bytes()
	}
	type saved struct {
		old    []byte
		exists bool
	}
	prev := make([]saved, len(outs))
	for i, f := range outs {
		if st, err := os.Stat(f.Path); err == nil && st.Mode().IsRegular() {
			old, err := os.ReadFile(f.Path)
			if err != nil {
				return fmt.Errorf("write %s: cannot keep its current content to restore on failure: %w", f.Path, UnwrapPath(err))
			}
			prev[i] = saved{old, true}
		}
	}
	put := func(ctx context.Context, path string, b []byte) error {
		return atomicfile.Write(ctx, path, func(w io.Writer) error { _, err := w.Write(b); return err })
	}
	for i, f := range outs {
		err := put(ctx, f.Path, data[i])
		if err == nil {
			continue
		}
		for j := i - 1; j >= 0; j-- {
			if prev[j].exists {
				_ = put(context.WithoutCancel(ctx), outs[j].Path, prev[j].old)
			} else {
				_ = os.Remove(outs[j].Path)
			}
		}
		return err
	}
	return nil
}

// ParseWhole parses the items of the list flag --name as whole numbers;
// no items is def alone.
func ParseWhole(name string, items []string, def int) ([]int, error) {
	if len(items) == 0 {
		return []int{def}, nil
	}
	var out []int
	for _, v := range items {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return nil, Usagef("--%s %q: want whole numbers", name, v)
		}
		out = append(out, n)
	}
	return out, nil
}

// ParseImageShape parses --image-shape HxW or HxWxC (C 1 or 3).
func ParseImageShape(s string) (*plot.ImageShape, error) {
	parts := strings.Split(strings.ToLower(s), "x")
	if len(parts) < 2 || len(parts) > 3 {
		return nil, Usagef("--image-shape %q: want HxW or HxWxC, e.g. 28x28", s)
	}
	dims := make([]int, 3)
	dims[2] = 1
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 1 {
			return nil, Usagef("--image-shape %q: %q is not a positive whole number", s, p)
		}
		dims[i] = v
	}
	if c := dims[2]; c != 1 && c != 3 {
		return nil, Usagef("--image-shape %q: %d channels; images have 1 (grey) or 3 (RGB)", s, c)
	}
	return &plot.ImageShape{H: dims[0], W: dims[1], C: dims[2]}, nil
}
