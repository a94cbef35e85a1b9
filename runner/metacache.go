package runner

import (
	"context"
	"net"
	"sync"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/metadata"
)

// metadataReuse is how many of the Writer's partition-count lookups one
// metadata answer serves before it is fetched again.
const metadataReuse = 10000

// metadataCache answers kafka-go Writer's metadata lookups for the run's
// topic from the last good answer.
//
// Why: Writer.WriteMessages looks up the topic's partition count for every
// message, through the Transport (a channel round trip and a copy of the
// cached response each time). In CPU profiles of a 256 B producer that was
// a third of the client's CPU, which made kafka-go look slower than it is
// when used well. The Transport still refreshes its own metadata for
// routing; this cache only feeds the partition count to the balancer and
// refreshes it every metadataReuse lookups, or at once after an error.
type metadataCache struct {
	next  kafka.RoundTripper
	topic string

	mu   sync.Mutex
	resp *metadata.Response
	uses int
}

// RoundTrip implements kafka.RoundTripper.
func (c *metadataCache) RoundTrip(ctx context.Context, addr net.Addr, req kafka.Request) (kafka.Response, error) {
	m, ok := req.(*metadata.Request)
	if !ok || len(m.TopicNames) != 1 || m.TopicNames[0] != c.topic {
		return c.next.RoundTrip(ctx, addr, req)
	}
	c.mu.Lock()
	if c.resp != nil && c.uses < metadataReuse {
		c.uses++
		r := c.resp
		c.mu.Unlock()
		return r, nil
	}
	c.mu.Unlock()
	r, err := c.next.RoundTrip(ctx, addr, req)
	if err != nil {
		return r, err
	}
	if resp, ok := r.(*metadata.Response); ok && healthy(resp, c.topic) {
		c.mu.Lock()
		c.resp, c.uses = resp, 0
		c.mu.Unlock()
	}
	return r, nil
}

func healthy(r *metadata.Response, topic string) bool {
	for _, t := range r.Topics {
		if t.Name == topic {
			return t.ErrorCode == 0 && len(t.Partitions) > 0
		}
	}
	return false
}
