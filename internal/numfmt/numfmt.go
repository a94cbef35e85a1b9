// Package numfmt formats numbers, sizes, shares and durations for people.
// It is the one implementation in Go: compare's text exports, the pages
// (ui), the profile explanations (profiles) and the runner's notes all
// format through it, and static/format.js, which the pages' scripts use,
// follows the same rules. testdata/js_cases.json (written from this
// package by its tests) holds the two together: an end-to-end test runs
// every case through format.js in Chromium.
//
// It imports only the standard library, so any package may use it.
package numfmt

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// Negative signs. Text exports and tables use a real minus (U+2212);
// pages and values people copy into forms use the ASCII hyphen.
const (
	Minus  = "−"
	Hyphen = "-"
)

// dash stands for a share that cannot be computed.
const dash = "—"

// Number formats v for people with an ASCII minus: thousands separators
// and about three significant digits without hiding the integer part (see
// [NumberSign]).
//
//	1234567.89 → "1,234,568"   123.45 → "123.5"   1.5 → "1.50"   0.01234 → "0.0123"
func Number(v float64) string { return NumberSign(v, Hyphen) }

// NumberSign formats v with neg as the negative sign: thousands
// separators and about three significant digits without hiding the
// integer part. Whole numbers have no decimals; otherwise values of 1000
// and more have none, of 100 and more one, of 1 and more two, and smaller
// values three significant digits (below 1e-6, exponent notation). A
// value that rounds to zero has no sign.
//
//	NumberSign(-2, Minus) → "−2"   NumberSign(1.5e-9, Hyphen) → "1.5e-09"
func NumberSign(v float64, neg string) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return neg + "∞"
	case v == 0:
		return "0"
	case v < 0:
		s := NumberSign(-v, neg)
		if s == "0" {
			return s // rounds to zero: no sign
		}
		return neg + s
	case v == math.Trunc(v) && v < 1e15:
		// Counts (records, cycles, syscalls) are whole: no ".00".
		return Group(strconv.FormatFloat(v, 'f', 0, 64))
	case v < 1e-6:
		// Beyond what a page should show in fixed notation.
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	d := Decimals(v)
	s := strconv.FormatFloat(v, 'f', d, 64)
	// Rounding may carry into the next magnitude (999.96 → "1000.0",
	// 0.9996 → "1.000"): use that magnitude's decimals.
	if r, err := strconv.ParseFloat(s, 64); err == nil && r != 0 {
		if d2 := Decimals(r); d2 < d {
			s = strconv.FormatFloat(r, 'f', d2, 64)
		}
	}
	return Group(s)
}

// Decimals is the number of decimals [Number] shows for v > 0: 0 from
// 1000, 1 from 100, 2 from 1, and below 1 enough for three significant
// digits (0.5 → 3, 0.05 → 4, …).
func Decimals(v float64) int {
	switch {
	case v >= 1000:
		return 0
	case v >= 100:
		return 1
	case v >= 1:
		return 2
	}
	return 2 + leadingZeros(v)
}

// maxNegPow10 bounds leadingZeros: below 1e-323 there are no floats.
const maxNegPow10 = 330

// negPow10[k] is the float nearest 10^-k, as strconv (and JavaScript's
// Number) parse "1e-k": exact comparisons against these, unlike a
// logarithm, give the same answer in every language.
var negPow10 = func() (t [maxNegPow10 + 1]float64) {
	for k := range t {
		t[k], _ = strconv.ParseFloat("1e-"+strconv.Itoa(k), 64)
	}
	return t
}()

// leadingZeros is k with 10^-k ≤ v < 10^-(k-1) for 0 < v < 1: the
// position of v's first significant decimal.
func leadingZeros(v float64) int {
	// The logarithm is a guess, off by one just below powers of ten.
	k := int(-math.Floor(math.Log10(v)))
	k = min(max(k, 1), maxNegPow10)
	for k > 1 && v >= negPow10[k-1] {
		k--
	}
	for k < maxNegPow10 && v < negPow10[k] {
		k++
	}
	return k
}

// Group puts commas into the integer part of a decimal number as strconv
// formats it ("-1234567.5" → "-1,234,567.5"); anything else ("NaN",
// "+Inf", Java's "Infinity") comes back unchanged.
func Group(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, hasFrac := strings.Cut(s, ".")
	if intPart == "" || strings.Trim(intPart, "0123456789") != "" {
		return sign + s
	}
	var b strings.Builder
	b.Grow(len(sign) + len(s) + len(intPart)/3)
	b.WriteString(sign)
	for i := 0; i < len(intPart); i++ {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(intPart[i])
	}
	if hasFrac {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String()
}

// Fixed formats v with exactly d decimals, thousands separators and neg
// as the negative sign, which a value shown as zero ("0.00") does not
// get. Not-a-number and infinities read as in [NumberSign].
func Fixed(v float64, d int, neg string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return NumberSign(v, neg)
	}
	s := Group(strconv.FormatFloat(math.Abs(v), 'f', d, 64))
	if v < 0 && strings.Trim(s, "0.,") != "" {
		return neg + s
	}
	return s
}

