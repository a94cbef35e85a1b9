package hdr

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var writeCases = flag.Bool("write-cases", false, "write testdata/"+casesFile+", v2gen's input")

const (
	// casesFile holds this package's encodings of the cases, the input
	// of testdata/v2gen (an independent encoder's test helper).
	casesFile = "kbench-v2-cases.txt"
	// referenceV2File holds hdrhistogram-go v1.4.0's encodings of the
	// same cases, written by testdata/v2gen from casesFile.
	referenceV2File = "hdrhistogram-go-v1.4.0-v2.txt"
)

// encodingCase is one config and dataset, recorded.
type encodingCase struct {
	name string
	h    *Histogram
}

// encodingCases records every dataset in a histogram of every config.
func encodingCases(t testing.TB) []encodingCase {
	var out []encodingCase
	for _, c := range configs {
		for _, d := range datasets {
			h := New(c.lowest, c.highest, c.digits)
			for _, v := range d.values(c) {
				if err := h.RecordValue(v); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, encodingCase{fmt.Sprintf("%d..%d/%d %s", c.lowest, c.highest, c.digits, d.name), h})
		}
	}
	return out
}

// sameCounts fails t unless got has want's layout and counters.
func sameCounts(t *testing.T, what string, got, want *Histogram) {
	t.Helper()
	if got.lowest != want.lowest || got.highest != want.highest || got.digits != want.digits {
		t.Fatalf("%s: layout %d..%d/%d, want %d..%d/%d", what, got.lowest, got.highest, got.digits, want.lowest, want.highest, want.digits)
	}
	if got.total != want.total || !slices.Equal(got.counts, want.counts) {
		t.Fatalf("%s: %d values in other counters than the %d recorded", what, got.total, want.total)
	}
	if got.Max() != want.Max() || got.Mean() != want.Mean() {
		t.Fatalf("%s: max %d mean %v, want %d and %v", what, got.Max(), got.Mean(), want.Max(), want.Mean())
	}
	for _, q := range quantiles {
		if a, b := got.ValueAtQuantile(q), want.ValueAtQuantile(q); a != b {
			t.Fatalf("%s: p%v = %d, want %d", what, q, a, b)
		}
	}
}

// TestEncodeRoundTrip: every case decodes to the counters it was encoded
// from, and so to the same max, mean and quantiles.
func TestEncodeRoundTrip(t *testing.T) {
	for _, c := range encodingCases(t) {
		enc := c.h.Encode()
		got, err := Decode(enc)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		sameCounts(t, c.name, got, c.h)
		if again := got.Encode(); again != enc {
			t.Errorf("%s: encoding the decoded histogram gives other bytes", c.name)
		}
	}
}

// TestEncodeMatchesHdrHistogramGo: hdrhistogram-go (v1.4.0) read this
// package's encoding of every case with the count recorded, and its own
// encoding of what it read decodes here to the counters recorded: the two
// encoders agree on what they encode, compared by counts, not bytes (zlib
// output may differ between implementations).
func TestEncodeMatchesHdrHistogramGo(t *testing.T) {
	cases := encodingCases(t)
	if *writeCases {
		var b strings.Builder
		for _, c := range cases {
			fmt.Fprintf(&b, "%s\t%d\t%s\n", c.name, c.h.TotalCount(), c.h.Encode())
		}
		if err := os.WriteFile(filepath.Join("testdata", casesFile), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("wrote testdata/%s: run testdata/v2gen on it (see its doc)", casesFile)
	}
	f, err := os.Open(filepath.Join("testdata", referenceV2File))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ref := map[string][2]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 3)
		if len(parts) != 3 {
			t.Fatalf("%s: line %q", referenceV2File, sc.Text())
		}
		ref[parts[0]] = [2]string{parts[1], parts[2]}
	}
	if len(ref) != len(cases) {
		t.Fatalf("%s holds %d cases, the test has %d (go test -write-cases, then testdata/v2gen)", referenceV2File, len(ref), len(cases))
	}
	for _, c := range cases {
		r, ok := ref[c.name]
		if !ok {
			t.Fatalf("%s: not in %s", c.name, referenceV2File)
		}
		if r[0] != strconv.FormatInt(c.h.TotalCount(), 10) {
			t.Errorf("%s: hdrhistogram-go read %s values, %d were recorded", c.name, r[0], c.h.TotalCount())
		}
		got, err := Decode(r[1])
		if err != nil {
			t.Fatalf("%s: hdrhistogram-go's encoding: %v", c.name, err)
		}
		sameCounts(t, c.name+" (hdrhistogram-go's encoding)", got, c.h)
	}
}

