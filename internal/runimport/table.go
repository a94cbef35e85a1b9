// Reading a wide table of results (the server's POST /api/import, field
// "table"):
// rows are metrics, columns are runs, as JIRA issues and pull requests
// paste them (KAFKA-19296's "Metric | CLASSIC | CONSUMER" tables).

package runimport

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kbench/kbench/internal/rundoc"
)

// Limits of a table import.
const (
	MaxTableBytes = 16 << 20
	MaxTableRuns  = 100
	MaxTableRows  = 5000
)

// Table formats, as notes name them.
const (
	TableMarkdown = "Markdown"
	TableJIRA     = "JIRA"
	TableCSV      = "CSV"
	TableTSV      = "tab-separated"
)

// ResultsTable is a parsed table: one run per column after the first.
type ResultsTable struct {
	Format string
	Rows   int // metric rows read
	Runs   []TableRun
	// Notes are about the whole table; every run gets them.
	Notes []string
}

// TableRun is one column: a run.
type TableRun struct {
	Label   string
	Metrics []rundoc.Metric
	Notes   []string
}

// tableError is a bad cell or line of a table, on the "table" field.
func tableError(line, column int, msg string) *CellError {
	return &CellError{Field: "table", Line: line, Column: column, Msg: msg}
}

// badTable is bad input on the "table" field that names no cell.
func badTable(msg string) error { return &rundoc.FieldError{Field: "table", Msg: msg} }

// tcell is one cell of a table with where it starts.
type tcell struct {
	text   string
	column int // 1-based byte column of its first non-blank character
}

// tline is a line of cells.
type tline struct {
	line  int
	cells []tcell
}

// ParseResultsTable reads a wide table of results: a header line whose
// first cell names the metric column ("Metric", or anything) and whose
// other cells label the runs, then one line per metric: its name, then a
// value per run. It takes Markdown (with or without outer pipes, the
// |:---| line skipped, text around the table skipped with a note), JIRA
// markup (||header||), CSV and tab-separated text, told apart by the
// first lines.
//
// A metric is named as one of known (kbench's metrics of the workload and
// the Java client's, case-insensitive, "group:name" read by its name), or
// is a CPU row ("Average CPU load", "CPU max", …) that becomes kbench's
// process-cpu-avg, -max or -p99; any other name is kept as written, with
// no direction. A value is a number, with thousands separators ("1,234",
// "1 234", "1_234") and a unit in the cell where it fits the metric's
// ("12 ms" in a metric of seconds, "41.2%" in a ratio, "1.5 MiB" in
// bytes); empty, "-" and "n/a" cells are left out, and so are NaN and
// Infinity cells, with a note. Errors name the line and column.
func ParseResultsTable(r io.Reader, known []rundoc.Metric) (*ResultsTable, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxTableBytes+1))
	if err != nil {
		return nil, fmt.Errorf("runimport: read table: %w", err)
	}
	if len(data) > MaxTableBytes {
		return nil, &LimitError{Field: "table", Msg: fmt.Sprintf("the table is over %d bytes", MaxTableBytes)}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if !utf8.Valid(data) {
		return nil, badTable("is not UTF-8 text")
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if strings.TrimSpace(text) == "" {
		return nil, badTable("is empty: want a header line (Metric | run | run …) and a line per metric")
	}
	format := detectTableFormat(text)
	var lines []tline
	var skipped int
	switch format {
	case TableCSV:
		lines, err = csvTableLines(text)
	case TableTSV:
		lines = tsvTableLines(text)
	default:
		lines, skipped, err = pipeTableLines(text)
	}
	if err != nil {
		return nil, err
	}
	t, err := tableFromLines(lines, known)
	if err != nil {
		return nil, err
	}
	t.Format = format
	if skipped > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d lines of text around the table were skipped", skipped))
	}
	return t, nil
}

// markdownDelimiter is a cell of Markdown's header delimiter line.
var markdownDelimiter = regexp.MustCompile(`^:?-+:?$`)

// detectTableFormat tells the format from the first two non-blank lines.
func detectTableFormat(text string) string {
	var first []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			first = append(first, l)
			if len(first) == 2 {
				break
			}
		}
	}
	switch {
	case strings.HasPrefix(first[0], "||"):
		return TableJIRA
	case strings.HasPrefix(first[0], "|"):
		return TableMarkdown
	case strings.Contains(first[0], "\t"):
		return TableTSV
	case len(first) == 2 && strings.Contains(first[1], "|") && isDelimiterLine(splitPipes(first[1], 0, false)):
		return TableMarkdown
	}
	// A paste may start with text ("Results:") before a Markdown table.
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "|") {
			return TableMarkdown
		}
	}
	return TableCSV
}

