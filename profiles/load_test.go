package profiles

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

func gzipBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// legacyCPU builds a profile in the pre-protobuf binary CPU format (64-bit
// little-endian words: header 0 3 0 period 0, samples count n pc…, trailer
// 0 1 0), which profile.Parse still reads.
func legacyCPU() []byte {
	words := []uint64{0, 3, 0, 10000, 0, 5, 2, 0x401010, 0x401020, 2, 1, 0x401030, 0, 1, 0}
	b := make([]byte, 8*len(words))
	for i, w := range words {
		binary.LittleEndian.PutUint64(b[8*i:], w)
	}
	return b
}

func TestLoad(t *testing.T) {
	gz, err := os.ReadFile(fixtureBase)
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if err := fixtureGoCPU(false).WriteUncompressed(&raw); err != nil {
		t.Fatal(err)
	}
	var heapText bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&heapText, 1); err != nil {
		t.Fatal(err)
	}
	folded := []byte("main;a;b 3\nmain;c 2\n")
	for _, tc := range []struct {
		name     string
		data     []byte
		kind     string
		samples  int
		sampleTy string
	}{
		{"pprof gzipped", gz, "cpu", 12, "samples/count cpu/nanoseconds"},
		{"pprof uncompressed", raw.Bytes(), "cpu", 12, "samples/count cpu/nanoseconds"},
		{"legacy binary cpu", legacyCPU(), "cpu", 2, "samples/count cpu/nanoseconds"},
		{"legacy heap text", heapText.Bytes(), "heap", -1, "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes"},
		{"folded", folded, "cpu", 2, "samples/count cpu/nanoseconds"},
		{"folded gzipped", gzipBytes(t, folded), "cpu", 2, "samples/count cpu/nanoseconds"},
	} {
		p, err := Load(tc.data)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var types []string
		for _, st := range p.SampleType {
			types = append(types, st.Type+"/"+st.Unit)
		}
		if got := strings.Join(types, " "); got != tc.sampleTy {
			t.Errorf("%s: sample types %s, want %s", tc.name, got, tc.sampleTy)
		}
		if tc.samples >= 0 && len(p.Sample) != tc.samples {
			t.Errorf("%s: %d samples, want %d", tc.name, len(p.Sample), tc.samples)
		}
		if got := Kind(p); got != tc.kind {
			t.Errorf("%s: Kind = %q, want %q", tc.name, got, tc.kind)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	const expected = "expected a pprof profile (protobuf, gzipped or not) or folded stacks text: lines of 'frame;frame;frame count'"
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "the input is empty"},
		{"folded error has its line", []byte("a;b 1\n\nnotfolded\n"), "folded stacks line 3: \"notfolded\" has no count"},
		{"gzipped folded error", gzipBytes(t, []byte("a;b 1\nc;d x\n")), "folded stacks line 2"},
		{"binary junk", []byte{0xff, 0x00, 0x13, 0x37, 0x80}, "pprof: "},
		{"broken gzip", []byte{0x1f, 0x8b, 0x08, 0x00, 0x01}, "gzip"},
		{"protobuf without sample types", []byte{0x32, 0x00}, "no sample types"},
		{"html", []byte("<!doctype html>\n<html><body>404</body></html>\n"), "line 1"},
	} {
		_, err := Load(tc.data)
		if !errors.Is(err, ErrNotProfile) {
			t.Errorf("%s: got %v, want an error wrapping ErrNotProfile", tc.name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, expected) || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: got %q, want it to say %q and %q", tc.name, msg, expected, tc.want)
		}
	}
}

