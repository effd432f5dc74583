package dataset

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// checkTable asserts what every successful read guarantees: a rectangular
// table with unique names, missing flags in step with the values, and no
// infinities.
func checkTable(t *testing.T, tab *Table) {
	t.Helper()
	if err := tab.Validate(); err != nil {
		t.Fatalf("invalid table: %v", err)
	}
	n := tab.NRows()
	if n == 0 || len(tab.Columns) == 0 {
		t.Fatalf("empty table %d×%d without an error", n, len(tab.Columns))
	}
	for _, c := range tab.Columns {
		if len(c.Missing) != n {
			t.Fatalf("column %q: %d missing flags for %d rows", c.Name, len(c.Missing), n)
		}
		for i := 0; i < n; i++ {
			if c.Kind == Numeric {
				if math.IsInf(c.Num[i], 0) || math.IsNaN(c.Num[i]) != c.Missing[i] {
					t.Fatalf("column %q row %d: value %v missing %v", c.Name, i, c.Num[i], c.Missing[i])
				}
			} else if c.Missing[i] && c.Str[i] != "" {
				t.Fatalf("column %q row %d: missing cell holds %q", c.Name, i, c.Str[i])
			}
		}
	}
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("error message spans lines: %q", err)
	}
}

// fuzzBudget keeps what one fuzz input may make the readers hold small, so
// that the fuzzer runs in bounded memory and the budget checks get
// exercised.
const fuzzBudget = 64 << 20

// checkRead reads data as the file name under the fuzz budget: an error
// must pass checkErr and a table checkTable. It returns the table, or nil
// after an error.
func checkRead(t *testing.T, data []byte, name string, opt ReadOptions) *Table {
	t.Helper()
	opt.MemoryBudget = fuzzBudget
	tab, err := Read(bytes.NewReader(data), name, opt)
	if err != nil {
		checkErr(t, err)
		return nil
	}
	checkTable(t, tab)
	return tab
}

// fuzzRead fuzzes Read of inputs named name (the name picks the format).
func fuzzRead(f *testing.F, name string) {
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRead(t, data, name, ReadOptions{})
	})
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n",
		"a;b\r\n\"x\"\"y\",NA\n3;4\n",
		"\uFEFFa\tb\n1\t\n",
		",\n,\n",
		"a\n\"unterminated\n",
		"a,b\n1e999,inf\n",
		"x|y\n1|2|3\n",
		"h\n5'11\"\n",
		"a,a\n1,2\n",
		"a,b\n\"q\"x,1\n",
		"a\n\n\r\n1",
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, noHeader bool) {
		checkRead(t, data, "f.csv", ReadOptions{NoHeader: noHeader})
	})
}

func FuzzReadLIBSVM(f *testing.F) {
	defer func(c, d int) { maxDenseCells, maxFeatures = c, d }(maxDenseCells, maxFeatures)
	maxDenseCells, maxFeatures = 1<<16, 1<<10 // keep each input's table small
	for _, s := range []string{
		"1 1:0.5 3:2\n-1 2:1\n",
		"# c\n+1 qid:3 1:1 # x\n\n0\n",
		"a 1:1\nb 2:2\r\n",
		"1 2:1 1:1\n",
		"1 0:1\n",
		"1 1:x\n",
		"1 1000:1\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if tab := checkRead(t, data, "f.svm", ReadOptions{}); tab != nil && tab.Columns[0].Name != "label" {
			t.Fatalf("first column %q", tab.Columns[0].Name)
		}
	})
}

func FuzzReadNPY(f *testing.F) {
	f.Add(npyBytes(1, "<f8", false, "(2, 3)", raw(le, []float64{1, 2, 3, 4, 5, 6})))
	f.Add(npyBytes(1, ">f4", true, "(3,)", raw(be, []float32{1, 2, 3})))
	f.Add(npyBytes(2, "<i2", false, "(2, 1)", raw(le, []int16{-1, 2})))
	f.Add(npyBytes(3, "|u1", false, "(1, 2)", []byte{1, 2}))
	f.Add(npyBytes(1, "|O", false, "(1,)", make([]byte, 8)))
	f.Add(npyBytes(1, "<f8", false, "(1, 1, 1)", make([]byte, 8)))
	f.Add([]byte("\x93NUMPY\x01\x00\x05\x00{'a':"))
	fuzzRead(f, "f.npy")
}