func isDelimiterLine(cells []tcell) bool {
	if len(cells) == 0 {
		return false
	}
	for _, c := range cells {
		if !markdownDelimiter.MatchString(strings.ReplaceAll(c.text, " ", "")) {
			return false
		}
	}
	return true
}

// splitPipes splits a Markdown or JIRA line into cells at unescaped '|'
// ("||" too when jira), dropping the empty cells before a leading and
// after a trailing pipe. off is added to columns.
func splitPipes(raw string, off int, jira bool) []tcell {
	var cells []tcell
	var b strings.Builder
	start := 0
	flush := func() {
		text := b.String()
		lead := len(text) - len(strings.TrimLeft(text, " \t"))
		cells = append(cells, tcell{text: strings.TrimSpace(text), column: off + start + lead + 1})
		b.Reset()
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw) && raw[i+1] == '|':
			b.WriteByte('|')
			i++
		case c == '|':
			flush()
			if jira && i+1 < len(raw) && raw[i+1] == '|' {
				i++
			}
			start = i + 1
		default:
			b.WriteByte(c)
		}
	}
	flush()
	trimmed := strings.TrimSpace(raw)
	if strings.HasPrefix(trimmed, "|") && len(cells) > 0 && cells[0].text == "" {
		cells = cells[1:]
	}
	if strings.HasSuffix(trimmed, "|") && !strings.HasSuffix(trimmed, `\|`) && len(cells) > 0 && cells[len(cells)-1].text == "" {
		cells = cells[:len(cells)-1]
	}
	return cells
}

// pipeTableLines reads a Markdown or JIRA table: the first block of
// lines with pipes. Text before and after it is skipped (counted); a
// second table is an error.
func pipeTableLines(text string) (lines []tline, skipped int, err error) {
	state := 0 // 0 before the table, 1 in it, 2 after
	headerDone := false
	all := strings.Split(text, "\n")
	for i, raw := range all {
		n := i + 1
		trimmed := strings.TrimSpace(raw)
		// A row starts with a pipe; in a table without outer pipes, the
		// header is followed by the delimiter line.
		isRow := strings.HasPrefix(trimmed, "|") || (state == 1 && strings.Contains(trimmed, "|")) ||
			(state == 0 && strings.Contains(trimmed, "|") && i+1 < len(all) && isDelimiterLine(splitPipes(all[i+1], 0, false)))
		switch {
		case trimmed == "":
			if state == 1 {
				state = 2
			}
			continue
		case !isRow:
			if state == 1 {
				state = 2
			}
			skipped++
			continue
		case state == 2:
			return nil, 0, tableError(n, 0, fmt.Sprintf("a second table (the first ends before line %d): import one table at a time", n))
		}
		state = 1
		cells := splitPipes(raw, 0, strings.HasPrefix(trimmed, "||"))
		if len(lines) == 1 && !headerDone && isDelimiterLine(cells) {
			headerDone = true
			continue
		}
		lines = append(lines, tline{line: n, cells: cells})
	}
	return lines, skipped, nil
}

func csvTableLines(text string) ([]tline, error) {
	cr := csv.NewReader(strings.NewReader(text))
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	var lines []tline
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, tableError(pe.Line, pe.Column, pe.Err.Error())
			}
			return nil, fmt.Errorf("runimport: read table: %w", err)
		}
		l := tline{}
		for i, f := range rec {
			line, col := cr.FieldPos(i)
			if i == 0 {
				l.line = line
			}
			lead := len(f) - len(strings.TrimLeft(f, " \t"))
			l.cells = append(l.cells, tcell{text: strings.TrimSpace(f), column: col + lead})
		}
		if len(rec) == 1 && l.cells[0].text == "" {
			continue
		}
		lines = append(lines, l)
	}
}

func tsvTableLines(text string) []tline {
	var lines []tline
	for i, raw := range strings.Split(text, "\n") {
		if strings.TrimSpace(raw) == "" {
			continue
		}
		l := tline{line: i + 1}
		off := 0
		for _, f := range strings.Split(raw, "\t") {
			lead := len(f) - len(strings.TrimLeft(f, " "))
			l.cells = append(l.cells, tcell{text: strings.TrimSpace(f), column: off + lead + 1})
			off += len(f) + 1
		}
		// A spreadsheet's copy may end its lines with tabs.
		for len(l.cells) > 2 && l.cells[len(l.cells)-1].text == "" {
			l.cells = l.cells[:len(l.cells)-1]
		}
		lines = append(lines, l)
	}
	return lines
}

