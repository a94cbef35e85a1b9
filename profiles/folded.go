package profiles

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// Folded (or collapsed) stacks are the text format of Brendan Gregg's
// stackcollapse scripts and of async-profiler's "-o collapsed": one line per
// distinct stack, frames from the root to the leaf separated by ';', then a
// space and the number of samples:
//
//	java;start_thread;Foo.run_[j];Foo.write_[j] 12
//
// Frame names may contain spaces but not ';'. Annotations such as
// async-profiler's "_[j]" (JIT-compiled), "_[i]" (inlined) and "_[k]"
// (kernel) stay part of the names.

// Limits that keep hostile folded input from exhausting memory.
const (
	MaxFoldedLineBytes = 1 << 20    // longest line, without its line break
	MaxFoldedLines     = 10_000_000 // lines, counting blank and comment lines
	MaxFoldedFrames    = 10_000     // frames in one stack
)

// DefaultFoldedPeriod is the sampling period assumed when ParseFolded is
// given 0: 10 ms, i.e. 100 Hz (async-profiler's and perf's usual rates are
// close to it; pass the real one when known).
const DefaultFoldedPeriod = 10 * time.Millisecond

// FoldedError reports malformed folded stacks text. It matches ErrNotProfile
// under errors.Is.
type FoldedError struct {
	Line int    // 1-based line number
	Msg  string // what is wrong with it
}

func (e *FoldedError) Error() string {
	return fmt.Sprintf("folded stacks line %d: %s", e.Line, e.Msg)
}

// Is makes errors.Is(err, ErrNotProfile) true for folded parse errors.
func (e *FoldedError) Is(target error) bool { return target == ErrNotProfile }

// ParseFolded reads folded stacks text into a CPU profile.
//
// Each line is "frame;frame;...;leaf COUNT": the count is the last field
// after a space (or tab), a non-negative decimal integer; frames may contain
// spaces, and trailing white space and a CR before the line break are
// ignored. Blank lines and lines starting with '#' are skipped. The profile has one Function and one
// Location per distinct frame name (IDs in order of first appearance), each
// sample lists its Locations leaf first as pprof does, and identical stacks
// add up into one sample. Sample types are samples/count (the count) and
// cpu/nanoseconds (count × period); PeriodType is cpu/nanoseconds, Period the
// period and DefaultSampleType "cpu". A period of 0 means
// DefaultFoldedPeriod (10 ms, 100 Hz).
//
// Errors are *FoldedError with the line number: a line without a count, a
// count that is not a non-negative integer, an empty frame, a line longer
// than MaxFoldedLineBytes, a stack deeper than MaxFoldedFrames, more than
// MaxFoldedLines lines, totals that overflow int64 nanoseconds, or no stack
// at all.
func ParseFolded(r io.Reader, period time.Duration) (*profile.Profile, error) {
	if period < 0 {
		return nil, fmt.Errorf("profiles: negative sampling period %v", period)
	}
	if period == 0 {
		period = DefaultFoldedPeriod
	}
	ns := int64(period)
	// Keep every count × period and every total within int64.
	maxTotal := int64(math.MaxInt64) / ns

	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			{Type: "samples", Unit: "count"},
			{Type: "cpu", Unit: "nanoseconds"},
		},
		DefaultSampleType: "cpu",
		PeriodType:        &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:            ns,
	}
	locs := make(map[string]*profile.Location)
	samples := make(map[string]*profile.Sample)
	var total int64
	var frames []*profile.Location

	sc := bufio.NewScanner(r)
	sc.Buffer(nil, MaxFoldedLineBytes+1)
	line := 0
	for sc.Scan() {
		line++
		if line > MaxFoldedLines {
			return nil, &FoldedError{Line: line, Msg: fmt.Sprintf("more than %d lines", MaxFoldedLines)}
		}
		text := sc.Bytes()
		if len(text) > MaxFoldedLineBytes {
			return nil, &FoldedError{Line: line, Msg: fmt.Sprintf("line longer than %d bytes", MaxFoldedLineBytes)}
		}
		s := strings.TrimRight(string(text), " \t\r")
		if s == "" || s[0] == '#' {
			continue
		}
		sp := strings.LastIndexAny(s, " \t")
		if sp < 0 {
			return nil, &FoldedError{Line: line, Msg: fmt.Sprintf("%s has no count: want 'frame;frame;frame count'", quoteShort(s))}
		}
		count, err := parseCount(s[sp+1:])
		if err != nil {
			return nil, &FoldedError{Line: line, Msg: err.Error()}
		}
		stack := strings.TrimRight(s[:sp], " \t")
		if stack == "" {
			return nil, &FoldedError{Line: line, Msg: "no frames before the count"}
		}
		if n := strings.Count(stack, ";") + 1; n > MaxFoldedFrames {
			return nil, &FoldedError{Line: line, Msg: fmt.Sprintf("%d frames, more than the limit of %d", n, MaxFoldedFrames)}
		}
		if count > maxTotal-total {
			return nil, &FoldedError{Line: line, Msg: fmt.Sprintf("counts add up to more than %d samples of %v", maxTotal, period)}
		}
		total += count
		if x, ok := samples[stack]; ok {
			x.Value[0] += count
			x.Value[1] += count * ns
			continue
		}
		frames = frames[:0]
		rest := stack
		for i := 1; ; i++ {
			name, tail, more := strings.Cut(rest, ";")
			if name == "" {
				return nil, &FoldedError{Line: line, Msg: fmt.Sprintf("frame %d is empty", i)}
			}
			l, ok := locs[name]
			if !ok {
				id := uint64(len(p.Function) + 1)
				f := &profile.Function{ID: id, Name: name, SystemName: name}
				l = &profile.Location{ID: id, Line: []profile.Line{{Function: f}}}
				p.Function = append(p.Function, f)
				p.Location = append(p.Location, l)
				locs[name] = l
			}
			frames = append(frames, l)
			if !more {
				break
			}
			rest = tail
		}
		slices.Reverse(frames) // pprof lists the leaf first
		x := &profile.Sample{
			Location: slices.Clone(frames),
			Value:    []int64{count, count * ns},
		}
		samples[stack] = x
		p.Sample = append(p.Sample, x)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &FoldedError{Line: line + 1, Msg: fmt.Sprintf("line longer than %d bytes", MaxFoldedLineBytes)}
		}
		return nil, fmt.Errorf("profiles: reading folded stacks: %w", err)
	}
	if len(p.Sample) == 0 {
		return nil, &FoldedError{Line: line, Msg: "no stacks (only blank or comment lines)"}
	}
	return p, nil
}

