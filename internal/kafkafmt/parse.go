package kafkafmt

// Import of the text output of Kafka's own perf tools: the reverse of the
// renderers of this package. See [ParseOutput].

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits of [ParseOutput].
const (
	// MaxImportBytes is the largest input ParseOutput reads: 64 MiB.
	MaxImportBytes = 64 << 20
	// MaxImportLineBytes is the longest line ParseOutput accepts: 1 MiB.
	MaxImportLineBytes = 1 << 20
)

// ErrImportTooLarge is returned by [ParseOutput] for an input of more than
// [MaxImportBytes].
var ErrImportTooLarge = errors.New("kafka tool output larger than 64 MiB")

// Tool names of [Imported.Tool].
const (
	ToolProducer = "producer" // kafka-producer-perf-test (ProducerPerformance)
	ToolConsumer = "consumer" // kafka-consumer-perf-test (ConsumerPerformance)
	ToolE2E      = "e2e"      // kafka-e2e-latency (EndToEndLatency)
	// ToolShareConsumer is kafka-share-consumer-perf-test
	// (ShareConsumerPerformance): a consumer run, of a share group.
	ToolShareConsumer = "share-consumer"
)

// Imported is what [ParseOutput] reads from the output of one run of
// kafka-producer-perf-test, kafka-consumer-perf-test,
// kafka-share-consumer-perf-test or kafka-e2e-latency.
type Imported struct {
	// Tool is ToolProducer, ToolConsumer, ToolShareConsumer or ToolE2E;
	// [Workload] of it names the workload of kbench's that measures the
	// same (rundoc.Workload).
	Tool string `json:"tool"`
	// Metrics are the run's figures under kbench's metric names and units
	// (the ones runner gives its own runs), then the --print-metrics
	// values, if any, named "<group>:<name>" (see [ParseOutput]).
	Metrics []ImportedMetric `json:"metrics"`
	// Intervals are the periodic producer lines or the consumer's
	// --show-detailed-stats rows, in output order.
	Intervals []ImportedInterval `json:"intervals,omitempty"`
	// Notes say what a reader of the imported run should know: which
	// summary was measured, which figures are derived, which lines were
	// skipped, what the tool warned about.
	Notes []string `json:"notes,omitempty"`
	// Lines is the number of lines of the input, blank ones included.
	Lines int `json:"lines"`
}

// ImportedMetric is one figure of an imported run, shaped like
// runner.Metric.
type ImportedMetric struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	// Better is "higher", "lower", or empty when neither.
	Better string  `json:"better,omitempty"`
	Value  float64 `json:"value"`
}

// ImportedInterval is one reporting interval, shaped like
// runner.SeriesPoint.
type ImportedInterval struct {
	// T is the end of the interval in seconds since the start of the
	// first imported interval, as runner.SeriesPoint.T is for kbench's own
	// runs, so overlaid charts line up (the first one has T = its length).
	// Kafka's producer prints no times: T adds up each window's records ÷
	// records/sec. For the consumer it adds up rebalance.time.ms +
	// fetch.time.ms of the rows or, for old rows without those columns,
	// comes from the row times (the first row's length from its records
	// ÷ nMsg.sec).
	T       float64 `json:"t"`
	Records int64   `json:"records"`
	// RecordsPerSec and MBPerSec are the interval's rates as printed (for
	// the consumer nMsg.sec and MB.sec, over the whole interval, rebalance
	// time included).
	RecordsPerSec float64 `json:"records_per_sec"`
	MBPerSec      float64 `json:"mb_per_sec"`
	// Latency of the window's records (producer only, 0 for the consumer).
	LatencyAvgMs float64 `json:"latency_avg_ms,omitempty"`
	LatencyMaxMs float64 `json:"latency_max_ms,omitempty"`
}

// ParseError is a line [ParseOutput] cannot accept.
type ParseError struct {
	// Line is the 1-based line number, or 0 when the error is about the
	// input as a whole (nothing that looks like Kafka output in it).
	Line int
	// Text is the line, without surrounding white space, cut to 200 bytes.
	Text string
	// Msg says what was expected.
	Msg string
}