// FuzzReadParquet: a corrupt Parquet file is an error, never a panic or an
// allocation sized by a corrupt length field (the seeds include the sample
// file and copies with a damaged footer length). Before the footer and the
// page headers were walked ahead of the library (parquet_check.go), a
// mutated Thrift length made it allocate up to 2 GiB per input, which
// stalled the fuzzer and once killed its worker.
func FuzzReadParquet(f *testing.F) {
	good := sampleParquet(&testing.T{})
	f.Add(good)
	f.Add(withFooterLength(good, 1<<31))
	f.Add(withFooterLength(good, uint32(len(good)-12)))
	f.Add(good[:len(good)-3])
	fuzzRead(f, "f.parquet")
}

// FuzzReadNPZ: the zip container of .npz files (the NPY fuzz target names
// its input .npy, so it never reaches the zip reader).
func FuzzReadNPZ(f *testing.F) {
	tt := &testing.T{}
	x := npyBytes(1, "<f8", false, "(2, 2)", raw(le, []float64{1, 2, 3, 4}))
	y := npyBytes(1, "<i8", false, "(2,)", raw(le, []int64{0, 1}))
	f.Add(npzBytes(tt, zip.Store, map[string][]byte{"x.npy": x, "y.npy": y}))
	f.Add(npzBytes(tt, zip.Deflate, map[string][]byte{"x.npy": x}))
	f.Add(npzBytes(tt, zip.Store, map[string][]byte{"notes.txt": []byte("hi")}))
	fuzzRead(f, "f.npz")
}

// FuzzReadGzip: compressed input, damaged anywhere (header, data, trailer,
// cut short), is read or refused with one line, never a panic.
func FuzzReadGzip(f *testing.F) {
	gz := func(members ...string) []byte {
		var b bytes.Buffer
		for _, m := range members {
			w := gzip.NewWriter(&b)
			w.Write([]byte(m))
			w.Close()
		}
		return b.Bytes()
	}
	good := gz("a,b\n1,x\n2,y\n")
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:len(good)-4])
	f.Add(gz("a,b\n1,x\n", "2,y\n"))
	f.Add(gz(string(make([]byte, 1<<12))))
	f.Add([]byte{0x1f, 0x8b})
	fuzzRead(f, "f.csv.gz")
}

// TestParseCellMatchesStrconv checks the decimal fast path against
// strconv.ParseFloat on random short literals: the same bits, or both
// rejecting.
func TestParseCellMatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const alphabet = "0123456789012345678901234567890123456789..eE+-"
	for k := 0; k < 200_000; k++ {
		b := make([]byte, 1+r.IntN(24))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		got, cls := parseCell(s)
		want, err := strconv.ParseFloat(s, 64)
		switch {
		case err == nil && !math.IsInf(want, 0):
			if cls != cellNumber || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("parseCell(%q) = %v (%d), strconv %v", s, got, cls, want)
			}
		case err != nil && math.IsInf(want, 0):
			if cls != cellOverflow {
				t.Fatalf("parseCell(%q) class %d, want overflow", s, cls)
			}
		default:
			if cls == cellNumber {
				t.Fatalf("parseCell(%q) = %v, strconv rejects it: %v", s, got, err)
			}
		}
	}
	for _, s := range []string{"9007199254740993", "123456789012345678", "1e22", "1e23", "4.35", "0.1", "-0", "1e-22", "12345e-25"} {
		got, cls := parseCell(s)
		want, _ := strconv.ParseFloat(s, 64)
		if cls != cellNumber || math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("parseCell(%q) = %v, want %v", s, got, want)
		}
	}
}
