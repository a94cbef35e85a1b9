package kafkasec

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/silentbroker"
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
