package hdr

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var writeHlog = flag.Bool("write-hlog", false, "write testdata/"+hlogFile+" and testdata/"+hlogCasesFile+", hloggen's input")

const (
	// hlogFile is WriteLog's log of hlogCases, which testdata/hloggen
	// read with hdrhistogram-go's log reader into hlogReadFile.
	hlogFile     = "kbench.hlog"
	hlogReadFile = "kbench-hlog-read-by-hdrhistogram-go-v1.4.0.txt"
	// hlogCasesFile is hlogCases as text (times in ms, histograms in
	// kbench's encoding), from which testdata/hloggen wrote the logs of
	// hdrhistogram-go's log writer: relative starts, and absolute ones.
	hlogCasesFile       = "kbench-hlog-cases.txt"
	hlogGoRelativeFile  = "hdrhistogram-go-v1.4.0-relative.hlog"
	hlogGoAbsoluteFile  = "hdrhistogram-go-v1.4.0-absolute.hlog"
	hlogCasesStartMilli = 1_700_000_000_250
)

// hlogQuantiles are the quantiles hloggen writes for each histogram it
// read.
var hlogQuantiles = []float64{50, 90, 99, 99.9, 100}

// hlogCases is a log of the kind kbench writes: two tagged series and an
// untagged one, one interval a second with the jitter of real timers
// (starts and lengths to the millisecond), kbench's layout and two
// others, an empty histogram and one of zeros only.
func hlogCases(t testing.TB) Log {
	l := Log{StartTime: time.UnixMilli(hlogCasesStartMilli).UTC()}
	layouts := []config{{1, 3_600_000_000, 3}, {1000, 10_000_000_000, 3}, {1, 1_000_000, 2}}
	tags := []string{"record-latency", "e2e-latency", ""}
	for i := range 12 {
		c := layouts[i%len(layouts)]
		if i >= 9 {
			c = layouts[0]
		}
		var values []int64
		switch i {
		case 9: // empty
		case 10:
			values = []int64{0, 0, 0}
			c = layouts[1]
		default:
			values = seeded(uint64(100+i), 1500, func(r *rand.Rand, _ config) int64 {
				return int64(math.Exp(r.NormFloat64()*1.2+7.5)) + 1
			})(c)
		}
		h := New(c.lowest, c.highest, c.digits)
		for _, v := range values {
			if err := h.RecordValue(v); err != nil {
				t.Fatal(err)
			}
		}
		startMs := int64(i/len(tags))*1000 + int64(i%len(tags))*4 + int64(i%2)
		l.Entries = append(l.Entries, LogEntry{
			Tag:     tags[i%len(tags)],
			StartS:  float64(startMs) / 1000,
			LengthS: float64(1000+i*7%5) / 1000,
			Hist:    h,
		})
	}
	return l
}

// sameLog fails t unless got holds want's entries (tags, counters, and
// times to the millisecond, want's starts shifted by shiftS).
func sameLog(t *testing.T, what string, got, want Log, shiftS float64) {
	t.Helper()
	if len(got.Entries) != len(want.Entries) {
		t.Fatalf("%s: %d entries, want %d", what, len(got.Entries), len(want.Entries))
	}
	// Milliseconds as the log keeps them: as Java rounds them (half up on
	// the shortest decimal) where WriteLog writes them, at or after 0.
	ms := func(s float64) int64 {
		if s >= 0 && s <= maxLogSeconds {
			return javaMillis(s)
		}
		return int64(math.Round(s * 1000))
	}
	for i, g := range got.Entries {
		w := want.Entries[i]
		name := fmt.Sprintf("%s: entry %d", what, i)
		if g.Tag != w.Tag {
			t.Errorf("%s: tag %q, want %q", name, g.Tag, w.Tag)
		}
		if ms(g.StartS) != ms(w.StartS+shiftS) || ms(g.LengthS) != ms(w.LengthS) {
			t.Errorf("%s: start %v s length %v s, want %v and %v", name, g.StartS, g.LengthS, w.StartS+shiftS, w.LengthS)
		}
		sameCounts(t, name, g.Hist, w.Hist)
	}
}

