package kafkafmt

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// importMetricsState is what ParseOutput collected of a --print-metrics block.
type importMetricsState struct {
	header int // line of "Metric Name   Value"
	lines  []importMetricLine
	seen   map[string]int // merged name → line
}

// importMetricLine is one "group:name:{tags} : value" line.
type importMetricLine struct {
	line        int
	merged      string // group:name:{tags} as printed
	group, name string
	tags        []Tag
	value       string
}

// importMetricsHeader is ToolsUtils.printMetrics's header: "Metric Name"
// padded to the longest metric name, three spaces and "Value".
var importMetricsHeader = regexp.MustCompile(`^Metric Name {3,}Value$`)

func (p *importParser) metricsHeader(n int, s string) error {
	if p.mets.header != 0 {
		return parseErr(n, s, "second --print-metrics block (first on line %d): several runs in one file?", p.mets.header)
	}
	if len(p.mets.lines) > 0 {
		return parseErr(n, s, "--print-metrics header after metric lines (line %d)", p.mets.lines[0].line)
	}
	p.mets.header = n
	return nil
}

func (p *importParser) metricLine(n int, s string, ml importMetricLine) error {
	if first, dup := p.mets.seen[ml.merged]; dup {
		return parseErr(n, s, "metric printed twice (first on line %d): several runs in one file?", first)
	}
	if p.mets.seen == nil {
		p.mets.seen = map[string]int{}
	}
	p.mets.seen[ml.merged] = n
	ml.line = n
	p.mets.lines = append(p.mets.lines, ml)
	return nil
}

// importSplitMetric recognises "group:name:{k=v, …}<padding> : value": the
// first '}' followed by spaces and ": " (or a ':' ending the line, for an
// empty text value) where the text before is such a merged name. It scans
// the line once, keeping track of whether the tags so far are well formed,
// so that a long line full of '}' and ':' costs linear time.
func importSplitMetric(s string) (importMetricLine, bool) {
	k := strings.Index(s, ":{")
	if k <= 0 {
		return importMetricLine{}, false
	}
	if g, nm, found := strings.Cut(s[:k], ":"); !found || g == "" || nm == "" || strings.ContainsAny(s[:k], " \t{}") {
		return importMetricLine{}, false
	}
	segStart := k + 2 // start of the current key=value
	seenEq, keyOK := false, false
	for i := k + 2; i < len(s); i++ {
		switch c := s[i]; {
		case c == '}':
			if i == k+2 || (seenEq && keyOK) {
				m := i + 1
				for m < len(s) && s[m] == ' ' {
					m++
				}
				if m > i+1 && m < len(s) && s[m] == ':' && (m+1 == len(s) || s[m+1] == ' ') {
					merged := s[:i+1]
					g, nm, tags, ok := importMergedName(merged)
					if !ok {
						return importMetricLine{}, false
					}
					return importMetricLine{merged: merged, group: g, name: nm, tags: tags, value: strings.TrimSpace(s[m+1:])}, true
				}
			}
			if !seenEq {
				keyOK = false // a '}' in a key: this tag, and so every longer name, is malformed
				seenEq = true
			}
		case c == ',' && i+1 < len(s) && s[i+1] == ' ':
			if !seenEq || !keyOK {
				return importMetricLine{}, false
			}
			i++
			segStart, seenEq, keyOK = i+1, false, false
		case !seenEq && c == '=':
			seenEq, keyOK = true, i > segStart
		case !seenEq && (c == ' ' || c == '{'):
			seenEq, keyOK = true, false
		}
	}
	return importMetricLine{}, false
}

// importMergedName splits what [Metric.MergedName] builds.
func importMergedName(m string) (group, name string, tags []Tag, ok bool) {
	if !strings.HasSuffix(m, "}") {
		return "", "", nil, false
	}
	k := strings.Index(m, ":{")
	if k <= 0 {
		return "", "", nil, false
	}
	group, name, found := strings.Cut(m[:k], ":")
	if !found || group == "" || name == "" || strings.ContainsAny(m[:k], " \t{}") {
		return "", "", nil, false
	}
	inner := m[k+2 : len(m)-1]
	if inner == "" {
		return group, name, nil, true
	}
	for _, kv := range strings.Split(inner, ", ") {
		key, val, found := strings.Cut(kv, "=")
		if !found || key == "" || strings.ContainsAny(key, " {}") {
			return "", "", nil, false
		}
		tags = append(tags, Tag{Key: key, Value: val})
	}
	return group, name, tags, true
}