func (e *ParseError) Error() string {
	if e.Line <= 0 {
		return "kafka tool output: " + e.Msg
	}
	return fmt.Sprintf("line %d: %s: %q", e.Line, e.Msg, e.Text)
}

// parseErr builds a *ParseError for line n with text s.
func parseErr(n int, s, format string, args ...any) *ParseError {
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return &ParseError{Line: n, Text: strings.ToValidUTF8(s, "\uFFFD"), Msg: fmt.Sprintf(format, args...)}
}

// maxImportBytes is the limit ParseOutput applies, a variable so tests can
// lower it: reading 64 MiB twice took 20 s under the race detector.
var maxImportBytes = MaxImportBytes

// ParseOutput reads the text output of one run of Kafka's
// kafka-producer-perf-test (org.apache.kafka.tools.ProducerPerformance) or
// kafka-consumer-perf-test (ConsumerPerformance), as a user copies it from
// a terminal, and returns its figures under kbench's metric names. It is
// the reverse of this package's renderers and accepts what the Java tools
// print from Kafka 0.8 to 4.x:
//
// Producer: the final summary line ("N records sent, R records/sec (M
// MB/sec), A ms avg latency, X ms max latency, P ms 50th, … ms 99.9th.",
// records/sec printed with %f or, in some versions, %.1f), optionally
// after periodic lines ("N records sent, R records/sec (M MB/sec), A ms avg
// latency, X ms max latency." and the pre-2.x "… X max latency."), with
// the --warmup-records variant: the notice "Warmup first N records. …",
// "In steady state.", and a "N steady state records sent, …" summary after
// (Java) or instead of (kbench) the overall one. The steady-state summary
// is then the measured one, and periodic lines printed before "In steady
// state." (warm-up windows) are left out of the intervals. Lines of
// --payload-file ("Reading payloads from: …", "Number of messages read:
// N", records in Kafka 4.2) become notes, and so does Kafka 4.2's notice of
// a deprecated flag ("Option --producer-props has been deprecated … Use
// --command-property instead.").
//
// Consumer: the header and summary row (10 columns since Kafka 2.0; 6
// without the rebalance and fetch columns as printed by 0.9–1.x; 7 with
// 0.8's fetch.size) or, with --show-detailed-stats, the "time, threadId,
// …" header and one row per interval (the 0.9/0.10 header lacks threadId
// although the rows have it; old-consumer rows of several threads may be
// interleaved). --hide-header output is recognised from the rows alone.
// Java prints no summary with --show-detailed-stats, so the figures are
// then computed from the rows (said in Notes). Dates may use any
// --date-format without ", ". "WARNING: …" lines (the --timeout warning
// among them, "messages" before Kafka 4.2, "records" since) and 4.2's
// notices of deprecated flags ("Warning: --messages is deprecated. Use
// --num-records instead.", printed before the header) become notes.
//
// EndToEndLatency (kafka-e2e-latency.sh, and kafka.tools.EndToEndLatency
// of kafka-run-class.sh before 3.x): optional progress lines "i<TAB>ms"
// (every 1000th record's round trip, ms as Java's Double.toString prints
// it; spaces for the tab are accepted), then "Avg latency: A ms" (%.4f)
// and "Percentiles: 50th = P, 99th = Q, 99.9th = R" (whole ms); the
// topic creation line and Kafka 4.2's "WARNING: Positional argument
// usage is deprecated …" become notes. Its figures are those of kbench's
// e2e runs: e2e-latency-avg, -p50, -p99 and -p999 (ms, lower); the tool
// prints no count, maximum or times, so there are none of those.
//
// ShareConsumerPerformance (kafka-share-consumer-perf-test, Kafka 4.1 and
// later, KIP-932's share groups; [ToolShareConsumer], a consumer run):
// [ShareConsumerHeader] and the share group's row, which it always prints
// last ("%s, %s, %.4f, %.4f, %.4f, %d, %d": nMsg.sec before
// data.consumed.in.nMsg, and fetch.time.ms its whole run), after
// --show-consumer-stats rows ("Share consumer N having client id X
// consumption metrics- ROW", 4.1 without the client id; notes) and
// --show-detailed-stats rows ("ROW for share consumer N", the consumer's
// totals so far and the interval's rates and length; with several
// consumers' threads printing at once one line may hold several rows).
// The rows of one consumer make the intervals; several consumers report on
// timers of their own, so their rows make none.
//
// Both perf tools: an optional --print-metrics block (an empty line, the header
// "Metric Name" padded plus "   Value", and "group:name:{tags} : value"
// lines). The block may come alone, without the summary, as people paste
// it: the run is then the producer's or consumer's after its groups, with
// those values only. Each value becomes a metric named "<group>:<name>", followed by
// its tags in braces, "{node-id=node-1}" or "{topic=t, partition=0}",
// when it has tags other than client-id; client-id is left out unless two
// lines differ only by it. Well-known Kafka client metrics get their unit
// and direction from the catalog of the Java clients' metrics
// ([LookupJavaMetric]; e.g. "producer-metrics:record-send-rate" is
// records/s, higher is better); others have an empty unit and direction. Values
// printed %.3f or as integers are numbers, "NaN", "Infinity" and
// "-Infinity" are kept as NaN and ±Inf (the only non-finite values an
// Imported holds; encoding/json refuses them, so a store must map them),
// and text values (app-info:version, commit-id, null) go to Notes.
//
// Blank lines, CRLF line ends, surrounding spaces, a UTF-8 or UTF-16 byte
// order mark (PowerShell's redirection writes UTF-16), decimal commas of a
// non-English JVM locale, log4j/log4j2/SLF4J/JVM lines such as
// "[2025-01-01 12:00:00,123] WARN … (org.apache.kafka…)" or "SLF4J: …",
// and Java exception stack traces are tolerated; skipped lines are counted
// in Notes.
//
// Any other line is an error: a *ParseError naming the first bad line and
// what was expected there. So is output that mixes both tools, holds two
// runs, or ends before the summary. On error no Imported is returned.
// Inputs over [MaxImportBytes] give [ErrImportTooLarge] and lines over
// [MaxImportLineBytes] a *ParseError. Read errors of r are returned
// wrapped.
//
// Metric names and units are those of runner: producer records-sent
// (records), record-send-rate (records/s, higher), mb-per-sec (MB/s,
// higher), record-latency-avg, -p50, -p95, -p99, -p999 and -max (ms,
// lower; Kafka prints percentiles as whole ms, kept as printed); consumer
// records-consumed-total (records), records-consumed-rate (nMsg.sec,
// records/s, higher), bytes-consumed-total (bytes, derived from
// data.consumed.in.MB × 1048576), mb-per-sec (MB.sec), rebalance-time (ms,
// lower), fetch-time (ms), fetch-records-per-sec (records/s, higher) and
// fetch-mb-per-sec (MB/s, higher). A NaN or infinite figure in a summary
// (Java divides by a zero duration) is left out and noted.
func ParseOutput(r io.Reader) (*Imported, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(maxImportBytes)+1))
	if err != nil {
		return nil, fmt.Errorf("reading kafka tool output: %w", err)
	}
	if len(data) > maxImportBytes {
		return nil, ErrImportTooLarge
	}
	text := importText(data)
	p := &importParser{}
	n := 0
	for len(text) > 0 {
		var line string
		line, text, _ = strings.Cut(text, "\n")
		n++
		if len(line) > MaxImportLineBytes {
			return nil, parseErr(n, line, "line longer than 1 MiB")
		}
		if err := p.line(n, line); err != nil {
			return nil, err
		}
	}
	return p.finish(n)
}

