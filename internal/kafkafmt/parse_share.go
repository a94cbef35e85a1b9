package kafkafmt

import (
	"fmt"
	"regexp"
	"strings"
)

// ShareConsumerHeader is the header of kafka-share-consumer-perf-test
// (ShareConsumerPerformance, KIP-932's share groups, Kafka 4.1 and
// later): seven columns, nMsg.sec before data.consumed.in.nMsg, unlike
// ConsumerPerformance's; the same with --show-detailed-stats.
const ShareConsumerHeader = "start.time, end.time, data.consumed.in.MB, MB.sec, nMsg.sec, data.consumed.in.nMsg, fetch.time.ms"

// shareColumns are ShareConsumerHeader's columns.
var shareColumns = strings.Split(ShareConsumerHeader, ", ")

var (
	// A --show-consumer-stats line: "Share consumer 1 having client id
	// perf-share-consumer-client-1 consumption metrics- ROW" (4.2), without
	// the client id in 4.1.
	importShareConsumerLine = regexp.MustCompile(`^Share consumer (\d+) (?:having client id (.*?) )?consumption metrics- (.*)$`)
)

// shareProgressTail ends a --show-detailed-stats row: "ROW for share
// consumer N".
const shareProgressTail = " for share consumer "

// importShareState is what ParseOutput collected of
// kafka-share-consumer-perf-test output.
type importShareState struct {
	headerLine int
	final      *shareRow  // the share group's line, always printed
	consumers  []shareRow // --show-consumer-stats: one per consumer
	progress   []shareRow // --show-detailed-stats, in output order
}

// shareRow is one row of the share tool: the group's or one consumer's
// totals, or one consumer's progress over an interval (then mb and msgs
// are the consumer's totals so far, the rates and ms the interval's).
type shareRow struct {
	line       int
	text       string
	consumer   int64 // 1-based; 0 for the group's line
	clientID   string
	start, end string
	mb         float64
	mbPerSec   float64
	msgsPerSec float64
	msgs       int64
	ms         int64 // fetch.time.ms: end − start
}

// isShareHeader reports whether s is ShareConsumerHeader, however spaced.
func isShareHeader(s string) bool {
	fields := strings.Split(s, ",")
	if len(fields) != len(shareColumns) {
		return false
	}
	for i, f := range fields {
		if strings.TrimSpace(f) != shareColumns[i] {
			return false
		}
	}
	return true
}

// shareHeader takes the header line.
func (p *importParser) shareHeader(n int, s string) error {
	sh := &p.share
	if sh.headerLine != 0 {
		return parseErr(n, s, "second share consumer header (first on line %d): several runs in one file?", sh.headerLine)
	}
	if sh.final != nil || len(sh.consumers) > 0 || len(sh.progress) > 0 {
		return parseErr(n, s, "share consumer header after rows; Kafka prints it first")
	}
	sh.headerLine = n
	return nil
}

// shareLine takes a line of share tool output that is not its header:
// a consumer's totals, progress lines or the group's row.
func (p *importParser) shareLine(n int, s string) error {
	sh := &p.share
	if sh.final != nil {
		return parseErr(n, s, "share consumer output goes on after the share group's row of line %d, which Kafka prints last (several runs in one file?)", sh.final.line)
	}
	if m := importShareConsumerLine.FindStringSubmatch(s); m != nil {
		r, err := parseShareRow(n, s, m[3])
		if err != nil {
			return err
		}
		r.consumer, _ = parseJavaInt(m[1])
		r.clientID = m[2]
		sh.consumers = append(sh.consumers, r)
		return nil
	}
	if strings.Contains(s, shareProgressTail) {
		rows, err := splitShareProgress(n, s)
		if err != nil {
			return err
		}
		sh.progress = append(sh.progress, rows...)
		return nil
	}
	r, err := parseShareRow(n, s, s)
	if err != nil {
		return err
	}
	sh.final = &r
	return nil
}

// splitShareProgress parses a line of --show-detailed-stats rows. Java
// prints a row with printf and its line end with a separate println, from
// each consumer's thread, so with several threads one line may hold
// several rows, the next one's start time right after a consumer number:
// "… for share consumer 12026-02-10 09:27:32:124, …". Where the number
// ends is then told by the row's two times, which have the same format,
// so mostly the same length.
func splitShareProgress(n int, s string) ([]shareRow, error) {
	parts := strings.Split(s, shareProgressTail)
	bad := func() error {
		return parseErr(n, s, `expected "%s for share consumer N" rows (--show-detailed-stats)`, ShareConsumerHeader)
	}
	if len(parts) < 2 {
		return nil, bad()
	}
	var rows []shareRow
	row := parts[0]
	for i := 1; i < len(parts); i++ {
		part := parts[i]
		digits := len(part) - len(strings.TrimLeft(part, "0123456789"))
		if digits == 0 {
			return nil, bad()
		}
		id, next := part, ""
		if i < len(parts)-1 {
			// The number, then the next row.
			cut := 1
			for k := 1; k <= digits && k < len(part); k++ {
				f := strings.Split(part[k:], ", ")
				if len(f) > 1 && len(strings.TrimSpace(f[0])) == len(strings.TrimSpace(f[1])) {
					cut = k
					break
				}
			}
			id, next = part[:cut], part[cut:]
		}
		consumer, ok := parseJavaInt(id)
		if !ok {
			return nil, bad()
		}
		r, err := parseShareRow(n, s, strings.TrimSpace(row))
		if err != nil {
			return nil, err
		}
		r.consumer = consumer
		rows = append(rows, r)
		row = next
	}
	return rows, nil
}

