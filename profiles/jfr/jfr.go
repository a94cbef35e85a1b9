// Package jfr converts Java Flight Recorder recordings into pprof
// profiles, so that a JVM's samples show in every view kbench has for Go
// profiles (flame graph, differential flame graph, write-path panel,
// pprof UI). No Go library reads JFR's binary format, so kbench lets the
// JDK's own jfr tool print the recording as JSON
// (jfr print --json --stack-depth 2048 --events
// jdk.ExecutionSample,jdk.NativeMethodSample; without --stack-depth it
// prints only each stack's 5 innermost frames) and reads that: streamed one event at a time, with bounds on what one
// event, one stack and the whole profile may hold.
//
// The profile merges two kinds of sample. jdk.ExecutionSample samples
// threads running Java code; jdk.NativeMethodSample samples threads inside
// a native method (sun.nio.ch.FileDispatcherImpl.writev0 and the like),
// whether they run or block there. The sum is therefore not CPU time but
// thread samples by state: kbench stores it as the profile kind "wall".
// Each sample carries the labels "thread" (the Java thread's name) and
// "state" ("running" or "native").
package jfr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// The JFR event types Convert reads; others in the input are skipped and
// counted in Summary.Skipped.
const (
	ExecutionSample    = "jdk.ExecutionSample"
	NativeMethodSample = "jdk.NativeMethodSample"
)

// Sample label keys and the states of the "state" label.
const (
	LabelThread = "thread"
	LabelState  = "state"
	// LabelWindow names the window of a windowed profile a sample fell
	// in (Options.Window), as kbench's Go CPU profiles do.
	LabelWindow  = "window"
	StateRunning = "running"
	StateNative  = "native"
)

// Bounds: what Convert refuses rather than holds in memory. JFR itself
// caps stacks at 2048 frames (-XX:FlightRecorderOptions:stackdepth), so a
// stack or an event beyond these is not a recording jfr printed.
const (
	// MaxEventBytes bounds the bytes read for one event's JSON (or one
	// skipped value): what the decoder read ahead before the event began
	// comes on top, so an event holds at most twice this in memory.
	MaxEventBytes = 16 << 20
	// MaxFrames bounds one stack trace.
	MaxFrames = 8192
	// MaxNameBytes bounds a class, method or thread name.
	MaxNameBytes = 4096
	// MaxStacks bounds the distinct (stack, thread, state) samples.
	MaxStacks = 1 << 20
	// MaxLocations bounds the distinct frames (method and line).
	MaxLocations = 1 << 20
)

// maxEventBytes is MaxEventBytes, lowered by tests.
var maxEventBytes int64 = MaxEventBytes

// ErrTooLarge is wrapped by Convert's error when the input exceeds one of
// the bounds above.
var ErrTooLarge = errors.New("jfr: input too large")

// Summary counts what a conversion read.
type Summary struct {
	// Execution is the number of jdk.ExecutionSample events.
	Execution int64 `json:"execution"`
	// Native is the number of jdk.NativeMethodSample events.
	Native int64 `json:"native"`
	// Skipped counts events of other types, left out of the profile.
	Skipped int64 `json:"skipped,omitempty"`
	// Truncated counts samples whose stack JFR cut at its stack depth
	// (the outermost frames are missing).
	Truncated int64 `json:"truncated,omitempty"`
}

// Samples is the number of samples in the profile: Execution + Native.
func (s Summary) Samples() int64 { return s.Execution + s.Native }

// The JSON of one event, as jfr print --json writes it; only the fields
// kbench uses (encoding/json skips the others).
type event struct {
	Type   string `json:"type"`
	Values struct {
		StartTime     string  `json:"startTime"`
		SampledThread *thread `json:"sampledThread"`
		StackTrace    *struct {
			Truncated bool    `json:"truncated"`
			Frames    []frame `json:"frames"`
		} `json:"stackTrace"`
	} `json:"values"`
}

type thread struct {
	OSName   string `json:"osName"`
	JavaName string `json:"javaName"`
}

type frame struct {
	Method *struct {
		Type *struct {
			Name string `json:"name"`
		} `json:"type"`
		Name string `json:"name"`
	} `json:"method"`
	LineNumber int64 `json:"lineNumber"`
}

// Convert reads the JSON `jfr print --json` prints and returns the
// samples of the execution and native method sample events as a pprof
// profile: one sample type samples/count, period type wall/nanoseconds,
// frames named like Java's stack traces (sun.nio.ch.IOUtil.write) with
// their line numbers where JFR has them. Identical stacks of one thread
// in one state are one pprof sample with their count.
func Convert(r io.Reader) (*profile.Profile, Summary, error) {
	return ConvertWith(r, Options{})
}