func TestKind(t *testing.T) {
	vt := func(pairs ...string) []*profile.ValueType {
		var out []*profile.ValueType
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, &profile.ValueType{Type: pairs[i], Unit: pairs[i+1]})
		}
		return out
	}
	heapTypes := vt("alloc_objects", "count", "alloc_space", "bytes", "inuse_objects", "count", "inuse_space", "bytes")
	contention := func(leaf ...string) *profile.Profile {
		p := &profile.Profile{SampleType: vt("contentions", "count", "delay", "nanoseconds"), PeriodType: &profile.ValueType{Type: "contentions", Unit: "count"}}
		var locs []*profile.Location
		for i, name := range leaf {
			f := &profile.Function{ID: uint64(i + 1), Name: name}
			l := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f}}}
			p.Function, p.Location = append(p.Function, f), append(p.Location, l)
			locs = append(locs, l)
		}
		if len(locs) > 0 {
			p.Sample = []*profile.Sample{{Location: locs, Value: []int64{1, 100}}}
		}
		return p
	}
	runtimeProfile := func(name string) *profile.Profile {
		var buf bytes.Buffer
		if err := pprof.Lookup(name).WriteTo(&buf, 0); err != nil {
			t.Fatal(err)
		}
		p, err := profile.ParseData(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		p    *profile.Profile
		want string
	}{
		{"go cpu", fixtureGoCPU(false), "cpu"},
		{"runtime heap", runtimeProfile("heap"), "heap"},
		{"runtime allocs", runtimeProfile("allocs"), "allocs"},
		{"runtime goroutine", runtimeProfile("goroutine"), "goroutine"},
		{"heap types", &profile.Profile{SampleType: heapTypes}, "heap"},
		{"allocs by default type", &profile.Profile{SampleType: heapTypes, DefaultSampleType: "alloc_space"}, "allocs"},
		{"alloc types only", &profile.Profile{SampleType: vt("alloc_objects", "count", "alloc_space", "bytes")}, "allocs"},
		{"mutex: unlock leaf", contention("sync.(*Mutex).Unlock", "main.worker"), "mutex"},
		{"mutex: RWMutex", contention("internal/sync.(*Mutex).unlockSlow", "sync.(*RWMutex).Unlock", "main.f"), "mutex"},
		{"mutex: runtime lock", contention("runtime._LostContendedRuntimeLock"), "mutex"},
		{"block: lock leaf", contention("sync.(*Mutex).Lock", "main.worker"), "block"},
		{"block: channel", contention("runtime.chanrecv1", "main.main"), "block"},
		{"block: unlock too deep to count", contention("runtime.selectgo", "a", "b", "sync.(*Mutex).Unlock"), "block"},
		{"contention without samples", contention(), "block"},
		{"wall sample type", &profile.Profile{SampleType: vt("samples", "count", "wall", "nanoseconds")}, "wall"},
		{"JFR conversion: wall period", &profile.Profile{SampleType: vt("samples", "count"), PeriodType: &profile.ValueType{Type: "wall", Unit: "nanoseconds"}}, "wall"},
		{"unknown", &profile.Profile{SampleType: vt("events", "count")}, ""},
		{"none", &profile.Profile{}, ""},
	} {
		if got := Kind(tc.p); got != tc.want {
			t.Errorf("%s: Kind = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func FuzzLoad(f *testing.F) {
	gz, err := os.ReadFile(fixtureBase)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(gz)
	var raw bytes.Buffer
	fixtureGoCPU(true).WriteUncompressed(&raw)
	f.Add(raw.Bytes())
	f.Add(legacyCPU())
	for _, file := range []string{"testdata/roundtrip.folded", "testdata/java-io.folded"} {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(gzipBytes(f, data))
	}
	f.Add([]byte("heap profile: 1: 2 [3: 4] @ heap/1048576\n1: 2 [3: 4] @ 0x1 0x2\n"))
	f.Add([]byte{0x32, 0x00})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Load(data)
		if err != nil {
			if !errors.Is(err, ErrNotProfile) {
				t.Fatalf("error %v does not wrap ErrNotProfile", err)
			}
			return
		}
		if len(p.SampleType) == 0 {
			t.Fatal("accepted a profile without sample types")
		}
		// Everything downstream must cope with whatever parsed.
		Kind(p)
		idx, err := PickSample(p, "")
		if err != nil {
			t.Fatal(err)
		}
		root := BuildTree(p, idx)
		root.Compact()
		WritePaths(p, idx)
		TopChanges(p, p, idx, idx, 1, 10)
		if _, err := Diff(p, p, idx, idx, 0.5); err != nil {
			t.Fatal(err)
		}
		WriteFolded(io.Discard, p, idx)
	})
}
