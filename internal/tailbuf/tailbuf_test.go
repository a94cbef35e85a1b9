package tailbuf

import (
	"strings"
	"sync"
	"testing"
)

func TestKeepsTheLastBytes(t *testing.T) {
	cases := []struct {
		n      int
		writes []string
		want   string
	}{
		{8, nil, ""},
		{8, []string{"abc"}, "abc"},
		{8, []string{"abcdefgh"}, "abcdefgh"},
		{8, []string{"abcdefghij"}, "cdefghij"},
		{4, []string{"ab", "cd", "ef"}, "cdef"},
		{4, []string{"abcdef", "g"}, "defg"},
	}
	for _, c := range cases {
		b := New(c.n)
		for _, w := range c.writes {
			if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", w, n, err)
			}
		}
		if got := b.String(); got != c.want {
			t.Errorf("New(%d) after %q: %q, want %q", c.n, c.writes, got, c.want)
		}
	}
}

// TestConcurrentWrites: a process's stderr is copied by one goroutine
// while another reads the tail; the race detector watches this.
func TestConcurrentWrites(t *testing.T) {
	b := New(64)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				b.Write([]byte("xxxxxxxxxx"))
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 64) {
		t.Errorf("tail %q, want 64 x", got)
	}
}
