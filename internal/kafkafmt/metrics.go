package kafkafmt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Tag is one metric tag, a key=value pair of a Kafka MetricName.
type Tag struct {
	Key, Value string
}

// Metric is one client metric as Kafka's ToolsUtils.printMetrics sees it.
type Metric struct {
	Group, Name string
	// Tags are printed in the order given, as Java prints the tag map
	// (Kafka's clients mostly build it as a LinkedHashMap, so in
	// insertion order).
	Tags []Tag
	// Value is what Metric.metricValue() returns. A float64 (a Java
	// Double) is printed with %.3f; anything else as Java's %s would:
	// nil as "null", float32 like Float.toString, integers and strings
	// plainly, other values with fmt's %v.
	Value any
}

// MergedName is the key printMetrics sorts and prints:
// group + ":" + name + ":" + tags, the tags as Java's Map.toString
// renders them, e.g. "producer-metrics:record-send-rate:{client-id=perf}".
func (m Metric) MergedName() string {
	var b strings.Builder
	b.WriteString(m.Group)
	b.WriteByte(':')
	b.WriteString(m.Name)
	b.WriteString(":{")
	for i, t := range m.Tags {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Key)
		b.WriteByte('=')
		b.WriteString(t.Value)
	}
	b.WriteByte('}')
	return b.String()
}

// PrintMetrics renders metrics like ToolsUtils.printMetrics (used by both
// perf tools for --print-metrics): an empty line, a header made of
// "Metric Name" left-justified to the longest merged name, three spaces
// and "Value", then one "<merged name padded> : <value>" line per metric,
// sorted by merged name (Java's TreeMap, String.compareTo order). Every
// line ends in "\n". Metrics with the same merged name collapse into one
// line with the value of the last of them, as TreeMap.put keeps the last
// value. No metrics render as "", as Java prints nothing then.
func PrintMetrics(ms []Metric) string {
	if len(ms) == 0 {
		return ""
	}
	type entry struct {
		name  string
		value any
	}
	width := 0
	entries := make([]entry, 0, len(ms))
	index := make(map[string]int, len(ms))
	for _, m := range ms {
		name := m.MergedName()
		width = max(width, javaLen(name))
		if i, ok := index[name]; ok {
			entries[i].value = m.Value
			continue
		}
		index[name] = len(entries)
		entries = append(entries, entry{name, m.Value})
	}
	slices.SortFunc(entries, func(a, b entry) int { return javaCompare(a.name, b.name) })

	var b strings.Builder
	b.WriteString("\n")
	b.WriteString(padRight("Metric Name", width))
	b.WriteString("   Value\n")
	for _, e := range entries {
		b.WriteString(padRight(e.name, width))
		b.WriteString(" : ")
		if f, ok := e.value.(float64); ok {
			b.WriteString(JavaFixed(f, 3))
		} else {
			b.WriteString(javaValueString(e.value))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// javaValueString renders a non-double metric value the way Java's %s
// renders the corresponding boxed value.
func javaValueString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float32:
		return javaFloatString(x)
	case int:
		return strconv.FormatInt(int64(x), 10)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case uint:
		return strconv.FormatUint(uint64(x), 10)
	case uint8:
		return strconv.FormatUint(uint64(x), 10)
	case uint16:
		return strconv.FormatUint(uint64(x), 10)
	case uint32:
		return strconv.FormatUint(uint64(x), 10)
	case uint64:
		return strconv.FormatUint(x, 10)
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}
