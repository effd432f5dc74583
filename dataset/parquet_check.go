package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go/format"

	"github.com/rfmkit/rfm/internal/sysmem"
)

// parquet-go decodes the footer and the page headers (Thrift compact
// protocol) trusting their length fields: a mutated length makes it
// allocate up to 2 GiB for one string before it finds the data missing,
// which stalled the fuzzer. These checks walk the same structures first,
// with every length held against the bytes actually there.

var errThriftShort = errors.New("thrift structure runs past its bytes")

// thriftScan walks Thrift compact-protocol data without building it.
type thriftScan struct {
	b   []byte
	pos int
}

const thriftMaxDepth = 64

func (s *thriftScan) byte1() (byte, error) {
	if s.pos >= len(s.b) {
		return 0, errThriftShort
	}
	c := s.b[s.pos]
	s.pos++
	return c, nil
}

func (s *thriftScan) uvarint() (uint64, error) {
	v, n := binary.Uvarint(s.b[s.pos:])
	if n == 0 {
		return 0, errThriftShort
	}
	if n < 0 {
		return 0, errors.New("thrift varint overflows 64 bits")
	}
	s.pos += n
	return v, nil
}

// skipBytes advances n bytes, which must be there.
func (s *thriftScan) skipBytes(n uint64) error {
	if n > uint64(len(s.b)-s.pos) {
		return errThriftShort
	}
	s.pos += int(n)
	return nil
}

