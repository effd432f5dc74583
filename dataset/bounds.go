package dataset

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/rfmkit/rfm/internal/sysmem"
)

// Bounds on what a reader accepts, so that hostile or mistaken input (an
// endless stream, a binary file, a decompression bomb) ends in an error
// naming the bound instead of exhausting memory.
const (
	// MaxLineBytes is the longest line a text table (delimited or LIBSVM)
	// may have.
	MaxLineBytes = 16 << 20
	// MaxColumns is the most columns a table may have.
	MaxColumns = 1 << 20
)

// cellCost is what one cell is charged against the memory budget: its
// float64 in the table plus its missing flag, with room for its share of
// the encoded matrix the pipeline makes from it.
const cellCost = 24

// checkChunk is how much a reader processes between two looks at its
// context.
const checkChunk = 64 << 10

// DefaultMemoryBudget is the budget a read gets when ReadOptions.MemoryBudget
// is 0: a third of the memory available now (a buffer growing to the budget
// briefly holds 1.5 times it, and the fit needs the rest); 0 (no budget)
// when that cannot be read.
func DefaultMemoryBudget() uint64 {
	avail, ok := sysmem.Available()
	if !ok {
		return 0
	}
	return avail / 3
}

// limits carries one read's context and memory budget.
type limits struct {
	ctx      context.Context
	budget   uint64 // bytes; 0 = unlimited
	sizeHint int64  // the input's length if known, else 0
	gzipped  bool   // the input is decompressed: sizeHint says nothing
}

func newLimits(ctx context.Context, opt ReadOptions) *limits {
	if ctx == nil {
		ctx = context.Background()
	}
	b := opt.MemoryBudget
	if b == 0 {
		b = DefaultMemoryBudget()
	}
	return &limits{ctx: ctx, budget: b}
}

// cellsFit reports whether holding extra bytes plus cells cells stays
// within the budget.
func (l *limits) cellsFit(extra uint64, cells uint64) bool {
	if l.budget == 0 {
		return true
	}
	if cells > l.budget/cellCost {
		return false
	}
	return extra <= l.budget-cells*cellCost
}

// budgetError says which bound the table broke; at names the place ("line
// 12", "row 5", ...) or is empty.
func (l *limits) budgetError(name, what string) error {
	return &ParseError{File: name, Msg: fmt.Sprintf("%s exceeds the memory budget for reading (%s); use a smaller table or raise the budget (rfm: --memory-limit)", what, sysmem.Human(l.budget))}
}

// badByteError reports the first byte of a text input that cannot be in a
// text table: a NUL or the start of an invalid UTF-8 sequence. Readers turn
// it into a ParseError that names the line and column.
type badByteError struct {
	line    int   // 1-based
	byteCol int   // 1-based byte position in the line
	nul     bool  // a NUL byte, else invalid UTF-8
	off     int64 // offset in the (decompressed) input
}

func (e *badByteError) Error() string { return e.msg() }

func (e *badByteError) msg() string {
	if e.nul {
		return "NUL byte: this is binary data, not a text table"
	}
	return "invalid UTF-8; save the file as UTF-8"
}

// textChecker passes text through while enforcing the bounds of a text
// table: it stops at the first NUL byte or invalid UTF-8 sequence (having
// returned every byte before it), at a line longer than MaxLineBytes, at
// maxBytes in total, and when the context is done.
type textChecker struct {
	r        io.Reader
	l        *limits
	name     string
	maxBytes uint64 // 0 = unlimited

	buf     []byte
	ready   []byte // checked bytes not yet returned
	pend    [utf8.UTFMax]byte
	npend   int // bytes of a rune cut by the chunk end, held for the next one
	n       uint64
	line    int
	lineLen int
	err     error // sticky; returned once ready is drained
}

func newTextChecker(r io.Reader, l *limits, name string, maxBytes uint64) *textChecker {
	return &textChecker{r: r, l: l, name: name, maxBytes: maxBytes, buf: make([]byte, checkChunk+utf8.UTFMax), line: 1}
}