func parseCount(s string) (int64, error) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, fmt.Errorf("count %s is not a non-negative integer", quoteShort(s))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("count %s is not a non-negative integer below 2^63", quoteShort(s))
	}
	return n, nil
}

// quoteShort quotes s for an error message, cut to a readable length.
func quoteShort(s string) string {
	const max = 60
	if len(s) > max {
		return strconv.Quote(s[:max]) + "…"
	}
	return strconv.Quote(s)
}

// WriteFolded writes p's samples at sampleIndex as folded stacks, the
// inverse of ParseFolded: frames root first (inlined calls expanded as in
// BuildTree), identical stacks added up, one line per stack sorted
// byte-wise, samples with value 0 left out. A ';' or line break inside a
// frame name would break the format and is written as '_'; a sample without
// any location is written as the single frame "[unknown]" (stackcollapse's
// name for a frame it cannot name). Negative values
// (a diff profile) cannot be written and are an error, as is an index out
// of range.
func WriteFolded(w io.Writer, p *profile.Profile, sampleIndex int) error {
	if sampleIndex < 0 || sampleIndex >= len(p.SampleType) {
		return fmt.Errorf("profiles: sample index %d out of range (the profile has %d sample types)", sampleIndex, len(p.SampleType))
	}
	names := newNameTable()
	st := newStacker(p, names)
	sums := make(map[string]int64)
	var buf []int32
	var sb strings.Builder
	for _, x := range p.Sample {
		if x == nil {
			continue
		}
		v, ok := sampleValue(x, sampleIndex, 1)
		if !ok || v == 0 {
			continue
		}
		if v < 0 {
			return fmt.Errorf("profiles: folded stacks cannot hold negative values (%d)", v)
		}
		buf = st.stack(x, buf[:0])
		if len(buf) == 0 {
			buf = append(buf, names.id("[unknown]"))
		}
		sb.Reset()
		for i, id := range buf {
			if i > 0 {
				sb.WriteByte(';')
			}
			sb.WriteString(foldedFrame(names.list[id]))
		}
		key := sb.String()
		if sums[key] > math.MaxInt64-v {
			return fmt.Errorf("profiles: the value of stack %s overflows int64", quoteShort(key))
		}
		sums[key] += v
	}
	keys := make([]string, 0, len(sums))
	for k := range sums {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	bw := bufio.NewWriter(w)
	for _, k := range keys {
		bw.WriteString(k)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(sums[k], 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

var foldedReplacer = strings.NewReplacer(";", "_", "\n", "_")

func foldedFrame(name string) string {
	if strings.ContainsAny(name, ";\n") {
		return foldedReplacer.Replace(name)
	}
	return name
}
