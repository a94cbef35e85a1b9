package profiles

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/testutil/gzbomb"
)

// countingOpener serves data, counting how many bytes of it were read over
// all passes.
type countingOpener struct {
	data  []byte
	read  int64
	opens int
}

func (c *countingOpener) open() (io.ReadCloser, error) {
	c.opens++
	return io.NopCloser(&countingReader{r: bytes.NewReader(c.data), n: &c.read}), nil
}

type countingReader struct {
	r io.Reader
	n *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func loadBytes(data []byte) (*profile.Profile, error) {
	return LoadUpload((&countingOpener{data: data}).open)
}

// encoded is p as an uncompressed protobuf.
func encoded(t testing.TB, p *profile.Profile) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := p.WriteUncompressed(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestLoadUploadFormats: every format Load reads, LoadUpload reads to the
// same profile.
func TestLoadUploadFormats(t *testing.T) {
	gz, err := os.ReadFile(fixtureBase)
	if err != nil {
		t.Fatal(err)
	}
	raw := encoded(t, fixtureGoCPU(false))
	var heapText, goroutines bytes.Buffer
	pprof.Lookup("heap").WriteTo(&heapText, 1)
	pprof.Lookup("goroutine").WriteTo(&goroutines, 1)
	folded := []byte("main;a;b 3\nmain;c 2\n")
	// Two gzip members, as `cat a.gz b.gz` makes: one stream to gzip
	// readers, pprof's included.
	members := append(gzipBytes(t, raw[:len(raw)/2]), gzipBytes(t, raw[len(raw)/2:])...)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"pprof gzipped", gz},
		{"pprof uncompressed", raw},
		{"pprof in two gzip members", members},
		{"legacy binary cpu", legacyCPU()},
		{"legacy binary cpu gzipped", gzipBytes(t, legacyCPU())},
		{"legacy heap text", heapText.Bytes()},
		{"legacy goroutine text", goroutines.Bytes()},
		{"folded", folded},
		{"folded gzipped", gzipBytes(t, folded)},
		{"folded without a final line break, CRLF", []byte("main;a 1\r\nmain;b 2")},
	} {
		want, err := Load(tc.data)
		if err != nil {
			t.Fatalf("%s: Load: %v", tc.name, err)
		}
		got, err := loadBytes(tc.data)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if g, w := got.String(), want.String(); g != w {
			t.Errorf("%s: LoadUpload and Load differ:\n%s\nwant\n%s", tc.name, g, w)
		}
	}
}

