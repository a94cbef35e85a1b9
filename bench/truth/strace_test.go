package main

import (
	"strings"
	"testing"
	"time"
)

func TestParseStraceLine(t *testing.T) {
	tests := []struct {
		line string
		ok   bool
		pid  int
		name string
		t    time.Time
	}{
		{`4242 1764572400.123456 write(3, ""..., 64) = 64`, true, 4242, "write", time.Unix(1764572400, 123456000)},
		{`4243 1764572400.5 writev(7, [{iov_base=""..., iov_len=5}], 18 <unfinished ...>`, true, 4243, "writev", time.Unix(1764572400, 500000000)},
		{`1764572400.000001 pwrite64(4, "", 0, 0) = 0`, true, 0, "pwrite64", time.Unix(1764572400, 1000)},
		{`4243 1764572400.600000 <... writev resumed>) = 4352`, false, 0, "", time.Time{}},
		{`4242 1764572401.000000 +++ exited with 0 +++`, false, 0, "", time.Time{}},
		{`4242 1764572401.000000 --- SIGURG {si_signo=SIGURG, si_code=SI_TKILL} ---`, false, 0, "", time.Time{}},
		{``, false, 0, "", time.Time{}},
		{`garbage`, false, 0, "", time.Time{}},
	}
	for _, tt := range tests {
		c, ok := parseStraceLine(tt.line)
		if ok != tt.ok {
			t.Errorf("%q: ok %v, want %v", tt.line, ok, tt.ok)
			continue
		}
		if ok && (c.PID != tt.pid || c.Name != tt.name || !c.T.Equal(tt.t)) {
			t.Errorf("%q: got %+v, want pid %d %s at %v", tt.line, c, tt.pid, tt.name, tt.t)
		}
	}
}

func TestCountStrace(t *testing.T) {
	out := strings.Join([]string{
		`10 100.000000 write(1, ""..., 80) = 80`, // before the window
		`10 101.000000 write(1, ""..., 80) = 80`,
		`11 101.500000 writev(5, [...], 3 <unfinished ...>`,
		`12 101.500100 write(6, ""..., 8) = 8`,
		`11 101.600000 <... writev resumed>) = 300`,
		`12 101.700000 sendmsg(5, {...}, 0) = 20`,
		`10 102.000000 write(1, ""..., 80) = 80`,
		`10 102.000001 write(1, ""..., 80) = 80`, // after it
	}, "\n")
	c, err := countStrace(strings.NewReader(out), time.Unix(101, 0), time.Unix(102, 0))
	if err != nil {
		t.Fatal(err)
	}
	if got := sum(c.InWindow, syscwCalls); got != 4 {
		t.Errorf("write-type calls in the window: %d, want 4 (%v)", got, c.InWindow)
	}
	if got := sum(c.InWindow, socketSendCalls); got != 1 {
		t.Errorf("socket sends in the window: %d, want 1", got)
	}
	if got := sum(c.Total, syscwCalls); got != 6 {
		t.Errorf("write-type calls in all: %d, want 6", got)
	}
}
