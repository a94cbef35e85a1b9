package kafkafmt

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// importConsumerState is what ParseOutput collected of kafka-consumer-perf-test
// output.
type importConsumerState struct {
	header     *importLayout // from the header line, if any
	headerLine int
	summary    *importRow
	rows       []importRow // --show-detailed-stats rows
	pausedAll  int         // "WARNING: Pausing all N partitions" lines
}

// importLayout is the column layout of consumer rows.
type importLayout struct {
	detailed  bool // "time, threadId, …" instead of "start.time, end.time, …"
	fetchSize bool // Kafka 0.8's fetch.size column after the first two
	extended  bool // rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec (Kafka 2.0+)
}

// columns names the columns of rows in layout l.
func (l importLayout) columns() []string {
	cols := []string{"start.time", "end.time"}
	if l.detailed {
		cols = []string{"time", "threadId"}
	}
	if l.fetchSize {
		cols = append(cols, "fetch.size")
	}
	cols = append(cols, importBaseColumns...)
	if l.extended {
		cols = append(cols, importExtendedColumns...)
	}
	return cols
}

var (
	importBaseColumns     = []string{"data.consumed.in.MB", "MB.sec", "data.consumed.in.nMsg", "nMsg.sec"}
	importExtendedColumns = []string{"rebalance.time.ms", "fetch.time.ms", "fetch.MB.sec", "fetch.nMsg.sec"}
)

// importRow is one parsed row, summary or detailed.
type importRow struct {
	line   int
	text   string
	layout importLayout
	start  string // summary: start.time
	end    string // summary: end.time; detailed: time
	thread int64
	fetch  int64 // 0.8's fetch.size

	mb, mbPerSec    float64
	msgs            int64
	msgsPerSec      float64
	rebalanceMs     int64
	fetchMs         int64
	fetchMBPerSec   float64
	fetchMsgsPerSec float64
}