func (c *textChecker) Read(p []byte) (int, error) {
	for len(c.ready) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		if err := c.l.ctx.Err(); err != nil {
			c.err = err
			return 0, err
		}
		// Read straight into p when it has room for more than a held-back
		// rune; else into the checker's buffer, served from there.
		direct := len(p) > 2*utf8.UTFMax
		dst := c.buf[:c.npend+checkChunk]
		if direct {
			dst = p[:min(len(p), c.npend+checkChunk)]
		}
		copy(dst, c.pend[:c.npend])
		n, err := c.r.Read(dst[c.npend:])
		data := dst[:c.npend+n]
		c.npend = 0
		if err == nil {
			// Hold back a rune cut by the chunk end; at the end of the
			// input it is checked (and rejected) as it is.
			if k := incompleteTail(data); k > 0 {
				c.npend = copy(c.pend[:], data[len(data)-k:])
				data = data[:len(data)-k]
			}
		}
		good, bad := c.check(data)
		switch {
		case bad != nil:
			c.err = bad
		case err != nil:
			c.err = err
		}
		if direct {
			if good > 0 {
				return good, nil // an error comes with the next call
			}
			continue
		}
		c.ready = data[:good]
	}
	n := copy(p, c.ready)
	c.ready = c.ready[n:]
	return n, nil
}

// check scans a chunk and returns how many of its bytes are good and the
// error at the first bad one.
func (c *textChecker) check(data []byte) (int, error) {
	end, bad := len(data), error(nil)
	if i := bytes.IndexByte(data, 0); i >= 0 {
		end = i
		bad = &badByteError{nul: true}
	}
	if !utf8.Valid(data[:end]) {
		i := 0
		for i < end {
			r, size := utf8.DecodeRune(data[i:end])
			if r == utf8.RuneError && size == 1 {
				break
			}
			i += size
		}
		end = i
		bad = &badByteError{}
	}
	// Count lines up to the bad byte, stopping at an overlong line.
	seg := data[:end]
	for len(seg) > 0 {
		k := bytes.IndexByte(seg, '\n')
		run := len(seg)
		if k >= 0 {
			run = k
		}
		if c.lineLen+run > MaxLineBytes {
			cut := len(data[:end]) - len(seg) + MaxLineBytes - c.lineLen
			c.n += uint64(cut)
			return cut, &ParseError{File: c.name, Line: c.line, Msg: fmt.Sprintf("line is longer than %d MiB; is this a text table?", MaxLineBytes>>20)}
		}
		if k < 0 {
			c.lineLen += run
			break
		}
		c.line++
		c.lineLen = 0
		seg = seg[k+1:]
	}
	if c.maxBytes > 0 && c.n+uint64(end) > c.maxBytes {
		return 0, &ParseError{File: c.name, Line: c.line, Msg: fmt.Sprintf("the input exceeds the memory budget for reading (%s) after %d bytes; use a smaller table or raise the budget (rfm: --memory-limit)", sysmem.Human(c.maxBytes), c.n)}
	}
	c.n += uint64(end)
	if b, ok := bad.(*badByteError); ok {
		b.line, b.byteCol, b.off = c.line, c.lineLen+1, int64(c.n)
	}
	return end, bad
}

