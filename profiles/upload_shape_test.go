package profiles

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// deepProfile is a CPU profile of one sample whose stack has depth
// frames, each its own function; inlined, when set, puts two functions
// (an inlined call and its caller) in each location, so depth frames take
// depth/2 locations.
func deepProfile(depth int, inlined bool) *profile.Profile {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	fn := func(i int) *profile.Function {
		f := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("main.f%05d", i)}
		p.Function = append(p.Function, f)
		return f
	}
	var locs []*profile.Location
	for i := 0; i < depth; {
		l := &profile.Location{ID: uint64(len(p.Location) + 1)}
		n := 1
		if inlined && depth-i >= 2 {
			n = 2
		}
		for k := 0; k < n; k++ {
			l.Line = append([]profile.Line{{Function: fn(i)}}, l.Line...)
			i++
		}
		p.Location = append(p.Location, l)
		locs = append(locs, l)
	}
	slices.Reverse(locs) // leaf first
	p.Sample = []*profile.Sample{{Location: locs, Value: []int64{1, 10_000_000}}}
	return p
}

// TestUploadDepthLimitEveryFormat: one depth limit, MaxStackDepth frames
// as the flame graph draws them, for pprof (gzipped or not, inlined calls
// counted one frame each) and folded stacks alike: at the limit accepted,
// one frame more refused as unusable (ErrTooDeep), never as too large.
func TestUploadDepthLimitEveryFormat(t *testing.T) {
	folded := func(depth int) []byte {
		return []byte(strings.Repeat("main.f;", depth-1) + "main.leaf 1\n")
	}
	for _, tc := range []struct {
		name  string
		data  func(depth int) []byte
		depth int
	}{
		{"pprof", func(d int) []byte { return encoded(t, deepProfile(d, false)) }, MaxStackDepth},
		{"pprof gzipped", func(d int) []byte { return gzipBytes(t, encoded(t, deepProfile(d, false))) }, MaxStackDepth},
		{"pprof with inlined calls", func(d int) []byte { return gzipBytes(t, encoded(t, deepProfile(d, true))) }, MaxStackDepth},
		{"folded", folded, MaxStackDepth},
	} {
		p, err := loadBytes(tc.data(tc.depth))
		if err != nil {
			t.Errorf("%s: %d frames refused: %v", tc.name, tc.depth, err)
		} else if n := len(NewFlat(BuildTree(p, 0), OrderName).names); n == 0 {
			t.Errorf("%s: drew nothing", tc.name)
		}
		_, err = loadBytes(tc.data(tc.depth + 1))
		switch tc.name {
		case "folded": // refused by the line checks, before parsing
			if !errors.Is(err, ErrNotProfile) || !strings.Contains(err.Error(), fmt.Sprintf("more than the limit of %d", MaxStackDepth)) {
				t.Errorf("%s: %d frames: %v, want the depth limit", tc.name, tc.depth+1, err)
			}
		default:
			if !errors.Is(err, ErrTooDeep) || !errors.Is(err, ErrUnusable) || errors.Is(err, ErrTooLarge) ||
				!strings.Contains(err.Error(), fmt.Sprintf("a stack of %d frames, deeper than the limit of %d", tc.depth+1, MaxStackDepth)) {
				t.Errorf("%s: %d frames: %v, want ErrTooDeep", tc.name, tc.depth+1, err)
			}
		}
	}
	// The 100,000-frame stack of the issue.
	if _, err := loadBytes(gzipBytes(t, encoded(t, deepProfile(100_000, false)))); !errors.Is(err, ErrTooDeep) {
		t.Errorf("a 100,000-frame pprof stack: %v, want ErrTooDeep", err)
	}
}

// TestUploadNodeAndNameLimits: the flame graph's frames (distinct call
// paths) and distinct names are bounded for pprof and folded stacks alike,
// ErrTooLarge past the bound.
func TestUploadNodeAndNameLimits(t *testing.T) {
	// 20 stacks of 10 frames: 20 distinct first frames, then 9 shared
	// names under each: 200 call paths, 29 names.
	var b strings.Builder
	for i := range 20 {
		fmt.Fprintf(&b, "main.r%02d", i)
		for d := 1; d < 10; d++ {
			fmt.Fprintf(&b, ";main.f%d", d)
		}
		b.WriteString(" 1\n")
	}
	fp, err := ParseFolded(strings.NewReader(b.String()), 0)
	if err != nil {
		t.Fatal(err)
	}
	formats := map[string][]byte{"folded": []byte(b.String()), "pprof": gzipBytes(t, encoded(t, fp))}
	for name, data := range formats {
		load := func(lim limits) error {
			_, err := upload{open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(string(data))), nil }, lim: lim}.load()
			return err
		}
		lim := defaultLimits
		lim.nodes, lim.names = 200, 29
		if err := load(lim); err != nil {
			t.Errorf("%s: at the limits: %v", name, err)
		}
		lim.nodes = 199
		if err := load(lim); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "more than 199 frames") {
			t.Errorf("%s: 200 frames, limit 199: %v", name, err)
		}
		lim.nodes, lim.names = 200, 28
		if err := load(lim); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "29 distinct frame names (functions and addresses), more than the limit of 28") {
			t.Errorf("%s: 29 names, limit 28: %v", name, err)
		}
	}
}

// TestDrawAtTheLimits: a folded upload at the real limits, as costly to
// draw as an accepted upload can be (MaxFlameNodes call paths, none
// shared, MaxFrameNames names), is accepted; its flame graph has exactly
// that many frames, and building it, flattening it for the pruned views
// and encoding it as the pages fetch it (compact JSON) allocates less than
// MaxDrawBytes. One call path more is refused.
func TestDrawAtTheLimits(t *testing.T) {
	// 1,000 stacks of 1,000 frames: each starts with its own frame, so no
	// two share a path: 1,000,000 frames. Names: the 1,000 first frames
	// and 99 × 999 below them, 99,901 (≤ MaxFrameNames).
	const stacks, depth = 1000, MaxFlameNodes / 1000
	var b strings.Builder
	for i := range stacks {
		fmt.Fprintf(&b, "main.r%d", i)
		for d := 1; d < depth; d++ {
			fmt.Fprintf(&b, ";p%d.f%d", i%99, d)
		}
		fmt.Fprintf(&b, " %d\n", i+1)
	}
	text := b.String()
	p, err := loadBytes([]byte(text))
	if err != nil {
		t.Fatalf("the upload at the limits: %v", err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	tree := BuildTree(p, 0)
	flat := NewFlat(tree, OrderName)
	body, err := json.Marshal(tree.Compact())
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if flat.Frames() != MaxFlameNodes+1 {
		t.Errorf("%d frames drawn, want %d and the root", flat.Frames()-1, MaxFlameNodes)
	}
	if len(flat.names) > MaxFrameNames+1 {
		t.Errorf("%d names", len(flat.names))
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("drawing %d frames allocated %d MiB (compact JSON %d MiB)", flat.Frames(), alloc>>20, len(body)>>20)
	if alloc > MaxDrawBytes {
		t.Errorf("drawing an upload at the limits allocated %d MiB, over MaxDrawBytes (%d MiB)", alloc>>20, MaxDrawBytes>>20)
	}
	tree, flat, body = nil, nil, nil
	// One call path more.
	if _, err := loadBytes([]byte(text + "main.r0;p0.f1;other 1\n")); !errors.Is(err, ErrTooLarge) {
		t.Errorf("one frame over MaxFlameNodes: %v, want ErrTooLarge", err)
	}
}