// foldedName is "<group>:<name>" followed, when there are tags left after
// dropping client-id (unless keepClient), by "{k=v, …}" in printed order.
func (ml importMetricLine) foldedName(keepClient bool) string {
	var b strings.Builder
	b.WriteString(ml.group)
	b.WriteByte(':')
	b.WriteString(ml.name)
	n := 0
	for _, t := range ml.tags {
		if t.Key == "client-id" && !keepClient {
			continue
		}
		if n == 0 {
			b.WriteByte('{')
		} else {
			b.WriteString(", ")
		}
		b.WriteString(t.Key)
		b.WriteByte('=')
		b.WriteString(t.Value)
		n++
	}
	if n > 0 {
		b.WriteByte('}')
	}
	return b.String()
}

// finishMetrics adds the --print-metrics values to out.
func (p *importParser) finishMetrics(out *Imported) {
	lines := p.mets.lines
	if len(lines) == 0 {
		if p.mets.header != 0 {
			out.Notes = append(out.Notes, "the --print-metrics block is empty")
		}
		return
	}
	// Names: client-id dropped unless that makes two the same, then the
	// full merged name as printed.
	names := make([]string, len(lines))
	count := map[string]int{}
	for i, ml := range lines {
		names[i] = ml.foldedName(false)
		count[names[i]]++
	}
	for pass := 0; pass < 2; pass++ {
		again := map[string]int{}
		for i, ml := range lines {
			if count[names[i]] > 1 {
				if pass == 0 {
					names[i] = ml.foldedName(true)
				} else {
					names[i] = ml.merged
				}
			}
			again[names[i]]++
		}
		count = again
	}

	var text, nonFinite []string
	for i, ml := range lines {
		name := strings.ToValidUTF8(names[i], "\uFFFD")
		v, ok := importMetricNumber(ml.value)
		if !ok {
			if len(text) < 20 {
				text = append(text, name+" = "+strings.ToValidUTF8(importHead(ml.value, 100), "\uFFFD"))
			}
			continue
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			nonFinite = append(nonFinite, name)
		}
		unit, better := importMetricUnit(ml.group, ml.name)
		out.Metrics = append(out.Metrics, ImportedMetric{Name: name, Unit: unit, Better: better, Value: v})
	}
	out.Notes = append(out.Notes, fmt.Sprintf("%d --print-metrics values imported as <group>:<name>{tags}, client-id left out",
		len(lines)-len(text)))
	if len(nonFinite) > 0 {
		out.Notes = append(out.Notes, fmt.Sprintf("--print-metrics values kept as NaN or ±Infinity: %s", importListNames(nonFinite)))
	}
	if len(text) > 0 {
		out.Notes = append(out.Notes, "--print-metrics text values: "+strings.Join(text, "; "))
	}
}

func importListNames(v []string) string {
	if len(v) > 10 {
		return strings.Join(v[:10], ", ") + fmt.Sprintf(" and %d more", len(v)-10)
	}
	return strings.Join(v, ", ")
}

// importFloatString is Java's Float.toString and Double.toString in
// "computerized scientific notation", e.g. "1.0E10".
var importFloatString = regexp.MustCompile(`^-?\d+\.\d+E-?\d+$`)

// importMetricNumber parses a --print-metrics value: %.3f of a Double (NaN and
// ±Infinity included), a Long or Integer, or Float.toString.
func importMetricNumber(v string) (float64, bool) {
	if f, ok := parseJavaFloat(v); ok {
		return f, true
	}
	if importFloatString.MatchString(v) {
		f, err := strconv.ParseFloat(v, 64)
		if err == nil && !math.IsInf(f, 0) {
			return f, true
		}
	}
	return 0, false
}

// importMetricUnit gives the unit and direction of a Kafka client
// metric from the catalog of the Java clients' metrics (javametrics.go);
// others, and metrics of groups other than the producer's and
// consumer's, get "".
func importMetricUnit(group, name string) (unit, better string) {
	if !strings.HasPrefix(group, "producer") && !strings.HasPrefix(group, "consumer") {
		return "", ""
	}
	if m, ok := LookupJavaMetric(name); ok {
		return m.Unit, string(m.Better)
	}
	return "", ""
}