// incompleteTail returns the length of a UTF-8 sequence that starts in the
// last three bytes of b and runs past its end, or 0.
func incompleteTail(b []byte) int {
	for k := 1; k <= 3 && k <= len(b); k++ {
		c := b[len(b)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xC0 { // a start byte: how long should its sequence be?
			need := 2
			switch {
			case c >= 0xF0:
				need = 4
			case c >= 0xE0:
				need = 3
			}
			if need > k {
				return k
			}
			return 0
		}
	}
	return 0
}

// gzipErrors names what went wrong in a gzip stream in the user's terms.
type gzipErrors struct {
	r    io.Reader
	name string
}

func (g gzipErrors) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err == nil || err == io.EOF {
		return n, err
	}
	var ce flate.CorruptInputError
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		err = &ParseError{File: g.name, Msg: "truncated gzip stream: the file ends before the compressed data does"}
	case errors.Is(err, gzip.ErrChecksum):
		err = &ParseError{File: g.name, Msg: "corrupt gzip stream: checksum mismatch"}
	case errors.Is(err, gzip.ErrHeader):
		err = &ParseError{File: g.name, Msg: "corrupt gzip stream: invalid header of a following member"}
	case errors.As(err, &ce):
		err = &ParseError{File: g.name, Msg: fmt.Sprintf("corrupt gzip stream: bad compressed data at byte %d", int64(ce))}
	}
	return n, err
}

// ctxReader makes reads from a source that can block indefinitely (a pipe,
// a FIFO, a terminal) give way to the context: each read runs in a
// goroutine, on a buffer of its own, and the caller returns ctx.Err() as
// soon as the context is done. A read still blocked then is abandoned;
// its result is dropped.
type ctxReader struct {
	ctx  context.Context
	r    io.Reader
	res  chan ctxResult
	busy bool // a read is in flight
	err  error
}

type ctxResult struct {
	b   []byte
	err error
}