// tableMetric is what a row is.
type tableMetric struct {
	metric rundoc.Metric
	known  bool
	note   string // how a CPU row was read
}

// tableFromLines reads the header and the metric rows.
func tableFromLines(lines []tline, known []rundoc.Metric) (*ResultsTable, error) {
	if len(lines) == 0 {
		return nil, badTable("holds no table: want a header line (Metric | run | run …) and a line per metric")
	}
	header := lines[0]
	if len(header.cells) < 2 {
		return nil, tableError(header.line, 0, "the header has one cell: want the metric column, then a column per run")
	}
	if len(header.cells)-1 > MaxTableRuns {
		return nil, &LimitError{Field: "table", Msg: fmt.Sprintf("%d run columns, at most %d per import", len(header.cells)-1, MaxTableRuns)}
	}
	t := &ResultsTable{}
	seen := map[string]int{}
	for i, c := range header.cells[1:] {
		label := cleanCell(c.text)
		bad := func(format string, a ...any) error {
			return tableError(header.line, c.column, fmt.Sprintf(format, a...))
		}
		switch {
		case label == "":
			return nil, bad("column %d has no header: each run is labelled by its column's header", i+2)
		case len(label) > rundoc.MaxLabel:
			return nil, bad("the header %.40q… is over %d characters", label, rundoc.MaxLabel)
		case strings.ContainsFunc(label, unicode.IsControl):
			return nil, bad("the header %q holds a control character (a line break in a quoted cell?)", label)
		}
		if j, dup := seen[strings.ToLower(label)]; dup {
			return nil, bad("column %d's header %q repeats column %d's: give each run its own label", i+2, label, j)
		}
		seen[strings.ToLower(label)] = i + 2
		t.Runs = append(t.Runs, TableRun{Label: label})
	}
	if len(lines)-1 > MaxTableRows {
		return nil, &LimitError{Field: "table", Msg: fmt.Sprintf("%d metric lines, at most %d", len(lines)-1, MaxTableRows)}
	}
	byName := map[string]rundoc.Metric{}
	for _, m := range known {
		byName[strings.ToLower(m.Name)] = m
	}
	rowOf := map[string]int{}
	var unknown []string
	nan := make([][]string, len(t.Runs))
	empty := make([][]string, len(t.Runs))
	for _, l := range lines[1:] {
		if len(l.cells) != len(header.cells) {
			return nil, tableError(l.line, 0, fmt.Sprintf("%d cells, the header has %d: every line needs a name and a value (or an empty cell) per run", len(l.cells), len(header.cells)))
		}
		name := cleanCell(l.cells[0].text)
		if name == "" {
			if allEmpty(l.cells[1:]) {
				continue
			}
			return nil, tableError(l.line, l.cells[0].column, "a line with values and no metric name")
		}
		if strings.ContainsFunc(name, unicode.IsControl) {
			return nil, tableError(l.line, l.cells[0].column, fmt.Sprintf("the metric name %q holds a control character (a line break in a quoted cell?)", name))
		}
		if len(name) > 200 {
			return nil, tableError(l.line, l.cells[0].column, fmt.Sprintf("the metric name %.40q… is over 200 characters", name))
		}
		tm := tableRowMetric(name, byName)
		if first, dup := rowOf[tm.metric.Name]; dup {
			return nil, tableError(l.line, l.cells[0].column, fmt.Sprintf("%s repeats line %d's metric", name, first))
		}
		rowOf[tm.metric.Name] = l.line
		if tm.note != "" {
			t.Notes = append(t.Notes, tm.note)
		}
		if !tm.known {
			unknown = append(unknown, tm.metric.Name)
		}
		t.Rows++
		vals := make([]tableValue, len(t.Runs))
		for i, c := range l.cells[1:] {
			v, err := parseTableValue(c.text)
			if err != nil {
				return nil, tableError(l.line, c.column, fmt.Sprintf("%s, %s: %v", name, t.Runs[i].Label, err))
			}
			vals[i] = v
			if !tm.known && tm.metric.Unit == "" && v.unit != "" {
				// An unknown metric takes the unit of its first value
				// that gives one.
				tm.metric.Unit = v.unit
			}
		}
		for i, v := range vals {
			switch {
			case v.empty:
				empty[i] = append(empty[i], tm.metric.Name)
				continue
			case v.nonFinite:
				nan[i] = append(nan[i], fmt.Sprintf("%s (line %d)", tm.metric.Name, l.line))
				continue
			}
			f, err := convertTableValue(v, tm.metric.Unit)
			if err != nil {
				c := l.cells[i+1]
				return nil, tableError(l.line, c.column, fmt.Sprintf("%s, %s: %v", name, t.Runs[i].Label, err))
			}
			m := tm.metric
			m.Value = f
			t.Runs[i].Metrics = append(t.Runs[i].Metrics, m)
		}
	}
	if t.Rows == 0 {
		return nil, tableError(header.line, 0, "a header and no metric lines: want a line per metric")
	}
	for i := range t.Runs {
		r := &t.Runs[i]
		if len(r.Metrics) == 0 {
			return nil, tableError(header.line, header.cells[i+1].column, fmt.Sprintf("column %q has no value: every run needs at least one", r.Label))
		}
		if len(nan[i]) > 0 {
			r.Notes = append(r.Notes, "left out, not a finite number (NaN or Infinity in the table): "+strings.Join(nan[i], ", "))
		}
		if len(empty[i]) > 0 {
			r.Notes = append(r.Notes, "no value in the table for: "+listNames(empty[i]))
		}
	}
	if len(unknown) > 0 {
		t.Notes = append(t.Notes, fmt.Sprintf("%d metrics are neither kbench's nor in the catalog of Kafka's Java client metrics: kept as named, with no direction: %s",
			len(unknown), listNames(unknown)))
	}
	return t, nil
}