// importText turns the input into a string, decoding UTF-16 when it starts
// with a UTF-16 byte order mark and dropping a UTF-8 one.
func importText(data []byte) string {
	switch {
	case len(data) >= 2 && data[0] == 0xFF && data[1] == 0xFE,
		len(data) >= 2 && data[0] == 0xFE && data[1] == 0xFF:
		le := data[0] == 0xFF
		units := make([]uint16, 0, len(data)/2-1)
		for i := 2; i+1 < len(data); i += 2 {
			if le {
				units = append(units, uint16(data[i])|uint16(data[i+1])<<8)
			} else {
				units = append(units, uint16(data[i])<<8|uint16(data[i+1]))
			}
		}
		return string(utf16.Decode(units))
	case len(data) >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF:
		return string(data[3:])
	}
	return string(data)
}

// Better directions, as runner.HigherIsBetter and runner.LowerIsBetter.
const (
	importHigher = "higher"
	importLower  = "lower"
)

// importSkip says which kind of skipped block a stack-trace line continues.
type importSkip int

const (
	importSkipNone importSkip = iota
	importSkipLog
	importSkipException
)

// importParser holds the state of one ParseOutput call.
type importParser struct {
	tool     string
	toolLine int // first line that identified the tool

	lastLine int    // last non-blank line
	lastText string // its text

	logLines       int
	exceptionLines int
	firstException int
	trace          importSkip // kind of the block a stack frame would continue

	warnings []string // notes from the tools' own lines, in order

	prod  importProducerState
	cons  importConsumerState
	e2e   importE2EState
	share importShareState
	mets  importMetricsState
}

