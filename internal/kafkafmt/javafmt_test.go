package kafkafmt

import (
	"math"
	"strings"
	"testing"
	"time"
)

// The expected strings below were checked against String.format on
// Temurin 25 (and, except where noted, OpenJDK 17).
func TestJavaFixed(t *testing.T) {
	negZero := math.Copysign(0, -1)
	tests := []struct {
		v    float64
		prec int
		want string
	}{
		// Half-up on the shortest decimal, where Go's fmt would differ.
		{0.125, 2, "0.13"},
		{2.675, 2, "2.68"},
		{1.005, 2, "1.01"},
		{1.45, 1, "1.5"},
		{0.45, 1, "0.5"},
		{2.5, 0, "3"},
		{0.5, 0, "1"},
		{1.5, 0, "2"},
		{3.5, 0, "4"},
		{0.0625, 3, "0.063"},
		{-0.125, 2, "-0.13"},
		{-2.5, 0, "-3"},
		{-2.675, 2, "-2.68"},
		// Carries.
		{9.995, 2, "10.00"},
		{99.95, 1, "100.0"},
		{0.9999995, 6, "1.000000"},
		{0.05, 1, "0.1"},
		{0.04999, 1, "0.0"},
		{0.009, 1, "0.0"},
		// Tiny values.
		{1e-7, 6, "0.000000"},
		{1e-7, 7, "0.0000001"},
		{1e-7, 0, "0"},
		{5e-7, 6, "0.000001"},
		{4.9999e-7, 6, "0.000000"},
		{1e-5, 5, "0.00001"},
		// Zero and signs: Java keeps the minus sign of a negative value
		// rounded to zero and of -0.0.
		{0, 3, "0.000"},
		{0, 0, "0"},
		{negZero, 1, "-0.0"},
		{-0.0001, 2, "-0.00"},
		{-1e-7, 0, "-0"},
		// Large values: the digits past the shortest decimal are zeros.
		{123456789.987654321, 6, "123456789.987654"},
		{1e21, 2, "1000000000000000000000.00"},
		{1e23, 0, "100000000000000000000000"}, // JDK 17: 99999999999999990000000
		{12345678901234567890, 1, "12345678901234567000.0"},
		{math.MaxFloat64, 0, "17976931348623157" + strings.Repeat("0", 292)},
		{-9007199254740993, 0, "-9007199254740992"},
		// Double.MIN_VALUE is 4.9E-324 to Java (two digits), not 5e-324.
		{5e-324, 323, "0." + strings.Repeat("0", 323)},
		{5e-324, 324, "0." + strings.Repeat("0", 323) + "5"},
		{5e-324, 325, "0." + strings.Repeat("0", 323) + "49"},
		// Java's default precision.
		{0.125, -1, "0.125000"},
		{1.0 / 3, 6, "0.333333"},
		{2.0 / 3, 6, "0.666667"},
		// Non-finite values.
		{math.NaN(), 2, "NaN"},
		{math.Inf(1), 2, "Infinity"},
		{math.Inf(-1), 0, "-Infinity"},
	}
	for _, tt := range tests {
		if got := JavaFixed(tt.v, tt.prec); got != tt.want {
			t.Errorf("JavaFixed(%v, %d) = %q, want %q", tt.v, tt.prec, got, tt.want)
		}
	}
}

func TestJavaFloatString(t *testing.T) {
	tests := []struct {
		v    float32
		want string
	}{
		{0, "0.0"},
		{float32(math.Copysign(0, -1)), "-0.0"},
		{1, "1.0"},
		{-1.5, "-1.5"},
		{0.1, "0.1"},
		{100, "100.0"},
		{1234567, "1234567.0"},
		{1e7, "1.0E7"},
		{1.5e10, "1.5E10"},
		{0.001, "0.001"},
		{0.0001, "1.0E-4"},
		{1.25e-5, "1.25E-5"},
		{math.SmallestNonzeroFloat32, "1.4E-45"},
		{math.MaxFloat32, "3.4028235E38"},
		{float32(math.NaN()), "NaN"},
		{float32(math.Inf(-1)), "-Infinity"},
	}
	for _, tt := range tests {
		if got := javaFloatString(tt.v); got != tt.want {
			t.Errorf("javaFloatString(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestJavaTime(t *testing.T) {
	ist := time.FixedZone("IST", 5*3600+1800)
	tests := []struct {
		name string
		t    time.Time
		want string
	}{
		{"epoch", time.UnixMilli(0).UTC(), "1970-01-01 00:00:00:000"},
		{"millis", time.Date(2024, 3, 9, 7, 5, 3, 45_000_000, time.UTC), "2024-03-09 07:05:03:045"},
		{"truncates sub-millisecond", time.Date(2024, 12, 31, 23, 59, 59, 999_999_999, time.UTC), "2024-12-31 23:59:59:999"},
		{"own location", time.UnixMilli(1_700_000_000_123).In(ist), "2023-11-15 03:43:20:123"},
		{"before epoch", time.UnixMilli(-1).UTC(), "1969-12-31 23:59:59:999"},
		{"five-digit year", time.Date(12345, 1, 2, 3, 4, 5, 6_000_000, time.UTC), "12345-01-02 03:04:05:006"},
		{"first Gregorian day", time.Date(1582, 10, 15, 0, 0, 0, 0, time.UTC), "1582-10-15 00:00:00:000"},
		{"last Julian day", time.Date(1582, 10, 14, 23, 59, 59, 0, time.UTC), "1582-10-04 23:59:59:000"},
		{"year 1", time.Date(1, 1, 1, 12, 0, 0, 0, time.UTC), "0001-01-03 12:00:00:000"},
		{"1 BC", time.Date(0, 3, 1, 0, 0, 0, 0, time.UTC), "0001-03-03 00:00:00:000"},
	}
	for _, tt := range tests {
		if got := JavaTime(tt.t); got != tt.want {
			t.Errorf("%s: JavaTime(%v) = %q, want %q", tt.name, tt.t, got, tt.want)
		}
	}
}

func TestJavaTimeIn(t *testing.T) {
	ist := time.FixedZone("IST", 5*3600+1800)
	tm := time.UnixMilli(1_700_000_000_123).UTC()
	if got, want := JavaTimeIn(tm, ist), "2023-11-15 03:43:20:123"; got != want {
		t.Errorf("JavaTimeIn(ist) = %q, want %q", got, want)
	}
	if got, want := JavaTimeIn(tm, nil), "2023-11-14 22:13:20:123"; got != want {
		t.Errorf("JavaTimeIn(nil) = %q, want %q", got, want)
	}
	if got, want := JavaTimeMillis(1_700_000_000_123, time.UTC), "2023-11-14 22:13:20:123"; got != want {
		t.Errorf("JavaTimeMillis(UTC) = %q, want %q", got, want)
	}
}

func TestJavaCompareAndLen(t *testing.T) {
	// U+FF21 sorts after U+1F600 in Java (UTF-16 units 0xFF21 vs 0xD83D)
	// but before it in Go's byte order.
	tests := []struct {
		a, b string
		want int
	}{
		{"a", "b", -1},
		{"ab", "a", 1},
		{"same", "same", 0},
		{"\uFF21", "\U0001F600", 1},
		{"A:b", "A-b", 1},
	}
	for _, tt := range tests {
		if got := javaCompare(tt.a, tt.b); got != tt.want {
			t.Errorf("javaCompare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	if got, want := javaLen("a\U0001F600é"), 4; got != want {
		t.Errorf("javaLen = %d, want %d", got, want)
	}
}
