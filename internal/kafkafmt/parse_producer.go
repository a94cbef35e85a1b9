package kafkafmt

import (
	"fmt"
	"math"
	"regexp"
	"strings"
)

// importProducerState is what ParseOutput collected of kafka-producer-perf-test
// output.
type importProducerState struct {
	windows []importWindow

	warmupLine    int
	warmupRecords int64
	// steadyLine is the line of "In steady state.", steadyAt the number of
	// windows before it.
	steadyLine int
	steadyAt   int

	total  *importTotal // the overall summary
	steady *importTotal // the "steady state" summary
}

// importWindow is one periodic line.
type importWindow struct {
	line                   int
	records                int64
	recsPerSec, mbPerSec   float64
	avgLatency, maxLatency float64
}

// importTotal is one summary line.
type importTotal struct {
	line                   int
	records                int64
	recsPerSec, mbPerSec   float64
	avgLatency, maxLatency float64
	p50, p95, p99, p999    int64
}

var importWarmupNotice = regexp.MustCompile(`^Warmup first (-?\d+) records\. Steady state results will print after the complete test summary\.$`)

func (p *importParser) warmupNotice(n int, s, records string) error {
	if p.prod.warmupLine != 0 {
		return parseErr(n, s, "second warm-up notice (first on line %d): several runs in one file?", p.prod.warmupLine)
	}
	if len(p.prod.windows) > 0 || p.prod.total != nil || p.prod.steady != nil {
		return parseErr(n, s, "the warm-up notice comes before any result line")
	}
	v, ok := parseJavaInt(records)
	if !ok {
		return parseErr(n, s, "warm-up record count out of range")
	}
	p.prod.warmupLine, p.prod.warmupRecords = n, v
	return nil
}

func (p *importParser) steadyMarker(n int, s string) error {
	switch {
	case p.prod.steadyLine != 0:
		return parseErr(n, s, `second "In steady state." (first on line %d): several runs in one file?`, p.prod.steadyLine)
	case p.prod.total != nil || p.prod.steady != nil:
		return parseErr(n, s, `"In steady state." after the final summary`)
	}
	p.prod.steadyLine, p.prod.steadyAt = n, len(p.prod.windows)
	return nil
}

// producerLine parses a periodic or summary line.
func (p *importParser) producerLine(n int, s string) error {
	sc := importScanner{s: s}
	fail := func(format string, args ...any) error {
		return parseErr(n, s, "%s", fmt.Sprintf(format, args...))
	}
	records, err := sc.int("the record count")
	if err != nil {
		return fail("%v", err)
	}
	if records < 0 {
		return fail("negative record count")
	}
	steady := sc.lit(" steady state")
	var (
		w  importWindow
		pt importTotal
	)
	steps := []func() error{
		func() error { return sc.expect(" records sent, ") },
		func() (err error) { w.recsPerSec, err = sc.float("records/sec"); return },
		func() error { return sc.expect(" records/sec (") },
		func() (err error) { w.mbPerSec, err = sc.float("MB/sec"); return },
		func() error { return sc.expect(" MB/sec), ") },
		func() (err error) { w.avgLatency, err = sc.float("the average latency"); return },
		func() error { return sc.expect(" ms avg latency, ") },
		func() (err error) { w.maxLatency, err = sc.float("the maximum latency"); return },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fail("%v", err)
		}
	}
	// A periodic line ends here: "… ms max latency." (" max latency."
	// before Kafka 2.x).
	if sc.lit(" ms max latency.") || sc.lit(" max latency.") {
		if !sc.done() {
			return fail("unexpected text after the periodic line's %q", "max latency.")
		}
		if steady {
			return fail(`a periodic line has no "steady state"; expected the summary's ", P ms 50th, …"`)
		}
		if p.prod.total != nil || p.prod.steady != nil {
			return fail("periodic line after the final summary (line %d): several runs in one file?", p.summaryLine())
		}
		w.line, w.records = n, records
		p.prod.windows = append(p.prod.windows, w)
		return nil
	}
	pt = importTotal{line: n, records: records, recsPerSec: w.recsPerSec, mbPerSec: w.mbPerSec,
		avgLatency: w.avgLatency, maxLatency: w.maxLatency}
	steps = []func() error{
		func() error { return sc.expect(" ms max latency, ") },
		func() (err error) { pt.p50, err = sc.int("the 50th percentile"); return },
		func() error { return sc.expect(" ms 50th, ") },
		func() (err error) { pt.p95, err = sc.int("the 95th percentile"); return },
		func() error { return sc.expect(" ms 95th, ") },
		func() (err error) { pt.p99, err = sc.int("the 99th percentile"); return },
		func() error { return sc.expect(" ms 99th, ") },
		func() (err error) { pt.p999, err = sc.int("the 99.9th percentile"); return },
		func() error { return sc.expect(" ms 99.9th.") },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return fail("%v", err)
		}
	}
	if !sc.done() {
		return fail("unexpected text after the summary's %q", "ms 99.9th.")
	}
	if steady {
		if p.prod.steady != nil {
			return fail("second steady-state summary (first on line %d): several runs in one file?", p.prod.steady.line)
		}
		p.prod.steady = &pt
		return nil
	}
	if p.prod.total != nil {
		return fail("second producer summary (first on line %d): several runs in one file?", p.prod.total.line)
	}
	if p.prod.steady != nil {
		return fail("overall summary after the steady-state summary of line %d; Kafka prints it first", p.prod.steady.line)
	}
	p.prod.total = &pt
	return nil
}