func listNames(v []string) string {
	if len(v) > 15 {
		return strings.Join(v[:15], ", ") + fmt.Sprintf(" and %d more", len(v)-15)
	}
	return strings.Join(v, ", ")
}

func allEmpty(cells []tcell) bool {
	for _, c := range cells {
		if cleanCell(c.text) != "" {
			return false
		}
	}
	return true
}

// cleanCell drops Markdown's emphasis and code marks around a cell's text.
func cleanCell(s string) string {
	s = strings.TrimSpace(s)
	for {
		t := s
		for _, m := range []string{"**", "__", "`", "*", "_", "~~"} {
			if len(s) >= 2*len(m) && strings.HasPrefix(s, m) && strings.HasSuffix(s, m) {
				s = strings.TrimSpace(s[len(m) : len(s)-len(m)])
			}
		}
		if s == t {
			return s
		}
	}
}

// cpuRow reads a CPU line's name: "Average CPU load", "CPU usage (avg)",
// "Max CPU", "CPU p99", ….
var cpuRow = regexp.MustCompile(`(?i)^(?:(avg|average|mean|max|maximum|peak|p99)\.?\s+)?(?:process\s+|client\s+)?cpu(?:\s+(?:load|usage|utili[sz]ation|%))?(?:\s*\(?(avg|average|mean|max|maximum|peak|p99)\)?)?(?:\s*\(%\))?$`)

// tableRowMetric is the metric a row's name names.
func tableRowMetric(name string, known map[string]rundoc.Metric) tableMetric {
	if m, ok := known[strings.ToLower(name)]; ok {
		return tableMetric{metric: rundoc.Metric{Name: m.Name, Unit: m.Unit, Better: m.Better}, known: true}
	}
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		// "consumer-metrics:io-wait-ratio", as --print-metrics names it:
		// known as its name alone is, under the workload's metrics.
		if m, ok := known[strings.ToLower(name[i+1:])]; ok {
			return tableMetric{metric: rundoc.Metric{Name: name, Unit: m.Unit, Better: m.Better}, known: true}
		}
	}
	if m := cpuRow.FindStringSubmatch(name); m != nil {
		which := strings.ToLower(m[1] + m[2])
		target := "process-cpu-avg"
		switch which {
		case "max", "maximum", "peak":
			target = "process-cpu-max"
		case "p99":
			target = "process-cpu-p99"
		}
		return tableMetric{metric: rundoc.Metric{Name: target, Unit: "%", Better: rundoc.LowerIsBetter}, known: true,
			note: fmt.Sprintf("%q is stored as %s (%% of one core, as kbench measures its client's process; the table does not say what its figure covers)", name, target)}
	}
	return tableMetric{metric: rundoc.Metric{Name: name}}
}

// tableValue is a parsed cell.
type tableValue struct {
	v         float64
	unit      string // normalised, "" when none
	empty     bool   // empty, "-", "n/a"
	nonFinite bool   // NaN, Infinity
}

// tableNumber is a number with optional thousands separators (',', ' ',
// a no-break or thin space, '_' or an apostrophe) and an exponent, then the rest
// (a unit).
var tableNumber = regexp.MustCompile(`^([+\-\x{2212}]?)((?:[1-9]\d{0,2}(?:(?:,\d{3})+|(?:[ \x{00A0}\x{202F}]\d{3})+|(?:_\d{3})+|(?:'\d{3})+)|\d+)(?:\.\d+)?|\.\d+)([eE][+-]?\d+)?\s*(.*)$`)