// line handles line n of the input.
func (p *importParser) line(n int, raw string) error {
	s := strings.TrimSpace(raw)
	if s == "" {
		p.trace = importSkipNone
		return nil
	}
	p.lastLine, p.lastText = n, s
	if p.trace == importSkipLog && (raw[0] == '\t' || importLogTail.MatchString(s)) {
		// A multi-line log message, such as "INFO ProducerConfig values:"
		// with its tab-indented values and its " (logger.Class)" tail.
		p.logLines++
		return nil
	}

	switch {
	case importLogLine(s):
		p.logLines++
		p.trace = importSkipLog
		return nil
	case p.trace == importSkipLog && (importExceptionLine(s) || importStackLine(s)):
		// The stack trace of a logged exception.
		p.logLines++
		return nil
	case importExceptionLine(s):
		p.exceptionLines++
		if p.firstException == 0 {
			p.firstException = n
		}
		p.trace = importSkipException
		return nil
	case p.trace == importSkipException && importStackLine(s):
		p.exceptionLines++
		return nil
	}
	p.trace = importSkipNone

	if importMetricsHeader.MatchString(s) {
		return p.metricsHeader(n, s)
	}
	if ml, ok := importSplitMetric(s); ok {
		return p.metricLine(n, s, ml)
	}
	if p.mets.header != 0 {
		return parseErr(n, s, "output goes on after the --print-metrics block of line %d, which Kafka prints last (several runs in one file?)", p.mets.header)
	}

	switch {
	case strings.HasPrefix(s, "Warmup first "):
		m := importWarmupNotice.FindStringSubmatch(s)
		if m == nil {
			return parseErr(n, s, `expected "Warmup first N records. Steady state results will print after the complete test summary."`)
		}
		if err := p.setTool(n, s, ToolProducer); err != nil {
			return err
		}
		return p.warmupNotice(n, s, m[1])
	case s == "In steady state.":
		if err := p.setTool(n, s, ToolProducer); err != nil {
			return err
		}
		return p.steadyMarker(n, s)
	case strings.HasPrefix(s, "Reading payloads from: "):
		if err := p.setTool(n, s, ToolProducer); err != nil {
			return err
		}
		p.warnings = append(p.warnings, "payloads from a file: "+strings.ToValidUTF8(s, "\uFFFD"))
		return nil
	case strings.HasPrefix(s, "Number of messages read: "), strings.HasPrefix(s, "Number of records read: "):
		// Kafka 4.2 says records.
		_, count, _ := strings.Cut(s, " read: ")
		if _, ok := parseJavaInt(count); !ok {
			return parseErr(n, s, `expected "Number of records read: N" with an integer N`)
		}
		if err := p.setTool(n, s, ToolProducer); err != nil {
			return err
		}
		p.warnings = append(p.warnings, s)
		return nil
	case strings.HasPrefix(s, "WARNING: "):
		return p.warning(n, s)
	case importProducerDeprecation.MatchString(s):
		// Kafka 4.2's ProducerPerformance on a flag KIP-1147 renamed.
		if err := p.setTool(n, s, ToolProducer); err != nil {
			return err
		}
		p.warnings = append(p.warnings, s)
		return nil
	case importConsumerDeprecation.MatchString(s):
		// Kafka 4.2's consumer perf tools on a renamed flag: the same line
		// from both, so it names neither.
		p.warnings = append(p.warnings, s)
		return nil
	case isShareHeader(s):
		if err := p.setTool(n, s, ToolShareConsumer); err != nil {
			return err
		}
		return p.shareHeader(n, s)
	case strings.HasPrefix(s, "Share consumer "), strings.Contains(s, " for share consumer "):
		if err := p.setTool(n, s, ToolShareConsumer); err != nil {
			return err
		}
		return p.shareLine(n, s)
	case strings.HasPrefix(s, "start.time,"), strings.HasPrefix(s, "time,"):
		if err := p.setTool(n, s, ToolConsumer); err != nil {
			return err
		}
		return p.consumerHeader(n, s)
	case strings.Contains(s, "records sent"):
		if err := p.setTool(n, s, ToolProducer); err != nil {
			return err
		}
		return p.producerLine(n, s)
	}
	if ok, err := p.e2eLine(n, s); ok {
		return err
	}
	switch {
	case p.tool == ToolShareConsumer:
		return p.shareLine(n, s)
	case p.tool == ToolConsumer || (strings.Contains(s, ",") && s[0] >= '0' && s[0] <= '9'):
		if err := p.setTool(n, s, ToolConsumer); err != nil {
			return err
		}
		return p.consumerRow(n, s)
	}
	return parseErr(n, s, `unrecognized line: expected a kafka-producer-perf-test line ("N records sent, …"), `+
		`a kafka-consumer-perf-test header or row, a kafka-e2e-latency line ("i<TAB>ms", "Avg latency: … ms", "Percentiles: …"), `+
		`a --print-metrics line or a log line`)
}

