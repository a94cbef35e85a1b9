package silentbroker

import (
	"net"
	"testing"
	"time"
)

// TestSilence: a client connects and writes; the broker counts the
// connection, reads, and never answers.
func TestSilence(t *testing.T) {
	b := Listen(t)
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("\x00\x00\x00\x04ping")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for b.Conns() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections counted, want 1", b.Conns())
		}
		time.Sleep(time.Millisecond)
	}
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("read %d bytes (%v), want silence", n, err)
	}
}
