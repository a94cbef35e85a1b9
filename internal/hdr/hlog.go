package hdr

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// HdrHistogram's log format (.hlog), version 1.3, as Java's
// HistogramLogWriter writes it and its HistogramLogReader (so
// HistogramLogProcessor) and hdrhistogram-go's reader read it: text lines,
// each one of
//
//	#[Histogram log format version 1.3]          a comment (any line starting with #)
//	#[StartTime: 1441812279.474 (seconds since epoch), Wed Sep 09 15:24:39 UTC 2015]
//	#[BaseTime: 1441812279.474 (seconds since epoch)]
//	"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//	Tag=record-latency,0.127,1.007,2.769,HISTFAAAAEV42pNpmSz...
//
// An interval line is an optional tag, the interval's start and length in
// seconds, its largest value divided by a unit ratio, and the histogram
// in the compressed V2 encoding (base64). The legend line names those
// columns and is skipped by readers.
//
// A line's start is relative or absolute, and readers tell which as Java's
// does: a BaseTime line says what to add to every start to make it
// absolute; without one, the first interval decides: a start more than a
// year before the StartTime is relative (the base is the StartTime),
// otherwise starts are absolute (the base is 0). Without a StartTime line
// the first interval's start stands in for it.

// Limits of ReadLog, for logs that come from outside (imports, uploads).
const (
	// MaxLogBytes is the longest log ReadLog reads: an hour of one
	// interval per second, at a few kB per histogram line, with room
	// (though for histograms of kbench's layout MaxLogCounters comes
	// first).
	MaxLogBytes = 32 << 20
	// MaxLogEntries bounds the interval lines of a log, whatever their
	// size: the line of an empty histogram takes some 60 bytes.
	MaxLogEntries = 200_000
	// MaxLogCounters bounds the counters of all the decoded histograms
	// together (8 bytes each, so 256 MiB): the entries hold whole
	// layouts, and a line of a hundred bytes may ask Decode for up to
	// MaxCounters of them. A histogram of kbench's layout (1 µs to an
	// hour, 3 digits) has 23,552, so ReadLog holds 1,424 of them;
	// ScanLog, which keeps none, and WriteLog of encoded entries (Data)
	// have no such limit.
	MaxLogCounters = 1 << 25
	// maxLogLineSlack is what a line may hold beside its histogram's
	// base64 (at most MaxEncodedLen): the tag and the three numbers.
	maxLogLineSlack = 4096
	// maxLogSeconds bounds every time in a log (about 31,700 years), so
	// the arithmetic on them stays exact to the millisecond and the
	// StartTime fits a time.Time.
	maxLogSeconds = 1e12
)

// The limits ReadLog applies, variables so tests can lower them.
var (
	maxLogBytes    int64 = MaxLogBytes
	maxLogEntries        = MaxLogEntries
	maxLogCounters int64 = MaxLogCounters
	maxLogLine           = MaxEncodedLen + maxLogLineSlack
)

// The lines of a log that are not intervals.
const (
	logVersionLine  = "#[Histogram log format version 1.3]"
	logStartPrefix  = "#[StartTime:"
	logBasePrefix   = "#[BaseTime:"
	logLegendPrefix = `"StartTimestamp"`
	logLegend       = `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`
	logTagPrefix    = "Tag="
)

// LogEntry is one interval histogram of a log.
type LogEntry struct {
	// Tag names the histogram's series ("" for none); WriteLog refuses
	// tags with ',', whitespace or control characters, which would break
	// the line apart in readers that split on them.
	Tag string
	// StartS is the interval's start in seconds since the log's
	// StartTime. When a log read has no StartTime, it is the line's
	// start plus the BaseTime if any: the absolute time Java's reader
	// gives it, seconds since the epoch for a log of absolute times.
	StartS float64
	// LengthS is the interval's length in seconds.
	LengthS float64
	// Hist is the interval's histogram.
	Hist *Histogram
	// Data is the histogram's encoding as the line holds it (compressed
	// V2, base64), set by ReadLog and ScanLog: a reader that keeps
	// entries as text need not encode them again. WriteLog writes it
	// when Hist is nil, decoding it only for the max column, so a log of
	// any length is written in the memory of its text.
	Data string
}

