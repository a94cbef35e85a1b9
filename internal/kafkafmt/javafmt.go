// Package kafkafmt renders benchmark results byte-for-byte like Apache
// Kafka's Java perf tools (kafka-producer-perf-test, i.e.
// org.apache.kafka.tools.ProducerPerformance, and kafka-consumer-perf-test,
// i.e. org.apache.kafka.tools.ConsumerPerformance) and like the metrics
// dump of ToolsUtils.printMetrics, so that kbench lines can be pasted next
// to Java results.
//
// Go's fmt cannot be used for the numbers: java.util.Formatter rounds %.Nf
// half-up on the decimal that Double.toString picks for a double, whereas
// Go rounds the exact binary value half-to-even (0.125 is "0.13" in Java and
// "0.12" in Go). Every float in this package therefore goes through
// [JavaFixed]. Lines end in "\n", which is what Java's %n and println print
// on Linux and macOS.
//
// The output assumes the JVM's default locale formats numbers the
// English way ('.' as decimal separator, ASCII digits), as Kafka's tools use
// the default locale.
package kafkafmt

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// JavaFixed formats v like Java's String.format("%.<prec>f", v) on a
// double (JDK 19 and later; see below).
//
// Java takes the decimal that Double.toString selects for v (the shortest
// one that reads back as v, with at least two significant digits when the
// shortest has one), then rounds it half-up to prec fractional digits. The
// sign is kept even when the result is zero ("-0.00" for -0.001 or -0.0).
// NaN and infinities come out as "NaN", "Infinity" and "-Infinity". A
// negative prec means Java's default precision of 6 (as for a plain %f).
//
// JDK 17 and older picked the digits with an older algorithm that, for a
// few doubles, yields a longer-than-shortest decimal; output can then differ
// in the last digit, and only when prec reaches about the 17th significant
// digit of v.
func JavaFixed(v float64, prec int) string {
	if prec < 0 {
		prec = 6
	}
	if math.IsNaN(v) {
		return "NaN"
	}
	neg := math.Signbit(v)
	if math.IsInf(v, 0) {
		if neg {
			return "-Infinity"
		}
		return "Infinity"
	}
	digits, point := javaDecimal(math.Abs(v), 64)
	digits, point = roundHalfUp(digits, point, point+prec)

	var b strings.Builder
	b.Grow(max(point, 1) + prec + 2)
	if neg {
		b.WriteByte('-')
	}
	if point <= 0 {
		b.WriteByte('0')
	} else {
		for i := 0; i < point; i++ {
			b.WriteByte(digitAt(digits, i))
		}
	}
	if prec > 0 {
		b.WriteByte('.')
		for i := 0; i < prec; i++ {
			b.WriteByte(digitAt(digits, point+i))
		}
	}
	return b.String()
}

// digitAt returns digit i of a digit string, '0' outside of it.
func digitAt(digits []byte, i int) byte {
	if i < 0 || i >= len(digits) {
		return '0'
	}
	return digits[i]
}

// javaDecimal returns the decimal Java's Double.toString (bitSize 64) or
// Float.toString (bitSize 32) selects for the finite, non-negative a, as
// significant digits without trailing zeros and the position of the decimal
// point: a = 0.<digits> × 10^point. Zero has no digits.
//
// Since JDK 19 Java picks the shortest decimal that rounds to a, except
// that when the shortest has a single digit it picks the decimal of one or
// two digits closest to a. strconv gives the shortest one and, with a
// precision of 1 in 'e' format, the correctly rounded two-digit one, which
// is at least as close as the one-digit one.
func javaDecimal(a float64, bitSize int) (digits []byte, point int) {
	if a == 0 {
		return nil, 0
	}
	s := strconv.FormatFloat(a, 'e', -1, bitSize)
	mant, exp, _ := strings.Cut(s, "e")
	if len(mant) == 1 {
		s = strconv.FormatFloat(a, 'e', 1, bitSize)
		mant, exp, _ = strings.Cut(s, "e")
	}
	e, _ := strconv.Atoi(exp)
	digits = []byte(strings.Replace(mant, ".", "", 1))
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	return digits, e + 1
}

// roundHalfUp rounds 0.<digits> × 10^point to keep significant digits,
// rounding half-up on the decimal digits. The result has no trailing
// zeros; zero is returned as no digits.
func roundHalfUp(digits []byte, point, keep int) ([]byte, int) {
	if keep >= len(digits) {
		return digits, point
	}
	if keep < 0 {
		return nil, 0
	}
	up := digits[keep] >= '5'
	out := append([]byte(nil), digits[:keep]...)
	if up {
		i := len(out) - 1
		for i >= 0 && out[i] == '9' {
			i--
		}
		if i < 0 {
			// All nines (or nothing kept): the carry makes a new leading 1.
			return []byte{'1'}, point + 1
		}
		out[i]++
		out = out[:i+1]
	}
	for len(out) > 0 && out[len(out)-1] == '0' {
		out = out[:len(out)-1]
	}
	if len(out) == 0 {
		return nil, 0
	}
	return out, point
}

// javaFloatString formats f like Java's Float.toString (JDK 19 and later):
// plain notation with at least one fractional digit for magnitudes in
// [1e-3, 1e7), otherwise "computerized scientific" notation such as
// "1.0E10" or "1.5E-5".
func javaFloatString(f float32) string { return javaToString(float64(f), 32) }

