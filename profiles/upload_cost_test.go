package profiles

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestUploadCostCovers checks the memory estimates LoadUpload refuses
// profiles by against what loading them really allocates (everything
// allocated, an upper bound of the peak): for profiles made of one kind of
// element each, which is how a hostile upload would make the most of the
// budget, the estimate must be at least the allocation. This is a bound on
// bytes, not a timing.
func TestUploadCostCovers(t *testing.T) {
	var cases []struct {
		name  string
		data  []byte
		proto bool
	}
	addProto := func(name string, p *profile.Profile) {
		cases = append(cases, struct {
			name  string
			data  []byte
			proto bool
		}{name, encoded(t, p), true})
	}
	addText := func(name string, data []byte) {
		cases = append(cases, struct {
			name  string
			data  []byte
			proto bool
		}{name, data, false})
	}
	n := 40_000
	if raceEnabled {
		n = 5_000 // the same shapes, in a tenth of the time
	}
	st := []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}
	fn := &profile.Function{ID: 1, Name: "f"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: fn}}}
	{ // samples of one location
		p := &profile.Profile{SampleType: st, Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
		for i := 0; i < n; i++ {
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1, 1}})
		}
		addProto("samples", p)
	}
	{ // deep stacks
		p := &profile.Profile{SampleType: st, Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
		deep := make([]*profile.Location, 200)
		for i := range deep {
			deep[i] = loc
		}
		for i := 0; i < n/50; i++ {
			p.Sample = append(p.Sample, &profile.Sample{Location: deep, Value: []int64{1, 1}})
		}
		addProto("deep stacks", p)
	}
	{ // empty samples of many values
		many := make([]*profile.ValueType, 500)
		for i := range many {
			many[i] = st[0]
		}
		p := &profile.Profile{SampleType: many}
		for i := 0; i < n/20; i++ {
			p.Sample = append(p.Sample, &profile.Sample{Value: make([]int64, len(many))})
		}
		addProto("values", p)
	}
	{ // functions with distinct names
		p := &profile.Profile{SampleType: st}
		for i := 1; i <= n; i++ {
			p.Function = append(p.Function, &profile.Function{ID: uint64(i), Name: fmt.Sprintf("f%d", i), SystemName: fmt.Sprintf("s%d", i), Filename: fmt.Sprintf("x%d.go", i)})
		}
		addProto("functions", p)
	}
	{ // mappings
		p := &profile.Profile{SampleType: st}
		for i := 1; i <= n; i++ {
			p.Mapping = append(p.Mapping, &profile.Mapping{ID: uint64(i), Start: uint64(i) << 12, Limit: uint64(i+1) << 12, File: "lib.so", HasFunctions: true})
		}
		addProto("mappings", p)
	}
	{ // locations, of one line or of many
		for _, lines := range []int{0, 1, 8} {
			p := &profile.Profile{SampleType: st, Function: []*profile.Function{fn}}
			for i := 1; i <= n; i++ {
				l := &profile.Location{ID: uint64(i), Address: uint64(i)<<12 + 1}
				for j := 0; j < lines; j++ {
					l.Line = append(l.Line, profile.Line{Function: fn, Line: int64(j)})
				}
				p.Location = append(p.Location, l)
			}
			addProto(fmt.Sprintf("locations of %d lines", lines), p)
		}
	}
	{ // labels
		p := &profile.Profile{SampleType: st, Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
		for i := 0; i < n/4; i++ {
			p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1, 1},
				Label: map[string][]string{"k": {"v"}, "key": {"a", "b"}}, NumLabel: map[string][]int64{"bytes": {int64(i)}}, NumUnit: map[string][]string{"bytes": {"bytes"}}})
		}
		addProto("labels", p)
	}
	{ // many short strings
		p := &profile.Profile{SampleType: st}
		for i := 0; i < n; i++ {
			p.Comments = append(p.Comments, fmt.Sprint(i))
		}
		addProto("short strings", p)
	}
	{ // long strings
		p := &profile.Profile{SampleType: st, Function: []*profile.Function{fn}, Location: []*profile.Location{loc}}
		for i := 0; i < 200; i++ {
			p.Comments = append(p.Comments, fmt.Sprintf("%d%s", i, strings.Repeat("x", 20_000)))
		}
		addProto("strings", p)
	}
	{ // folded: every frame distinct
		var b bytes.Buffer
		for i := 0; i < min(n, MaxFrameNames/3); i++ { // within the limit on names
			fmt.Fprintf(&b, "a%d;b%d;c%d 1\n", i, i, i)
		}
		addText("folded, distinct frames", bytes.Clone(b.Bytes()))
		b.Reset()
		for i := 0; i < n/10; i++ {
			fmt.Fprintf(&b, "%s 1\n", strings.Repeat(fmt.Sprintf("f%d;", i), 40)+"x")
		}
		addText("folded, long lines", bytes.Clone(b.Bytes()))
		addText("folded, one stack repeated", bytes.Repeat([]byte("main;net.(*conn).Write;internal/poll.(*FD).Write;syscall.Syscall 90\n"), n))
	}
	{ // legacy heap text: every address distinct
		var b bytes.Buffer
		b.WriteString("heap profile: 1: 2 [3: 4] @ heap/1048576\n")
		for i := 0; i < n/4; i++ {
			fmt.Fprintf(&b, "1: 2 [3: 4] @ 0x%x 0x%x 0x%x 0x%x\n", 4*i+1, 4*i+2, 4*i+3, 4*i+4)
		}
		addText("legacy heap text", bytes.Clone(b.Bytes()))
		b.Reset()
		b.WriteString("--- mutex:\ncycles/second=1000\nsampling period=1\n")
		for i := 0; i < n/4; i++ {
			fmt.Fprintf(&b, "10 2 @ 0x%x 0x%x\n", 2*i+1, 2*i+2)
		}
		addText("legacy contention text", b.Bytes())
	}
	{ // legacy binary CPU: every address distinct, 32-bit words
		words := []uint32{0, 3, 0, 10000, 0}
		for i := 0; i < n/4; i++ {
			words = append(words, 1, 3, uint32(3*i+1), uint32(3*i+2), uint32(3*i+3))
		}
		words = append(words, 0, 1, 0)
		b := make([]byte, 4*len(words))
		for i, w := range words {
			binary.LittleEndian.PutUint32(b[4*i:], w)
		}
		addText("legacy binary cpu", b)
	}

	for _, tc := range cases {
		if raceEnabled && strings.HasPrefix(tc.name, "legacy") && !strings.Contains(tc.name, "binary") {
			// pprof's legacy text parsers use regular expressions,
			// whose sync.Pool of matchers the race detector mostly
			// empties: allocations there say nothing of a real build.
			continue
		}
		var estimate int64
		if tc.proto {
			s := newPBScan(bufio.NewReader(bytes.NewReader(tc.data)), math.MaxInt64)
			if err := s.walk(); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			estimate = s.cost + pbCostPerByte*s.off
		} else {
			ts := &textScan{lim: defaultLimits}
			if err := ts.scan(bufio.NewReaderSize(bytes.NewReader(tc.data), 64<<10+utf8Max)); err != nil {
				t.Fatal(err)
			}
			switch {
			case ts.legacy():
				estimate = ts.legacyCost()
			case ts.foldedOK():
				estimate = ts.foldedCost()
			default:
				t.Fatalf("%s: neither legacy nor folded: %v", tc.name, ts.foldedErr)
			}
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		p, err := loadBytes(tc.data)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var out bytes.Buffer
		if err := p.Write(&out); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		allocated := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("%-24s %8d bytes: estimate %6.1f MB, allocated %6.1f MB (%.2f×)", tc.name, len(tc.data), float64(estimate)/1e6, float64(allocated)/1e6, float64(estimate)/float64(allocated))
		if estimate < allocated {
			t.Errorf("%s: estimated %d bytes, loading allocated %d", tc.name, estimate, allocated)
		}
	}
}
