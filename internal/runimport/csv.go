// Reading a CSV of past results (the server's POST /api/import/csv): the
// format Apache Otava reads and spreadsheets export.

package runimport

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// Limits of a CSV import.
const (
	MaxCSVBytes = 16 << 20
	MaxCSVRows  = 20000
)

// CSVRow is one row of a results CSV: one run.
type CSVRow struct {
	Line    int // 1-based line of the file
	At      time.Time
	Meta    map[string]string
	Metrics []rundoc.Metric
}

// csvError is a bad cell or line of a CSV, on the "file" field.
func csvError(line, column int, msg string) *CellError {
	return &CellError{Field: "file", Line: line, Column: column, Msg: msg}
}

// csvTagPrefix marks a column as a tag whatever its values: "tag:build"
// is the tag build (':' is in no tag key, so no tag is mistaken for it).
const csvTagPrefix = "tag:"

// Column kinds.
const (
	colTime = iota
	colMetric
	colTag
)

type csvColumn struct {
	kind   int
	name   string // the metric or tag
	metric rundoc.Metric
}

// unixTimeRE is a Unix time in seconds, as Otava also reads a number (up
// to 13 digits, so that milliseconds are read, and refused for their year).
var unixTimeRE = regexp.MustCompile(`^[0-9]{1,13}(\.[0-9]{1,9})?$`)

// csvTimeLayouts are the times a row may give, beyond Unix seconds: RFC
// 3339 and its variants with a space, a zone written -0700 or none (UTC),
// dates alone, and Otava's samples' "2024.01.01 3:00:00 +0100". A zone
// abbreviation is no zone: Go reads an unknown one (EST where the server
// is not in New York, XYZ) as UTC without a word, and EST, CST or IST
// each name several zones.
var csvTimeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05 Z07:00",
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05.999999999 -0700",
	"2006-01-02T15:04:05-0700",
	"2006.01.02 15:04:05 -0700",
	"2006.01.02 15:04:05",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02",
	"2006/01/02 15:04:05",
	"2006/01/02",
}

// Run times are bounded, in the CSV as in an import's "time" field: a
// time before 1970 or after 2100 is a mistake (milliseconds given as
// seconds, a year typed wrong), and one past year 9999 cannot even be
// written back as JSON.
var (
	minRunTime = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)
	maxRunTime = time.Date(2101, 1, 1, 0, 0, 0, 0, time.UTC) // the first instant after 2100
)

// CheckRunTime refuses a time outside 1970–2100 (in UTC); v is how the
// input wrote it. The server's imports check their "time" field with it.
func CheckRunTime(v string, t time.Time) error {
	if t.Before(minRunTime) || !t.Before(maxRunTime) {
		return fmt.Errorf("time %q is %s UTC: want a time from 1970 to 2100 (Unix times in seconds, not milliseconds)", v, t.UTC().Format("2006-01-02T15:04:05"))
	}
	return nil
}

// zoneNameRE is a time's last word when it is a zone's name ("EST",
// "UTC", "Europe/Paris"), and the rest of the time before it.
var zoneNameRE = regexp.MustCompile(`^(.*\S)\s+([A-Za-z][A-Za-z0-9_/+-]*)$`)

// numericZoneRE is a time that ends with a numeric offset (-0500, +01:00).
var numericZoneRE = regexp.MustCompile(`[+-][0-9]{2}:?[0-9]{2}$`)

// ParseCSVTime reads a row's time; a time without a zone is UTC, and the
// time must be from 1970 to 2100.
func ParseCSVTime(v string) (time.Time, error) {
	if unixTimeRE.MatchString(v) {
		f, err := strconv.ParseFloat(v, 64)
		if err == nil {
			sec, frac := math.Modf(f)
			t := time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC()
			return t, CheckRunTime(v, t)
		}
	}
	text := v
	if m := zoneNameRE.FindStringSubmatch(v); m != nil {
		switch rest, zone := m[1], m[2]; {
		case numericZoneRE.MatchString(rest):
			// Go's own "2024-01-01 10:00:00 -0500 EST": the offset says it.
			text = rest
		case strings.EqualFold(zone, "UTC"), strings.EqualFold(zone, "GMT"), zone == "Z":
			text = rest
		default:
			return time.Time{}, fmt.Errorf("time %q: zone %q is a name, not an offset (EST, CST, IST each name several zones): write the offset, e.g. \"2024-01-01 10:00:00 -0500\", or UTC", v, zone)
		}
	}
	for _, layout := range csvTimeLayouts {
		if t, err := time.Parse(layout, text); err == nil {
			return t.UTC(), CheckRunTime(v, t)
		}
	}
	return time.Time{}, fmt.Errorf("time %q: want RFC 3339 (2022-06-21T10:00:00Z), \"2022-06-21 10:00:00 +0200\", a date (2022-06-21) or Unix seconds", v)
}

