package kafkasec

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/silentbroker"
	"github.com/twmb/franz-go/pkg/kfake"
)

// TestSilentBrokerIsNamed: a request to a listener that never answers
// fails with a *NoAnswerError naming the address and the wait the
// deadline allowed, and Explain says so; with SASL configured the
// handshake, which kafka-go leaves without a deadline, ends at the
// Dialer's timeout the same way.
func TestSilentBrokerIsNamed(t *testing.T) {
	addr := silentbroker.Listen(t).Addr()
	for _, c := range []Config{{}, {Protocol: SASLPlaintext, Mechanism: Plain, Username: "u", Password: "secret-pw"}} {
		t.Run(string(c.protocol()), func(t *testing.T) {
			d, err := c.Dialer("test", 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			conn, err := d.DialContext(context.Background(), "tcp", addr)
			if err == nil {
				conn.SetDeadline(time.Now().Add(300 * time.Millisecond))
				_, err = conn.ApiVersions()
				conn.Close()
			}
			var na *NoAnswerError
			if !errors.As(err, &na) || na.Addr != addr || Seconds(na.Waited) != "0.3" {
				t.Fatalf("error %v (%#v), want a NoAnswerError for %s after 0.3 s", err, na, addr)
			}
			ex := Explain(err, c)
			if !errors.Is(ex, ErrNoAnswer) || !strings.Contains(ex.Error(), "no answer from "+addr+" within 0.3 s") {
				t.Errorf("Explain = %v, want it to say there was no answer", ex)
			}
			if strings.Contains(ex.Error(), "secret-pw") {
				t.Error("the explanation shows the password")
			}
		})
	}
}

// TestAnsweringBrokerIsNotSilent: a timeout after the broker has answered
// is an ordinary timeout, not a NoAnswerError.
func TestAnsweringBrokerIsNotSilent(t *testing.T) {
	cl, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	d, err := Config{}.Dialer("test", testTimeout)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := d.DialContext(context.Background(), "tcp", cl.ListenAddrs()[0])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ApiVersions(); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	_, err = conn.Read(make([]byte, 1)) // nothing more comes
	var na *NoAnswerError
	if err == nil || errors.As(err, &na) {
		t.Errorf("read after an answer: %v, want a plain timeout", err)
	}
}

func TestSeconds(t *testing.T) {
	for d, want := range map[time.Duration]string{10 * time.Second: "10", 500 * time.Millisecond: "0.5",
		9999 * time.Millisecond: "10", 2340 * time.Millisecond: "2.3", 0: "0"} {
		if got := Seconds(d); got != want {
			t.Errorf("Seconds(%v) = %q, want %q", d, got, want)
		}
	}
}

// countingConn is a net.Conn whose reads come from data and are counted.
type countingConn struct {
	net.Conn // nil: only Read is used
	data     []byte
	reads    int
}

func (c *countingConn) Read(p []byte) (int, error) {
	c.reads++
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.data)
	c.data = c.data[n:]
	return n, nil
}

// TestSilenceConnReadsAhead: kafka-go's 4 KiB reads of a large response
// are served from one read of the socket per readAhead bytes, and every
// byte arrives once, in order.
func TestSilenceConnReadsAhead(t *testing.T) {
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	under := &countingConn{data: slices.Clone(want)}
	conn, err := watchSilence(func(context.Context, string, string) (net.Conn, error) { return under, nil })(context.Background(), "tcp", "broker:9092")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(bufio.NewReaderSize(conn, 4096))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, not the %d sent, in order", len(got), len(want))
	}
	if max := len(want)/readAhead + 2; under.reads > max {
		t.Errorf("%d reads of the socket for %d bytes, want at most %d", under.reads, len(want), max)
	}
	if !conn.(*silenceConn).answered.Load() {
		t.Error("a connection that received bytes is not marked answered")
	}
}

// BenchmarkConnRead reads 1 MiB responses over loopback TCP through a
// 4 KiB bufio.Reader, as kafka-go's Conn does: straight from the socket
// ("direct") and through the dialer's connection ("watched", reading
// ahead).
func BenchmarkConnRead(b *testing.B) {
	const size = 1 << 20
	for _, watched := range []bool{false, true} {
		name := "direct"
		if watched {
			name = "watched"
		}
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer ln.Close()
			go func() {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				chunk := make([]byte, size)
				for {
					if _, err := c.Write(chunk); err != nil {
						return
					}
				}
			}()
			var reads atomic.Int64
			dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				return &tallyConn{Conn: c, reads: &reads}, err
			}
			if watched {
				dial = watchSilence(dial)
			}
			conn, err := dial(context.Background(), "tcp", ln.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			rd := bufio.NewReaderSize(conn, 4096)
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := rd.Discard(size); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(reads.Load())/float64(b.N), "reads/op")
		})
	}
}

// tallyConn counts the reads of a real connection.
type tallyConn struct {
	net.Conn
	reads *atomic.Int64
}

func (c *tallyConn) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.Conn.Read(p)
}