// v2 builds a compressed V2 encoding from a header and raw count bytes.
func v2(cookie uint32, digits int32, lowest, highest int64, ratio float64, counts []byte) string {
	raw := make([]byte, 40)
	binary.BigEndian.PutUint32(raw[0:], cookie)
	binary.BigEndian.PutUint32(raw[4:], uint32(len(counts)))
	binary.BigEndian.PutUint32(raw[12:], uint32(digits))
	binary.BigEndian.PutUint64(raw[16:], uint64(lowest))
	binary.BigEndian.PutUint64(raw[24:], uint64(highest))
	binary.BigEndian.PutUint64(raw[32:], math.Float64bits(ratio))
	raw = append(raw, counts...)
	return compressed(raw)
}

func compressed(raw []byte) string {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	out := binary.BigEndian.AppendUint32(nil, cookieV2Compressed)
	out = binary.BigEndian.AppendUint32(out, uint32(z.Len()))
	return base64.StdEncoding.EncodeToString(append(out, z.Bytes()...))
}

func TestDecodeRefuses(t *testing.T) {
	good := New(1, 3_600_000_000, 3)
	good.RecordValue(1500)
	enc := good.Encode()
	data, _ := base64.StdEncoding.DecodeString(enc)
	withLen := slices.Clone(data)
	binary.BigEndian.PutUint32(withLen[4:], 3)
	zigzag := func(vs ...int64) []byte {
		var b []byte
		for _, v := range vs {
			b = appendZigZag(b, v)
		}
		return b
	}
	for _, tc := range []struct{ name, in, want string }{
		{"not base64", "not base64!", "base64"},
		{"too short", base64.StdEncoding.EncodeToString([]byte{1, 2, 3}), "shorter than its 8-byte header"},
		{"too long", strings.Repeat("A", MaxEncodedLen+4), "more than"},
		{"V1 cookie", base64.StdEncoding.EncodeToString(append([]byte{0x1c, 0x84, 0x93, 0x02}, data[4:]...)), "cookie 0x1c849302"},
		{"uncompressed", base64.StdEncoding.EncodeToString(append([]byte{0x1c, 0x84, 0x93, 0x13}, data[4:]...)), "an uncompressed V2 encoding"},
		{"length", base64.StdEncoding.EncodeToString(withLen), "the header says 3 compressed bytes"},
		{"not zlib", base64.StdEncoding.EncodeToString(append(slices.Clone(data[:8]), bytes.Repeat([]byte{7}, len(data)-8)...)), "zlib"},
		{"zlib bomb", compressed(make([]byte, MaxDecodedBytes+100)), "more than 1048576 bytes once inflated"},
		{"short header", compressed(make([]byte, 20)), "shorter than the 40-byte V2 header"},
		{"inner cookie", v2(cookieV2Compressed, 3, 1, 1000, 1, nil), "inner cookie"},
		{"digits", v2(cookieV2, 6, 1, 1000, 1, nil), "6 significant digits"},
		{"range", v2(cookieV2, 3, 10, 15, 1, nil), "trackable range 10 to 15"},
		{"ratio", v2(cookieV2, 3, 1, 1000, math.NaN(), nil), "conversion ratio NaN"},
		{"huge layout", v2(cookieV2, 5, 1, math.MaxInt64/2, 1, nil), "more than 1048576"},
		{"run past the end", v2(cookieV2, 2, 1, 1000, 1, zigzag(-100000)), "past the layout's"},
		{"counter past the end", v2(cookieV2, 2, 1, 1000, 1, append(zigzag(-int64(New(1, 1000, 2).countersTo(1000))), zigzag(1)...)), "more counters than the layout's"},
		{"cut short", v2(cookieV2, 2, 1, 1000, 1, []byte{0x80}), "cut short"},
		{"overflow", v2(cookieV2, 2, 1, 1000, 1, zigzag(math.MaxInt64, math.MaxInt64)), "past 2^63"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := Decode(tc.in)
			if err == nil || !errors.Is(err, ErrEncoding) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v (histogram %v), want an ErrEncoding with %q", err, h != nil, tc.want)
			}
		})
	}
}