// TestLoadUploadBombs: decompression bombs are refused having read a
// fraction of the upload (zeros and junk) or at the cap (content that
// stays plausible), and never by holding their content.
func TestLoadUploadBombs(t *testing.T) {
	valid := encoded(t, fixtureGoCPU(false))
	// A valid profile, then an unknown field (number 100, length-
	// delimited) holding 300 MiB: pprof would skip it, after reading it.
	unknown := append(append([]byte{}, valid...), 0xa2, 0x06)
	unknown = binary.AppendUvarint(unknown, 300<<20)
	// Samples of two values, "12 04 10 01 10 01", ten million of them:
	// 60 MB, under the cap, but a parsed Sample each.
	sample := []byte{0x12, 0x04, 0x10, 0x01, 0x10, 0x01}
	// Refused early: within the first reads of each pass (32 KiB of the
	// upload at a time), whatever the upload's size.
	const early = 128 << 10
	// Bombs that stay plausible are read to a limit: here smaller ones,
	// as decompressing 256 MiB takes a while under the race detector
	// (the end-to-end test sends them to the real server at the real
	// limits).
	small := limits{decompressed: 16 << 20, load: 64 << 20, legacyLoad: 8 << 20}
	for _, tc := range []struct {
		name    string
		data    []byte
		lim     limits
		want    error
		msg     string
		maxRead int64 // bytes of the upload read, over all passes
	}{
		{"1 GiB of zeros", gzbomb.Zeros(nil, 1<<30), defaultLimits, ErrNotProfile, "field number 0", early},
		{"200 MiB of zeros (under the cap)", gzbomb.Zeros(nil, 200<<20), defaultLimits, ErrNotProfile, "field number 0", early},
		{"a valid profile, then 1 GiB of zeros", gzbomb.Zeros(valid, 1<<30), defaultLimits, ErrNotProfile, "field number 0", early},
		{"binary junk", gzbomb.Repeat(nil, []byte{0xff, 0xfe, 0x01}, 100<<20), defaultLimits, ErrNotProfile, "", early},
		{"text, one line", gzbomb.Repeat(nil, []byte("hello "), 100<<20), defaultLimits, ErrNotProfile, "line 1", early},
		{"gzip in gzip", gzipBytes(t, gzipBytes(t, valid)), defaultLimits, ErrNotProfile, "twice", early},
		{"a legacy header, then text", gzbomb.Repeat([]byte("--- mutex:\ncycles/second=1\n"), []byte("x y z\n"), 100<<20), defaultLimits, ErrTooLarge, "legacy", early},
		{"ten million samples", gzbomb.Repeat(valid, sample, 60_000_000), defaultLimits, ErrTooLarge, "512 MiB of memory", math.MaxInt64},
		{"a valid profile, then an unknown field past the cap", gzbomb.Zeros(unknown, 300<<20), small, ErrTooLarge, "more than 16 MiB", math.MaxInt64},
		{"folded stacks past the cap", gzbomb.Repeat(nil, []byte("main;a;b 1\n"), 300<<20), limits{decompressed: 16 << 20, load: 256 << 20, legacyLoad: 8 << 20}, ErrTooLarge, "more than 16 MiB", math.MaxInt64},
		{"folded stacks past the memory budget", gzbomb.Repeat(nil, []byte("main;a;b 1\n"), 300<<20), limits{decompressed: 64 << 20, load: 16 << 20, legacyLoad: 8 << 20}, ErrTooLarge, "16 MiB of memory", math.MaxInt64},
	} {
		o := &countingOpener{data: tc.data}
		_, err := upload{open: o.open, lim: tc.lim}.load()
		if !errors.Is(err, tc.want) || !strings.Contains(fmtErr(err), tc.msg) {
			t.Errorf("%s: %v, want %v mentioning %q", tc.name, err, tc.want, tc.msg)
			continue
		}
		if o.read > tc.maxRead {
			t.Errorf("%s: read %d of the upload's %d bytes before refusing it, want at most %d", tc.name, o.read, len(tc.data), tc.maxRead)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestLoadUploadGzipErrors: truncated and corrupt gzip is not a profile,
// whatever came before the damage.
func TestLoadUploadGzipErrors(t *testing.T) {
	valid := encoded(t, fixtureGoCPU(false))
	gz := gzipBytes(t, valid)
	folded := gzipBytes(t, []byte(strings.Repeat("main;a 1\n", 1000)))
	corrupt := append([]byte{}, gz...)
	corrupt[len(corrupt)-6] ^= 0xff // the CRC-32
	for _, tc := range []struct {
		name string
		data []byte
		msg  string
	}{
		{"truncated trailer", gz[:len(gz)-4], "ends early"},
		{"truncated deflate stream", gz[:len(gz)/2], "ends early"},
		{"truncated folded", folded[:len(folded)-8], "ends early"},
		{"bad checksum", corrupt, "checksum"},
		{"junk after the member", append(append([]byte{}, gz...), "junk"...), "gzip"},
		{"header only", gz[:10], "ends early"},
	} {
		if _, err := loadBytes(tc.data); !errors.Is(err, ErrNotProfile) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want a not-a-profile error mentioning %q", tc.name, err, tc.msg)
		}
	}
}

// TestLoadUploadOverflow: totals that overflow int64 are refused, in
// either direction and whatever the order of the samples; negative values
// (a -diff_base profile) are fine.
func TestLoadUploadOverflow(t *testing.T) {
	mk := func(values ...int64) *profile.Profile {
		fn := &profile.Function{ID: 1, Name: "main.f"}
		loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
		p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
			Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
		for _, v := range values {
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1, v}})
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		values []int64
		ok     bool
	}{
		{"two MaxInt64", []int64{math.MaxInt64, math.MaxInt64}, false},
		{"MaxInt64 and 1", []int64{math.MaxInt64, 1}, false},
		{"MaxInt64 alone", []int64{math.MaxInt64}, true},
		{"negative (diff_base)", []int64{-5, 3, -7}, true},
		{"two MinInt64", []int64{math.MinInt64, math.MinInt64}, false},
		// The running sum never overflows, but the two positive samples
		// under one node would.
		{"alternating", []int64{math.MaxInt64, math.MinInt64 + 1, math.MaxInt64, math.MinInt64 + 1}, false},
		{"MaxInt64 and MinInt64", []int64{math.MaxInt64, math.MinInt64}, true},
	} {
		raw := encoded(t, mk(tc.values...))
		for _, data := range [][]byte{raw, gzipBytes(t, raw)} {
			_, err := loadBytes(data)
			if tc.ok && err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			if !tc.ok && (!errors.Is(err, ErrUnusable) && !errors.Is(err, ErrNotProfile) || !strings.Contains(fmtErr(err), "overflow")) {
				t.Errorf("%s: %v, want an overflow error", tc.name, err)
			}
		}
		// The same rule on a parsed profile (the legacy path's check).
		if err := checkUpload(mk(tc.values...)); (err == nil) != tc.ok {
			t.Errorf("%s: checkUpload = %v", tc.name, err)
		}
	}
}

