// Package benchstore is the resumable results store of the benchmark
// runners (packages uci and bench/tabular): one result per name, the file
// rewritten atomically after every change so that an interrupted run
// resumes from it, and the summaries' table of results not computed.
package benchstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/rfmkit/rfm/internal/atomicfile"
	"github.com/rfmkit/rfm/internal/cli"
)

// Store holds a run's results by name and writes them, sorted by name,
// with the benchmark's own format. It is not safe for concurrent use: the
// runners call it under their own lock.
type Store[R any] struct {
	path  string
	name  func(*R) string
	write func(path string, rs []R) error
	items map[string]R
}

// New returns an empty store of the file path; name gives a result's key
// and write writes the sorted results to path (atomically).
func New[R any](path string, name func(*R) string, write func(path string, rs []R) error) *Store[R] {
	return &Store[R]{path: path, name: name, write: write, items: map[string]R{}}
}

// Path is the store's file.
func (s *Store[R]) Path() string { return s.path }

// Get returns the result of a name.
func (s *Store[R]) Get(name string) (R, bool) {
	r, ok := s.items[name]
	return r, ok
}

// Put adds or replaces results (by name).
func (s *Store[R]) Put(rs ...R) {
	for i := range rs {
		s.items[s.name(&rs[i])] = rs[i]
	}
}

// Len is the number of results held.
func (s *Store[R]) Len() int { return len(s.items) }

// Sorted returns the results sorted by name.
func (s *Store[R]) Sorted() []R {
	rs := make([]R, 0, len(s.items))
	for _, v := range s.items {
		rs = append(rs, v)
	}
	slices.SortFunc(rs, func(a, b R) int { return strings.Compare(s.name(&a), s.name(&b)) })
	return rs
}

// Save writes every result, sorted by name, to the store's file.
func (s *Store[R]) Save() error { return s.write(s.path, s.Sorted()) }

// ReadFile returns a results file's bytes; a missing file gives nil and
// no error (a first run).
func ReadFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

// WriteFile replaces path by data with the project's atomic writer: an
// interrupted write leaves the old or the new complete file.
func WriteFile(path string, data []byte) error {
	return atomicfile.Write(context.Background(), path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteJSON writes v as indented JSON (cli.WriteJSON's form) to path,
// atomically.
func WriteJSON(path string, v any) error {
	var b bytes.Buffer
	if err := cli.WriteJSON(&b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return WriteFile(path, b.Bytes())
}

// NotComputedTable appends to b the markdown section title listing the
// results row gives cells for (row returns nil for a result computed
// normally); nothing when there are none. A "|" in a cell becomes "/".
func NotComputedTable[R any](b *strings.Builder, title string, columns []string, rs []R, row func(*R) []string) {
	var rows [][]string
	for i := range rs {
		if cells := row(&rs[i]); cells != nil {
			rows = append(rows, cells)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "## %s\n\n| %s |\n|%s\n", title, strings.Join(columns, " | "), strings.Repeat("---|", len(columns)))
	for _, cells := range rows {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = strings.ReplaceAll(c, "|", "/")
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(esc, " | "))
	}
	b.WriteString("\n")
}