// parseTableValue reads a cell.
func parseTableValue(s string) (tableValue, error) {
	s = cleanCell(s)
	switch strings.ToLower(s) {
	case "", "-", "--", "—", "–", "n/a", "na", "none", "null":
		return tableValue{empty: true}, nil
	case "nan", "infinity", "-infinity", "+infinity", "inf", "-inf", "+inf", "∞", "-∞":
		return tableValue{nonFinite: true}, nil
	}
	m := tableNumber.FindStringSubmatch(s)
	if m == nil {
		return tableValue{}, fmt.Errorf("%q is not a number (want digits, optionally with thousands separators and a unit: 1,234.5 ms, 41.2%%)", s)
	}
	digits := strings.NewReplacer(",", "", " ", "", "\u00a0", "", "\u202f", "", "_", "", "'", "").Replace(m[2])
	v, err := strconv.ParseFloat(digits+m[3], 64)
	if err != nil || math.IsInf(v, 0) {
		return tableValue{}, fmt.Errorf("%q is out of range", s)
	}
	if m[1] == "-" || m[1] == "−" {
		v = -v
	}
	unit, ok := normalUnit(strings.TrimSpace(m[4]))
	if !ok && strings.HasPrefix(m[4], ",") {
		return tableValue{}, fmt.Errorf("%q is not a number: a decimal comma? write %s.%s", s, m[2], strings.TrimPrefix(m[4], ","))
	}
	if !ok {
		return tableValue{}, fmt.Errorf("%q: unknown unit %q (known: %%, ns, µs, ms, s, bytes, KiB, MiB, GiB, and those per second, records/s)", s, m[4])
	}
	return tableValue{v: v, unit: unit}, nil
}

// unitScale is a unit's dimension and size in its dimension's base.
type unitScale struct {
	dim   string
	scale float64
}

// tableUnits are the units a cell may carry, by lower-case spelling, as
// normalised units. KB, MB and GB are binary, as Kafka's tools print MB.
var tableUnits = map[string]string{
	"%": "%", "ns": "ns", "µs": "µs", "μs": "µs", "us": "µs", "ms": "ms", "s": "s", "sec": "s", "secs": "s", "seconds": "s",
	"b": "bytes", "byte": "bytes", "bytes": "bytes", "kb": "KiB", "kib": "KiB", "mb": "MiB", "mib": "MiB", "gb": "GiB", "gib": "GiB",
	"b/s": "bytes/s", "bytes/s": "bytes/s", "kb/s": "KiB/s", "kib/s": "KiB/s", "mb/s": "MB/s", "mib/s": "MB/s", "gb/s": "GiB/s", "gib/s": "GiB/s",
	"records/s": "records/s", "rec/s": "records/s", "msg/s": "records/s", "msgs/s": "records/s", "messages/s": "records/s",
	"records/sec": "records/s", "requests/s": "requests/s", "req/s": "requests/s", "/s": "/s",
	"records": "records",
}

// unitScales convert between units of one dimension. kbench's MB/s
// (mb-per-sec) is MiB/s, as Kafka's tools print it.
var unitScales = map[string]unitScale{
	"ns": {"time", 1e-6}, "µs": {"time", 1e-3}, "ms": {"time", 1}, "s": {"time", 1000},
	"bytes": {"size", 1}, "KiB": {"size", 1 << 10}, "MiB": {"size", 1 << 20}, "GiB": {"size", 1 << 30},
	"bytes/s": {"rate", 1}, "KiB/s": {"rate", 1 << 10}, "MB/s": {"rate", 1 << 20}, "GiB/s": {"rate", 1 << 30},
	"ratio": {"share", 1}, "%": {"share", 0.01},
}

func normalUnit(u string) (string, bool) {
	if u == "" {
		return "", true
	}
	n, ok := tableUnits[strings.ToLower(u)]
	return n, ok
}

// convertTableValue gives v in unit want: as is without a unit in the
// cell or when the units agree, scaled within a dimension (ms to s,
// MiB to bytes, % to a ratio), an error otherwise.
func convertTableValue(v tableValue, want string) (float64, error) {
	if v.unit == "" || v.unit == want {
		return v.v, nil
	}
	from, ok1 := unitScales[v.unit]
	to, ok2 := unitScales[want]
	if ok1 && ok2 && from.dim == to.dim {
		return v.v * from.scale / to.scale, nil
	}
	if want == "" {
		return 0, fmt.Errorf("the unit %s: this metric has none", v.unit)
	}
	return 0, fmt.Errorf("the unit %s does not fit this metric, which is in %s", v.unit, want)
}