// Log is an HdrHistogram log: its start time and its entries in file
// order.
type Log struct {
	// StartTime is when the log's intervals are counted from, kept to the
	// millisecond by WriteLog. Zero: WriteLog writes no StartTime line,
	// and ReadLog leaves it zero for a log without one.
	StartTime time.Time
	// Entries are the interval histograms. Their layouts may differ.
	Entries []LogEntry
}

// ErrLog is wrapped by every error of ReadLog about its input.
var ErrLog = errors.New("hdr: not an HdrHistogram log")

// WriteLog writes l in HdrHistogram's log format 1.3: the version line;
// with a StartTime, a StartTime line and a BaseTime line of the same time
// (so every reader takes the starts as relative, whatever its heuristic
// would guess); the legend; then one line per entry, its start and length
// to the millisecond and its max column in Java's default unit ratio
// (the histogram's largest value divided by 1,000,000: nanoseconds shown
// as milliseconds, kbench's microseconds as seconds), so stock tools
// show what they show for Java's logs. Numbers are rounded as Java's
// writer rounds them.
//
// It refuses, before writing anything, what the readers would misread or
// ReadLog refuse: a tag with ',', whitespace, control characters or
// invalid UTF-8; a negative or non-finite start (hdrhistogram-go's reader
// reads no sign); a negative or non-finite length; a nil histogram; a
// StartTime before the epoch; more than MaxLogEntries entries; layouts
// of more than MaxCounters counters, or MaxLogCounters in all. A log
// longer than MaxLogBytes, or a histogram whose encoding is longer than
// MaxEncodedLen, is refused when its line comes, after the lines before
// it are written.
func WriteLog(w io.Writer, l Log) error {
	if len(l.Entries) > maxLogEntries {
		return fmt.Errorf("hdr: WriteLog: %d entries, more than %d", len(l.Entries), maxLogEntries)
	}
	var startMs int64
	if !l.StartTime.IsZero() {
		startMs = l.StartTime.UnixMilli()
		if startMs < 0 || float64(startMs)/1000 > maxLogSeconds {
			return fmt.Errorf("hdr: WriteLog: start time %v outside the epoch to %g s after it", l.StartTime, maxLogSeconds)
		}
	}
	var counters int64
	for i, e := range l.Entries {
		if err := checkLogTag(e.Tag); err != nil {
			return fmt.Errorf("hdr: WriteLog: entry %d: %v", i, err)
		}
		if !(e.StartS >= 0 && e.StartS <= maxLogSeconds) {
			return fmt.Errorf("hdr: WriteLog: entry %d: start %v s: want 0 to %g", i, e.StartS, maxLogSeconds)
		}
		if !(e.LengthS >= 0 && e.LengthS <= maxLogSeconds) {
			return fmt.Errorf("hdr: WriteLog: entry %d: length %v s: want 0 to %g", i, e.LengthS, maxLogSeconds)
		}
		if e.Hist == nil {
			if e.Data == "" {
				return fmt.Errorf("hdr: WriteLog: entry %d: no histogram", i)
			}
			continue // checked when its line is written
		}
		n := int64(len(e.Hist.counts))
		if n > MaxCounters {
			return fmt.Errorf("hdr: WriteLog: entry %d: a layout of %d counters, more than %d", i, n, MaxCounters)
		}
		if counters += n; counters > maxLogCounters {
			return fmt.Errorf("hdr: WriteLog: entry %d: histograms of more than %d counters in all", i, maxLogCounters)
		}
	}

	bw := bufio.NewWriter(w)
	var written int64
	// refuse writes out the lines before the one refused, a log
	// ReadLog reads.
	refuse := func(format string, args ...any) error {
		if err := bw.Flush(); err != nil {
			return err
		}
		return fmt.Errorf("hdr: WriteLog: "+format, args...)
	}
	put := func(line []byte) error {
		written += int64(len(line))
		if written > maxLogBytes {
			return refuse("more than %d bytes", maxLogBytes)
		}
		_, err := bw.Write(line)
		return err
	}
	header := logVersionLine + "\n"
	if !l.StartTime.IsZero() {
		secs := formatMillis(startMs)
		// Java writes Date.toString() in its local zone; UTC keeps the
		// file the same wherever it is written.
		date := time.UnixMilli(startMs).UTC().Format("Mon Jan 02 15:04:05 MST 2006")
		header += logStartPrefix + " " + secs + " (seconds since epoch), " + date + "]\n"
		header += logBasePrefix + " " + secs + " (seconds since epoch)]\n"
	}
	header += logLegend + "\n"
	if err := put([]byte(header)); err != nil {
		return err
	}
	var line []byte
	for i, e := range l.Entries {
		h, enc := e.Hist, e.Data
		if h != nil {
			enc = h.Encode()
		}
		if len(enc) > MaxEncodedLen {
			return refuse("entry %d: an encoding of %d bytes, more than %d", i, len(enc), MaxEncodedLen)
		}
		if h == nil {
			var err error
			if h, err = Decode(enc); err != nil {
				return refuse("entry %d: %w", i, err)
			}
		}
		// Java writes the max of a histogram that holds only zeros (or
		// nothing) as 0, whatever the zero bucket's highest value.
		var maxV int64
		if h.max != 0 {
			maxV = h.Max()
		}
		// maxV / 1,000,000 to three decimals, rounded half up as Java's
		// "%.3f" does, is maxV in thousands so rounded: exact in
		// integers, where a float64 quotient may fall below a tie (4,500
		// would make 0.004).
		maxThousandths := maxV/1000 + (maxV%1000+500)/1000
		line = line[:0]
		if e.Tag != "" {
			line = append(line, logTagPrefix...)
			line = append(line, e.Tag...)
			line = append(line, ',')
		}
		line = append(line, formatMillis(javaMillis(e.StartS))...)
		line = append(line, ',')
		line = append(line, formatMillis(javaMillis(e.LengthS))...)
		line = append(line, ',')
		line = append(line, formatMillis(maxThousandths)...)
		line = append(line, ',')
		line = append(line, enc...)
		line = append(line, '\n')
		if err := put(line); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// javaMillis is s ≥ 0 seconds in milliseconds as Java's "%.3f" rounds
// them: half up, on the shortest decimal that reads back as s (so 1.0005
// is 1.001 s, though the float64 is a little less).
func javaMillis(s float64) int64 {
	whole, frac, _ := strings.Cut(strconv.FormatFloat(s, 'f', -1, 64), ".")
	ms, _ := strconv.ParseInt(whole, 10, 64) // s ≤ maxLogSeconds: digits only
	frac += "0000"
	for _, c := range frac[:3] {
		ms = ms*10 + int64(c-'0')
	}
	if frac[3] >= '5' {
		ms++
	}
	return ms
}

// formatMillis writes ms thousandths as a number with three decimals, as
// Java's "%.3f" does, from the integer so no binary fraction shows.
func formatMillis(ms int64) string {
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	return fmt.Sprintf("%s%d.%03d", sign, ms/1000, ms%1000)
}

// checkLogTag says why tag cannot be a log's tag, or nil.
func checkLogTag(tag string) error {
	if !utf8.ValidString(tag) {
		return fmt.Errorf("tag %q is not UTF-8", tag)
	}
	for _, r := range tag {
		if r == ',' || unicode.IsSpace(r) || unicode.IsControl(r) {
			return fmt.Errorf("tag %q holds %q: a tag may not hold commas, whitespace or control characters", tag, r)
		}
	}
	return nil
}

// ReadLog reads a log in HdrHistogram's log format, as WriteLog, Java's
// HistogramLogWriter and hdrhistogram-go's writer write it: comments (the
// version line among them), the legend, StartTime and BaseTime lines,
// interval lines with or without a tag, relative or absolute starts,
// "\n" or "\r\n" line ends, blank lines. Each entry's StartS is made
// relative to the StartTime as Java's reader does (see LogEntry.StartS),
// to the microsecond.
//
// Whatever the input, its memory is bounded: more than MaxLogBytes, a
// line longer than MaxEncodedLen and 4 KiB, more than MaxLogEntries
// entries or more than MaxLogCounters counters in all is an error. So is
// a line that is none of the above, a field that is not a decimal number
// (or out of range, or a negative length), a histogram that Decode
// refuses, a tag WriteLog would refuse, a second StartTime or BaseTime
// line, or one after the first interval (Java's reader would apply it to
// the intervals after it only). Each such error wraps ErrLog (and
// ErrEncoding for a histogram Decode refused) and names the line, but
// for a log over MaxLogBytes, which may be found ahead of it. An error
// reading r is returned wrapped, without ErrLog. ReadLog keeps every
// histogram whole; ScanLog reads a longer log one entry at a time.
func ReadLog(r io.Reader) (Log, error) {
	var l Log
	var counters int64
	tooMany := false
	start, err := ScanLog(r, func(e LogEntry) error {
		counters += int64(len(e.Hist.counts))
		if counters > maxLogCounters {
			tooMany = true
			return fmt.Errorf("histograms of more than %d counters in all", maxLogCounters)
		}
		l.Entries = append(l.Entries, e)
		return nil
	})
	if tooMany {
		return Log{}, fmt.Errorf("%w: %w", ErrLog, err)
	}
	if err != nil {
		return Log{}, err
	}
	l.StartTime = start
	return l, nil
}

// ScanLog reads a log as ReadLog does, but hands each entry to fn as it
// is read, then lets it go: a caller that keeps what it needs of each
// (its Data, its count) reads a log of any number of histograms, up to
// MaxLogBytes and MaxLogEntries, in the memory of one. An error fn
// returns ends the scan and is returned, with its line number. It
// returns the log's StartTime (zero for none).
func ScanLog(r io.Reader, fn func(LogEntry) error) (time.Time, error) {
	lr := &io.LimitedReader{R: r, N: maxLogBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, min(64<<10, maxLogLine)), maxLogLine)

	var (
		start   time.Time
		entries int
		lineNo  int
		// startSec and baseSec are Java's reader's startTimeSec and
		// baseTimeSec, valid once set.
		startSec, baseSec float64
		startSet, baseSet bool
		startLine         bool // a StartTime line was read
	)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrLog, lineNo, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		lineNo++
		if lr.N == 0 {
			return time.Time{}, fmt.Errorf("%w: more than %d bytes", ErrLog, maxLogBytes)
		}
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			continue
		case strings.HasPrefix(line, logStartPrefix), strings.HasPrefix(line, logBasePrefix):
			isStart := strings.HasPrefix(line, logStartPrefix)
			name := "BaseTime"
			if isStart {
				name = "StartTime"
			}
			switch {
			case entries > 0:
				return time.Time{}, bad("a %s line after the first interval", name)
			case isStart && startSet, !isStart && baseSet:
				return time.Time{}, bad("a second %s line", name)
			}
			rest := strings.TrimLeft(line[len("#["+name+":"):], " ")
			tok := rest[:strings.IndexAny(rest+" ", " ,]")]
			v, err := parseLogTime(tok)
			if err != nil || v < 0 {
				return time.Time{}, bad("%s %q: want seconds since the epoch", name, tok)
			}
			if isStart {
				startSec, startSet, startLine = v, true, true
				start = time.UnixMicro(int64(math.Round(v * 1e6))).UTC()
			} else {
				baseSec, baseSet = v, true
			}
			continue
		case strings.HasPrefix(line, "#"), strings.HasPrefix(line, logLegendPrefix):
			continue
		}

		var e LogEntry
		if rest, ok := strings.CutPrefix(line, logTagPrefix); ok {
			tag, after, ok := strings.Cut(rest, ",")
			if !ok {
				return time.Time{}, bad("a tag and no interval after it")
			}
			if err := checkLogTag(tag); err != nil {
				return time.Time{}, bad("%v", err)
			}
			e.Tag, line = tag, after
		}
		fields := strings.Split(line, ",")
		if len(fields) != 4 {
			return time.Time{}, bad("want 4 fields (start, length, max, histogram), not %d", len(fields))
		}
		ts, err := parseLogTime(fields[0])
		if err != nil {
			return time.Time{}, bad("start: %v", err)
		}
		length, err := parseLogTime(fields[1])
		if err != nil {
			return time.Time{}, bad("length: %v", err)
		}
		if length < 0 {
			return time.Time{}, bad("length %s: negative", fields[1])
		}
		if _, err := parseLogNumber(fields[2]); err != nil {
			return time.Time{}, bad("max: %v", err)
		}
		if entries >= maxLogEntries {
			return time.Time{}, bad("more than %d intervals", maxLogEntries)
		}

		// Java's reader: no StartTime, the first start stands in; no
		// BaseTime, starts more than a year before the StartTime are
		// relative to it, others absolute.
		if !startSet {
			startSec, startSet = ts, true
		}
		if !baseSet {
			if ts < startSec-365*24*3600 {
				baseSec = startSec
			}
			baseSet = true
		}
		if startLine {
			// baseSec − startSec first: 0 for relative starts, so those
			// come back as written.
			e.StartS = ts + (baseSec - startSec)
		} else {
			e.StartS = ts + baseSec
		}
		e.StartS = math.Round(e.StartS*1e6) / 1e6
		e.LengthS = length

		h, err := Decode(fields[3])
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: line %d: histogram: %w", ErrLog, lineNo, err)
		}
		e.Hist, e.Data = h, fields[3]
		entries++
		if err := fn(e); err != nil {
			return time.Time{}, fmt.Errorf("line %d: %w", lineNo, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return time.Time{}, fmt.Errorf("%w: line %d: longer than %d bytes", ErrLog, lineNo+1, maxLogLine)
		}
		return time.Time{}, fmt.Errorf("hdr: reading a log: %w", err)
	}
	if lr.N == 0 {
		return time.Time{}, fmt.Errorf("%w: more than %d bytes", ErrLog, maxLogBytes)
	}
	return start, nil
}

// parseLogTime reads a time in seconds: a decimal number no larger than
// maxLogSeconds either way.
func parseLogTime(s string) (float64, error) {
	v, err := parseLogNumber(s)
	if err == nil && math.Abs(v) > maxLogSeconds {
		err = fmt.Errorf("%s s is beyond ±%g", s, maxLogSeconds)
	}
	return v, err
}

// parseLogNumber reads a decimal number as Java's Scanner.nextDouble does
// what writers write (sign, digits, point, exponent), but refuses what
// strconv.ParseFloat reads beyond that (hexadecimal, underscores, "NaN",
// "Inf") and numbers too large for a float64.
func parseLogNumber(s string) (float64, error) {
	digits := 0
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
		}
	}
	if digits > 0 && i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		exp := 0
		for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			exp++
		}
		if exp == 0 {
			digits = 0
		}
	}
	if digits == 0 || i != len(s) {
		return 0, fmt.Errorf("%q is not a decimal number", s)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large a number", s)
	}
	return v, nil
}
