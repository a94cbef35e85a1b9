// Package silentbroker is a test double for a Kafka broker that is up at
// the network level and never answers: it accepts TCP connections on
// loopback, reads whatever the client sends and writes nothing. Tests use
// it for a cluster that hangs (a client's timeouts, a run that writes
// nothing while it waits).
package silentbroker

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Broker is a listening silent broker.
type Broker struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// Listen starts a silent broker on a loopback port; it and every
// connection it accepted are closed when the test ends.
func Listen(t testing.TB) *Broker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &Broker{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.mu.Lock()
			b.conns = append(b.conns, c) // held open, never written to
			b.mu.Unlock()
			go io.Copy(io.Discard, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, c := range b.conns {
			c.Close()
		}
	})
	return b
}

// Addr is the broker's host:port.
func (b *Broker) Addr() string { return b.ln.Addr().String() }

// Conns is the number of connections it has accepted so far.
func (b *Broker) Conns() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.conns)
}
