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

// TestDropped: however the writes come, String is the last n bytes and
// Dropped the count before them.
func TestDropped(t *testing.T) {
	b := New(10)
	var all strings.Builder
	for i := 0; i < 1000; i++ {
		line := strings.Repeat(string(rune('a'+i%26)), i%7) + "\n"
		b.Write([]byte(line))
		all.WriteString(line)
		whole := all.String()
		want := whole[max(len(whole)-10, 0):]
		if got, d := b.String(), b.Dropped(); got != want || d != int64(len(whole)-len(want)) {
			t.Fatalf("after %d writes: %q dropped %d, want %q dropped %d", i+1, got, d, want, len(whole)-len(want))
		}
	}
}
