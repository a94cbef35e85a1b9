package kafkafmt

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Import of the output of Kafka's EndToEndLatency tool
// (kafka-e2e-latency.sh, org.apache.kafka.tools.EndToEndLatency; before
// 3.x kafka.tools.EndToEndLatency through kafka-run-class.sh): the reverse
// of E2EProgress, E2ESummary and E2ETopicCreation.

// importE2EState is what ParseOutput collected of EndToEndLatency output.
type importE2EState struct {
	progress []importE2EProgress

	// topicLine is the line saying the tool creates the topic.
	topicLine int
	topicText string

	avgLine int
	avg     float64

	pctLine        int
	p50, p99, p999 int64
}

// importE2EProgress is one progress line: record index, round trip.
type importE2EProgress struct {
	line  int
	index int64
	ms    float64
}

// importE2EProgressLine is "i<TAB>ms", ms as Java's Double.toString prints
// a finite double ("1.44673", "9.99E-4", "1.2E7"). Spaces instead of the
// tab are accepted: a terminal's copy turns tabs into spaces.
var importE2EProgressLine = regexp.MustCompile(`^(\d+)(?:\t| +)(\d+\.\d+(?:E-?\d+)?)$`)

// e2eLine reports whether s is one of the tool's own lines and, if so,
// handles it.
func (p *importParser) e2eLine(n int, s string) (bool, error) {
	var err error
	switch {
	case strings.HasPrefix(s, "Avg latency:"):
		if err = p.setTool(n, s, ToolE2E); err == nil {
			err = p.e2eAverage(n, s)
		}
	case strings.HasPrefix(s, "Percentiles:"):
		if err = p.setTool(n, s, ToolE2E); err == nil {
			err = p.e2ePercentiles(n, s)
		}
	case strings.HasPrefix(s, `Topic "`) && strings.Contains(s, `" does not exist. Will create topic with `):
		if err = p.setTool(n, s, ToolE2E); err == nil {
			err = p.e2eTopic(n, s)
		}
	case strings.HasPrefix(s, "Creation of topic ") && strings.HasSuffix(s, " failed"):
		// Printed before the exception that ends the run: the missing
		// summary is the error finish reports.
		if err = p.setTool(n, s, ToolE2E); err == nil {
			p.warnings = append(p.warnings, "the tool could not create the topic: "+strings.ToValidUTF8(s, "\uFFFD"))
		}
	default:
		m := importE2EProgressLine.FindStringSubmatch(s)
		if m == nil {
			return false, nil
		}
		if err = p.setTool(n, s, ToolE2E); err == nil {
			err = p.e2eProgress(n, s, m[1], m[2])
		}
	}
	return true, err
}

func (p *importParser) e2eTopic(n int, s string) error {
	st := &p.e2e
	switch {
	case st.topicLine != 0:
		return parseErr(n, s, "second topic creation line (first on line %d): several runs in one file?", st.topicLine)
	case len(st.progress) > 0 || st.avgLine != 0:
		return parseErr(n, s, "the topic creation line comes before any result line")
	}
	st.topicLine, st.topicText = n, strings.ToValidUTF8(s, "\uFFFD")
	return nil
}

func (p *importParser) e2eProgress(n int, s, index, ms string) error {
	st := &p.e2e
	if st.avgLine != 0 {
		return parseErr(n, s, `progress line after the summary ("Avg latency" on line %d): several runs in one file?`, st.avgLine)
	}
	i, err := strconv.ParseInt(index, 10, 64)
	if err != nil {
		return parseErr(n, s, "record index out of range")
	}
	v, err := strconv.ParseFloat(ms, 64)
	if err != nil || math.IsInf(v, 0) {
		return parseErr(n, s, "round trip out of range")
	}
	if k := len(st.progress); k > 0 && i <= st.progress[k-1].index {
		return parseErr(n, s, "record %d after record %d (line %d): the tool counts up, several runs in one file?",
			i, st.progress[k-1].index, st.progress[k-1].line)
	}
	st.progress = append(st.progress, importE2EProgress{line: n, index: i, ms: v})
	return nil
}

func (p *importParser) e2eAverage(n int, s string) error {
	st := &p.e2e
	if st.avgLine != 0 {
		return parseErr(n, s, `second "Avg latency" line (first on line %d): several runs in one file?`, st.avgLine)
	}
	sc := importScanner{s: s}
	fail := func(err error) error { return parseErr(n, s, "%v", err) }
	if err := sc.expect("Avg latency: "); err != nil {
		return fail(err)
	}
	v, err := sc.float("the average latency")
	if err != nil {
		return fail(err)
	}
	if err := sc.expect(" ms"); err != nil {
		return fail(err)
	}
	if !sc.done() {
		return parseErr(n, s, "unexpected text after %q", "ms")
	}
	st.avgLine, st.avg = n, v
	return nil
}

