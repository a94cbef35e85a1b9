package numfmt

import (
	"math"
	"testing"
	"time"
)

func TestNumber(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0"},
		{math.Copysign(0, -1), "0"},
		{1234567.89, "1,234,568"},
		{1000, "1,000"},
		{999.96, "1,000"},
		{999.94, "999.9"},
		{123.45, "123.5"},
		{100, "100"},
		{99.999, "100.0"},
		{12.345, "12.35"},
		{1.5, "1.50"},
		{1, "1"},
		{0.9996, "1.00"},
		{0.5, "0.500"},
		{0.01234, "0.0123"},
		{0.000123456, "0.000123"},
		{1.5e-9, "1.5e-09"},
		{-1234.5, "-1,234"},
		{-0.25, "-0.250"},
		{-1e-9, "-1e-09"},
		{1e15, "1,000,000,000,000,000"},
		{1e21, "1,000,000,000,000,000,000,000"},
		// Exact halves round to even, as strconv does.
		{1000.5, "1,000"},
		{1001.5, "1,002"},
		{0.125, "0.125"},
		{2.125, "2.12"},
		{2.375, "2.38"},
		// Just below a power of ten, where a logarithm is off by one.
		{math.Nextafter(0.001, 0), "0.00100"},
		{math.Nextafter(0.1, 0), "0.100"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "∞"},
		{math.Inf(-1), "-∞"},
	} {
		if got := Number(c.in); got != c.want {
			t.Errorf("Number(%v) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := NumberSign(-2, Minus); got != "−2" {
		t.Errorf("NumberSign(-2, Minus) = %q, want −2", got)
	}
	if got := NumberSign(-0.0000001e-3, Minus); got != "−1e-10" {
		t.Errorf("NumberSign(-1e-10, Minus) = %q, want −1e-10", got)
	}
}

func TestDecimals(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want int
	}{
		{5000, 0}, {1000, 0}, {999.9, 1}, {100, 1}, {99.9, 2}, {1, 2},
		{0.999, 3}, {0.5, 3}, {0.1, 3}, {math.Nextafter(0.1, 0), 4}, {0.05, 4}, {0.001, 5},
		{math.Nextafter(0.001, 0), 6}, {1e-6, 8}, {1e-300, 302}, {5e-324, 326},
	} {
		if got := Decimals(c.in); got != c.want {
			t.Errorf("Decimals(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestGroup(t *testing.T) {
	for in, want := range map[string]string{
		"":              "",
		"0":             "0",
		"999":           "999",
		"1000":          "1,000",
		"-1234567.5":    "-1,234,567.5",
		"123456":        "123,456",
		"917431.1927":   "917,431.1927",
		"-100":          "-100",
		"NaN":           "NaN",
		"Infinity":      "Infinity",
		"-Infinity":     "-Infinity",
		"+Inf":          "+Inf",
		"12e5":          "12e5",
		"1000000000000": "1,000,000,000,000",
	} {
		if got := Group(in); got != want {
			t.Errorf("Group(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFixed(t *testing.T) {
	for _, c := range []struct {
		v    float64
		d    int
		want string
	}{
		{1234.5, 2, "1,234.50"},
		{-1234.5, 0, "−1,234"},
		{-0.001, 2, "0.00"},
		{-0.001, 3, "−0.001"},
		{math.Inf(-1), 2, "−∞"},
		{math.NaN(), 2, "NaN"},
	} {
		if got := Fixed(c.v, c.d, Minus); got != c.want {
			t.Errorf("Fixed(%v, %d) = %q, want %q", c.v, c.d, got, c.want)
		}
	}
}

func TestValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{72900.123, "records/s", "72,900 records/s"},
		{17.8, "MB/s", "17.80 MB/s"},
		{0.42, "ms", "0.420 ms"},
		{12, "", "12"},
		{57344, "bytes", "56.0 KiB"},
		{1 << 20, "bytes/s", "1.0 MiB/s"},
		{math.NaN(), "bytes", "NaN bytes"},
		{45.25, "%", "45.25 %"},
	} {
		if got := Value(c.v, c.unit); got != c.want {
			t.Errorf("Value(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

func TestBytes(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want string
	}{
		{0, "0 B"},
		{math.Copysign(0, -1), "0 B"},
		{1023, "1023 B"},
		{100.5, "100.5 B"},
		{1024, "1.0 KiB"},
		{1048575, "1.0 MiB"},
		{1<<30 + 1<<29, "1.5 GiB"},
		{-2048, "-2.0 KiB"},
		{1 << 60, "1,024.0 PiB"},
		{math.Inf(1), "∞"},
	} {
		if got := Bytes(c.in); got != c.want {
			t.Errorf("Bytes(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestProfileValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{1_480_000_000, "nanoseconds", "1.48 s"},
		{12_345_678, "nanoseconds", "12.35 ms"},
		{1500, "nanoseconds", "1.50 µs"},
		{12, "nanoseconds", "12 ns"},
		{-2_000_000, "nanoseconds", "-2 ms"},
		{3, "seconds", "3 s"},
		{3 << 20, "bytes", "3.0 MiB"},
		{1234567, "count", "1,234,567"},
		{42, "widgets", "42 widgets"},
		{math.NaN(), "nanoseconds", "NaN"},
	} {
		if got := ProfileValue(c.v, c.unit); got != c.want {
			t.Errorf("ProfileValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	if got := SignedProfileValue(1500, "ns"); got != "+1.50 µs" {
		t.Errorf("SignedProfileValue(1500, ns) = %q", got)
	}
}

func TestPercent(t *testing.T) {
	for _, c := range []struct {
		in         float64
		want, sign string
	}{
		{12.345, "12.3%", "+12.3%"},
		{0, "0%", "0%"},
		{0.04, "<0.1%", "+<0.1%"},
		{0.07, "0.1%", "+0.1%"},
		{-0.04, ">-0.1%", ">-0.1%"},
		{-250, "-250.0%", "-250.0%"},
		{123456, "123,456.0%", "+123,456.0%"},
		{math.NaN(), "—", "—"},
		{math.Inf(1), "—", "—"},
	} {
		if got := Percent(c.in); got != c.want {
			t.Errorf("Percent(%v) = %q, want %q", c.in, got, c.want)
		}
		if got := SignedPercent(c.in); got != c.sign {
			t.Errorf("SignedPercent(%v) = %q, want %q", c.in, got, c.sign)
		}
	}
}

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		in   time.Duration
		want string
	}{
		{0, "0 s"},
		{850 * time.Microsecond, "850 µs"},
		{850 * time.Millisecond, "850 ms"},
		{time.Second, "1.0 s"},
		{12345 * time.Millisecond, "12.3 s"},
		{1250 * time.Millisecond, "1.3 s"},
		{59960 * time.Millisecond, "1m 00s"},
		{65*time.Second + 500*time.Millisecond, "1m 06s"},
		{2*time.Hour + 3*time.Minute + 9*time.Second, "2h 03m 09s"},
		{-1500 * time.Millisecond, "-1.5 s"},
	} {
		if got := Duration(c.in); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}
