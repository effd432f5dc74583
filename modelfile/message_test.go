package modelfile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// A damaged checksum whose first bytes still match must not be shown as two
// identical excerpts: the message shows where the two sums differ.
func TestChecksumMismatchShowsTheDifference(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, sample()); err != nil {
		t.Fatal(err)
	}
	for _, pos := range []int{1, 8, 20, 32} { // bytes from the end: in the trailer
		b := bytes.Clone(buf.Bytes())
		b[len(b)-pos] ^= 1
		_, err := Read(bytes.NewReader(b))
		if !errors.Is(err, ErrCorrupted) {
			t.Fatalf("byte -%d: error %v, want ErrCorrupted", pos, err)
		}
		msg := err.Error()
		i := strings.Index(msg, "stored ")
		j := strings.Index(msg, ", computed ")
		k := strings.Index(msg, "; ")
		if i < 0 || j < i || k < j {
			t.Fatalf("byte -%d: message %q lacks the two sums", pos, msg)
		}
		stored, computed := msg[i+len("stored "):j], msg[j+len(", computed "):k]
		if stored == computed {
			t.Errorf("byte -%d: message shows two identical sums: %q", pos, msg)
		}
		if at := 32 - pos; at > 0 && !strings.Contains(msg, "first differ at byte") {
			t.Errorf("byte -%d: message %q does not say where the sums differ", pos, msg)
		}
	}
}

func TestChecksumDiff(t *testing.T) {
	a := bytes.Repeat([]byte{0xab}, 32)
	b := bytes.Clone(a)
	b[30] = 0xac
	got := checksumDiff(a, b)
	want := "stored …abab, computed …acab; they first differ at byte 30 of 32"
	if got != want {
		t.Errorf("checksumDiff = %q, want %q", got, want)
	}
	b[0], b[30] = 0, 0xab
	if got := checksumDiff(a, b); !strings.HasPrefix(got, "stored abababababababab…, computed 00ababababababab…; they differ from the first byte") {
		t.Errorf("checksumDiff = %q", got)
	}
}
