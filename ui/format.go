package ui

import (
	"math"
	"strconv"
	"time"

	"github.com/kbench/kbench/compare"
)

// FormatNumber formats v for people: thousands separators and a number of
// decimals that keeps about three significant digits without hiding the
// integer part (compare.FormatNumber's rules), with an ASCII minus.
//
//	1234567.89 → "1,234,568"    123.45 → "123.5"    1.5 → "1.50"    0.01234 → "0.0123"
func FormatNumber(v float64) string { return compare.FormatNumberSign(v, "-") }

// FormatValue formats a metric value with its unit: FormatNumber, a space
// and the unit. Byte units become human sizes: "bytes" → "1.5 MiB",
// "bytes/s" → "1.5 MiB/s".
func FormatValue(v float64, unit string) string {
	switch unit {
	case "":
		return FormatNumber(v)
	case "bytes", "B":
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return formatBytesFloat(v)
		}
	case "bytes/s", "B/s":
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			return formatBytesFloat(v) + "/s"
		}
	}
	return FormatNumber(v) + " " + unit
}

// FormatBytes formats a size in binary units: "512 B", "1.5 KiB",
// "3.0 MiB", "2.1 GiB".
func FormatBytes(n int64) string {
	return formatBytesFloat(float64(n))
}

var byteUnits = []string{"KiB", "MiB", "GiB", "TiB", "PiB"}

func formatBytesFloat(v float64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	if v < 1024 {
		if v == math.Trunc(v) {
			return sign + strconv.FormatFloat(v, 'f', 0, 64) + " B"
		}
		return sign + strconv.FormatFloat(v, 'f', 1, 64) + " B"
	}
	unit := ""
	for _, u := range byteUnits {
		v /= 1024
		unit = u
		// 1023.96 KiB would print as "1024.0 KiB": move up a unit instead.
		if math.Round(v*10)/10 < 1024 {
			break
		}
	}
	return sign + compare.GroupThousands(strconv.FormatFloat(v, 'f', 1, 64)) + " " + unit
}

// FormatDuration formats a duration for people: "850 µs", "850 ms",
// "12.3 s", "1m 05s", "2h 03m 09s".
func FormatDuration(d time.Duration) string {
	if d < 0 {
		return "-" + FormatDuration(-d)
	}
	switch {
	case d == 0:
		return "0 s"
	case d < time.Millisecond:
		return strconv.FormatInt(int64(d/time.Microsecond), 10) + " µs"
	case d < time.Second:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + " ms"
	}
	if r := d.Round(100 * time.Millisecond); r < time.Minute {
		return strconv.FormatFloat(r.Seconds(), 'f', 1, 64) + " s"
	}
	d = d.Round(time.Second)
	h := int64(d / time.Hour)
	m := int64(d % time.Hour / time.Minute)
	s := int64(d % time.Minute / time.Second)
	if h > 0 {
		return strconv.FormatInt(h, 10) + "h " + pad2(m) + "m " + pad2(s) + "s"
	}
	return strconv.FormatInt(m, 10) + "m " + pad2(s) + "s"
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

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
func FormatInt(n int64) string {
	return compare.GroupThousands(strconv.FormatInt(n, 10))
}