// TestPBScanRefusesWhatPprofRefuses: profiles pprof's parser refuses for
// reasons only the whole profile shows are refused by the scan too, before
// anything is parsed.
func TestPBScanRefusesWhatPprofRefuses(t *testing.T) {
	valid := func() *profile.Profile { return fixtureGoCPU(false) }
	for _, tc := range []struct {
		name string
		edit func(p *profile.Profile)
		msg  string
	}{
		{"duplicate location id", func(p *profile.Profile) { p.Location[1].ID = p.Location[0].ID }, "multiple locations"},
		{"duplicate function id", func(p *profile.Profile) { p.Function[1].ID = p.Function[0].ID }, "multiple functions"},
		{"sample without values", func(p *profile.Profile) { p.Sample[3].Value = nil }, "mismatch"},
		{"no sample types", func(p *profile.Profile) { p.SampleType = nil; p.Sample = nil }, "no sample types"},
		{"missing location, sparse ids", func(p *profile.Profile) {
			for i, l := range p.Location {
				l.ID = uint64(1000 + 7*i)
			}
			p.Location = p.Location[1:]
		}, "no location with id"},
		{"missing function, dense ids", func(p *profile.Profile) {
			p.Function = p.Function[:len(p.Function)-1]
		}, "function"},
	} {
		p := valid()
		tc.edit(p)
		data := encoded(t, p)
		if _, err := profile.ParseData(data); err == nil && tc.msg != "no sample types" {
			t.Fatalf("%s: pprof accepts the profile; the case tests nothing", tc.name)
		}
		if _, err := loadBytes(data); !errors.Is(err, ErrNotProfile) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want a refusal mentioning %q", tc.name, err, tc.msg)
		}
	}
}

// FuzzLoadUpload: LoadUpload accepts exactly what Load accepts (and
// kbench's own checks pass), gzipped or not, and the profiles are the
// same. The only exception is a protobuf field numbered 0, which protobuf
// forbids and pprof skips: LoadUpload refuses it at once.
func FuzzLoadUpload(f *testing.F) {
	gz, err := os.ReadFile(fixtureBase)
	if err != nil {
		f.Fatal(err)
	}
	raw := encoded(f, fixtureGoCPU(false))
	f.Add(gz, false)
	f.Add(raw, false)
	f.Add(raw, true)
	f.Add(raw[:len(raw)-3], true)
	f.Add(legacyCPU(), false)
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1 0x2\n"), true)
	f.Add([]byte("goroutine profile: total 3\n3 @ 0x1 0x2\n#\t0x1\tmain.f+0x1\tf.go:1\n"), false)
	f.Add([]byte("--- mutex:\ncycles/second=1000\nsampling period=1\n10 2 @ 0x1 0x2\n"), false)
	f.Add([]byte("main;a;b 3\nmain;c 2\n"), true)
	f.Add([]byte("a;;b 1\n"), false)
	f.Add([]byte{0x32, 0x00}, false)
	f.Add([]byte{0x32, 0x00, 0x0a, 0x00}, false)
	f.Add(gzbomb.Zeros(raw, 4096), false)
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, data []byte, compress bool) {
		if compress {
			data = gzipBytes(t, data)
		}
		want, werr := Load(data)
		if werr == nil {
			werr = checkUpload(want)
		}
		got, gerr := loadBytes(data)
		var pe *pbError
		if gerr != nil && errors.As(gerr, &pe) && strings.Contains(pe.msg, "field number 0") && werr == nil {
			return
		}
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("Load: %v\nLoadUpload: %v", werr, gerr)
		}
		if gerr != nil {
			if !errors.Is(gerr, ErrNotProfile) && !errors.Is(gerr, ErrUnusable) && !errors.Is(gerr, ErrTooLarge) {
				t.Fatalf("error %v wraps none of the sentinels", gerr)
			}
			return
		}
		if g, w := got.String(), want.String(); g != w {
			t.Fatalf("profiles differ:\n%s\nwant\n%s", g, w)
		}
	})
}
