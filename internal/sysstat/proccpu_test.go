package sysstat

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestParseProcStatCPU(t *testing.T) {
	for _, tc := range []struct {
		line string
		want time.Duration
		bad  bool
	}{
		{"4242 (java) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 37 0 0 20 0 23 0 100 0 0\n", 2870 * time.Millisecond, false},
		{"7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 5 5 0 0 20 0 1 0 1 0 0", 100 * time.Millisecond, false},
		{"7 no name R 1", 0, true},
		{"7 (x) R 1 2", 0, true},
		{"7 (x) R 1 7 7 0 -1 0 0 0 0 0 -5 5 0", 0, true},
	} {
		got, err := ParseProcStatCPU([]byte(tc.line))
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseProcStatCPU(%q) = %v, %v; want %v, error %v", tc.line, got, err, tc.want, tc.bad)
		}
	}
}

// TestProcessCPUTimeOfSelf: this process read through /proc agrees with
// getrusage within the /proc file's 10 ms steps.
func TestProcessCPUTimeOfSelf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc is Linux only")
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	own, err := CPUTime()
	if err != nil {
		t.Fatal(err)
	}
	proc, err := ProcessCPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	own2, _ := CPUTime()
	if proc < own-20*time.Millisecond || proc > own2+20*time.Millisecond {
		t.Errorf("/proc/self/stat says %v, getrusage %v to %v", proc, own, own2)
	}
}
