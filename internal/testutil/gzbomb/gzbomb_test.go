package gzbomb

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"testing"
)

// TestRepeat: the bombs are valid gzip that decompress to exactly what
// they claim, with the right checksum (gzip.Reader checks it at the end).
func TestRepeat(t *testing.T) {
	for _, tc := range []struct {
		prefix, content string
		n               int64
	}{
		{"", "\x00", 3 << 20},
		{"head", "a;b 1\n", 5<<20 + 17},
		{"x", "\x00", 10},
	} {
		gz := Repeat([]byte(tc.prefix), []byte(tc.content), tc.n)
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("%q: %v", tc.prefix, err)
		}
		want := append([]byte(tc.prefix), bytes.Repeat([]byte(tc.content), int(tc.n)/len(tc.content)+1)[:tc.n]...)
		if !bytes.Equal(got, want) {
			t.Errorf("%q × %d: %d bytes differ from the %d wanted", tc.content, tc.n, len(got), len(want))
		}
	}
	// A gibibyte of zeros fits in about a megabyte.
	if n := len(Zeros(nil, 1<<30)); n > 2<<20 {
		t.Errorf("1 GiB of zeros is %d bytes compressed", n)
	}
}

// TestCombine: the checksum of two parts joined, computed from theirs,
// is the checksum of the whole.
func TestCombine(t *testing.T) {
	a, b := []byte("kbench "), bytes.Repeat([]byte("decompression bomb "), 1000)
	got := mulModP(xPow8n(int64(len(b))), crc32.ChecksumIEEE(a)) ^ crc32.ChecksumIEEE(b)
	if want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...)); got != want {
		t.Errorf("combined %08x, want %08x", got, want)
	}
}
