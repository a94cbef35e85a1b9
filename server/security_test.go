package server

import "testing"

func TestIsLoopbackAddr(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:0", true},
		{"localhost:8080", true},
		{"[::1]:8080", true},
		{"[::ffff:127.0.0.1]:8080", true},
		{"127.evil.invalid:8080", false},
		{"127.0.0.1.nip.io:8080", false},
		{"localhost.evil.invalid:8080", false},
		{"localhost:8080:9090", false},
		{"[::1]", false},
		{"127.0.0.1", false},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"[::]:8080", false},
		{"10.0.0.1:8080", false},
		{"[::ffff:10.0.0.1]:8080", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := IsLoopbackAddr(tt.addr); got != tt.want {
			t.Errorf("IsLoopbackAddr(%q) = %v, want %v", tt.addr, got, tt.want)
		}
	}
}
