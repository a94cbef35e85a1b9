package kafkasec

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// NoAnswerError is a broker that accepted the TCP connection and sent
// nothing back before the read deadline. kafka-go reports it as a bare
// i/o timeout, or, through a Transport, as "[8] Broker Not Available";
// both hide that the address answered the dial but not Kafka.
type NoAnswerError struct {
	Addr string // the address dialled
	// Waited is how long the connection had been open, without a byte
	// from the broker, when the read timed out.
	Waited time.Duration
	// Err is the read's own error (a deadline error).
	Err error
}

func (e *NoAnswerError) Error() string {
	return fmt.Sprintf("no answer from %s within %s s", e.Addr, Seconds(e.Waited))
}

func (e *NoAnswerError) Unwrap() error { return e.Err }

// Timeout reports true: it is a timeout to whatever checks net.Error.
func (e *NoAnswerError) Timeout() bool { return true }

// Temporary is part of net.Error; the condition is not expected to pass.
func (e *NoAnswerError) Temporary() bool { return false }

// Seconds shows d in seconds to a tenth, without a trailing ".0": 10,
// 0.5, 2.3.
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(math.Round(d.Seconds()*10)/10, 'f', -1, 64)
}

// watchSilence wraps a dial function so that its connections report a
// read that times out before the broker ever sent a byte as a
// *NoAnswerError. Dialer and Transport wrap the TCP dial with it, beneath
// TLS, so a TLS handshake the broker never answers is one too.
func watchSilence(dial func(context.Context, string, string) (net.Conn, error)) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		c, err := dial(ctx, network, address)
		if err != nil {
			return nil, err
		}
		sc := &silenceConn{Conn: c, addr: address, opened: time.Now(), rd: bufio.NewReaderSize(c, readAhead)}
		// ctx bounds the connection's setup. kafka-go's Dialer does not
		// apply it to the SASL handshake, which then waits for a silent
		// broker forever: when the setup time runs out, the read it is
		// blocked in is ended here. After a successful setup ctx ends
		// canceled, not past its deadline, and this does nothing.
		context.AfterFunc(ctx, func() {
			if d, ok := ctx.Deadline(); ok && errors.Is(ctx.Err(), context.DeadlineExceeded) && !sc.answered.Load() {
				sc.readDeadline.Store(d.UnixNano())
				_ = c.SetDeadline(time.Now())
			}
		})
		return sc, nil
	}
}

// readAhead is how much one read of a connection takes from the socket.
// kafka-go reads a connection through a 4 KiB bufio.Reader, so a 1 MiB
// fetch response took 256 read syscalls, the largest single cost of the
// assign consumer; reading ahead here takes it in 16.
const readAhead = 64 << 10

// silenceConn is a connection that knows whether its peer ever answered,
// and until when a read was allowed to wait. It reads ahead (readAhead):
// bytes already received are returned whatever the deadline, as the
// socket would.
type silenceConn struct {
	net.Conn
	rd           *bufio.Reader // over Conn
	addr         string
	opened       time.Time
	answered     atomic.Bool
	readDeadline atomic.Int64 // unix nanoseconds; 0: none
}

func (c *silenceConn) Read(p []byte) (int, error) {
	n, err := c.rd.Read(p)
	if n > 0 && !c.answered.Load() {
		c.answered.Store(true)
	}
	if err != nil && !c.answered.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
		// The wait the deadline allowed, rather than the time measured
		// now: that is the timeout the user set, not the scheduler's delay.
		waited := time.Since(c.opened)
		if d := c.readDeadline.Load(); d != 0 {
			waited = time.Unix(0, d).Sub(c.opened)
		}
		return n, &NoAnswerError{Addr: c.addr, Waited: waited, Err: err}
	}
	return n, err
}

func (c *silenceConn) SetDeadline(t time.Time) error {
	c.readDeadline.Store(unixNano(t))
	return c.Conn.SetDeadline(t)
}

func (c *silenceConn) SetReadDeadline(t time.Time) error {
	c.readDeadline.Store(unixNano(t))
	return c.Conn.SetReadDeadline(t)
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}
