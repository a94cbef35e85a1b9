package profiles

import (
	"bufio"
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
	MaxFoldedLineBytes = 1 << 20       // longest line, without its line break
	MaxFoldedLines     = 10_000_000    // lines, counting blank and comment lines
	MaxFoldedFrames    = MaxStackDepth // frames in one stack, as for every upload
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
	var frames []*profile.Location

	lines := newLineReader(r, MaxFoldedLineBytes)
	check := newFoldedChecker(period)
	for {
		text, long, err := lines.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("profiles: reading folded stacks: %w", err)
		}
		stack, count, ok, ferr := check.line(text, long)
		if ferr != nil {
			return nil, ferr
		}
		if !ok {
			continue
		}
		if x, ok := samples[stack]; ok {
			x.Value[0] += count
			x.Value[1] += count * ns
			continue
		}
		frames = frames[:0]
		rest := stack
		for {
			name, tail, more := strings.Cut(rest, ";")
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
	if err := check.end(); err != nil {
		return nil, err
	}
	return p, nil
}

// foldedChecker holds every rule of folded stacks text, line by line:
// ParseFolded builds a profile from the lines it passes, and LoadUpload
// runs it alone over a stream first (keeping nothing), so both refuse
// exactly the same input.
type foldedChecker struct {
	maxTotal int64 // keeps every count × period and every total within int64
	period   time.Duration
	lineNo   int
	total    int64
	stacks   int64 // lines that hold a stack
	frames   int64 // frames on those lines
}

func newFoldedChecker(period time.Duration) *foldedChecker {
	return &foldedChecker{maxTotal: math.MaxInt64 / int64(period), period: period}
}

// line checks the next line (without its line break; long when it was
// longer than MaxFoldedLineBytes). ok is false for blank and comment lines.
func (c *foldedChecker) line(text []byte, long bool) (stack string, count int64, ok bool, err error) {
	c.lineNo++
	line := c.lineNo
	if line > MaxFoldedLines {
		return "", 0, false, &FoldedError{Line: line, Msg: fmt.Sprintf("more than %d lines", MaxFoldedLines)}
	}
	if long || len(text) > MaxFoldedLineBytes {
		return "", 0, false, &FoldedError{Line: line, Msg: fmt.Sprintf("line longer than %d bytes", MaxFoldedLineBytes)}
	}
	s := strings.TrimRight(string(text), " \t\r")
	if s == "" || s[0] == '#' {
		return "", 0, false, nil
	}
	sp := strings.LastIndexAny(s, " \t")
	if sp < 0 {
		return "", 0, false, &FoldedError{Line: line, Msg: fmt.Sprintf("%s has no count: want 'frame;frame;frame count'", quoteShort(s))}
	}
	count, cerr := parseCount(s[sp+1:])
	if cerr != nil {
		return "", 0, false, &FoldedError{Line: line, Msg: cerr.Error()}
	}
	stack = strings.TrimRight(s[:sp], " \t")
	if stack == "" {
		return "", 0, false, &FoldedError{Line: line, Msg: "no frames before the count"}
	}
	n := strings.Count(stack, ";") + 1
	if n > MaxFoldedFrames {
		return "", 0, false, &FoldedError{Line: line, Msg: fmt.Sprintf("%d frames, more than the limit of %d", n, MaxFoldedFrames)}
	}
	if i := emptyFrame(stack); i > 0 {
		return "", 0, false, &FoldedError{Line: line, Msg: fmt.Sprintf("frame %d is empty", i)}
	}
	if count > c.maxTotal-c.total {
		return "", 0, false, &FoldedError{Line: line, Msg: fmt.Sprintf("counts add up to more than %d samples of %v", c.maxTotal, c.period)}
	}
	c.total += count
	c.stacks++
	c.frames += int64(n)
	return stack, count, true, nil
}

// end checks what only the whole text can tell: that it had a stack.
func (c *foldedChecker) end() error {
	if c.stacks == 0 {
		return &FoldedError{Line: c.lineNo, Msg: "no stacks (only blank or comment lines)"}
	}
	return nil
}

// emptyFrame is the 1-based position of the first empty frame of stack,
// or 0 when there is none.
func emptyFrame(stack string) int {
	for i := 1; ; i++ {
		name, tail, more := strings.Cut(stack, ";")
		if name == "" {
			return i
		}
		if !more {
			return 0
		}
		stack = tail
	}
}

// lineReader splits text into lines as bufio.ScanLines does (a final line
// without a line break counts, one '\r' before the break is dropped), but
// goes on past a line longer than its limit: it reports the line as long,
// keeps its first max+1 bytes and skips the rest, so a scan that only
// counts need not stop there.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
	// n counts the bytes read, line breaks included.
	n int64
	// onLong, when set, sees the skipped part of every long line; an
	// error from it ends next with that error.
	onLong func([]byte) error
}

func newLineReader(r io.Reader, max int) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 64<<10)
	}
	return &lineReader{r: br, max: max}
}

// next returns the next line, valid until the following call, or io.EOF
// after the last one.
func (lr *lineReader) next() (line []byte, long bool, err error) {
	lr.buf = lr.buf[:0]
	got := false
	for {
		chunk, err := lr.r.ReadSlice('\n')
		lr.n += int64(len(chunk))
		if len(chunk) > 0 {
			got = true
		}
		// Keep up to max+2 bytes: the longest line allowed, a '\r' and
		// one byte more to tell it was too long.
		if room := lr.max + 2 - len(lr.buf); room > 0 {
			keep := chunk
			if len(keep) > room {
				keep = keep[:room]
			}
			lr.buf = append(lr.buf, keep...)
			chunk = chunk[len(keep):]
		}
		if len(chunk) > 0 && lr.onLong != nil {
			if err := lr.onLong(chunk); err != nil {
				return nil, false, err
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF:
			if !got {
				return nil, false, io.EOF
			}
		case err != nil:
			return nil, false, err
		}
		line = lr.buf
		if len(line) > 0 && line[len(line)-1] == '\n' {
			line = line[:len(line)-1]
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		return line, len(line) > lr.max, nil
	}
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
