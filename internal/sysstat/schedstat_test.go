package sysstat

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	tests := []struct {
		in      string
		want    Demand
		wantErr bool
	}{
		{"4891410 5577576 5\n", Demand{4891410, 5577576}, false},
		{"0 0 0", Demand{}, false},
		{"1 2", Demand{1, 2}, false},
		{"", Demand{}, true},
		{"12", Demand{}, true},
		{"1 -5 3", Demand{}, true},
		{"-1 5 3", Demand{}, true},
		{"1 x 3", Demand{}, true},
		{"1 99999999999999999999 3", Demand{}, true},
	}
	for _, tt := range tests {
		got, err := ParseSchedstat([]byte(tt.in))
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseSchedstat(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzParseSchedstat(f *testing.F) {
	f.Add([]byte("4891410 5577576 5\n"))
	f.Add([]byte(""))
	f.Add([]byte("1 -1 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseSchedstat(data)
		if err == nil && (got.Run < 0 || got.Wait < 0) {
			t.Fatalf("ParseSchedstat(%q) = %v: negative", data, got)
		}
		if err != nil && strings.Contains(err.Error(), "\n") && len(data) > 64 {
			t.Fatalf("error quotes unbounded input: %v", err)
		}
	})
}

// TestThreadDemand: on Linux every thread's demand is readable, and a
// thread that spins shows its running time.
func TestThreadDemand(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("schedstat is Linux-only")
	}
	before, err := ThreadDemand()
	if err != nil {
		t.Skipf("no scheduler statistics here: %v", err)
	}
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) {
	}
	after, err := ThreadDemand()
	if err != nil || len(after) == 0 {
		t.Fatalf("ThreadDemand: %d threads, %v", len(after), err)
	}
	var most time.Duration
	for tid, d := range after {
		if d.Run < 0 || d.Wait < 0 {
			t.Errorf("thread %d: %+v", tid, d)
		}
		most = max(most, d.Sub(before[tid]).Total())
	}
	if most < 10*time.Millisecond {
		t.Errorf("no thread wanted 10 ms of CPU over a 50 ms spin (most: %v)", most)
	}
}