// parseShareRow parses the seven columns of row, a part of line n (s).
func parseShareRow(n int, s, row string) (shareRow, error) {
	// Java separates the columns with ", "; splitting there keeps the
	// decimal commas of a non-English locale inside the numbers.
	fields := strings.Split(row, ", ")
	if len(fields) != len(shareColumns) {
		return shareRow{}, parseErr(n, s, "expected %d columns as in kafka-share-consumer-perf-test's header (%s), found %d",
			len(shareColumns), ShareConsumerHeader, len(fields))
	}
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	r := shareRow{line: n, text: s, start: fields[0], end: fields[1]}
	var err error
	num := func(i int, integer bool) (float64, int64) {
		if err != nil {
			return 0, 0
		}
		if integer {
			v, ok := parseJavaInt(fields[i])
			if !ok {
				err = parseErr(n, s, "column %d (%s): expected an integer, found %s", i+1, shareColumns[i], importNumberHint(fields[i]))
			}
			return 0, v
		}
		v, ok := parseJavaFloat(fields[i])
		if !ok {
			err = parseErr(n, s, "column %d (%s): expected a number, found %s", i+1, shareColumns[i], importNumberHint(fields[i]))
		}
		return v, 0
	}
	if r.start == "" || r.end == "" {
		return shareRow{}, parseErr(n, s, "expected the start and end times in the first two columns (%s)", ShareConsumerHeader)
	}
	r.mb, _ = num(2, false)
	r.mbPerSec, _ = num(3, false)
	r.msgsPerSec, _ = num(4, false)
	_, r.msgs = num(5, true)
	_, r.ms = num(6, true)
	if err != nil {
		return shareRow{}, err
	}
	if r.msgs < 0 || r.ms < 0 {
		return shareRow{}, parseErr(n, s, "data.consumed.in.nMsg and fetch.time.ms cannot be negative")
	}
	return r, nil
}

// finishShare builds the figures: the share group's row, which the tool
// always prints last, and, from the progress lines of one consumer, the
// intervals.
func (p *importParser) finishShare(out *Imported) error {
	sh := &p.share
	if sh.final == nil {
		return parseErr(p.lastLine, p.lastText, "no share group row (%s) after this line: is the output cut short?", ShareConsumerHeader)
	}
	r := sh.final
	p.consumerMetrics(out, r.msgs, r.mb, r.msgsPerSec, r.mbPerSec, false, 0, 0, 0, 0)
	p.add(out, "fetch-time", float64(r.ms), "ms", "")
	out.Notes = append(out.Notes, "a share group's run (KIP-932): fetch-time is the share tool's fetch.time.ms, its whole run (end.time − start.time); "+
		"kafka-consumer-perf-test's leaves the group join out, and the share tool prints no rebalance time")
	for _, c := range sh.consumers {
		id := ""
		if c.clientID != "" {
			id = " (client id " + strings.ToValidUTF8(c.clientID, "\uFFFD") + ")"
		}
		out.Notes = append(out.Notes, fmt.Sprintf("share consumer %d%s: %d records, %s records/s, %s MB/s over %d ms",
			c.consumer, id, c.msgs, JavaFixed(c.msgsPerSec, 4), JavaFixed(c.mbPerSec, 4), c.ms))
	}
	if len(sh.progress) == 0 {
		return nil
	}
	consumers := map[int64]bool{}
	for _, pr := range sh.progress {
		consumers[pr.consumer] = true
	}
	if len(consumers) > 1 {
		// Each consumer's thread reports on its own timer: their windows
		// are not one series.
		out.Notes = append(out.Notes, fmt.Sprintf("%d progress lines of %d share consumers, each on its own reporting timer: no interval series",
			len(sh.progress), len(consumers)))
		return nil
	}
	var t float64
	var prev int64
	ivs := importIntervals{out: out}
	for _, pr := range sh.progress {
		t += float64(pr.ms) / 1000
		records := pr.msgs - prev
		if records < 0 {
			return parseErr(pr.line, pr.text, "data.consumed.in.nMsg went down from %d: a progress line holds the consumer's total so far", prev)
		}
		prev = pr.msgs
		ivs.add(pr.line, ImportedInterval{T: t, Records: records, RecordsPerSec: pr.msgsPerSec, MBPerSec: pr.mbPerSec})
	}
	ivs.note("progress lines")
	return nil
}