// setTool records which tool printed the output, and refuses lines of the
// other one.
func (p *importParser) setTool(n int, s, tool string) error {
	if p.tool == "" {
		p.tool, p.toolLine = tool, n
		return nil
	}
	if p.tool != tool {
		return parseErr(n, s, "a %s line in %s output (recognised on line %d)", Command(tool), Command(p.tool), p.toolLine)
	}
	return nil
}

// warning handles a "WARNING: " line of the consumer tool.
func (p *importParser) warning(n int, s string) error {
	switch {
	case strings.HasPrefix(s, "WARNING: Exiting before consuming the expected number of messages"),
		strings.HasPrefix(s, "WARNING: Exiting before consuming the expected number of records"): // Kafka 4.2
		// Both consumer tools print it; in the share tool's output it
		// comes after the header.
		if p.tool != ToolShareConsumer {
			if err := p.setTool(n, s, ToolConsumer); err != nil {
				return err
			}
		}
		p.warnings = append(p.warnings, "the consumer stopped before reading --messages records, the figures cover what it read: "+
			strings.ToValidUTF8(s, "\uFFFD"))
	case strings.HasPrefix(s, "WARNING: Pausing all "):
		if err := p.setTool(n, s, ToolConsumer); err != nil {
			return err
		}
		p.cons.pausedAll++
	default:
		p.warnings = append(p.warnings, strings.ToValidUTF8(s, "\uFFFD"))
	}
	return nil
}

