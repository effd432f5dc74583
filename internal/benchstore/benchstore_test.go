package benchstore

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type row struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
}

func writeRows(path string, rs []row) error { return WriteJSON(path, rs) }

func TestStoreSavesSortedAndReplacesByName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.json")
	s := New(path, func(r *row) string { return r.Name }, writeRows)
	s.Put(row{Name: "b", Status: "ok"}, row{Name: "a", Status: "failed"})
	s.Put(row{Name: "a", Status: "ok"}) // a rerun replaces the failure
	if err := s.Save(); err != nil {
		t.Fatal(err)
	}
	data, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []row
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (row{Name: "a", Status: "ok"}) || got[1].Name != "b" {
		t.Errorf("saved %+v, want a (ok) then b", got)
	}
	if r, ok := s.Get("a"); !ok || r.Status != "ok" || s.Len() != 2 || s.Path() != path {
		t.Errorf("Get(a) = %+v, %v; Len %d; Path %q", r, ok, s.Len(), s.Path())
	}
}

func TestReadFileMissingIsEmptyAndWriteFailsCleanly(t *testing.T) {
	dir := t.TempDir()
	data, err := ReadFile(filepath.Join(dir, "none.json"))
	if data != nil || err != nil {
		t.Errorf("missing file: %q, %v; want nil, nil", data, err)
	}
	if _, err := ReadFile(dir); err == nil {
		t.Error("reading a folder: want an error")
	}
	// A value JSON cannot hold is an error naming the file, and no file.
	bad := filepath.Join(dir, "bad.json")
	if err := WriteJSON(bad, map[string]any{"f": func() {}}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("unencodable value: %v; want an error naming %s", err, bad)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a failed write left %s (%v)", bad, err)
	}
}

func TestNotComputedTable(t *testing.T) {
	rs := []row{{Name: "a", Status: "ok"}, {Name: "b", Status: "failed", Reason: "x | y"}}
	cells := func(r *row) []string {
		if r.Status == "ok" {
			return nil
		}
		return []string{r.Name, r.Reason}
	}
	var b strings.Builder
	NotComputedTable(&b, "Failed", []string{"task", "reason"}, rs, cells)
	want := "## Failed\n\n| task | reason |\n|---|---|\n| b | x / y |\n\n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	NotComputedTable(&b, "Failed", []string{"task", "reason"}, rs[:1], cells)
	if b.Len() != 0 {
		t.Errorf("all computed: wrote %q, want nothing", b.String())
	}
}