// value skips one value of compact type typ.
func (s *thriftScan) value(typ byte, depth int) error {
	if depth > thriftMaxDepth {
		return errors.New("thrift structure nested too deeply")
	}
	switch typ {
	case 1, 2: // boolean true/false: in the type of a field, one byte in a collection
		return nil
	case 3:
		return s.skipBytes(1)
	case 4, 5, 6:
		_, err := s.uvarint()
		return err
	case 7:
		return s.skipBytes(8)
	case 8:
		n, err := s.uvarint()
		if err != nil {
			return err
		}
		return s.skipBytes(n)
	case 9, 10:
		h, err := s.byte1()
		if err != nil {
			return err
		}
		n, et := uint64(h>>4), h&0x0f
		if n == 15 {
			if n, err = s.uvarint(); err != nil {
				return err
			}
		}
		// Every element takes at least one byte, so a count beyond the
		// remaining bytes is a lie that would size an allocation.
		if n > uint64(len(s.b)-s.pos) {
			return errThriftShort
		}
		for ; n > 0; n-- {
			if err := s.element(et, depth+1); err != nil {
				return err
			}
		}
		return nil
	case 11:
		n, err := s.uvarint()
		if err != nil || n == 0 {
			return err
		}
		kv, err := s.byte1()
		if err != nil {
			return err
		}
		if n > uint64(len(s.b)-s.pos) {
			return errThriftShort
		}
		for ; n > 0; n-- {
			for _, et := range []byte{kv >> 4, kv & 0x0f} {
				if err := s.element(et, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	case 12:
		return s.structure(depth+1, nil)
	}
	return fmt.Errorf("unknown thrift type %d", typ)
}

// element skips one list, set or map element of type et: in a collection
// the compact protocol writes a boolean as a byte of its own.
func (s *thriftScan) element(et byte, depth int) error {
	if et == 1 || et == 2 {
		return s.skipBytes(1)
	}
	return s.value(et, depth)
}

// structure skips a struct; field, if not nil, sees each top-level field
// first and returns true when it consumed the value itself.
func (s *thriftScan) structure(depth int, field func(id int16, typ byte) (bool, error)) error {
	if depth > thriftMaxDepth {
		return errors.New("thrift structure nested too deeply")
	}
	var id int16
	for {
		h, err := s.byte1()
		if err != nil {
			return err
		}
		if h == 0 {
			return nil
		}
		typ := h & 0x0f
		if d := int16(h >> 4); d != 0 {
			id += d
		} else {
			v, err := s.uvarint()
			if err != nil {
				return err
			}
			id = int16(int64(v>>1) ^ -int64(v&1))
		}
		if field != nil {
			done, err := field(id, typ)
			if err != nil {
				return err
			}
			if done {
				continue
			}
		}
		if err := s.value(typ, depth); err != nil {
			return err
		}
	}
}

// int32Field reads a zigzag varint value of an i32 field.
func (s *thriftScan) int32Field() (int64, error) {
	v, err := s.uvarint()
	if err != nil {
		return 0, err
	}
	x := int64(v>>1) ^ -int64(v&1)
	if x < -1<<31 || x >= 1<<31 {
		return 0, errors.New("i32 field out of range")
	}
	return x, nil
}

// checkParquetFooter walks the footer's FileMetaData before the library
// decodes it.
func checkParquetFooter(ra io.ReaderAt, size int64) error {
	var tail [8]byte
	if _, err := ra.ReadAt(tail[:], size-8); err != nil {
		return err
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	footer := make([]byte, n) // checkParquetFraming bounded n by the file size
	if _, err := ra.ReadAt(footer, size-8-n); err != nil {
		return err
	}
	s := &thriftScan{b: footer}
	if err := s.structure(0, nil); err != nil {
		return fmt.Errorf("corrupt footer: %w", err)
	}
	return nil
}

// checkParquetPages walks the page headers of every column chunk: each
// header must be well-formed within the chunk, each page's data must end
// inside the chunk, and the uncompressed sizes must fit the budget.
func checkParquetPages(ra io.ReaderAt, md *format.FileMetaData, lim *limits) error {
	var uncompressed uint64
	pages := 0
	for g, rg := range md.RowGroups {
		for j, cc := range rg.Columns {
			m := cc.MetaData
			pos := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < pos {
				pos = m.DictionaryPageOffset
			}
			end := pos + m.TotalCompressedSize // checkParquetLayout: inside the file
			for pos < end {
				if pages++; pages%1024 == 0 {
					if err := lim.ctx.Err(); err != nil {
						return err
					}
				}
				hdrLen, csize, usize, err := pageHeaderAt(ra, pos, end)
				if err != nil {
					return fmt.Errorf("row group %d, column %d: page at byte %d: %w", g+1, j+1, pos, err)
				}
				if csize < 0 || usize < 0 || csize > end-pos-hdrLen {
					return fmt.Errorf("row group %d, column %d: page at byte %d claims %d bytes (%d uncompressed), beyond its column chunk", g+1, j+1, pos, csize, usize)
				}
				uncompressed += uint64(usize)
				if lim.budget > 0 && uncompressed > lim.budget {
					return fmt.Errorf("pages of %d bytes uncompressed exceed the memory budget for reading (%s)", uncompressed, sysmem.Human(lim.budget))
				}
				pos += hdrLen + csize
			}
		}
	}
	return nil
}

// pageHeaderAt scans the PageHeader at pos (ending by end) and returns its
// length and its compressed and uncompressed page sizes.
func pageHeaderAt(ra io.ReaderAt, pos, end int64) (hdrLen, csize, usize int64, err error) {
	const maxHeader = 16 << 20
	for window := int64(4 << 10); ; window *= 4 {
		w := min(window, end-pos)
		buf := make([]byte, w)
		if n, err := ra.ReadAt(buf, pos); n < len(buf) {
			return 0, 0, 0, err
		}
		s := &thriftScan{b: buf}
		csize, usize = -1, -1
		err = s.structure(0, func(id int16, typ byte) (bool, error) {
			if (id == 2 || id == 3) && typ == 5 {
				v, err := s.int32Field()
				if id == 2 {
					usize = v
				} else {
					csize = v
				}
				return true, err
			}
			return false, nil
		})
		switch {
		case err == nil:
			if csize < 0 || usize < 0 {
				return 0, 0, 0, errors.New("page header without its sizes")
			}
			return int64(s.pos), csize, usize, nil
		case !errors.Is(err, errThriftShort):
			return 0, 0, 0, err
		case w == end-pos:
			return 0, 0, 0, errors.New("page header runs past its column chunk")
		case w >= maxHeader:
			return 0, 0, 0, fmt.Errorf("page header longer than %d MiB", maxHeader>>20)
		}
	}
}