// TestZigZag: counts and runs of every size, to the nine-byte form whose
// last byte holds eight bits.
func TestZigZag(t *testing.T) {
	for _, v := range []int64{0, 1, -1, 63, -64, 64, 1 << 20, -(1 << 40), 1<<55 - 1, 1 << 55, 1 << 62, math.MaxInt64, math.MinInt64 + 1, math.MinInt64} {
		b := appendZigZag(nil, v)
		got, n := readZigZag(b)
		if got != v || n != len(b) || len(b) > 9 {
			t.Errorf("%d: %d bytes, read %d from %d", v, len(b), got, n)
		}
		if _, n := readZigZag(b[:len(b)-1]); n != 0 {
			t.Errorf("%d: read from a cut encoding", v)
		}
	}
	if b := appendZigZag(nil, math.MaxInt64); len(b) != 9 {
		t.Errorf("MaxInt64 takes %d bytes, want 9", len(b))
	}
}

// FuzzDecode: Decode never panics, and what it reads encodes and decodes
// to the same counters.
func FuzzDecode(f *testing.F) {
	for _, c := range encodingCases(f)[:8] {
		f.Add(c.h.Encode())
	}
	f.Add(v2(cookieV2, 2, 1, 1000, 1, []byte{0x80}))
	f.Add("HIST")
	f.Fuzz(func(t *testing.T, in string) {
		h, err := Decode(in)
		if err != nil {
			if h != nil || !errors.Is(err, ErrEncoding) {
				t.Fatalf("%v with a histogram, or not an ErrEncoding", err)
			}
			return
		}
		again, err := Decode(h.Encode())
		if err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		sameCounts(t, "re-encoded", again, h)
	})
}

// BenchmarkDecodeMerge100: what combining 100 runs' window histograms
// costs: decoding 100 encodings of 50,000 log-normal latencies each (1 µs
// to 1 h, 3 digits, as runs keep them) and merging them into one, whose
// p99 is then read.
//
//	go test -run - -bench DecodeMerge100 -count 5 ./internal/hdr
func BenchmarkDecodeMerge100(b *testing.B) {
	c := config{1, 3_600_000_000, 3}
	encs := make([]string, 100)
	var bytes int
	for i := range encs {
		h := New(c.lowest, c.highest, c.digits)
		for _, v := range seeded(uint64(100+i), 50000, func(r *rand.Rand, _ config) int64 {
			return int64(math.Exp(r.NormFloat64()*1.2+7.5)) + 1
		})(c) {
			h.RecordValue(v)
		}
		encs[i] = h.Encode()
		bytes += len(encs[i])
	}
	b.ResetTimer()
	for range b.N {
		all := New(c.lowest, c.highest, c.digits)
		for _, e := range encs {
			h, err := Decode(e)
			if err != nil {
				b.Fatal(err)
			}
			if err := all.Merge(h); err != nil {
				b.Fatal(err)
			}
		}
		if all.TotalCount() != 100*50000 || all.ValueAtQuantile(99) <= 0 {
			b.Fatal("merged wrong")
		}
	}
	b.ReportMetric(float64(bytes)/100, "bytes/histogram")
}