// ParseResultsCSV reads a CSV of past results: a header line naming the
// columns, then one run per line. "time" (required) says when the run
// happened; a column named as one of known (the workload's metrics) holds
// that metric's values, with known's unit and direction; any other column
// is a tag (commit, branch, version or any key, "tag:KEY" for a column of
// numbers), unless its values are all numbers: then it is taken for a
// misspelt metric and refused, naming it and the metrics known. Empty
// cells leave the metric or tag out, but every row needs a metric. All
// rows must be of one branch. Column names are case-insensitive; a UTF-8
// byte-order mark is skipped. A bad cell or line is a *CellError, a file
// over the limits a *LimitError, any other bad input a
// *rundoc.FieldError, all on the field "file".
func ParseResultsCSV(r io.Reader, known []rundoc.Metric) ([]CSVRow, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxCSVBytes+1))
	if err != nil {
		return nil, fmt.Errorf("runimport: read csv: %w", err)
	}
	if len(data) > MaxCSVBytes {
		return nil, &LimitError{Field: "file", Msg: fmt.Sprintf("the CSV is over %d bytes", MaxCSVBytes)}
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &rundoc.FieldError{Field: "file", Msg: "is empty: want a header line such as time,commit,record-send-rate and a line per run"}
	}
	cr := csv.NewReader(bytes.NewReader(data))
	cr.TrimLeadingSpace = true
	header, err := cr.Read()
	if err != nil {
		return nil, csvReadError(err)
	}
	pos := make([][2]int, len(header)) // line and column of each name
	for i := range header {
		pos[i][0], pos[i][1] = cr.FieldPos(i)
	}
	cols, err := csvColumns(header, pos, known)
	if err != nil {
		return nil, err
	}
	var rows []CSVRow
	var values [][]string // every row's cells, to judge unknown columns
	branch, branchLine := "", 0
	noMetrics := 0 // the first line without a metric value
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvReadError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rows) == MaxCSVRows {
			return nil, &LimitError{Field: "file", Msg: fmt.Sprintf("at most %d rows (runs) per import", MaxCSVRows)}
		}
		row := CSVRow{Line: line}
		values = append(values, append([]string(nil), rec...))
		for i, col := range cols {
			v := strings.TrimSpace(rec[i])
			bad := func(format string, a ...any) error {
				_, c := cr.FieldPos(i)
				return csvError(line, c, fmt.Sprintf(format, a...))
			}
			switch col.kind {
			case colTime:
				if v == "" {
					return nil, bad("time: is empty: every run needs its time")
				}
				if row.At, err = ParseCSVTime(v); err != nil {
					return nil, bad("%v", err)
				}
			case colMetric:
				if v == "" {
					continue
				}
				f, err := strconv.ParseFloat(v, 64)
				if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
					return nil, bad("%s: %q is not a finite number", col.name, v)
				}
				m := col.metric
				m.Value = f
				row.Metrics = append(row.Metrics, m)
			case colTag:
				if v == "" {
					continue
				}
				if row.Meta == nil {
					row.Meta = map[string]string{}
				}
				row.Meta[col.name] = v
				if err := rundoc.ValidateMeta(map[string]string{col.name: v}); err != nil {
					return nil, bad("%s", strings.TrimPrefix(err.Error(), "--meta: "))
				}
				if col.name == rundoc.MetaBranch {
					if branch != "" && v != branch {
						return nil, bad("branch %q: line %d is on branch %q; a series is one branch: split the file", v, branchLine, branch)
					}
					branch, branchLine = v, line
				}
			}
		}
		if len(row.Metrics) == 0 && noMetrics == 0 {
			noMetrics = line
		}
		if err := rundoc.ValidateMeta(row.Meta); err != nil {
			return nil, csvError(line, 0, strings.TrimPrefix(err.Error(), "--meta: "))
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return nil, csvError(pos[0][0], 0, "a header and no rows: want a line per run")
	}
	// A misspelt metric column is named before any consequence of it.
	if err := numericTagColumns(cols, header, pos, values, known); err != nil {
		return nil, err
	}
	if !slices.ContainsFunc(cols, func(c csvColumn) bool { return c.kind == colMetric }) {
		return nil, csvError(pos[0][0], 0, fmt.Sprintf("no metric column: name at least one of the workload's metrics (%s)", metricNames(known)))
	}
	if noMetrics > 0 {
		return nil, csvError(noMetrics, 0, "no metric value: every run needs at least one")
	}
	return rows, nil
}

