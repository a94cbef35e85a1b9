package jfr

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// fr is one frame as jfr print --json writes it (slashes escaped, as the
// tool does), with the fields kbench ignores beside the ones it reads.
func fr(class, method string, line int) string {
	return strings.ReplaceAll(fmt.Sprintf(`{"method": {"type": {"classLoader": {"type": null, "name": "bootstrap"}, "name": %q, `+
		`"package": {"name": "x", "exported": true}, "modifiers": 0, "hidden": false}, "name": %q, `+
		`"descriptor": "(Ljava\/io\/FileDescriptor;JI)J", "modifiers": 264, "hidden": false}, `+
		`"lineNumber": %d, "bytecodeIndex": 0, "type": "JIT compiled"}`, class, method, line), "/", `\/`)
}

// ev is one event of type typ on thread th with the frames, innermost first.
func ev(typ, th string, frames ...string) string {
	return fmt.Sprintf(`{"type": %q, "values": {"startTime": "2026-12-01T17:06:57.589724329Z", `+
		`"sampledThread": {"osName": %q, "osThreadId": 12, "javaName": %q, "javaThreadId": 1, "group": {"parent": null, "name": "main"}}, `+
		`"stackTrace": {"truncated": false, "frames": [%s]}, "state": "STATE_RUNNABLE"}}`, typ, th, th, strings.Join(frames, ", "))
}

func doc(events ...string) string {
	return `{"recording": {"events": [` + strings.Join(events, ", ") + `]}}`
}

var (
	writev0 = fr("sun/nio/ch/FileDispatcherImpl", "writev0", -1)
	writev  = fr("sun/nio/ch/SocketDispatcher", "writev", 66)
	ioWrite = fr("sun/nio/ch/IOUtil", "write", 217)
	mainFr  = fr("W", "main", 9)
)

// stacks renders a profile's samples as "value state thread a;b;c"
// (outermost frame first, frames as name:line), sorted.
func stacks(p *profile.Profile) []string {
	var out []string
	for _, s := range p.Sample {
		var names []string
		for i := len(s.Location) - 1; i >= 0; i-- {
			for _, l := range s.Location[i].Line {
				names = append(names, fmt.Sprintf("%s:%d", l.Function.Name, l.Line))
			}
		}
		out = append(out, fmt.Sprintf("%d %s %s %s", s.Value[0], strings.Join(s.Label[LabelState], ","), strings.Join(s.Label[LabelThread], ","), strings.Join(names, ";")))
	}
	sort.Strings(out)
	return out
}

// TestConvert: the samples of both event types, Java frame names with
// their lines, labels, repeated stacks counted once, other event types
// and other members skipped.
func TestConvert(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		want   []string
		sum    Summary
		length int64 // profile duration in ns
	}{
		{"no events", doc(), nil, Summary{}, 0},
		{"an execution sample", doc(ev(ExecutionSample, "main", ioWrite, mainFr)),
			[]string{"1 running main W.main:9;sun.nio.ch.IOUtil.write:217"}, Summary{Execution: 1}, 0},
		{"a native sample: no line", doc(ev(NativeMethodSample, "main", writev0, writev, ioWrite)),
			[]string{"1 native main sun.nio.ch.IOUtil.write:217;sun.nio.ch.SocketDispatcher.writev:66;sun.nio.ch.FileDispatcherImpl.writev0:0"},
			Summary{Native: 1}, 0},
		{"both, repeated, two threads", doc(
			ev(NativeMethodSample, "main", writev0, ioWrite),
			ev(ExecutionSample, "main", ioWrite),
			ev(NativeMethodSample, "main", writev0, ioWrite),
			ev(NativeMethodSample, "reader", writev0, ioWrite),
			ev(ExecutionSample, "main", ioWrite)),
			[]string{
				"1 native reader sun.nio.ch.IOUtil.write:217;sun.nio.ch.FileDispatcherImpl.writev0:0",
				"2 native main sun.nio.ch.IOUtil.write:217;sun.nio.ch.FileDispatcherImpl.writev0:0",
				"2 running main sun.nio.ch.IOUtil.write:217",
			}, Summary{Execution: 2, Native: 3}, 0},
		{"other events skipped", doc(ev("jdk.ObjectAllocationSample", "main", mainFr), ev(ExecutionSample, "main", mainFr)),
			[]string{"1 running main W.main:9"}, Summary{Execution: 1, Skipped: 1}, 0},
		{"other members skipped", `{"meta": [1, {"a": [2, 3]}], "recording": {"chunks": {"x": null}, "events": [` +
			ev(ExecutionSample, "main", mainFr) + `], "tail": "t"}, "more": {}}`,
			[]string{"1 running main W.main:9"}, Summary{Execution: 1}, 0},
		{"thread with only an OS name, no stack", doc(`{"type": "jdk.ExecutionSample", "values": {"sampledThread": {"osName": "GC Thread#0", "javaName": null}, "stackTrace": null}}`),
			[]string{"1 running GC Thread#0 "}, Summary{Execution: 1}, 0},
		{"truncated stack, no thread, no method", doc(`{"type": "jdk.NativeMethodSample", "values": {"stackTrace": {"truncated": true, "frames": [{"method": null, "lineNumber": 3}]}}}`),
			[]string{"1 native  [unknown]:3"}, Summary{Native: 1, Truncated: 1}, 0},
		{"time span", doc(
			strings.Replace(ev(ExecutionSample, "main", mainFr), "17:06:57.589724329", "17:06:59.5", 1),
			strings.Replace(ev(ExecutionSample, "main", mainFr), "17:06:57.589724329", "17:06:57.25", 1)),
			[]string{"2 running main W.main:9"}, Summary{Execution: 2}, 2_250_000_000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, sum, err := Convert(strings.NewReader(c.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := stacks(p); strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("samples:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			if sum != c.sum {
				t.Errorf("summary %+v, want %+v", sum, c.sum)
			}
			if total(p) != sum.Samples() {
				t.Errorf("profile holds %d samples, summary %d", total(p), sum.Samples())
			}
			if p.DurationNanos != c.length {
				t.Errorf("duration %d, want %d", p.DurationNanos, c.length)
			}
			if len(p.SampleType) != 1 || p.SampleType[0].Type != "samples" || p.SampleType[0].Unit != "count" ||
				p.PeriodType == nil || p.PeriodType.Type != "wall" || p.PeriodType.Unit != "nanoseconds" {
				t.Errorf("sample types %v, period type %v; want samples/count, wall/nanoseconds", p.SampleType, p.PeriodType)
			}
		})
	}
}