// Options are what ConvertWith and FromRecordingWith add to the samples.
type Options struct {
	// Window, when set, names the window of an event from its start time
	// (the wall-clock time jfr prints, the JVM's timestamp converted by
	// the recording's own clock): the sample gets the label LabelWindow
	// with that name unless it is "". Events of one stack, thread and
	// state in different windows are different samples.
	Window func(time.Time) string
}

// ConvertWith is Convert with opts.
func ConvertWith(r io.Reader, opts Options) (*profile.Profile, Summary, error) {
	lr := &markReader{r: r, limit: maxEventBytes}
	dec := json.NewDecoder(lr)
	b := newBuilder()
	b.window = opts.Window
	var sum Summary

	// {"recording": {"events": [ … ]}}, other members skipped.
	err := object(dec, lr, func(key string) error {
		if key != "recording" {
			return skip(dec, lr)
		}
		return object(dec, lr, func(key string) error {
			if key != "events" {
				return skip(dec, lr)
			}
			if err := delim(dec, '['); err != nil {
				return fmt.Errorf("events: %w", err)
			}
			for dec.More() {
				lr.mark()
				var ev event
				if err := dec.Decode(&ev); err != nil {
					return fmt.Errorf("event %d: %w", sum.Execution+sum.Native+sum.Skipped+1, err)
				}
				if err := b.add(&ev, &sum); err != nil {
					return fmt.Errorf("event %d: %w", sum.Execution+sum.Native+sum.Skipped+1, err)
				}
			}
			return delim(dec, ']')
		})
	})
	if err != nil {
		return nil, Summary{}, fmt.Errorf("jfr: read recording JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, Summary{}, fmt.Errorf("jfr: read recording JSON: data after the recording")
	}
	p := b.profile()
	if err := p.CheckValid(); err != nil {
		return nil, Summary{}, fmt.Errorf("jfr: converted profile: %w", err)
	}
	return p, sum, nil
}

// markReader fails a read once more than limit bytes were read since the
// last mark: one event (or one skipped value) cannot fill memory.
type markReader struct {
	r           io.Reader
	limit, read int64
}

func (m *markReader) mark() { m.read = 0 }

func (m *markReader) Read(p []byte) (int, error) {
	if m.read >= m.limit {
		return 0, fmt.Errorf("%w: one event is over %d bytes", ErrTooLarge, m.limit)
	}
	// Never read past the limit: an event that needs more is refused at
	// the next read, whatever the reader's chunk sizes.
	if rest := m.limit - m.read; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := m.r.Read(p)
	m.read += int64(n)
	return n, err
}

// delim reads the delimiter want.
func delim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %v", want, tok)
	}
	return nil
}

// object reads a JSON object, calling member for each key with the
// decoder before its value; member must consume the value.
func object(dec *json.Decoder, lr *markReader, member func(key string) error) error {
	if err := delim(dec, '{'); err != nil {
		return err
	}
	for dec.More() {
		lr.mark()
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return fmt.Errorf("want a key, got %v", tok)
		}
		if err := member(key); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	return delim(dec, '}')
}

// skip consumes one value token by token, so that a large value kbench
// does not use is never held whole.
func skip(dec *json.Decoder, lr *markReader) error {
	depth := 0
	for {
		lr.mark()
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// builder gathers samples into a profile, sharing functions, locations
// and samples that repeat.
type builder struct {
	functions map[string]*profile.Function
	locations map[locKey]*profile.Location
	samples   map[string]*profile.Sample
	order     []*profile.Sample
	p         *profile.Profile
	// names are the frame names of (class, method) pairs seen.
	names map[[2]string]string
	first time.Time
	last  time.Time
	key   []byte // the key of the sample being added, reused
	// window names an event's window (Options.Window), or is nil.
	window func(time.Time) string
}

type locKey struct {
	fn   string
	line int64
}

func newBuilder() *builder {
	return &builder{
		functions: map[string]*profile.Function{},
		locations: map[locKey]*profile.Location{},
		samples:   map[string]*profile.Sample{},
		names:     map[[2]string]string{},
		p: &profile.Profile{
			SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}},
			PeriodType: &profile.ValueType{Type: "wall", Unit: "nanoseconds"},
		},
	}
}