// finish checks the input had a complete run and builds the result.
func (p *importParser) finish(lines int) (*Imported, error) {
	out := &Imported{Tool: p.tool, Lines: lines}
	var err error
	switch p.tool {
	case ToolProducer:
		err = p.finishProducer(out)
	case ToolConsumer:
		err = p.finishConsumer(out)
	case ToolE2E:
		err = p.finishE2E(out)
	case ToolShareConsumer:
		err = p.finishShare(out)
	default:
		switch {
		case len(p.mets.lines) > 0:
			// A --print-metrics block alone, as people paste it: its
			// client's metrics are the run's figures.
			out.Tool, err = p.metricsTool()
			if err == nil {
				out.Notes = append(out.Notes, fmt.Sprintf("no %s summary line: only the --print-metrics values were imported", Command(out.Tool)))
			}
		case p.mets.header != 0:
			err = &ParseError{Msg: "only an empty --print-metrics block: no summary line and no metric"}
		default:
			err = &ParseError{Msg: "no kafka-producer-perf-test, kafka-consumer-perf-test, kafka-share-consumer-perf-test or kafka-e2e-latency output found"}
		}
	}
	if err != nil {
		return nil, err
	}
	out.Notes = append(out.Notes, p.warnings...)
	p.finishMetrics(out)
	if len(out.Metrics) == 0 {
		// A --print-metrics block alone whose values are all text.
		return nil, parseErr(p.lastLine, p.lastText, "no figure: the --print-metrics block holds text values only, and there is no summary line")
	}
	if p.cons.pausedAll > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("the consumer paused all its partitions for %d polls (--paused-partitions-percent)", p.cons.pausedAll))
	}
	if p.logLines > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("skipped %d log lines (log4j, SLF4J or JVM messages)", p.logLines))
	}
	if p.exceptionLines > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("skipped %d lines of Java exceptions from line %d: some records may have failed", p.exceptionLines, p.firstException))
	}
	return out, nil
}

// metricsTool is the tool whose --print-metrics block the input holds
// when it has no summary: the producer's for producer-* groups, the
// consumer's for consumer-* groups.
func (p *importParser) metricsTool() (string, error) {
	var tool string
	var line int
	for _, ml := range p.mets.lines {
		t := ""
		switch {
		case strings.HasPrefix(ml.group, "producer"):
			t = ToolProducer
		case strings.HasPrefix(ml.group, "consumer"):
			t = ToolConsumer
		default:
			continue
		}
		if tool != "" && t != tool {
			return "", parseErr(ml.line, ml.merged, "a %s metric in a block of %s metrics (line %d) and no summary line: import one client's block at a time",
				t, tool, line)
		}
		tool, line = t, ml.line
	}
	if tool == "" {
		return "", &ParseError{Msg: "a --print-metrics block of neither producer nor consumer metrics (no producer-* or consumer-* group), and no summary line"}
	}
	return tool, nil
}

// add appends a kbench metric, or notes that the output had no finite
// value for it.
func (p *importParser) add(out *Imported, name string, v float64, unit, better string) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		out.Notes = append(out.Notes, fmt.Sprintf("%s left out: it is %s, not a finite number (Java divides by a zero duration)", name, JavaFixed(v, 0)))
		return
	}
	out.Metrics = append(out.Metrics, ImportedMetric{Name: name, Unit: unit, Better: better, Value: v})
}

// Kafka 4.2's notices of the perf tools' flags KIP-1147 renamed, which
// the tools print on stdout before their output.
var (
	// ProducerPerformance: "Option --producer-props has been deprecated and
	// will be removed in a future version. Use --command-property
	// instead." (and --producer.config, --command-config).
	importProducerDeprecation = regexp.MustCompile(`^Option --[\w.-]+ has been deprecated and will be removed in a future version\. Use --[\w.-]+ instead\.$`)
	// ConsumerPerformance and ShareConsumerPerformance: "Warning:
	// --messages is deprecated. Use --num-records instead." (and
	// --consumer.config, --command-config).
	importConsumerDeprecation = regexp.MustCompile(`^Warning: --[\w.-]+ is deprecated\. Use --[\w.-]+ instead\.$`)
)