func total(p *profile.Profile) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[0]
	}
	return n
}

const testEventBytes = 64 << 10

// TestConvertRefuses: what is not jfr print's JSON, or is larger than a
// recording can be, is refused with an error saying why.
func TestConvertRefuses(t *testing.T) {
	deep := make([]string, MaxFrames+1)
	for i := range deep {
		deep[i] = `{}`
	}
	cases := []struct {
		name    string
		in      string
		want    string
		tooLarg bool
	}{
		{"empty", "", "EOF", false},
		{"not JSON", "Recording file not found", "invalid character", false},
		{"an array", `[]`, "want", false},
		{"events not an array", `{"recording": {"events": {}}}`, "events", false},
		{"an event not an object", doc(`"x"`), "event 1", false},
		{"cut off", doc(ev(ExecutionSample, "main", mainFr))[:200], "event 1", false},
		{"data after", doc() + `{}`, "data after", false},
		{"a stack deeper than JFR records", doc(`{"type": "jdk.ExecutionSample", "values": {"stackTrace": {"frames": [` + strings.Join(deep, ",") + `]}}}`), "frames", true},
		{"a huge event", doc(`{"type": "jdk.ExecutionSample", "values": {"pad": "` + strings.Repeat("x", 2*testEventBytes+1) + `"}}`), "over", true},
		{"a huge skipped member", `{"recording": {"x": "` + strings.Repeat("x", 2*testEventBytes+1) + `"}}`, "over", true},
		{"a huge name", doc(ev(ExecutionSample, "main", fr("C", strings.Repeat("m", MaxNameBytes+1), 1))), "name", true},
	}
	// A lower bound on an event's bytes, so the huge cases stay small.
	defer func(n int64) { maxEventBytes = n }(maxEventBytes)
	maxEventBytes = testEventBytes
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _, err := Convert(strings.NewReader(c.in))
			if err == nil {
				t.Fatalf("converted to %d samples; want an error", len(p.Sample))
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "jfr: ") {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if errors.Is(err, ErrTooLarge) != c.tooLarg {
				t.Errorf("error %q: ErrTooLarge %v, want %v", err, !c.tooLarg, c.tooLarg)
			}
		})
	}
}

// FuzzConvert: any input converts to a valid profile whose sample total
// is the summary's, or is refused; never a panic.
func FuzzConvert(f *testing.F) {
	f.Add(doc())
	f.Add(doc(ev(ExecutionSample, "main", ioWrite, mainFr), ev(NativeMethodSample, "r", writev0, writev, ioWrite)))
	f.Add(doc(`{"type": "jdk.NativeMethodSample", "values": {"stackTrace": {"truncated": true, "frames": [{"method": null, "lineNumber": -7}]}}}`))
	f.Add(`{"recording": {"x": [1, {"y": null}], "events": []}}`)
	f.Add(`{"recording": {"events": [{"type": "jdk.ExecutionSample", "values": null}]}}`)
	f.Add(`[]`)
	for _, name := range []string{"gather.json", "per-buffer.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, sum, err := Convert(strings.NewReader(in))
		if err != nil {
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("invalid profile: %v", err)
		}
		if total(p) != sum.Samples() {
			t.Fatalf("profile holds %d samples, summary %d", total(p), sum.Samples())
		}
		for _, s := range p.Sample {
			if st := s.Label[LabelState]; len(st) != 1 || (st[0] != StateRunning && st[0] != StateNative) {
				t.Fatalf("sample state %v", st)
			}
		}
	})
}