// Int formats a count with thousands separators: 1234567 → "1,234,567".
func Int(n int64) string { return Group(strconv.FormatInt(n, 10)) }

// Value formats a metric value with its unit: [Number], a space and the
// unit; none gives the number alone. Byte units become binary sizes:
// "bytes" → "1.5 MiB", "bytes/s" → "1.5 MiB/s".
func Value(v float64, unit string) string {
	switch unit {
	case "":
		return Number(v)
	case "bytes", "B":
		if finite(v) {
			return Bytes(v)
		}
	case "bytes/s", "B/s":
		if finite(v) {
			return Bytes(v) + "/s"
		}
	}
	return Number(v) + " " + unit
}

// byteUnits are the binary units past bytes.
var byteUnits = []string{"KiB", "MiB", "GiB", "TiB", "PiB"}

// Bytes formats a size in binary units: "512 B", "100.5 B", "1.5 KiB",
// "3.0 MiB", "2.1 GiB". A size that would print as 1024.0 of a unit
// moves up a unit instead. Not-a-number and infinities read as in
// [Number].
func Bytes(v float64) string {
	if !finite(v) {
		return Number(v)
	}
	sign := ""
	if v < 0 {
		sign = Hyphen
	}
	v = math.Abs(v) // also -0, which would print as "-0 B"
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
	return sign + Group(strconv.FormatFloat(v, 'f', 1, 64)) + " " + unit
}

// timeUnits are the time units of profile values, in nanoseconds.
var timeUnits = map[string]float64{
	"nanoseconds": 1, "ns": 1,
	"microseconds": 1e3, "us": 1e3,
	"milliseconds": 1e6, "ms": 1e6,
	"seconds": 1e9, "s": 1e9,
}

// ProfileValue formats a profile's sample value in its pprof unit, as
// the flame graph's tooltips do: times as ns, µs, ms or s ("12.35 ms"),
// bytes as binary sizes ("1.5 MiB"), counts as numbers ("1,234"), other
// units after the number.
func ProfileValue(v float64, unit string) string {
	if !finite(v) {
		return Number(v)
	}
	if f, ok := timeUnits[unit]; ok {
		ns := v * f
		switch a := math.Abs(ns); {
		case a >= 1e9:
			return Number(ns/1e9) + " s"
		case a >= 1e6:
			return Number(ns/1e6) + " ms"
		case a >= 1e3:
			return Number(ns/1e3) + " µs"
		}
		return Number(ns) + " ns"
	}
	switch unit {
	case "bytes", "B":
		return Bytes(v)
	case "", "count":
		return Number(v)
	}
	return Number(v) + " " + unit
}

// SignedProfileValue is [ProfileValue] with a "+" on positive values, for
// changes.
func SignedProfileValue(v float64, unit string) string {
	if v > 0 {
		return "+" + ProfileValue(v, unit)
	}
	return ProfileValue(v, unit)
}

// Percent formats a share in percent with one decimal: 12.345 →
// "12.3%", 0 → "0%"; shares that would round to zero read "<0.1%"
// (">-0.1%" below zero), and ones that cannot be computed "—".
func Percent(p float64) string {
	switch {
	case !finite(p):
		return dash
	case p == 0:
		return "0%"
	case math.Abs(p) < 0.05:
		if p < 0 {
			return ">-0.1%"
		}
		return "<0.1%"
	}
	return Group(strconv.FormatFloat(p, 'f', 1, 64)) + "%"
}

// SignedPercent is [Percent] with a "+" on positive shares, for changes.
func SignedPercent(p float64) string {
	if p > 0 && !math.IsInf(p, 0) {
		return "+" + Percent(p)
	}
	return Percent(p)
}

// PValue formats a p-value: three decimals from 0.001 on ("0.042"),
// below that two significant digits in powers of ten ("1.2e-9"), which a
// change-point test gives and a bare "<0.001" would hide; "< 1e-300" below
// 1e-300, where doubles run out (a t-test of segments without variance
// gives 0, which is no probability anyone observed); "—" for what is not a
// probability.
func PValue(p float64) string {
	switch {
	case !(p >= 0 && p <= 1):
		return "—"
	case p < 1e-300:
		return "< 1e-300"
	case p >= 0.0005:
		return strconv.FormatFloat(p, 'f', 3, 64)
	}
	// Below 0.0005 the exponent is negative: "1.2e-09" → "1.2e-9".
	m, e, _ := strings.Cut(strconv.FormatFloat(p, 'e', 1, 64), "e")
	return m + "e-" + strings.TrimLeft(strings.TrimPrefix(e, "-"), "0")
}

// Duration formats a duration for people: "850 µs", "850 ms", "12.3 s",
// "1m 05s", "2h 03m 09s". Below a second it truncates to the unit shown;
// from a second on it rounds (halves up).
func Duration(d time.Duration) string {
	if d < 0 {
		return Hyphen + Duration(-d)
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

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Plural is one for a count of 1 and many otherwise: "1 run", "2 runs".
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