// JavaDouble formats v like Java's Double.toString (JDK 19 and later),
// which string concatenation uses: plain notation with at least one
// fractional digit for magnitudes in [1e-3, 1e7) ("1.0", "0.0125",
// "12.345678"), otherwise computerized scientific notation ("1.0E7",
// "9.99E-4"), with the shortest digits that read back as v.
func JavaDouble(v float64) string { return javaToString(v, 64) }

// javaToString is Double.toString (bitSize 64) or Float.toString (32) of
// v, which holds a value of that size.
func javaToString(v float64, bitSize int) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	if math.IsInf(v, 0) {
		if v < 0 {
			return "-Infinity"
		}
		return "Infinity"
	}
	var b strings.Builder
	if math.Signbit(v) {
		b.WriteByte('-')
	}
	a := math.Abs(v)
	if a == 0 {
		b.WriteString("0.0")
		return b.String()
	}
	digits, point := javaDecimal(a, bitSize)
	if a >= 1e-3 && a < 1e7 {
		if point <= 0 {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -point))
			b.Write(digits)
			return b.String()
		}
		for i := 0; i < point; i++ {
			b.WriteByte(digitAt(digits, i))
		}
		b.WriteByte('.')
		if point >= len(digits) {
			b.WriteByte('0')
		} else {
			b.Write(digits[point:])
		}
		return b.String()
	}
	b.WriteByte(digits[0])
	b.WriteByte('.')
	if len(digits) == 1 {
		b.WriteByte('0')
	} else {
		b.Write(digits[1:])
	}
	b.WriteByte('E')
	b.WriteString(strconv.Itoa(point - 1))
	return b.String()
}

// julianCutoverUnixDay is 1582-10-15 (Gregorian), the first day
// java.util.GregorianCalendar counts in the Gregorian calendar, in days
// since 1970-01-01.
const julianCutoverUnixDay = -141427

// JavaTime formats t like Kafka's default consumer-perf-test date format,
// new SimpleDateFormat("yyyy-MM-dd HH:mm:ss:SSS"), in t's own location (use
// t.Local() for the JVM's default time zone, or [JavaTimeIn]).
// Sub-millisecond digits are dropped, as Java only has milliseconds.
//
// Like SimpleDateFormat's GregorianCalendar, dates before 1582-10-15 are
// shown in the Julian calendar, and years before 1 AD as era years (1 BC
// is "0001"), the era itself not being part of the pattern.
func JavaTime(t time.Time) string {
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)

	unixDay := floorDiv(time.Date(year, month, day, 0, 0, 0, 0, time.UTC).Unix(), 86400)
	m := int(month)
	if unixDay < julianCutoverUnixDay {
		year, m, day = julianDate(unixDay + 2440588)
	}
	if year <= 0 {
		year = 1 - year
	}

	b := make([]byte, 0, 23)
	b = appendPadded(b, int64(year), 4)
	b = append(b, '-')
	b = appendPadded(b, int64(m), 2)
	b = append(b, '-')
	b = appendPadded(b, int64(day), 2)
	b = append(b, ' ')
	b = appendPadded(b, int64(hour), 2)
	b = append(b, ':')
	b = appendPadded(b, int64(minute), 2)
	b = append(b, ':')
	b = appendPadded(b, int64(sec), 2)
	b = append(b, ':')
	b = appendPadded(b, int64(ms), 3)
	return string(b)
}

// JavaTimeIn is [JavaTime] of t in loc; a nil loc keeps t's own location.
func JavaTimeIn(t time.Time, loc *time.Location) string {
	if loc != nil {
		t = t.In(loc)
	}
	return JavaTime(t)
}

// JavaTimeMillis formats epoch milliseconds, as Java's
// SimpleDateFormat.format(long) does, in loc (nil: time.Local, the
// counterpart of the JVM's default time zone).
func JavaTimeMillis(ms int64, loc *time.Location) string {
	if loc == nil {
		loc = time.Local
	}
	return JavaTime(time.UnixMilli(ms).In(loc))
}

// julianDate converts a Julian Day Number to a proleptic Julian calendar
// date (astronomical year numbering: 0 is 1 BC).
func julianDate(jdn int64) (year, month, day int) {
	c := jdn + 32082
	d := floorDiv(4*c+3, 1461)
	e := c - floorDiv(1461*d, 4)
	m := floorDiv(5*e+2, 153)
	day = int(e - floorDiv(153*m+2, 5) + 1)
	month = int(m + 3 - 12*floorDiv(m, 10))
	year = int(d - 4800 + floorDiv(m, 10))
	return year, month, day
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// appendPadded appends n in decimal, zero-padded to at least width digits.
func appendPadded(b []byte, n int64, width int) []byte {
	if n < 0 {
		b = append(b, '-')
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// javaLen is Java's String.length() of s: its length in UTF-16 code units.
func javaLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// javaCompare orders strings like Java's String.compareTo: by UTF-16 code
// units. It differs from Go's byte order only between characters from
// U+E000 to U+FFFF and those above U+FFFF.
func javaCompare(a, b string) int {
	ua := utf16.Encode([]rune(a))
	ub := utf16.Encode([]rune(b))
	for i := 0; i < len(ua) && i < len(ub); i++ {
		if ua[i] != ub[i] {
			if ua[i] < ub[i] {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(ua) < len(ub):
		return -1
	case len(ua) > len(ub):
		return 1
	}
	return 0
}

// padRight is Java's %-<width>s: s followed by spaces up to width UTF-16
// code units.
func padRight(s string, width int) string {
	n := javaLen(s)
	if n >= width {
		return s
	}
	return s + strings.Repeat(" ", width-n)
}