func (p *importParser) summaryLine() int {
	if p.prod.total != nil {
		return p.prod.total.line
	}
	return p.prod.steady.line
}

// finishProducer turns the producer lines into metrics and intervals.
func (p *importParser) finishProducer(out *Imported) error {
	st := &p.prod
	measured := st.steady
	if measured == nil {
		measured = st.total
	}
	if measured == nil {
		return parseErr(p.lastLine, p.lastText, `no final producer summary ("N records sent, … ms 99.9th.") after this line: is the output cut short?`)
	}

	switch {
	case st.steady != nil && st.total != nil:
		out.Notes = append(out.Notes, fmt.Sprintf("the steady-state summary (line %d, %d records) is the measured result; "+
			"the overall summary (line %d: %d records, warm-up included, %s records/sec, %s ms avg latency) is not imported",
			st.steady.line, st.steady.records, st.total.line, st.total.records,
			JavaFixed(st.total.recsPerSec, 1), JavaFixed(st.total.avgLatency, 2)))
	case st.steady != nil:
		out.Notes = append(out.Notes, fmt.Sprintf("the steady-state summary (line %d, %d records) is the measured result", st.steady.line, st.steady.records))
	case st.warmupLine != 0:
		out.Notes = append(out.Notes, "a warm-up notice but no steady-state summary: the overall summary, warm-up included, is imported")
	}
	if st.warmupLine != 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("warm-up: the first %d records (line %d)", st.warmupRecords, st.warmupLine))
	}

	windows := st.windows
	if st.steady != nil {
		dropped := 0
		switch {
		case st.steadyLine != 0:
			// Java: the overall stats print the windows until the steady
			// state starts, then the steady-state stats print theirs after
			// "In steady state.".
			dropped = st.steadyAt
		case st.total != nil:
			// Java with a run too short for a steady-state window: every
			// printed window was a warm-up one.
			dropped = len(windows)
		}
		// Otherwise kbench's output: it prints windows of the measured
		// part only and no overall summary.
		if dropped > 0 {
			out.Notes = append(out.Notes, fmt.Sprintf("%d periodic lines of the warm-up left out of the intervals", dropped))
			windows = windows[dropped:]
		}
	}

	p.add(out, "records-sent", float64(measured.records), "records", "")
	p.add(out, "record-send-rate", measured.recsPerSec, "records/s", importHigher)
	p.add(out, "mb-per-sec", measured.mbPerSec, "MB/s", importHigher)
	p.add(out, "record-latency-avg", measured.avgLatency, "ms", importLower)
	p.add(out, "record-latency-p50", float64(measured.p50), "ms", importLower)
	p.add(out, "record-latency-p95", float64(measured.p95), "ms", importLower)
	p.add(out, "record-latency-p99", float64(measured.p99), "ms", importLower)
	p.add(out, "record-latency-p999", float64(measured.p999), "ms", importLower)
	p.add(out, "record-latency-max", measured.maxLatency, "ms", importLower)

	if len(windows) > 0 {
		out.Notes = append(out.Notes, "Kafka prints no times on periodic producer lines: interval times add up each window's records ÷ records/sec")
	}
	var t float64
	ivs := importIntervals{out: out}
	for _, w := range windows {
		// Java's window lasts 1000 × records / records/sec ms (the rate
		// is printed to 0.1 record/s); Kafka's reporting interval, 5 s,
		// stands in when the rate printed is 0 or not finite. T is the
		// window's end, as in kbench's own series.
		if d := float64(w.records) / w.recsPerSec; w.recsPerSec > 0 && !math.IsInf(w.recsPerSec, 0) && !math.IsInf(d, 0) && !math.IsNaN(d) {
			t += d
		} else {
			t += 5
		}
		ivs.add(w.line, ImportedInterval{T: t, Records: w.records, RecordsPerSec: w.recsPerSec, MBPerSec: w.mbPerSec,
			LatencyAvgMs: w.avgLatency, LatencyMaxMs: w.maxLatency})
	}
	ivs.note("periodic lines")
	return nil
}