// add adds one event's sample, or counts it as skipped.
func (b *builder) add(ev *event, sum *Summary) error {
	var state string
	switch ev.Type {
	case ExecutionSample:
		state = StateRunning
	case NativeMethodSample:
		state = StateNative
	default:
		sum.Skipped++
		return nil
	}
	v := &ev.Values
	name := ""
	if th := v.SampledThread; th != nil {
		name = th.JavaName
		if name == "" {
			name = th.OSName
		}
	}
	if len(name) > MaxNameBytes {
		return fmt.Errorf("%w: thread name of %d bytes", ErrTooLarge, len(name))
	}
	var locs []*profile.Location
	truncated := false
	if st := v.StackTrace; st != nil {
		if len(st.Frames) > MaxFrames {
			return fmt.Errorf("%w: stack of %d frames (at most %d)", ErrTooLarge, len(st.Frames), MaxFrames)
		}
		truncated = st.Truncated
		locs = make([]*profile.Location, 0, len(st.Frames))
		for i := range st.Frames {
			loc, err := b.location(&st.Frames[i])
			if err != nil {
				return fmt.Errorf("frame %d: %w", i, err)
			}
			locs = append(locs, loc)
		}
	}
	win := ""
	if t, err := time.Parse(time.RFC3339Nano, v.StartTime); err == nil {
		if b.first.IsZero() || t.Before(b.first) {
			b.first = t
		}
		if t.After(b.last) {
			b.last = t
		}
		if b.window != nil {
			win = b.window(t)
		}
	}

	b.key = append(b.key[:0], state...)
	b.key = append(b.key, 0)
	b.key = append(b.key, win...)
	b.key = append(b.key, 0)
	b.key = append(b.key, name...)
	for _, l := range locs {
		b.key = append(b.key, ',')
		b.key = strconv.AppendUint(b.key, l.ID, 10)
	}
	s, ok := b.samples[string(b.key)] // no allocation for the lookup
	if !ok {
		if len(b.samples) >= MaxStacks {
			return fmt.Errorf("%w: over %d distinct stacks", ErrTooLarge, MaxStacks)
		}
		s = &profile.Sample{
			Location: locs,
			Value:    []int64{0},
			Label:    map[string][]string{LabelState: {state}},
		}
		if name != "" {
			s.Label[LabelThread] = []string{name}
		}
		if win != "" {
			s.Label[LabelWindow] = []string{win}
		}
		b.samples[string(b.key)] = s
		b.order = append(b.order, s)
	}
	s.Value[0]++
	if state == StateRunning {
		sum.Execution++
	} else {
		sum.Native++
	}
	if truncated {
		sum.Truncated++
	}
	return nil
}

// location returns the location of one frame: a function named
// package.Class.method, and the frame's line when JFR knows it (native
// and some compiled frames have none, -1 or 0).
func (b *builder) location(f *frame) (*profile.Location, error) {
	class, method := "", ""
	if m := f.Method; m != nil {
		method = m.Name
		if m.Type != nil {
			class = m.Type.Name
		}
	}
	if len(class) > MaxNameBytes || len(method) > MaxNameBytes {
		return nil, fmt.Errorf("%w: name of %d bytes", ErrTooLarge, len(class)+len(method))
	}
	name, ok := b.names[[2]string{class, method}]
	if !ok {
		name = method
		if name == "" {
			name = "[unknown]"
		}
		if class != "" {
			// JFR writes internal class names, sun/nio/ch/IOUtil; Java's
			// stack traces and every Java profiler say sun.nio.ch.IOUtil.
			name = strings.ReplaceAll(class, "/", ".") + "." + name
		}
		b.names[[2]string{class, method}] = name
	}
	line := f.LineNumber
	if line < 0 {
		line = 0
	}
	k := locKey{name, line}
	if loc, ok := b.locations[k]; ok {
		return loc, nil
	}
	if len(b.locations) >= MaxLocations {
		return nil, fmt.Errorf("%w: over %d distinct frames", ErrTooLarge, MaxLocations)
	}
	fn, ok := b.functions[name]
	if !ok {
		fn = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: name, SystemName: name}
		b.functions[name] = fn
		b.p.Function = append(b.p.Function, fn)
	}
	loc := &profile.Location{ID: uint64(len(b.p.Location) + 1), Line: []profile.Line{{Function: fn, Line: line}}}
	b.locations[k] = loc
	b.p.Location = append(b.p.Location, loc)
	return loc, nil
}

// profile returns the gathered profile, its samples in first-seen order.
func (b *builder) profile() *profile.Profile {
	b.p.Sample = b.order
	if !b.first.IsZero() {
		b.p.TimeNanos = b.first.UnixNano()
		b.p.DurationNanos = b.last.Sub(b.first).Nanoseconds()
	}
	return b.p
}