// TestLogRoundTrip: what WriteLog writes, ReadLog reads back: tags,
// histograms' counters, times to the millisecond, with and without a
// StartTime.
func TestLogRoundTrip(t *testing.T) {
	withStart := hlogCases(t)
	noStart := withStart
	noStart.StartTime = time.Time{}
	subMilli := withStart
	subMilli.StartTime = withStart.StartTime.Add(999 * time.Microsecond)
	for _, tc := range []struct {
		name string
		l    Log
	}{{"StartTime", withStart}, {"no StartTime", noStart}, {"StartTime below the ms", subMilli}, {"no entries", Log{StartTime: withStart.StartTime}}, {"nothing", Log{}}} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteLog(&b, tc.l); err != nil {
				t.Fatal(err)
			}
			got, err := ReadLog(&b)
			if err != nil {
				t.Fatal(err)
			}
			if got.StartTime.IsZero() != tc.l.StartTime.IsZero() || got.StartTime.UnixMilli() != tc.l.StartTime.UnixMilli() {
				t.Errorf("start time %v, want %v", got.StartTime, tc.l.StartTime)
			}
			sameLog(t, tc.name, got, tc.l, 0)
		})
	}
}

// TestWriteLogLines: the lines around the histograms are Java's, to the
// character (checked against Java's HistogramLogWriter); the max column
// is the largest value over 1,000,000, 0 for a histogram of zeros only.
func TestWriteLogLines(t *testing.T) {
	h := New(1, 3_600_000_000, 3)
	h.RecordValue(2_769_000)
	zeros := New(1000, 10_000_000, 3)
	zeros.RecordValue(0)
	exact := New(1, 1_000_000, 4)
	exact.RecordValue(4500)
	var b bytes.Buffer
	err := WriteLog(&b, Log{
		StartTime: time.UnixMilli(1441812279474),
		Entries: []LogEntry{
			{Tag: "record-latency", StartS: 0.127, LengthS: 1.007, Hist: h},
			{StartS: 1.1344999, LengthS: 0.9995001, Hist: zeros},
			{StartS: 2.0045, LengthS: 1.0005, Hist: exact},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	want := []string{
		"#[Histogram log format version 1.3]",
		"#[StartTime: 1441812279.474 (seconds since epoch), Wed Sep 09 15:24:39 UTC 2015]",
		"#[BaseTime: 1441812279.474 (seconds since epoch)]",
		`"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`,
		// 2,769,000 is counted with values up to 2,770,943.
		"Tag=record-latency,0.127,1.007,2.771," + h.Encode(),
		"1.134,1.000,0.000," + zeros.Encode(),
		// Java rounds half up on the shortest decimal: 0.0045 is 0.005,
		// though the float64s of 2.0045 and 0.0045 are a little less.
		"2.005,1.001,0.005," + exact.Encode(),
		"",
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b.String())
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\ngot  %s\nwant %s", i+1, lines[i], want[i])
		}
	}
}

// testEncoding is a small histogram's encoding for hand-written logs.
func testEncoding(t testing.TB) (*Histogram, string) {
	h := New(1, 3_600_000_000, 3)
	for _, v := range []int64{1, 1000, 2_769_000} {
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	return h, h.Encode()
}

// TestReadLogForms: logs as Java and hdrhistogram-go write them, and as
// people edit them; starts come back relative to the StartTime as Java's
// reader makes them, or as written plus the BaseTime without one.
func TestReadLogForms(t *testing.T) {
	h, enc := testEncoding(t)
	legend := `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`
	for _, tc := range []struct {
		name      string
		in        string
		startMs   int64 // 0: no StartTime
		tags      []string
		startsS   []float64
		lengthS   float64
		separator string
	}{
		{name: "Java, relative", in: "#[Logged with jHiccup]\n#[Histogram log format version 1.3]\n#[StartTime: 1441812279.474 (seconds since epoch), Wed Sep 09 08:24:39 PDT 2015]\n" + legend + "\nTag=a,0.127,1.007,2.769,E\n0.000,1.000,2.769,E\n",
			startMs: 1441812279474, tags: []string{"a", ""}, startsS: []float64{0.127, 0}, lengthS: 1},
		{name: "Java, absolute", in: "#[StartTime: 1441812279.474 (seconds since epoch), Wed Sep 09 08:24:39 PDT 2015]\n1441812280.601,1.007,2.769,E\n1441812279.000,1.007,2.769,E\n",
			startMs: 1441812279474, tags: []string{"", ""}, startsS: []float64{1.127, -0.474}},
		{name: "Java, BaseTime", in: "#[StartTime: 1441812279.474 (seconds since epoch), x]\n#[BaseTime: 1441812270.474 (seconds since epoch)]\n0.127,1.007,2.769,E\n",
			startMs: 1441812279474, tags: []string{""}, startsS: []float64{-8.873}},
		{name: "hdrhistogram-go", in: "#[Histogram log format version 1.3]\n#[StartTime: 1441812279 (seconds since epoch), 2015-09-09T15:24:39Z]\n#[BaseTime: 1441812279 (seconds since epoch)]\n" + legend + "\nTag=a,0.127000,1.007000,2.769000,E\n",
			startMs: 1441812279000, tags: []string{"a"}, startsS: []float64{0.127}},
		{name: "no StartTime, relative", in: "1.500,1.007,2.769,E\n2.500,1.007,2.769,E\n",
			tags: []string{"", ""}, startsS: []float64{1.5, 2.5}},
		{name: "no StartTime, absolute", in: "1441812280.601,1.007,2.769,E\n",
			tags: []string{""}, startsS: []float64{1441812280.601}},
		{name: "BaseTime only", in: "#[BaseTime: 1441812279.474 (seconds since epoch)]\n0.127,1.007,2.769,E\n",
			tags: []string{""}, startsS: []float64{1441812279.601}},
		{name: "CRLF, blank lines, empty tag", in: "#[StartTime: 1441812279.474]\r\n\r\n  \nTag=,0.127,1.007,2.769,E\r\n",
			startMs: 1441812279474, tags: []string{""}, startsS: []float64{0.127}},
		{name: "no final newline", in: "0.127,1.007,2.769,E",
			tags: []string{""}, startsS: []float64{0.127}},
		{name: "other number forms", in: "+1.27e-1,1007e-3,0,E\n.5,1.,2.769E0,E\n",
			tags: []string{"", ""}, startsS: []float64{0.127, 0.5}},
		{name: "empty", in: ""},
		{name: "comments only", in: "#[Histogram log format version 1.3]\n" + legend + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := ReadLog(strings.NewReader(strings.ReplaceAll(tc.in, ",E", ","+enc)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.startMs == 0 && !l.StartTime.IsZero() || tc.startMs != 0 && l.StartTime.UnixMilli() != tc.startMs {
				t.Errorf("start time %v, want %d ms", l.StartTime, tc.startMs)
			}
			if l.StartTime.Location() != time.UTC {
				t.Errorf("start time in %v, want UTC", l.StartTime.Location())
			}
			if len(l.Entries) != len(tc.startsS) {
				t.Fatalf("%d entries, want %d", len(l.Entries), len(tc.startsS))
			}
			for i, e := range l.Entries {
				if e.Tag != tc.tags[i] || e.StartS != tc.startsS[i] {
					t.Errorf("entry %d: tag %q start %v s, want %q and %v", i, e.Tag, e.StartS, tc.tags[i], tc.startsS[i])
				}
				if e.LengthS != 1.007 && e.LengthS != 1 {
					t.Errorf("entry %d: length %v", i, e.LengthS)
				}
				sameCounts(t, fmt.Sprintf("entry %d", i), e.Hist, h)
			}
		})
	}
}

// setLogLimits lowers ReadLog's and WriteLog's limits for a test.
func setLogLimits(t testing.TB, bytes int64, entries int, counters int64, line int) {
	ob, oe, oc, ol := maxLogBytes, maxLogEntries, maxLogCounters, maxLogLine
	maxLogBytes, maxLogEntries, maxLogCounters, maxLogLine = bytes, entries, counters, line
	t.Cleanup(func() { maxLogBytes, maxLogEntries, maxLogCounters, maxLogLine = ob, oe, oc, ol })
}

func TestReadLogRefuses(t *testing.T) {
	_, enc := testEncoding(t)
	good := "0.000,1.000,2.769," + enc + "\n"
	manyCounters := New(1, 1<<40, 4).Encode() // 458,752 counters
	for _, tc := range []struct {
		name, in, want string
		limit          func(t *testing.T)
	}{
		{name: "bad start", in: "x0.000,1.000,2.769," + enc, want: `line 1: start: "x0.000" is not a decimal number`},
		{name: "bad length", in: good + "0.000,1.0.0,2.769," + enc, want: `line 2: length: "1.0.0" is not a decimal number`},
		{name: "bad max", in: "0.000,1.000,abc," + enc, want: `line 1: max: "abc" is not a decimal number`},
		{name: "empty field", in: "0.000,,2.769," + enc, want: `line 1: length: "" is not a decimal number`},
		{name: "NaN", in: "NaN,1.000,2.769," + enc, want: "not a decimal number"},
		{name: "Infinity", in: "0,1,Infinity," + enc, want: "not a decimal number"},
		{name: "hexadecimal", in: "0x1p-2,1,2," + enc, want: "not a decimal number"},
		{name: "underscores", in: "1_000,1,2," + enc, want: "not a decimal number"},
		{name: "exponent without digits", in: "1e,1,2," + enc, want: "not a decimal number"},
		{name: "max beyond float64", in: "0,1,1e400," + enc, want: "too large a number"},
		{name: "start beyond the bound", in: "1e13,1,2," + enc, want: "line 1: start: 1e13 s is beyond"},
		{name: "negative length", in: "0,-1,2," + enc, want: "length -1: negative"},
		{name: "space in a field", in: "0.000, 1.000,2.769," + enc, want: "not a decimal number"},
		{name: "bad base64", in: "0.000,1.000,2.769,HISTFAAA!!" + "\n", want: "line 1: histogram: hdr: not an HdrHistogram compressed V2 encoding: base64"},
		{name: "empty histogram field", in: "0.000,1.000,2.769,", want: "line 1: histogram"},
		{name: "too many fields", in: "0.000,1.000,2.769," + enc + ",extra", want: "line 1: want 4 fields (start, length, max, histogram), not 5"},
		{name: "too few fields", in: "#c\n0.000,1.000," + enc, want: "line 2: want 4 fields (start, length, max, histogram), not 3"},
		{name: "a word", in: "hello", want: "line 1: want 4 fields (start, length, max, histogram), not 1"},
		{name: "old legend", in: `"Timestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`, want: `line 1: start: "\"Timestamp\"" is not a decimal number`},
		{name: "tag without interval", in: "Tag=abc", want: "line 1: a tag and no interval"},
		{name: "tag with a space", in: "Tag=a b,0,1,2," + enc, want: `tag "a b" holds ' '`},
		{name: "tag with a control character", in: "Tag=a\x01b,0,1,2," + enc, want: `holds '\x01'`},
		{name: "tag not UTF-8", in: "Tag=a\xffb,0,1,2," + enc, want: "is not UTF-8"},
		{name: "StartTime not a number", in: "#[StartTime: soon (seconds since epoch)]\n" + good, want: `line 1: StartTime "soon"`},
		{name: "StartTime empty", in: "#[StartTime:]\n" + good, want: `line 1: StartTime ""`},
		{name: "StartTime negative", in: "#[StartTime: -5]\n" + good, want: `StartTime "-5"`},
		{name: "StartTime too late", in: "#[StartTime: 1e15]\n" + good, want: `StartTime "1e15"`},
		{name: "BaseTime not a number", in: "#[BaseTime: x]\n" + good, want: `line 1: BaseTime "x"`},
		{name: "second StartTime", in: "#[StartTime: 5]\n#[StartTime: 6]\n", want: "line 2: a second StartTime line"},
		{name: "second BaseTime", in: "#[BaseTime: 5]\n#[BaseTime: 6]\n", want: "line 2: a second BaseTime line"},
		{name: "StartTime after an interval", in: good + "#[StartTime: 6]\n", want: "line 2: a StartTime line after the first interval"},
		{name: "oversize line", in: good + "0.000,1.000,2.769," + strings.Repeat("A", MaxEncodedLen+maxLogLineSlack), want: fmt.Sprintf("line 2: longer than %d bytes", MaxEncodedLen+maxLogLineSlack)},
		{name: "histogram over MaxEncodedLen", in: "0,1,2," + strings.Repeat("A", MaxEncodedLen+4), want: "line 1: histogram: hdr: not an HdrHistogram compressed V2 encoding: 1048580 bytes of base64"},
		{name: "too many entries", in: strings.Repeat(good, 4), want: "line 4: more than 3 intervals",
			limit: func(t *testing.T) { setLogLimits(t, MaxLogBytes, 3, MaxLogCounters, maxLogLine) }},
		{name: "too many bytes", in: strings.Repeat("#"+strings.Repeat("x", 99)+"\n", 200), want: "more than 10000 bytes",
			limit: func(t *testing.T) { setLogLimits(t, 10_000, MaxLogEntries, MaxLogCounters, maxLogLine) }},
		{name: "too many counters", in: strings.Repeat("0,1,0,"+manyCounters+"\n", 3), want: "line 3: histograms of more than 1048576 counters in all",
			limit: func(t *testing.T) { setLogLimits(t, MaxLogBytes, MaxLogEntries, 1<<20, maxLogLine) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.limit != nil {
				tc.limit(t)
			}
			l, err := ReadLog(strings.NewReader(tc.in))
			if err == nil || !errors.Is(err, ErrLog) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an ErrLog with %q", err, tc.want)
			}
			if l.Entries != nil || !l.StartTime.IsZero() {
				t.Errorf("a log with the error: %+v", l)
			}
		})
	}
}

// TestReadLogKeepsDecodeError: a histogram Decode refuses is both an
// ErrLog and an ErrEncoding.
func TestReadLogKeepsDecodeError(t *testing.T) {
	_, err := ReadLog(strings.NewReader("0,1,2,AAAA\n"))
	if !errors.Is(err, ErrLog) || !errors.Is(err, ErrEncoding) {
		t.Fatalf("%v: want ErrLog and ErrEncoding", err)
	}
}

// TestReadLogExactlyMaxBytes: a log of exactly the byte limit is read; one
// byte more is not.
func TestReadLogExactlyMaxBytes(t *testing.T) {
	_, enc := testEncoding(t)
	line := "0.000,1.000,2.769," + enc
	setLogLimits(t, int64(len(line)), MaxLogEntries, MaxLogCounters, maxLogLine)
	if l, err := ReadLog(strings.NewReader(line)); err != nil || len(l.Entries) != 1 {
		t.Fatalf("%d bytes: %v", len(line), err)
	}
	if _, err := ReadLog(strings.NewReader(line + "\n")); !errors.Is(err, ErrLog) {
		t.Fatalf("%d bytes: %v, want ErrLog", len(line)+1, err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

// TestReadLogReadError: an error of the reader is not an ErrLog.
func TestReadLogReadError(t *testing.T) {
	_, err := ReadLog(failingReader{})
	if err == nil || errors.Is(err, ErrLog) || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("%v: want the reader's error, not an ErrLog", err)
	}
}

func TestWriteLogRefuses(t *testing.T) {
	h, _ := testEncoding(t)
	entry := func(tag string, start, length float64) Log {
		return Log{Entries: []LogEntry{{Tag: "ok", StartS: 1, LengthS: 1, Hist: h}, {Tag: tag, StartS: start, LengthS: length, Hist: h}}}
	}
	for _, tc := range []struct {
		name string
		l    Log
		want string
	}{
		{"comma in tag", entry("a,b", 0, 1), "entry 1: tag \"a,b\" holds ','"},
		{"space in tag", entry("a b", 0, 1), "holds ' '"},
		{"leading space in tag", entry(" ab", 0, 1), "holds ' '"},
		{"tab in tag", entry("a\tb", 0, 1), "holds '\\t'"},
		{"newline in tag", entry("ab\n", 0, 1), "holds '\\n'"},
		{"carriage return in tag", entry("a\rb", 0, 1), "holds '\\r'"},
		{"no-break space in tag", entry("a\u00a0b", 0, 1), "holds '\\u00a0'"},
		{"control character in tag", entry("a\x7fb", 0, 1), "holds '\\x7f'"},
		{"tag not UTF-8", entry("a\xffb", 0, 1), "is not UTF-8"},
		{"negative start", entry("", -0.001, 1), "entry 1: start -0.001 s"},
		{"NaN start", entry("", math.NaN(), 1), "start NaN s"},
		{"huge start", entry("", 1e13, 1), "start 1e+13 s"},
		{"negative length", entry("", 0, -1), "length -1 s"},
		{"infinite length", entry("", 0, math.Inf(1)), "length +Inf s"},
		{"no histogram", Log{Entries: []LogEntry{{StartS: 1, LengthS: 1}}}, "entry 0: no histogram"},
		{"start before the epoch", Log{StartTime: time.Unix(-1, 0)}, "outside the epoch"},
		{"start far ahead", Log{StartTime: time.Unix(2e12, 0)}, "outside the epoch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			err := WriteLog(&b, tc.l)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want an error with %q", err, tc.want)
			}
			if b.Len() != 0 {
				t.Errorf("wrote %d bytes before refusing", b.Len())
			}
		})
	}
	t.Run("too many entries", func(t *testing.T) {
		setLogLimits(t, MaxLogBytes, 1, MaxLogCounters, maxLogLine)
		if err := WriteLog(&bytes.Buffer{}, entry("", 0, 1)); err == nil || !strings.Contains(err.Error(), "2 entries, more than 1") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("too many counters", func(t *testing.T) {
		setLogLimits(t, MaxLogBytes, MaxLogEntries, 30_000, maxLogLine)
		if err := WriteLog(&bytes.Buffer{}, entry("", 0, 1)); err == nil || !strings.Contains(err.Error(), "entry 1: histograms of more than 30000 counters") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("too large a layout", func(t *testing.T) {
		huge := Log{Entries: []LogEntry{{Hist: New(1, 1<<40, 5)}}}
		if err := WriteLog(&bytes.Buffer{}, huge); err == nil || !strings.Contains(err.Error(), "more than 1048576") {
			t.Fatalf("%v", err)
		}
	})
	t.Run("too many bytes", func(t *testing.T) {
		setLogLimits(t, 150, MaxLogEntries, MaxLogCounters, maxLogLine)
		if err := WriteLog(&bytes.Buffer{}, entry("", 0, 1)); err == nil || !strings.Contains(err.Error(), "more than 150 bytes") {
			t.Fatalf("%v", err)
		}
	})
}

// TestReadLogHdrHistogramGoWriter: logs hdrhistogram-go's log writer
// (v1.4.0) wrote of hlogCases, by testdata/hloggen, read to the same
// tags and counters. Its StartTime line keeps whole seconds only (it
// drops the 250 ms of hlogCases's start): its relative starts come back
// as hlogCases's, its absolute ones 0.250 s later, measured from the
// second it wrote.
func TestReadLogHdrHistogramGoWriter(t *testing.T) {
	want := hlogCases(t)
	for _, tc := range []struct {
		file   string
		shiftS float64
	}{{hlogGoRelativeFile, 0}, {hlogGoAbsoluteFile, 0.250}} {
		t.Run(tc.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			got, err := ReadLog(f)
			if err != nil {
				t.Fatal(err)
			}
			if got.StartTime.UnixMilli() != hlogCasesStartMilli/1000*1000 {
				t.Errorf("start time %v, want %v", got.StartTime, time.UnixMilli(hlogCasesStartMilli/1000*1000))
			}
			sameLog(t, tc.file, got, want, tc.shiftS)
		})
	}
}

// TestHdrHistogramGoReadsWriteLog: hdrhistogram-go's log reader (v1.4.0)
// read WriteLog's log of hlogCases (testdata/hloggen) to the tags,
// absolute times (which it truncates to the millisecond, so within 1 ms),
// counts, max and quantiles this package gives the cases. With
// -write-hlog, writes hloggen's inputs instead.
func TestHdrHistogramGoReadsWriteLog(t *testing.T) {
	cases := hlogCases(t)
	if *writeHlog {
		var b bytes.Buffer
		if err := WriteLog(&b, cases); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", hlogFile), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var c strings.Builder
		fmt.Fprintf(&c, "start\t%d\n", cases.StartTime.UnixMilli())
		for _, e := range cases.Entries {
			fmt.Fprintf(&c, "%s\t%d\t%d\t%d\t%s\n", e.Tag, int64(math.Round(e.StartS*1000)), int64(math.Round(e.LengthS*1000)), e.Hist.TotalCount(), e.Hist.Encode())
		}
		if err := os.WriteFile(filepath.Join("testdata", hlogCasesFile), []byte(c.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Skipf("wrote testdata/%s and testdata/%s: run testdata/hloggen on them (see its doc)", hlogFile, hlogCasesFile)
	}

	// The committed log is WriteLog's of the cases (compared by what it
	// holds: zlib's bytes may change with Go).
	f, err := os.Open(filepath.Join("testdata", hlogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	committed, err := ReadLog(f)
	if err != nil {
		t.Fatal(err)
	}
	sameLog(t, hlogFile, committed, cases, 0)

	r, err := os.Open(filepath.Join("testdata", hlogReadFile))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc := bufio.NewScanner(r)
	i := 0
	for ; sc.Scan(); i++ {
		if i >= len(cases.Entries) {
			t.Fatalf("%s: more lines than the %d cases", hlogReadFile, len(cases.Entries))
		}
		e := cases.Entries[i]
		// TAG START_MS LENGTH_MS COUNT MAX P50 P90 P99 P99.9 P100
		fields := strings.Split(sc.Text(), "\t")
		if len(fields) != 5+len(hlogQuantiles) {
			t.Fatalf("%s: line %d: %q", hlogReadFile, i+1, sc.Text())
		}
		n := make([]int64, len(fields)-1)
		for j := range n {
			if n[j], err = strconv.ParseInt(fields[j+1], 10, 64); err != nil {
				t.Fatalf("%s: line %d: %v", hlogReadFile, i+1, err)
			}
		}
		startMs := cases.StartTime.UnixMilli() + int64(math.Round(e.StartS*1000))
		endMs := startMs + int64(math.Round(e.LengthS*1000))
		within1 := func(a, b int64) bool { return a-b >= -1 && a-b <= 1 }
		if fields[0] != e.Tag || !within1(n[0], startMs) || !within1(n[1], endMs-startMs) {
			t.Errorf("entry %d: hdrhistogram-go read tag %q start %d ms length %d ms, want %q, %d and %d", i, fields[0], n[0], n[1], e.Tag, startMs, endMs-startMs)
		}
		want := []int64{e.Hist.TotalCount(), e.Hist.Max()}
		for _, q := range hlogQuantiles {
			want = append(want, e.Hist.ValueAtQuantile(q))
		}
		for j, w := range want {
			if n[j+2] != w {
				t.Errorf("entry %d: hdrhistogram-go read (count, max, p%v) %v, want %v", i, hlogQuantiles, n[2:], want)
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(cases.Entries) {
		t.Fatalf("%s: %d lines, want %d (go test -write-hlog, then testdata/hloggen)", hlogReadFile, i, len(cases.Entries))
	}
}

// FuzzReadLog: ReadLog never panics, refuses only with an ErrLog, keeps
// to its limits (lowered here, so the fuzzer reaches them), and what it
// reads and WriteLog accepts reads back the same.
func FuzzReadLog(f *testing.F) {
	setLogLimits(f, 1<<16, 4, 1<<16, 1<<14)
	_, enc := testEncoding(f)
	small := New(1, 1_000_000, 2)
	small.RecordValue(1234)
	var b bytes.Buffer
	WriteLog(&b, Log{StartTime: time.UnixMilli(hlogCasesStartMilli), Entries: []LogEntry{
		{Tag: "a", StartS: 0, LengthS: 1, Hist: small}, {StartS: 1.001, LengthS: 0.999, Hist: New(1000, 1_000_000, 1)},
	}})
	f.Add(b.String())
	for _, s := range []string{
		"#[StartTime: 1441812279.474 (seconds since epoch), x]\n1441812280.601,1.007,2.769,E\n",
		"#[BaseTime: 12.5]\r\nTag=,0.127,1.007,2.769,E\r\n",
		"#[StartTime: 1441812279]\n\"StartTimestamp\",\"x\"\nTag=a,0.127000,1.007000,2.769000,E\n1,2,3,E,4\n",
		"Tag=abc", "0,1,1e400,E", "1e,.,+,E", "", "1.0005,0.0045,2.0045,E\n4.0045e-1,1e-300,0,E",
	} {
		f.Add(strings.ReplaceAll(s, ",E", ","+enc))
	}
	f.Fuzz(func(t *testing.T, in string) {
		l, err := ReadLog(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrLog) || l.Entries != nil {
				t.Fatalf("%v: not an ErrLog, or with entries", err)
			}
			return
		}
		if len(in) > int(maxLogBytes) || len(l.Entries) > maxLogEntries {
			t.Fatalf("read %d bytes, %d entries: over the limits", len(in), len(l.Entries))
		}
		var counters int64
		for _, e := range l.Entries {
			counters += int64(len(e.Hist.counts))
			if math.IsNaN(e.StartS) || math.IsInf(e.StartS, 0) || !(e.LengthS >= 0) || math.IsInf(e.LengthS, 0) {
				t.Fatalf("entry times %v, %v", e.StartS, e.LengthS)
			}
		}
		if counters > maxLogCounters {
			t.Fatalf("%d counters, over the limit", counters)
		}
		var out bytes.Buffer
		if WriteLog(&out, l) != nil {
			return // a negative start, a start before the epoch, a longer log
		}
		again, err := ReadLog(&out)
		if err != nil {
			t.Fatalf("WriteLog's log of what ReadLog read: %v", err)
		}
		if again.StartTime.UnixMilli() != l.StartTime.UnixMilli() {
			t.Fatalf("start time %v, then %v", l.StartTime, again.StartTime)
		}
		sameLog(t, "written again", again, l, 0)
	})
}

// TestLogOfEncodedEntries: a log longer than ReadLog may hold whole
// (MaxLogCounters) is written from encoded entries (Data) and read back
// by ScanLog, entry by entry, to the same tags, times and counts.
func TestLogOfEncodedEntries(t *testing.T) {
	h := New(1, 3_600_000_000, 3)
	// The counters' limit lowered to 40 histograms of this layout: at
	// the real one (1,424 of them) the test decoded 33 million counters
	// and took half a minute under the race detector, to show the same.
	setLogLimits(t, maxLogBytes, maxLogEntries, 40*int64(len(h.counts)), maxLogLine)
	n := int(maxLogCounters/int64(len(h.counts))) + 10
	l := Log{StartTime: time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)}
	for i := range n {
		h.Reset()
		for v := range int64(i%7 + 1) {
			_ = h.RecordValue(100 + v*1000)
		}
		l.Entries = append(l.Entries, LogEntry{Tag: "k", StartS: float64(i), LengthS: 1, Data: h.Encode()})
	}
	var buf bytes.Buffer
	if err := WriteLog(&buf, l); err != nil {
		t.Fatalf("WriteLog of %d encoded entries: %v", n, err)
	}
	if _, err := ReadLog(bytes.NewReader(buf.Bytes())); !errors.Is(err, ErrLog) {
		t.Errorf("ReadLog of %d histograms whole: %v, want its counters' limit", n, err)
	}
	i := 0
	start, err := ScanLog(bytes.NewReader(buf.Bytes()), func(e LogEntry) error {
		if e.Tag != "k" || e.StartS != float64(i) || e.LengthS != 1 || e.Hist.TotalCount() != int64(i%7+1) || e.Data != l.Entries[i].Data {
			t.Fatalf("entry %d read as %q at %v + %v s, %d values; want k at %d + 1 s, %d values, its data as written",
				i, e.Tag, e.StartS, e.LengthS, e.Hist.TotalCount(), i, i%7+1)
		}
		i++
		return nil
	})
	if err != nil || i != n || !start.Equal(l.StartTime) {
		t.Errorf("ScanLog: %d entries from %v, %v; want %d from %v", i, start, err, n, l.StartTime)
	}
}
