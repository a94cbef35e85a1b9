package main

import (
	"math"
	"testing"
)

func TestToleranceJudge(t *testing.T) {
	tests := []struct {
		tol     tolerance
		k, i    float64
		verdict string
		diff    string
	}{
		{exact(), 100000, 100000, verdictOK, "+0"},
		{exact(), 129064, 100000, verdictDiffers, "+29064"},
		{exact(), 99999, 100000, verdictDiffers, "-1"},
		{relative(0.05), 104, 100, verdictOK, "+4.00% (ratio 1.0400)"},
		{relative(0.05), 105, 100, verdictOK, "+5.00% (ratio 1.0500)"},
		{relative(0.05), 106, 100, verdictDiffers, "+6.00% (ratio 1.0600)"},
		{relative(0.05), 94, 100, verdictDiffers, "-6.00% (ratio 0.9400)"},
		{relative(0.02), 0, 0, verdictOK, "+0"},
		{relative(0.02), 3, 0, verdictDiffers, "+3"},
		{absolute(5, "points"), 87.3, 83.0, verdictOK, "+4.30 points"},
		{absolute(5, "points"), 80, 86, verdictDiffers, "-6 points"},
		{absolute(5, "points"), math.NaN(), 1, verdictDiffers, "not a number"},
	}
	for _, tt := range tests {
		v, d := tt.tol.judge(tt.k, tt.i)
		if v != tt.verdict || d != tt.diff {
			t.Errorf("%v.judge(%v, %v) = %q, %q; want %q, %q", tt.tol, tt.k, tt.i, v, d, tt.verdict, tt.diff)
		}
	}
	for tol, want := range map[tolerance]string{exact(): "exact", relative(0.05): "±5%", relative(0.025): "±2.5%", absolute(10, "points"): "±10 points"} {
		if got := tol.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
}

func TestCheckLine(t *testing.T) {
	c := compareFigures(areaCounts, "producer-raw", "records-sent vs HWM", 10, "10 records", 10, "10 records", exact())
	want := "counts    producer-raw             records-sent vs HWM: kbench 10 records | independent 10 records | diff +0 | tolerance exact → ok"
	if got := c.line(); got != want {
		t.Errorf("line:\n got %q\nwant %q", got, want)
	}
	s := skipped(areaSyscalls, "strace", "strace counts", "not installed")
	if got := s.line(); got != "syscalls  strace                   strace counts: skipped: not installed" {
		t.Errorf("skipped line: %q", got)
	}
}

func TestBinomUpperTail(t *testing.T) {
	tests := []struct {
		n, k int
		p    float64
		want float64
	}{
		{10, 0, 0.05, 1},
		{10, 11, 0.05, 0},
		{1, 1, 0.05, 0.05},
		{2, 1, 0.5, 0.75},
		{31, 1, 0.05, 1 - math.Pow(0.95, 31)},
		{3, 3, 0.1, 0.001},
	}
	for _, tt := range tests {
		if got := binomUpperTail(tt.n, tt.k, tt.p); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("binomUpperTail(%d, %d, %v) = %v, want %v", tt.n, tt.k, tt.p, got, tt.want)
		}
	}
}

func TestNum(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -25600000: "-25,600,000"} {
		if got := num(v, 0); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
	if got := num(1234.5678, 2); got != "1,234.57" {
		t.Errorf("num(1234.5678, 2) = %q", got)
	}
}
