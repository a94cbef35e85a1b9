package ui

import (
	"time"

	"github.com/kbench/kbench/internal/numfmt"
)

// The pages format numbers through internal/numfmt, the one formatter
// (static/format.js follows it for the scripts); these names are the
// view layer's.

// FormatNumber formats v for people with an ASCII minus: thousands
// separators and about three significant digits without hiding the
// integer part ([numfmt.Number]).
//
//	1234567.89 → "1,234,568"    123.45 → "123.5"    1.5 → "1.50"    0.01234 → "0.0123"
func FormatNumber(v float64) string { return numfmt.Number(v) }

// FormatValue formats a metric value with its unit: FormatNumber, a space
// and the unit. Byte units become human sizes: "bytes" → "1.5 MiB",
// "bytes/s" → "1.5 MiB/s" ([numfmt.Value]).
func FormatValue(v float64, unit string) string { return numfmt.Value(v, unit) }

// FormatBytes formats a size in binary units: "512 B", "1.5 KiB",
// "3.0 MiB", "2.1 GiB" ([numfmt.Bytes]).
func FormatBytes(n int64) string { return numfmt.Bytes(float64(n)) }

// FormatDuration formats a duration for people: "850 µs", "850 ms",
// "12.3 s", "1m 05s", "2h 03m 09s" ([numfmt.Duration]).
func FormatDuration(d time.Duration) string { return numfmt.Duration(d) }

// timeLayout is how every page shows a point in time, always in UTC.
const timeLayout = "2006-01-02 15:04:05"

// FormatTime formats t in UTC as "2006-01-02 15:04:05"; the zero time is "—".
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return dash
	}
	return t.UTC().Format(timeLayout)
}

// dash stands for a missing value.
const dash = "—"

// formatOptional formats a figure that may be missing.
func formatOptional(v *float64, unit string) string {
	if v == nil {
		return dash
	}
	return FormatValue(*v, unit)
}

// FormatInt formats a count with thousands separators: 1234567 → "1,234,567".
func FormatInt(n int64) string { return numfmt.Int(n) }
