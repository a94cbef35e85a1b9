//go:build linux

package sysstat

import (
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

func mustReadIO(t *testing.T) IO {
	t.Helper()
	v, err := ReadIO()
	if errors.Is(err, ErrUnsupported) {
		t.Skipf("/proc/self/io unavailable: %v", err)
	}
	if err != nil {
		t.Fatalf("ReadIO: %v", err)
	}
	return v
}

func TestReadIO(t *testing.T) {
	a := mustReadIO(t)
	b := mustReadIO(t)
	d := b.Sub(a)
	if a.Rchar <= 0 || a.Syscr <= 0 {
		t.Errorf("implausible counters for a running test binary: %+v", a)
	}
	if d.Syscr < 1 || d.Rchar < 1 {
		t.Errorf("reading /proc/self/io should count as a read: delta %+v", d)
	}
	for _, f := range ioFields {
		if *f.ptr(&d) < 0 {
			t.Errorf("counter %s went backwards: %+v -> %+v", f.key, a, b)
		}
	}
}

// TestReadIOCost checks the documented cost of ReadIO: one read(2) and no
// write-type call. Other goroutines could add noise, so the minimum over a
// few attempts is used; noise can only add.
func TestReadIOCost(t *testing.T) {
	minR, minW := int64(1<<62), int64(1<<62)
	for range 5 {
		a := mustReadIO(t)
		b := mustReadIO(t)
		d := b.Sub(a)
		minR, minW = min(minR, d.Syscr), min(minW, d.Syscw)
	}
	if minR != 1 || minW != 0 {
		t.Fatalf("ReadIO cost: min syscr delta %d (want 1), min syscw delta %d (want 0)", minR, minW)
	}
}

// TestSyscwCountsCallsNotBuffers demonstrates what syscw measures: one
// writev carrying 16 buffers counts once, while 16 write calls count 16
// times. This is what makes syscw a fair "syscalls per message" metric for
// comparing clients that batch with writev against clients that do not.
func TestSyscwCountsCallsNotBuffers(t *testing.T) {
	mustReadIO(t) // skips if unavailable

	client, drained := loopbackConn(t)
	defer func() {
		client.Close()
		if err := <-drained; err != nil {
			t.Errorf("drain: %v", err)
		}
	}()

	const (
		calls = 100
		parts = 16
	)
	part := []byte("0123456789abcdef") // 16 bytes: 256 bytes per call

	writev := func() {
		for range calls {
			bufs := make(net.Buffers, parts)
			for i := range bufs {
				bufs[i] = part
			}
			if _, err := bufs.WriteTo(client); err != nil {
				t.Fatalf("writev: %v", err)
			}
		}
	}
	writes := func() {
		for range calls {
			for range parts {
				if _, err := client.Write(part); err != nil {
					t.Fatalf("write: %v", err)
				}
			}
		}
	}

	// Warm up so that one-off work (poller registration, the receiver's
	// first wake-up) happens outside the measured windows.
	writev()
	writes()

	measure := func(f func()) (IO, time.Duration) {
		start := time.Now()
		a := mustReadIO(t)
		f()
		b := mustReadIO(t)
		return b.Sub(a), time.Since(start)
	}

	// Counters are process-wide: any goroutine or runtime thread of the
	// test binary that makes a write-type call during a window adds to
	// it (locking the OS thread would not help). Such noise can only add,
	// never subtract, so:
	//   - the lower bounds (>= calls, >= calls*parts) must hold in every
	//     attempt;
	//   - the upper bounds are checked on the minimum over a few attempts,
	//     with a slack made of the noise measured over a quiet period as
	//     long as the slowest window, plus a small allowance for runtime
	//     wake-ups triggered by our own activity (the Go runtime writes to
	//     its netpoll eventfd to wake the poller; 0-1 per window observed).
	//     A partial writev, which would need a second call, cannot happen:
	//     256 bytes per call into a drained loopback socket.
	const attempts = 3
	minV, minW := IO{Syscw: 1 << 62}, IO{Syscw: 1 << 62}
	var longest time.Duration
	for i := range attempts {
		dv, tv := measure(writev)
		dw, tw := measure(writes)
		t.Logf("attempt %d: %d writev of %d buffers: syscw +%d, wchar +%d (%v); %d writes: syscw +%d, wchar +%d (%v)",
			i, calls, parts, dv.Syscw, dv.Wchar, tv, calls*parts, dw.Syscw, dw.Wchar, tw)
		if dv.Syscw < calls {
			t.Errorf("attempt %d: %d writev calls raised syscw by only %d", i, calls, dv.Syscw)
		}
		if dw.Syscw < calls*parts {
			t.Errorf("attempt %d: %d write calls raised syscw by only %d", i, calls*parts, dw.Syscw)
		}
		if want := int64(calls * parts * len(part)); dv.Wchar < want || dw.Wchar < want {
			t.Errorf("attempt %d: wchar deltas %d (writev) and %d (write), want >= %d", i, dv.Wchar, dw.Wchar, want)
		}
		if dv.Syscw < minV.Syscw {
			minV = dv
		}
		if dw.Syscw < minW.Syscw {
			minW = dw
		}
		longest = max(longest, tv, tw)
	}

	quiet := max(longest, 20*time.Millisecond)
	var noise int64
	for range attempts {
		dq, _ := measure(func() { spin(quiet) })
		noise = max(noise, dq.Syscw)
	}
	const wakeAllowance = 4
	slack := noise + wakeAllowance
	t.Logf("quiet-period noise over %v: syscw +%d; slack %d", quiet, noise, slack)

	if minV.Syscw >= calls+slack {
		t.Errorf("%d writev calls of %d buffers raised syscw by %d, want < %d: syscw does not count one per writev",
			calls, parts, minV.Syscw, calls+slack)
	}
	if minW.Syscw >= calls*parts+slack {
		t.Errorf("%d write calls raised syscw by %d, want < %d", calls*parts, minW.Syscw, calls*parts+slack)
	}
}

// loopbackConn returns the client side of a TCP loopback connection whose
// server side is drained by a goroutine; drained receives the drain error
// once the client is closed.
func loopbackConn(t *testing.T) (*net.TCPConn, <-chan error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no loopback TCP: %v", err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	acceptErr := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			acceptErr <- err
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	var server net.Conn
	select {
	case server = <-accepted:
	case err := <-acceptErr:
		c.Close()
		t.Fatalf("accept: %v", err)
	}
	drained := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, server)
		server.Close()
		drained <- err
	}()
	return c.(*net.TCPConn), drained
}
