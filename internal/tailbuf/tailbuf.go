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
}

// New keeps the last n bytes.
func New(n int) *Buffer { return &Buffer{n: n} }

// Write implements io.Writer.
func (t *Buffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.n {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-t.n:]...)
	}
	return len(p), nil
}

// String returns the bytes kept.
func (t *Buffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
