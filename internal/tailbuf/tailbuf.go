// Package tailbuf keeps the end of a child process's output: the runner
// keeps its broker's stderr, the lifecycle a run's, to quote when the
// process fails.
package tailbuf

import "sync"

// Buffer keeps the last n bytes written to it: a child process's stderr
// tail for error messages, without unbounded memory. It is safe for
// concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf []byte
	n   int
	// dropped counts the bytes trimmed off buf's front.
	dropped int64
}

// New returns a Buffer keeping the last n bytes.
func New(n int) *Buffer { return &Buffer{n: n} }

// Write keeps the end of p. The buffer is trimmed back to n bytes only
// once it holds twice that, so each byte is copied a bounded number of
// times however many writes come (trimming on every write would copy
// the whole kept tail each time: megabytes per line of a chatty tool).
func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.n {
		over := len(t.buf) - t.n
		t.dropped += int64(over)
		t.buf = append([]byte(nil), t.buf[over:]...)
	}
	return len(p), nil
}

// kept is the last n bytes of buf and how many bytes came before them.
func (t *Buffer) kept() ([]byte, int64) {
	over := max(len(t.buf)-t.n, 0)
	return t.buf[over:], t.dropped + int64(over)
}

// String returns the last n bytes written.
func (t *Buffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, _ := t.kept()
	return string(b)
}

// Dropped is how many bytes were written before the ones String returns.
func (t *Buffer) Dropped() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, d := t.kept()
	return d
}
