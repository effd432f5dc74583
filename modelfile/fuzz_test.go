package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Read. It must never panic, sized and
// streamed reading must agree, and whatever Read accepts must survive a
// Write/Read round trip. Each input is also tried with its last 32 bytes
// replaced by a valid checksum, so the fuzzer can reach the header and
// array checks that a random trailer would otherwise hide.
//
//	go test -run '^$' -fuzz FuzzRead -fuzztime 20s ./modelfile
func FuzzRead(f *testing.F) {
	f.Add(encode(f, sample()))
	f.Add(encode(f, &File{Kind: "k"}))
	f.Add(encode(f, &File{Kind: "k", Meta: json.RawMessage(`[1,{"a":null}]`), Arrays: []Array{
		{Name: "x", Shape: []int{2, 1}, F32: []float32{1, 2}},
		{Name: "y", Shape: []int{0}, F64: []float64{}},
	}}))
	f.Add(file(`{"kind":"k","arrays":[{"name":"a","dtype":"float64","shape":[1],"offset":0,"length":8}]}`, make([]byte, 8)))
	f.Add(craft(7, 2, "{}", nil))
	f.Add([]byte("RFMMODEL"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data)
		if len(data) >= checksumLen {
			fixed := bytes.Clone(data)
			sum := sha256.Sum256(fixed[:len(fixed)-checksumLen])
			copy(fixed[len(fixed)-checksumLen:], sum[:])
			check(t, fixed)
		}
	})
}

func check(t *testing.T, data []byte) {
	sized, errSized := Read(bytes.NewReader(data))
	streamed, errStream := Read(onlyReader{bytes.NewReader(data)})
	if (errSized == nil) != (errStream == nil) {
		t.Fatalf("sized and streamed Read disagree: %v vs %v", errSized, errStream)
	}
	if errSized != nil {
		if sized != nil || streamed != nil {
			t.Fatal("Read returned a File together with an error")
		}
		return
	}
	// An empty created_by is legal in a file but replaced by Write; pin it
	// so the comparisons below are exact.
	if sized.CreatedBy != streamed.CreatedBy {
		t.Fatalf("CreatedBy %q vs %q", sized.CreatedBy, streamed.CreatedBy)
	}
	sized.CreatedBy, streamed.CreatedBy = "fuzz", "fuzz"
	assertSameFile(t, sized, streamed)
	var buf bytes.Buffer
	if err := Write(&buf, sized); err != nil {
		t.Fatalf("Write of an accepted file: %v", err)
	}
	again, err := Read(&buf)
	if err != nil {
		t.Fatalf("Read after Write: %v", err)
	}
	assertSameFile(t, sized, again)
}