func (p *importParser) e2ePercentiles(n int, s string) error {
	st := &p.e2e
	switch {
	case st.pctLine != 0:
		return parseErr(n, s, `second "Percentiles" line (first on line %d): several runs in one file?`, st.pctLine)
	case st.avgLine == 0:
		return parseErr(n, s, `"Percentiles" without the "Avg latency: … ms" line Kafka prints before it`)
	}
	sc := importScanner{s: s}
	fail := func(err error) error { return parseErr(n, s, "%v", err) }
	var vals [3]int64
	for i, part := range []struct{ lit, what string }{
		{"Percentiles: 50th = ", "the 50th percentile"},
		{", 99th = ", "the 99th percentile"},
		{", 99.9th = ", "the 99.9th percentile"},
	} {
		if err := sc.expect(part.lit); err != nil {
			return fail(err)
		}
		v, err := sc.wholeNumber(part.what)
		if err != nil {
			return fail(err)
		}
		if v < 0 {
			// Java casts each percentile to int: only a round trip of
			// over 24 days wraps it negative.
			return parseErr(n, s, "%s is %d ms: negative", part.what, v)
		}
		vals[i] = v
	}
	if !sc.done() {
		return parseErr(n, s, "unexpected text after the 99.9th percentile")
	}
	st.pctLine = n
	st.p50, st.p99, st.p999 = vals[0], vals[1], vals[2]
	return nil
}

// wholeNumber reads a %d that may be followed directly by other text
// (a ',' for instance, which int's token would take in).
func (sc *importScanner) wholeNumber(what string) (int64, error) {
	col := sc.pos + 1
	start := sc.pos
	if sc.pos < len(sc.s) && sc.s[sc.pos] == '-' {
		sc.pos++
	}
	for sc.pos < len(sc.s) && sc.s[sc.pos] >= '0' && sc.s[sc.pos] <= '9' {
		sc.pos++
	}
	tok := sc.s[start:sc.pos]
	v, ok := parseJavaInt(tok)
	if ok {
		return v, nil
	}
	if sc.done() && (tok == "" || tok == "-") {
		return 0, fmt.Errorf("line ends early (cut short?): expected an integer, %s", what)
	}
	if tok == "" || tok == "-" {
		return 0, fmt.Errorf("expected an integer, %s, at column %d, found %s", what, col, importNumberHint(importHead(sc.s[start:], 10)))
	}
	return 0, fmt.Errorf("expected an integer, %s, at column %d: %s is out of range", what, col, tok)
}

// finishE2E checks the run ended with its summary and turns it into
// metrics, under the names and units of kbench's own e2e runs.
func (p *importParser) finishE2E(out *Imported) error {
	st := &p.e2e
	switch {
	case st.avgLine == 0:
		return parseErr(p.lastLine, p.lastText, `no "Avg latency: … ms" and "Percentiles: …" summary after this line: is the output cut short, or did the tool fail?`)
	case st.pctLine == 0:
		return parseErr(p.lastLine, p.lastText, `no "Percentiles: 50th = …, 99th = …, 99.9th = …" line after the average: is the output cut short, or did the tool fail?`)
	}
	out.Notes = append(out.Notes,
		"Kafka's EndToEndLatency measured the round trip of each record, one at a time: sent synchronously "+
			"(linger.ms=0, waiting for its acknowledgement with the acks given to the tool, 1 or all, which it does not print), "+
			"then polled back (fetch.max.wait.ms=0) and checked before the next was sent: one record in flight, no batching",
		"e2e-latency-p50, -p99 and -p999 are whole milliseconds as the tool prints them (each round trip truncated to whole ms, "+
			"sorted, the value at index records × q); e2e-latency-avg is its average of the exact round trips, printed to 0.0001 ms")
	if st.topicLine != 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("line %d: %s", st.topicLine, st.topicText))
	}
	if k := len(st.progress); k > 0 {
		lo, hi := st.progress[0].ms, st.progress[0].ms
		every := ", every 1000th"
		for _, pr := range st.progress {
			lo, hi = min(lo, pr.ms), max(hi, pr.ms)
			if pr.index%E2EProgressEvery != 0 {
				every = ""
			}
		}
		out.Notes = append(out.Notes, fmt.Sprintf("%d progress lines (the round trips of records %d to %d%s) ran from %s to %s ms; "+
			"the tool prints no times, so they make no series, nor a record count (at least %d records were sent)",
			k, st.progress[0].index, st.progress[k-1].index, every, JavaDouble(lo), JavaDouble(hi), st.progress[k-1].index+1))
	} else {
		out.Notes = append(out.Notes, "no progress lines: the tool prints no record count")
	}
	p.add(out, "e2e-latency-avg", st.avg, "ms", importLower)
	p.add(out, "e2e-latency-p50", float64(st.p50), "ms", importLower)
	p.add(out, "e2e-latency-p99", float64(st.p99), "ms", importLower)
	p.add(out, "e2e-latency-p999", float64(st.p999), "ms", importLower)
	return nil
}