// importIntervals appends intervals to out, leaving out those holding a
// figure Java printed as NaN or Infinity (a zero duration): JSON and the
// series hold none. note says which lines were left out.
type importIntervals struct {
	out     *Imported
	dropped []int
}

func (ivs *importIntervals) add(line int, iv ImportedInterval) {
	if !importIntervalFinite(iv) {
		ivs.dropped = append(ivs.dropped, line)
		return
	}
	ivs.out.Intervals = append(ivs.out.Intervals, iv)
}

// note adds the note of the lines left out, what naming them.
func (ivs *importIntervals) note(what string) {
	if len(ivs.dropped) > 0 {
		ivs.out.Notes = append(ivs.out.Notes, fmt.Sprintf("%s with NaN or Infinity left out of the intervals: lines %s", what, importJoinInts(ivs.dropped)))
	}
}

func importIntervalFinite(iv ImportedInterval) bool {
	for _, v := range []float64{iv.T, iv.RecordsPerSec, iv.MBPerSec, iv.LatencyAvgMs, iv.LatencyMaxMs} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

func importJoinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	if len(s) > 10 {
		s = append(s[:10], "…")
	}
	return strings.Join(s, ", ")
}

// importScanner reads a line made of literal text and numbers.
type importScanner struct {
	s   string
	pos int
}

func (sc *importScanner) done() bool { return sc.pos == len(sc.s) }

// lit consumes l if the line goes on with it.
func (sc *importScanner) lit(l string) bool {
	if strings.HasPrefix(sc.s[sc.pos:], l) {
		sc.pos += len(l)
		return true
	}
	return false
}

// expect consumes l or says what was found instead.
func (sc *importScanner) expect(l string) error {
	if sc.lit(l) {
		return nil
	}
	rest := sc.s[sc.pos:]
	if strings.HasPrefix(l, rest) {
		return fmt.Errorf("line ends early (cut short?): expected %q after %q", l, importTail(sc.s[:sc.pos], 30))
	}
	return fmt.Errorf("expected %q at column %d, found %q", l, sc.pos+1, importHead(rest, len(l)+10))
}

// token returns the next run of characters up to a space, '(' or ')'.
func (sc *importScanner) token() string {
	start := sc.pos
	for sc.pos < len(sc.s) && !strings.ContainsRune(" ()", rune(sc.s[sc.pos])) {
		sc.pos++
	}
	return sc.s[start:sc.pos]
}

func (sc *importScanner) int(what string) (int64, error) {
	col := sc.pos + 1
	tok := sc.token()
	v, ok := parseJavaInt(tok)
	if !ok {
		if tok == "" && sc.done() {
			return 0, fmt.Errorf("line ends early (cut short?): expected an integer, %s", what)
		}
		return 0, fmt.Errorf("expected an integer, %s, at column %d, found %s", what, col, importNumberHint(tok))
	}
	return v, nil
}

func (sc *importScanner) float(what string) (float64, error) {
	col := sc.pos + 1
	tok := sc.token()
	v, ok := parseJavaFloat(tok)
	if !ok {
		if tok == "" && sc.done() {
			return 0, fmt.Errorf("line ends early (cut short?): expected a number, %s", what)
		}
		return 0, fmt.Errorf("expected a number, %s, at column %d, found %s", what, col, importNumberHint(tok))
	}
	return v, nil
}

// importHead is the start of s, at most n bytes on a rune boundary.
func importHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// importTail is the end of s, at most n bytes on a rune boundary.
func importTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && s[i]&0xC0 == 0x80 {
		i++
	}
	return "…" + s[i:]
}
