package embeddedbroker

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A produce throttle makes the embedded broker a server of known
// capacity: it holds each Produce request until a broker that stores
// rate records a second, one request after another, would have stored
// its records. Offered less, requests wait only their own service time;
// offered more, the wait grows without bound, as a saturated broker's
// does. Measuring tools (the latency-target search) are tested against
// that known capacity; users can rehearse a slow cluster with it.
//
// It sits under kfake, in the connections its listeners accept: a
// request is handed to kfake only when its time has come, so kfake (and
// its per-connection order of replies) sees a slow client, nothing else.
// (kfake's own control functions can sleep a request, but several
// sleeping at once race inside kfake.)
type produceThrottle struct {
	rate float64 // records/s

	mu   sync.Mutex
	free time.Time // when the broker has stored every record given it so far
}

// hold is how long a request of n records waits from now.
func (t *produceThrottle) hold(now time.Time, n int) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.free.Before(now) {
		t.free = now
	}
	t.free = t.free.Add(time.Duration(float64(n) / t.rate * float64(time.Second)))
	return t.free.Sub(now)
}

// maxThrottledRequest bounds a request the throttle reads whole: kfake
// refuses larger ones anyway.
const maxThrottledRequest = 100 << 20

// throttledListener accepts connections whose Produce requests wait
// their turn.
type throttledListener struct {
	net.Listener
	t *produceThrottle
}

func (l *throttledListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &throttledConn{Conn: c, t: l.t}, nil
}

// throttledConn hands kfake one whole request at a time, a Produce
// request only once the throttle says so.
type throttledConn struct {
	net.Conn
	t       *produceThrottle
	pending []byte // the rest of the request being handed on
}

func (c *throttledConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// next reads the next request (its size prefix and body) and waits its
// hold.
func (c *throttledConn) next() error {
	var size [4]byte
	if _, err := io.ReadFull(c.Conn, size[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n > maxThrottledRequest {
		return fmt.Errorf("embedded broker: a request of %d bytes, over %d", n, maxThrottledRequest)
	}
	req := make([]byte, 4+n)
	copy(req, size[:])
	if _, err := io.ReadFull(c.Conn, req[4:]); err != nil {
		return err
	}
	if d := c.t.hold(time.Now(), requestRecords(req[4:])); d > 0 {
		time.Sleep(d)
	}
	c.pending = req
	return nil
}

// requestRecords counts the records of a request's body (after its size
// prefix) when it is a Produce request, 0 otherwise or when it does not
// decode (kfake answers that one as it would).
func requestRecords(b []byte) int {
	if len(b) < 10 || int16(binary.BigEndian.Uint16(b[0:2])) != int16(kmsg.Produce) {
		return 0
	}
	version := int16(binary.BigEndian.Uint16(b[2:4]))
	// The header: key, version, correlation id, then the client id (a
	// nullable string, never compact) and, for flexible versions, tags.
	rest := b[8:]
	idLen := int(int16(binary.BigEndian.Uint16(rest[0:2])))
	rest = rest[2:]
	if idLen > 0 {
		if idLen > len(rest) {
			return 0
		}
		rest = rest[idLen:]
	}
	pr := kmsg.NewPtrProduceRequest()
	pr.SetVersion(version)
	if pr.IsFlexible() {
		var ok bool
		if rest, ok = skipTags(rest); !ok {
			return 0
		}
	}
	if err := pr.ReadFrom(rest); err != nil {
		return 0
	}
	return producedRecords(pr)
}

// skipTags skips a tagged-fields section: a count, then each field's
// tag, size and bytes, all unsigned varints.
func skipTags(b []byte) ([]byte, bool) {
	count, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, false
	}
	b = b[n:]
	for range count {
		if _, n = binary.Uvarint(b); n <= 0 {
			return nil, false
		}
		b = b[n:]
		size, n := binary.Uvarint(b)
		if n <= 0 || size > uint64(len(b)-n) {
			return nil, false
		}
		b = b[n+int(size):]
	}
	return b, true
}

// producedRecords counts the records of a Produce request from its
// record batches' headers (magic 2: the record count is the int32 at
// byte 57 of each batch, whose length is the int32 at byte 8 plus the 12
// bytes before it). A malformed batch ends the count: the broker itself
// refuses it.
func producedRecords(pr *kmsg.ProduceRequest) int {
	n := 0
	for _, topic := range pr.Topics {
		for _, p := range topic.Partitions {
			b := p.Records
			for len(b) >= 61 {
				length := int(int32(binary.BigEndian.Uint32(b[8:12])))
				if length < 49 || 12+length > len(b) || b[16] != 2 {
					break
				}
				n += int(int32(binary.BigEndian.Uint32(b[57:61])))
				b = b[12+length:]
			}
		}
	}
	return n
}