func newCtxReader(ctx context.Context, r io.Reader) *ctxReader {
	return &ctxReader{ctx: ctx, r: r, res: make(chan ctxResult, 1)}
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if err := c.ctx.Err(); err != nil {
		c.err = err
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !c.busy {
		c.busy = true
		buf := make([]byte, min(len(p), checkChunk))
		go func() {
			n, err := c.r.Read(buf)
			c.res <- ctxResult{buf[:n], err}
		}()
	}
	select {
	case r := <-c.res:
		c.busy = false
		n := copy(p, r.b)
		if n < len(r.b) { // cannot happen: the buffer was at most len(p)
			return n, io.ErrShortBuffer
		}
		if r.err != nil {
			c.err = r.err
		}
		return n, r.err
	case <-c.ctx.Done():
		c.err = c.ctx.Err()
		return 0, c.err
	}
}

// mayBlock reports whether reads from r could wait indefinitely for data:
// anything but a regular file or an in-memory reader.
func mayBlock(r io.Reader) bool {
	switch v := r.(type) {
	case *bytes.Reader, *strings.Reader, *bytes.Buffer:
		return false
	case *os.File:
		st, err := v.Stat()
		return err != nil || !st.Mode().IsRegular()
	}
	return true
}

// spoolAfter is how much of an input of unknown size (a pipe, a
// decompressed stream) readAllBounded holds in memory before it spools
// the rest to a temporary file (a variable for tests).
var spoolAfter = 16 << 20

// readAllBounded reads an input whole, at most limit bytes (0 =
// unlimited), looking at the context between chunks. An input of known
// size is read into one buffer of that size. One of unknown size is read
// into memory up to spoolAfter bytes; beyond that (with a limit) it is
// spooled to an unlinked temporary file and read back into one buffer of
// its exact size, so that it costs its size, not the 1.5 to 3 times that
// doubling a buffer (the old and new buffers, and the garbage of the
// earlier ones) would. Without a temporary folder it falls back to
// doubling, never past limit+1. On error it returns what was read with
// the error.
func readAllBounded(r io.Reader, l *limits, name string, limit uint64) ([]byte, error) {
	var b []byte
	if l.sizeHint > 0 && !l.gzipped {
		// One allocation of the right size (one more byte to see the end);
		// a file that grows while read falls back to doubling.
		c := uint64(l.sizeHint) + 1
		if limit > 0 {
			c = min(c, limit+1)
		}
		b = make([]byte, 0, c)
		return growRead(r, l, name, limit, b, 0)
	}
	if limit == 0 || limit <= uint64(spoolAfter) {
		return growRead(r, l, name, limit, nil, 0)
	}
	b, err := growRead(r, l, name, limit, nil, spoolAfter)
	if err != nil || len(b) < spoolAfter {
		return b, err
	}
	return spool(r, l, name, limit, b)
}

// growRead reads r to its end into b, doubling it as needed but never
// past limit+1 (0: unlimited). With stopAt > 0 it returns once b holds
// stopAt bytes (without an error: the caller goes on).
func growRead(r io.Reader, l *limits, name string, limit uint64, b []byte, stopAt int) ([]byte, error) {
	for {
		if err := l.ctx.Err(); err != nil {
			return b, err
		}
		if stopAt > 0 && len(b) >= stopAt {
			return b, nil
		}
		if len(b) == cap(b) {
			c := max(2*cap(b), checkChunk)
			if limit > 0 && uint64(c) > limit+1 {
				c = int(limit + 1)
			}
			if stopAt > 0 {
				c = min(c, stopAt)
			}
			nb := make([]byte, len(b), c)
			// Copy in pieces, so that an interrupt need not wait for a
			// copy of hundreds of megabytes.
			for i := 0; i < len(b); i += 8 << 20 {
				if err := l.ctx.Err(); err != nil {
					return b, err
				}
				copy(nb[i:], b[i:min(i+8<<20, len(b))])
			}
			b = nb
		}
		room := min(cap(b)-len(b), checkChunk)
		n, err := r.Read(b[len(b) : len(b)+room])
		b = b[:len(b)+n]
		if limit > 0 && uint64(len(b)) > limit {
			return b, l.budgetError(name, fmt.Sprintf("the input (more than %d bytes)", limit))
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// spool copies head and the rest of r to an unlinked temporary file, at
// most limit bytes, and reads it back into one buffer of its size. An
// error while copying returns what was read (for its message) with it.
func spool(r io.Reader, l *limits, name string, limit uint64, head []byte) ([]byte, error) {
	f, err := os.CreateTemp("", "rfm-read-*")
	if err != nil {
		return growRead(r, l, name, limit, head, 0) // no temporary folder
	}
	os.Remove(f.Name()) // the data lives as long as f is open
	defer f.Close()
	if _, err := f.Write(head); err != nil {
		return growRead(r, l, name, limit, head, 0) // no room on the disk
	}
	size := int64(len(head))
	head = nil // the only reference: the collector may take it
	buf := make([]byte, 1<<20)
	var rerr error
	for {
		if err := l.ctx.Err(); err != nil {
			return nil, err
		}
		n, err := r.Read(buf)
		if n > 0 {
			if _, werr := f.Write(buf[:n]); werr != nil {
				return nil, fmt.Errorf("spooling the input to a temporary file: %w", werr)
			}
			size += int64(n)
			if uint64(size) > limit {
				// Nothing to read back: the error needs no text.
				return nil, l.budgetError(name, fmt.Sprintf("the input (more than %d bytes)", limit))
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rerr = err
			break
		}
	}
	buf = nil
	b := make([]byte, size)
	for off := int64(0); off < size; off += 8 << 20 {
		if err := l.ctx.Err(); err != nil {
			return nil, err
		}
		if _, err := f.ReadAt(b[off:min(off+8<<20, size)], off); err != nil {
			return nil, fmt.Errorf("reading back the spooled input: %w", err)
		}
	}
	return b, rerr
}

// isCtxErr reports a cancelled or expired context, which readers pass on
// unwrapped so that callers can tell an interrupt from bad input.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// readFailed wraps an error from reading the input, keeping the errors that
// already say where and what (ParseError, cancellation) as they are.
func readFailed(name string, err error) error {
	var pe *ParseError
	if errors.As(err, &pe) || isCtxErr(err) {
		return err
	}
	return fmt.Errorf("%s: read failed: %w", name, err)
}