// consumerHeader parses a header line.
func (p *importParser) consumerHeader(n int, s string) error {
	c := &p.cons
	if c.header != nil {
		return parseErr(n, s, "second consumer header (first on line %d): several runs in one file?", c.headerLine)
	}
	if c.summary != nil || len(c.rows) > 0 {
		return parseErr(n, s, "consumer header after rows; Kafka prints it first")
	}
	names := strings.Split(s, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	var l importLayout
	rest := names
	switch {
	case len(rest) >= 2 && rest[0] == "start.time" && rest[1] == "end.time":
		rest = rest[2:]
	case rest[0] == "time":
		l.detailed = true
		rest = rest[1:]
		// Kafka 0.9 and 0.10 printed no threadId in the header, although
		// their rows have it.
		if len(rest) > 0 && rest[0] == "threadId" {
			rest = rest[1:]
		}
	default:
		return parseErr(n, s, `expected a consumer header starting "start.time, end.time, " or "time, threadId, "`)
	}
	if len(rest) > 0 && rest[0] == "fetch.size" {
		l.fetchSize = true
		rest = rest[1:]
	}
	switch {
	case slices.Equal(rest, importBaseColumns):
	case len(rest) == 8 && slices.Equal(rest[:4], importBaseColumns) && slices.Equal(rest[4:], importExtendedColumns):
		l.extended = true
	default:
		want := importLayout{detailed: l.detailed, extended: true}.columns()
		return parseErr(n, s, "unknown consumer header: expected %q (or an older variant)", strings.Join(want, ", "))
	}
	c.header, c.headerLine = &l, n
	return nil
}

// consumerRow parses a summary or detailed row.
func (p *importParser) consumerRow(n int, s string) error {
	c := &p.cons
	// Java separates the columns with ", "; splitting there keeps the
	// decimal commas of a non-English locale inside the numbers.
	fields := strings.Split(s, ", ")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	var l importLayout
	if c.header != nil {
		l = *c.header
		if want := len(l.columns()); len(fields) != want {
			return parseErr(n, s, "expected %d columns as in the header of line %d (%s), found %d",
				want, c.headerLine, strings.Join(l.columns(), ", "), len(fields))
		}
	} else {
		// --hide-header: the row says what it is. A detailed row has a
		// thread id where the summary has its end time.
		switch len(fields) {
		case 6:
		case 7:
			l.fetchSize = true
		case 10:
			l.extended = true
		default:
			return parseErr(n, s, "expected a consumer row of 10 comma-separated columns (%s; 6 or 7 in Kafka before 2.0), found %d",
				strings.Join(importLayout{extended: true}.columns(), ", "), len(fields))
		}
		_, l.detailed = parseJavaInt(fields[1])
	}
	cols := l.columns()
	r := importRow{line: n, text: s, layout: l}
	var err error
	col := func(i int) string { return cols[i] }
	bad := func(i int, what string) error {
		if fields[i] == "" {
			return parseErr(n, s, "column %d (%s) is empty: expected %s", i+1, col(i), what)
		}
		return parseErr(n, s, "column %d (%s): expected %s, found %s", i+1, col(i), what, importNumberHint(fields[i]))
	}
	getInt := func(i int) int64 {
		if err != nil {
			return 0
		}
		v, ok := parseJavaInt(fields[i])
		if !ok {
			err = bad(i, "an integer")
		}
		return v
	}
	getFloat := func(i int) float64 {
		if err != nil {
			return 0
		}
		v, ok := parseJavaFloat(fields[i])
		if !ok {
			err = bad(i, "a number")
		}
		return v
	}
	if l.detailed {
		if fields[0] == "" {
			return bad(0, "a date")
		}
		r.end = fields[0]
		r.thread = getInt(1)
	} else {
		for i := range 2 {
			if fields[i] == "" {
				return bad(i, "a date")
			}
		}
		r.start, r.end = fields[0], fields[1]
	}
	i := 2
	if l.fetchSize {
		r.fetch = getInt(i)
		i++
	}
	r.mb = getFloat(i)
	r.mbPerSec = getFloat(i + 1)
	r.msgs = getInt(i + 2)
	if err == nil && r.msgs < 0 {
		err = bad(i+2, "a message count of at least 0")
	}
	r.msgsPerSec = getFloat(i + 3)
	if l.extended {
		r.rebalanceMs = getInt(i + 4)
		r.fetchMs = getInt(i + 5)
		r.fetchMBPerSec = getFloat(i + 6)
		r.fetchMsgsPerSec = getFloat(i + 7)
	}
	if err != nil {
		return err
	}

	if c.summary != nil {
		return parseErr(n, s, "consumer row after the summary row of line %d, which Kafka prints last (several runs in one file?)", c.summary.line)
	}
	if !l.detailed {
		c.summary = &r
		return nil
	}
	if len(c.rows) > 0 && c.rows[0].layout != l {
		return parseErr(n, s, "row with %d columns after rows with %d (line %d)", len(cols), len(c.rows[0].layout.columns()), c.rows[0].line)
	}
	c.rows = append(c.rows, r)
	return nil
}

// finishConsumer turns the consumer rows into metrics and intervals.
func (p *importParser) finishConsumer(out *Imported) error {
	c := &p.cons
	if c.summary == nil && len(c.rows) == 0 {
		return parseErr(p.lastLine, p.lastText, "no consumer summary row or --show-detailed-stats rows after this line: is the output cut short?")
	}
	if err := p.consumerIntervals(out); err != nil {
		return err
	}
	if r := c.summary; r != nil {
		p.consumerMetrics(out, r.msgs, r.mb, r.msgsPerSec, r.mbPerSec, r.layout.extended, r.rebalanceMs, r.fetchMs, r.fetchMBPerSec, r.fetchMsgsPerSec)
		if !r.layout.extended {
			out.Notes = append(out.Notes, "Kafka before 2.0 (or its old consumer) prints no rebalance and fetch columns: no rebalance or fetch figures")
		}
		if r.layout.fetchSize {
			out.Notes = append(out.Notes, fmt.Sprintf("fetch.size was %d bytes (Kafka 0.8's column)", r.fetch))
		}
		return nil
	}

	// --show-detailed-stats: Java prints no summary; add up the rows.
	last := map[int64]importRow{}
	var threads []int64
	var rebalance, fetch int64
	var overflow bool
	for _, r := range c.rows {
		if _, seen := last[r.thread]; !seen {
			threads = append(threads, r.thread)
		}
		last[r.thread] = r
		var ok1, ok2 bool
		rebalance, ok1 = importAddInt64(rebalance, r.rebalanceMs)
		fetch, ok2 = importAddInt64(fetch, r.fetchMs)
		overflow = overflow || !ok1 || !ok2
	}
	var msgs int64
	var mb float64
	for _, th := range threads {
		var ok bool
		if msgs, ok = importAddInt64(msgs, last[th].msgs); !ok {
			return parseErr(last[th].line, last[th].text, "data.consumed.in.nMsg too large to add up")
		}
		mb += last[th].mb
	}
	lastRow := c.rows[len(c.rows)-1]
	if !lastRow.layout.extended || len(threads) > 1 {
		p.add(out, "records-consumed-total", float64(msgs), "records", "")
		p.add(out, "bytes-consumed-total", math.Round(mb*bytesPerMB), "bytes", "")
		out.Notes = append(out.Notes, fmt.Sprintf("no summary row (Kafka prints none with --show-detailed-stats): "+
			"totals from the last row of each consumer thread (%d); rows without rebalance and fetch columns give no duration, so no rates", len(threads)))
		out.Notes = append(out.Notes, importBytesNote)
		return nil
	}
	if overflow {
		return parseErr(lastRow.line, lastRow.text, "rebalance.time.ms or fetch.time.ms too large to add up")
	}
	elapsed := (float64(rebalance) + float64(fetch)) / 1000
	fetchSec := float64(fetch) / 1000
	div := func(a, b float64) float64 {
		if b <= 0 {
			return math.NaN()
		}
		return a / b
	}
	p.consumerMetrics(out, msgs, mb, div(float64(msgs), elapsed), div(mb, elapsed), true, rebalance, fetch,
		div(mb, fetchSec), div(float64(msgs), fetchSec))
	out.Notes = append(out.Notes, fmt.Sprintf("no summary row (Kafka prints none with --show-detailed-stats): the figures add up the %d rows "+
		"to line %d; records read after the last row are not counted", len(c.rows), lastRow.line))
	return nil
}

const importBytesNote = "bytes-consumed-total is derived: data.consumed.in.MB × 1048576, from an MB figure printed with 4 decimals (±53 bytes)"

// consumerMetrics adds the kbench consumer metrics.
func (p *importParser) consumerMetrics(out *Imported, msgs int64, mb, msgsPerSec, mbPerSec float64, extended bool,
	rebalanceMs, fetchMs int64, fetchMBPerSec, fetchMsgsPerSec float64) {
	p.add(out, "records-consumed-total", float64(msgs), "records", "")
	p.add(out, "records-consumed-rate", msgsPerSec, "records/s", importHigher)
	p.add(out, "bytes-consumed-total", math.Round(mb*bytesPerMB), "bytes", "")
	p.add(out, "mb-per-sec", mbPerSec, "MB/s", importHigher)
	if extended {
		p.add(out, "rebalance-time", float64(rebalanceMs), "ms", importLower)
		p.add(out, "fetch-time", float64(fetchMs), "ms", "")
		p.add(out, "fetch-records-per-sec", fetchMsgsPerSec, "records/s", importHigher)
		p.add(out, "fetch-mb-per-sec", fetchMBPerSec, "MB/s", importHigher)
	}
	out.Notes = append(out.Notes, importBytesNote)
}

// consumerIntervals turns the detailed rows into intervals.
func (p *importParser) consumerIntervals(out *Imported) error {
	rows := p.cons.rows
	if len(rows) == 0 {
		return nil
	}
	single := true
	for _, r := range rows {
		single = single && r.thread == rows[0].thread
	}
	// Times: each row's end, in seconds since the start of the first
	// row's interval, as kbench places its own series. With the rebalance
	// and fetch columns, a row's interval lasts rebalance.time.ms +
	// fetch.time.ms exactly (Java computes fetch time as the interval less
	// the rebalance time). Otherwise the dates, which are the rows' ends;
	// the first interval's start is its end less its records ÷ nMsg.sec
	// (Java's rate over the interval), or less the next row's distance
	// when that rate is 0, or Kafka's reporting interval, 5 s.
	ts := make([]float64, len(rows))
	switch {
	case single && rows[0].layout.extended:
		var ms float64
		for i, r := range rows {
			ms += float64(r.rebalanceMs) + float64(r.fetchMs)
			ts[i] = ms / 1000
		}
	default:
		dates := make([]time.Time, len(rows))
		dated := true
		for i, r := range rows {
			d, ok := parseJavaDate(r.end)
			if !ok {
				dated = false
				break
			}
			dates[i] = d
		}
		if !dated {
			perThread := map[int64]int{}
			for i, r := range rows {
				perThread[r.thread]++
				ts[i] = float64(perThread[r.thread])
			}
			out.Notes = append(out.Notes, "the rows' dates are in an unknown --date-format: interval times are row numbers, not seconds")
			break
		}
		first := 5.0
		if d := float64(rows[0].msgs) / rows[0].msgsPerSec; rows[0].msgsPerSec > 0 && !math.IsInf(rows[0].msgsPerSec, 0) && !math.IsInf(d, 0) && !math.IsNaN(d) {
			first = d
		} else if len(rows) > 1 && dates[1].After(dates[0]) {
			first = dates[1].Sub(dates[0]).Seconds()
		}
		for i := range rows {
			ts[i] = first + dates[i].Sub(dates[0]).Seconds()
		}
	}
	if !single {
		out.Notes = append(out.Notes, "rows of several consumer threads (old consumer): one interval per row and thread")
	}

	lastMsgs := map[int64]int64{}
	ivs := importIntervals{out: out}
	for i, r := range rows {
		prev := lastMsgs[r.thread]
		if r.msgs < prev {
			return parseErr(r.line, r.text, "data.consumed.in.nMsg went down from %d to %d: it is a running total (several runs in one file?)", prev, r.msgs)
		}
		lastMsgs[r.thread] = r.msgs
		ivs.add(r.line, ImportedInterval{T: ts[i], Records: r.msgs - prev, RecordsPerSec: r.msgsPerSec, MBPerSec: r.mbPerSec})
	}
	ivs.note("rows")
	return nil
}

// parseJavaDate parses the consumer's dates in the default --date-format
// "yyyy-MM-dd HH:mm:ss:SSS" or a few common alternatives, as UTC (only
// differences matter).
func parseJavaDate(s string) (time.Time, bool) {
	if len(s) == 23 && s[19] == ':' {
		s = s[:19] + "." + s[20:]
	}
	for _, layout := range []string{
		"2006-01-02 15:04:05.000",
		"2006-01-02T15:04:05.000",
		"2006-01-02 15:04:05",
		"2006-01-02T15:04:05",
		time.RFC3339Nano,
	} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// importAddInt64 adds without overflow, reporting whether it could.
func importAddInt64(a, b int64) (int64, bool) {
	c := a + b
	if (b > 0 && c < a) || (b < 0 && c > a) {
		return 0, false
	}
	return c, true
}
