package ui

import (
	"math"
	"testing"
	"time"
)

func TestFormatNumber(t *testing.T) {
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
		{1e15, "1,000,000,000,000,000"},
		{math.NaN(), "NaN"},
		{math.Inf(1), "∞"},
		{math.Inf(-1), "-∞"},
	} {
		if got := FormatNumber(c.in); got != c.want {
			t.Errorf("FormatNumber(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFormatValue(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{72900.123, "records/s", "72,900 records/s"},
		{17.8, "MB/s", "17.80 MB/s"},
		{1440, "ms", "1,440 ms"},
		{0.42, "ms", "0.420 ms"},
		{12, "", "12"},
		{512, "bytes", "512 B"},
		{57344, "bytes", "56.0 KiB"},
		{1536.7, "bytes", "1.5 KiB"},
		{3 << 30, "bytes", "3.0 GiB"},
		{100.5, "bytes", "100.5 B"},
		{1 << 20, "bytes/s", "1.0 MiB/s"},
		{math.NaN(), "bytes", "NaN bytes"},
		{45.25, "%", "45.25 %"},
	} {
		if got := FormatValue(c.v, c.unit); got != c.want {
			t.Errorf("FormatValue(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for _, c := range []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{1, "1 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{1536, "1.5 KiB"},
		{1048575, "1.0 MiB"},
		{5 << 20, "5.0 MiB"},
		{1<<30 + 1<<29, "1.5 GiB"},
		{2 << 40, "2.0 TiB"},
		{-2048, "-2.0 KiB"},
	} {
		if got := FormatBytes(c.in); got != c.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for _, c := range []struct {
		in   time.Duration
		want string
	}{
		{0, "0 s"},
		{850 * time.Microsecond, "850 µs"},
		{850 * time.Millisecond, "850 ms"},
		{time.Second, "1.0 s"},
		{12345 * time.Millisecond, "12.3 s"},
		{59960 * time.Millisecond, "1m 00s"},
		{65 * time.Second, "1m 05s"},
		{65*time.Second + 400*time.Millisecond, "1m 05s"},
		{10*time.Minute + 59*time.Second + 700*time.Millisecond, "11m 00s"},
		{2*time.Hour + 3*time.Minute + 9*time.Second, "2h 03m 09s"},
		{-1500 * time.Millisecond, "-1.5 s"},
	} {
		if got := FormatDuration(c.in); got != c.want {
			t.Errorf("FormatDuration(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFormatTime(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	if got, want := FormatTime(time.Date(2025, 1, 2, 5, 4, 5, 0, loc)), "2025-01-02 03:04:05"; got != want {
		t.Errorf("FormatTime = %q, want %q (UTC)", got, want)
	}
	if got := FormatTime(time.Time{}); got != "—" {
		t.Errorf("FormatTime(zero) = %q, want —", got)
	}
}

func TestNiceAxis(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{5, 60, []string{"0", "20", "40", "60"}},
		{0, 1, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{63829, 80000, []string{"0", "20k", "40k", "60k", "80k"}},
		{0, 1_560_000, []string{"0", "0.5M", "1.0M", "1.5M", "2.0M"}},
		{-3, 7, []string{"-4", "-2", "0", "2", "4", "6", "8"}},
		{0, 0, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{1.2, 9.75, []string{"0", "2", "4", "6", "8", "10"}},
	} {
		a := niceAxis(c.lo, c.hi)
		if got := a.labels; !equalStrings(got, c.want) {
			t.Errorf("niceAxis(%v, %v) labels = %q, want %q", c.lo, c.hi, got, c.want)
		}
		if a.lo > math.Min(c.lo, 0) || a.hi < c.hi {
			t.Errorf("niceAxis(%v, %v) = [%v, %v], does not cover the data", c.lo, c.hi, a.lo, a.hi)
		}
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
