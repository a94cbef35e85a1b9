package compare

import (
	"encoding/csv"
	"strings"

	"github.com/kbench/kbench/client/wire"
)

// unknownValue shows, in text exports, a setting no run of a column
// recorded.
const unknownValue = "unknown"

// markdownComparability writes the settings that differ between the
// columns and the runs' warnings, before the table: they say how far its
// figures may be read as comparable and trusted.
func markdownComparability(b *strings.Builder, t *Table) {
	if len(t.Comparability) > 0 {
		b.WriteString("**Not like for like:** these settings differ between the columns. Unless a setting is what the columns are meant to compare, a change in the figures may come from it.\n\n")
		b.WriteString("| Setting |")
		for _, c := range t.Columns {
			b.WriteString(" ")
			b.WriteString(escapeInline(c.Name))
			if c.Baseline {
				b.WriteString(" · baseline")
			}
			b.WriteString(" |")
		}
		b.WriteString("\n| :--- |")
		for range t.Columns {
			b.WriteString(" :--- |")
		}
		b.WriteString("\n")
		for _, d := range t.Comparability {
			b.WriteString("| ")
			b.WriteString(escapeInline(d.Setting))
			b.WriteString(" |")
			for _, v := range d.Values {
				if v == "" {
					v = unknownValue
				}
				b.WriteString(" ")
				b.WriteString(escapeInline(v))
				b.WriteString(" |")
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	if len(t.Warnings) > 0 {
		b.WriteString("**Warnings**\n\n")
		for _, w := range t.Warnings {
			b.WriteString("- ")
			b.WriteString(escapeInline(w.FullText()))
			b.WriteString(".\n")
		}
		b.WriteString("\n")
	}
}

// csvComparability appends the comparability and warning records after
// the metrics: section "comparability" (metric: the setting; one record
// per column, value: its value as text, empty when unknown) and section
// "warning" (metric: the warning's kind; column: the run's column; value:
// the warning's text, naming the run).
func csvComparability(w *csv.Writer, t *Table) {
	rec := make([]string, len(csvHeader))
	for _, d := range t.Comparability {
		for i, v := range d.Values {
			clear(rec)
			rec[0], rec[1], rec[4], rec[6] = "comparability", csvText(d.Setting), csvText(t.Columns[i].Name), csvText(v)
			_ = w.Write(rec)
		}
	}
	for _, x := range t.Warnings {
		clear(rec)
		rec[0], rec[1], rec[4], rec[6] = "warning", x.Kind, csvText(x.Column), csvText(x.FullText())
		_ = w.Write(rec)
	}
}

// The comparability parts of the JSON document of [JSON], as the API
// declares them (client).
type (
	jsonDifference = wire.Difference
	jsonWarning    = wire.Warning
)

func jsonComparability(t *Table) (diffs []jsonDifference, unknown []uint, warnings []jsonWarning) {
	diffs, unknown, warnings = []jsonDifference{}, []uint{}, []jsonWarning{}
	for _, d := range t.Comparability {
		jd := jsonDifference{Setting: d.Setting, Values: make([]*string, len(d.Values))}
		for i, v := range d.Values {
			if v != "" {
				jd.Values[i] = &v
			}
		}
		diffs = append(diffs, jd)
	}
	unknown = append(unknown, t.ComparabilityUnknown...)
	for _, w := range t.Warnings {
		warnings = append(warnings, jsonWarning{Run: w.Run, Column: w.Column, Kind: w.Kind, Metrics: w.Metrics, Samples: w.Samples,
			WindowSeconds: w.WindowSeconds, Text: w.FullText()})
	}
	return diffs, unknown, warnings
}
