package embeddedbroker

import (
	"encoding/binary"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A produce throttle makes the embedded broker a server of known
// capacity: it holds each Produce request until a broker that stores
// rate records a second, one request after another, would have stored
// its records. Offered less, requests wait only their own service time;
// offered more, the wait grows without bound, as a saturated broker's
// does. Measuring tools (the latency-target search) are tested against
// that known capacity; users can rehearse a slow cluster with it.
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

// install makes c's Produce requests wait their turn. The control
// function sleeps through kfake's SleepControl, which lets the cluster
// serve other connections meanwhile, then leaves the request to the
// cluster (not handled), so it is stored as usual.
func (t *produceThrottle) install(c *kfake.Cluster) {
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		pr, ok := req.(*kmsg.ProduceRequest)
		if !ok {
			return nil, nil, false
		}
		if d := t.hold(time.Now(), producedRecords(pr)); d > 0 {
			c.SleepControl(func() { time.Sleep(d) })
		}
		return nil, nil, false
	})
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
