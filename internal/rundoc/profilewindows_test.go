package rundoc

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestProfileWindowLength(t *testing.T) {
	for _, c := range []struct {
		step, want time.Duration
	}{
		{250 * time.Millisecond, 2 * time.Second},         // 8 intervals
		{500 * time.Millisecond, 2 * time.Second},         // a coarsened series: 4
		{300 * time.Millisecond, 2100 * time.Millisecond}, // 7 steps reach 2 s
		{time.Second, 2 * time.Second},
		{4 * time.Second, 4 * time.Second}, // one interval is already longer
		{0, MinProfileWindow},
	} {
		if got := ProfileWindowLength(c.step); got != c.want {
			t.Errorf("ProfileWindowLength(%v) = %v, want %v", c.step, got, c.want)
		}
	}
}

func TestWindowName(t *testing.T) {
	for _, c := range []struct {
		from, to float64
		want     string
	}{
		{0, 2.0003, "0-2"},
		{10.001, 12.004, "10-12"},
		{1.6, 3.4, "2-3"},
		{8.0, 8.3, "8-9"}, // never empty
		{0, 0, "0-1"},
	} {
		if got := WindowName(c.from, c.to); got != c.want {
			t.Errorf("WindowName(%v, %v) = %q, want %q", c.from, c.to, got, c.want)
		}
	}
}

func TestSeriesPoints(t *testing.T) {
	for _, c := range []struct {
		secs float64
		want int
	}{
		{0, 0},
		{0.1, 1},
		{0.5, 2},
		{0.6, 2}, // a tail of 0.1 s joins the second point
		{0.625, 3},
		{0.75, 3},
		{8, 32},
	} {
		if got := SeriesPoints(c.secs); got != c.want {
			t.Errorf("SeriesPoints(%v) = %d, want %d", c.secs, got, c.want)
		}
	}
}

func TestWantsProfileWindows(t *testing.T) {
	spec := func(args ...string) Spec {
		t.Helper()
		s, err := ParseArgs(Producer, args)
		if err != nil {
			t.Fatalf("ParseArgs(%q): %v", args, err)
		}
		return s
	}
	for _, c := range []struct {
		name string
		s    Spec
		want bool
	}{
		{"default count, length unknown", spec(), true},
		{"duration of 10 s", spec("--duration", "10"), true},
		{"duration of 0.5 s: 2 points", spec("--duration", "0.5"), false},
		{"duration of 0.75 s: 3 points", spec("--duration", "0.75"), true},
		{"throttled count of 0.2 s", spec("--num-records", "200", "--throughput", "1000"), false},
		{"throttled count of 10 s", spec("--num-records", "10000", "--throughput", "1000"), true},
		{"warm-up is outside the window", spec("--num-records", "10600", "--warmup-records", "10000", "--throughput", "1000"), false},
		{"off", spec("--duration", "10", "--profile-windows", "off"), false},
		{"on, however short", spec("--duration", "0.1", "--profile-windows", "on"), true},
		{"no cpu profile", spec("--duration", "10", "--profile", "heap"), false},
	} {
		if got := c.s.WantsProfileWindows(); got != c.want {
			t.Errorf("%s: WantsProfileWindows = %v, want %v", c.name, got, c.want)
		}
	}
	if _, err := ParseArgs(Producer, []string{"--profile-windows", "on", "--profile", "heap"}); err == nil || !strings.Contains(err.Error(), "profile-windows") {
		t.Errorf("--profile-windows on without a cpu profile: err = %v, want one naming --profile-windows", err)
	}
	if _, err := ParseArgs(Producer, []string{"--profile-windows", "sometimes"}); err == nil || !strings.Contains(err.Error(), "profile-windows") {
		t.Errorf("--profile-windows sometimes: err = %v, want one naming --profile-windows", err)
	}
}

// TestProfileWindowsInSpecFiles: a spec that keeps the default carries no
// profile-windows parameter, so a worker older than the option, which
// refuses parameters it does not know, still takes it; one that sets it
// round-trips through the spec file the children read.
func TestProfileWindowsInSpecFiles(t *testing.T) {
	def := DefaultSpec(Producer)
	params, err := def.Params()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := params["profile-windows"]; ok {
		t.Errorf("a default spec's params hold profile-windows: %s", params["profile-windows"])
	}
	// A spec file written before the option decodes.
	old := []byte(`{"workload":"producer","params":{"num-records":1000,"profile":["cpu"]}}`)
	f, err := ParseSpecFile(old)
	if err != nil {
		t.Fatal(err)
	}
	s, err := SpecFromParams(f.Workload, f.Params)
	if err != nil {
		t.Fatalf("spec without profile-windows: %v", err)
	}
	if s.ProfileWindows != "" || !s.WantsProfileWindows() {
		t.Errorf("spec without profile-windows: %q, wants windows %v; want the default, on", s.ProfileWindows, s.WantsProfileWindows())
	}
	for _, mode := range []string{ProfileWindowsOn, ProfileWindowsOff} {
		s := DefaultSpec(Producer)
		s.ProfileWindows = mode
		params, err := s.Params()
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(SpecFile{Workload: s.Workload, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseSpecFile(data)
		if err != nil {
			t.Fatal(err)
		}
		back, err := SpecFromParams(f.Workload, f.Params)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		if back.ProfileWindows != mode {
			t.Errorf("profile-windows %q came back as %q from %s", mode, back.ProfileWindows, data)
		}
	}
}
