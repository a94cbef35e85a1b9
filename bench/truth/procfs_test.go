package main

import (
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	// Fields 14, 15 and 20 (utime, stime, num_threads) are 11, 7 and 9.
	tail := "S 1 2 3 0 -1 4194560 100 0 0 0 11 7 0 0 20 0 9 0 636257 3133440 388 18446744073709551615"
	tests := []struct {
		name string
		in   string
		want procStat
	}{
		{"plain", "4242 (kbench) " + tail, procStat{UtimeTicks: 11, StimeTicks: 7, Threads: 9}},
		{"name with spaces and parentheses", "4242 (a) (b c)) " + tail, procStat{UtimeTicks: 11, StimeTicks: 7, Threads: 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStat([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	for _, bad := range []string{"", "4242 kbench S 1", "4242 (kbench) S 1 2 3", "4242 (kbench) " + strings.Replace(tail, " 11 ", " x ", 1)} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q): no error", bad)
		}
	}
}

func TestParseSchedstat(t *testing.T) {
	got, err := parseSchedstat([]byte("6184767 49568006 6\n"))
	if err != nil || got != 6184767 {
		t.Errorf("got %d, %v; want 6184767", got, err)
	}
	for _, bad := range []string{"", "\n", "x 1 2"} {
		if _, err := parseSchedstat([]byte(bad)); err == nil {
			t.Errorf("parseSchedstat(%q): no error", bad)
		}
	}
}

func TestParseIO(t *testing.T) {
	in := "rchar: 6976\nwchar: 120\nsyscr: 10\nsyscw: 3\nread_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\nsome_future_field: 7\n"
	got, err := parseIO([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := procIO{Rchar: 6976, Wchar: 120, Syscr: 10, Syscw: 3, ReadBytes: 4096}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if d := (procIO{Syscw: 10, Wchar: 500}).sub(procIO{Syscw: 4, Wchar: 100}); d.Syscw != 6 || d.Wchar != 400 {
		t.Errorf("sub: got %+v", d)
	}
	for _, bad := range []string{"", "rchar: 1\nwchar: 2\nsyscr: 3\n", "rchar: x\nwchar: 2\nsyscr: 3\nsyscw: 4\n"} {
		if _, err := parseIO([]byte(bad)); err == nil {
			t.Errorf("parseIO(%q): no error", bad)
		}
	}
}