// Lines to skip.
var (
	// log4j's "[%d] %p %m (%c)%n" of Kafka's tools-log4j.properties (and
	// its log4j2 successor), with an optional zone.
	importLogBracket = regexp.MustCompile(`^\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?\] +(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL|SEVERE)\b`)
	// Other common layouts: "2025-01-01 12:00:00,123 WARN …", with an
	// optional "[thread]" before the level.
	importLogPlain = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})? +(?:\[[^\]]*\] +)?(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\b`)
	// "%p %m%n" and log4j2's StatusLogger ("ERROR StatusLogger …").
	importLogLevel = regexp.MustCompile(`^(?:TRACE|DEBUG|INFO|WARN|ERROR|FATAL)\s`)
	// SLF4J's own messages ("SLF4J: …", 2.x "SLF4J(W): …"), log4j 1's
	// ("log4j:WARN …"), the JVM's ("OpenJDK 64-Bit Server VM warning: …").
	importLogOther = regexp.MustCompile(`^(?:SLF4J(?:\([A-Z]\))?: |log4j2?:(?:WARN|ERROR|INFO|DEBUG)\b|(?:OpenJDK|Java HotSpot\(TM\)|Eclipse OpenJ9|IBM J9).*VM warning: |Picked up (?:JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS): )`)

	// The "(%c)" that ends a multi-line message of Kafka's log4j layout.
	importLogTail = regexp.MustCompile(`^\([\w$]+(?:\.[\w$]+)+\)$`)

	// A Java exception: "org.apache.kafka.common.errors.TimeoutException:
	// …", possibly after "Exception in thread "main" ".
	importException = regexp.MustCompile(`^(?:Exception in thread "[^"]*" )?[a-z][\w$]*(?:\.[\w$]+)*\.[A-Z][\w$]*(?:Exception|Error|Throwable)(?::.*)?$`)
	// The lines of a stack trace after the exception.
	importStack = regexp.MustCompile(`^(?:at [\w$.<>/@:-]+\(.*\)$|Caused by: |Suppressed: |\.\.\. \d+ (?:more|common frames omitted)$)`)
)

func importLogLine(s string) bool {
	if s[0] == '[' {
		return importLogBracket.MatchString(s)
	}
	return importLogPlain.MatchString(s) || importLogLevel.MatchString(s) || importLogOther.MatchString(s)
}

func importExceptionLine(s string) bool { return importException.MatchString(s) }

func importStackLine(s string) bool { return importStack.MatchString(s) }

// Numbers as Java's Formatter prints them.

// parseJavaInt parses a %d: an optional minus sign and digits.
func parseJavaInt(tok string) (int64, bool) {
	if !importDigits(strings.TrimPrefix(tok, "-")) {
		return 0, false
	}
	v, err := strconv.ParseInt(tok, 10, 64)
	return v, err == nil
}

// parseJavaFloat parses a %.Nf (or %f): digits with an optional fraction, its
// separator '.' or, from a JVM with a German or French locale, ',';
// "NaN", "Infinity" or "-Infinity".
func parseJavaFloat(tok string) (float64, bool) {
	switch tok {
	case "NaN":
		return math.NaN(), true
	case "Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	u := strings.TrimPrefix(tok, "-")
	intPart, frac, hasFrac := strings.Cut(u, ".")
	if !hasFrac {
		intPart, frac, hasFrac = strings.Cut(u, ",")
	}
	if !importDigits(intPart) || (hasFrac && !importDigits(frac)) {
		return 0, false
	}
	num := intPart
	if hasFrac {
		num += "." + frac
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, false
	}
	if strings.HasPrefix(tok, "-") {
		v = -v
	}
	return v, true
}

func importDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// importNumberHint explains a token that is not a number where one was expected.
func importNumberHint(tok string) string {
	if tok == "" {
		return "nothing"
	}
	return strconv.Quote(strings.ToValidUTF8(tok, "\uFFFD"))
}