// csvColumns reads the header line.
func csvColumns(header []string, pos [][2]int, known []rundoc.Metric) ([]csvColumn, error) {
	metrics := map[string]rundoc.Metric{}
	for _, m := range known {
		metrics[m.Name] = m
	}
	cols := make([]csvColumn, len(header))
	seen := map[string]int{}
	tags := map[string]int{} // the column (from 1) of each tag, "tag:" or not
	hasTime := false
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(h))
		bad := func(format string, a ...any) error {
			return csvError(pos[i][0], pos[i][1], fmt.Sprintf(format, a...))
		}
		if name == "" {
			return nil, bad("column %d has no name", i+1)
		}
		if j, dup := seen[name]; dup {
			return nil, bad("column %q repeats column %d", h, j+1)
		}
		seen[name] = i + 1
		switch m, isMetric := metrics[name]; {
		case name == "time":
			cols[i] = csvColumn{kind: colTime, name: name}
			hasTime = true
		case isMetric:
			cols[i] = csvColumn{kind: colMetric, name: name, metric: rundoc.Metric{Name: m.Name, Unit: m.Unit, Better: m.Better}}
		default:
			tag := strings.TrimPrefix(name, csvTagPrefix)
			if err := rundoc.ValidateMeta(map[string]string{tag: "x"}); err != nil {
				return nil, bad("column %q is not a metric of the workload (%s) nor a tag name (lower-case letters, digits, '.', '_', '-')", h, metricNames(known))
			}
			// "commit" and "tag:commit" are one tag: refused, rather than
			// the last column silently winning.
			if j, dup := tags[tag]; dup {
				return nil, bad("column %q is the tag %q, as column %d (%q) is: keep one", h, tag, j, header[j-1])
			}
			tags[tag] = i + 1
			cols[i] = csvColumn{kind: colTag, name: tag}
		}
	}
	if !hasTime {
		return nil, csvError(pos[0][0], 0, "no \"time\" column: the header must name one (time,commit,<metric>…)")
	}
	return cols, nil
}

// wellKnownTags are the tag columns never taken for metrics, whatever
// their values (a commit may be all digits).
var wellKnownTags = map[string]bool{rundoc.MetaCommit: true, rundoc.MetaBranch: true, rundoc.MetaVersion: true}

// numericTagColumns refuses a tag column (not "tag:"-prefixed nor well
// known) whose every value is a number: a metric misspelt or of another
// workload would otherwise become tags silently.
func numericTagColumns(cols []csvColumn, header []string, pos [][2]int, rows [][]string, known []rundoc.Metric) error {
	for i, col := range cols {
		h := strings.ToLower(strings.TrimSpace(header[i]))
		if col.kind != colTag || wellKnownTags[col.name] || strings.HasPrefix(h, csvTagPrefix) {
			continue
		}
		numbers := 0
		for _, rec := range rows {
			v := strings.TrimSpace(rec[i])
			if v == "" {
				continue
			}
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				numbers = -1
				break
			}
			numbers++
		}
		if numbers > 0 {
			return csvError(pos[i][0], pos[i][1], fmt.Sprintf("column %q holds numbers but is not a metric of the workload; known metrics: %s (name a column %s%s to keep it as a tag)",
				header[i], metricNames(known), csvTagPrefix, col.name))
		}
	}
	return nil
}

// metricNames lists ms for a message: the first 40 (kbench's own come
// first), then how many more (the Java client's catalog is long).
func metricNames(ms []rundoc.Metric) string {
	const most = 40
	names := make([]string, 0, min(len(ms), most))
	for i, m := range ms {
		if i == most {
			names = append(names, fmt.Sprintf("and %d more (Kafka's Java client metrics, see the README)", len(ms)-most))
			break
		}
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// csvReadError turns encoding/csv's error into a line-numbered one.
func csvReadError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			msg = "wrong number of fields: every line needs a value (or an empty one) for each column of the header"
		}
		return csvError(pe.Line, pe.Column, msg)
	}
	return fmt.Errorf("runimport: read csv: %w", err)
}
