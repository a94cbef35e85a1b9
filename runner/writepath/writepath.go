// Package writepath is the write-path lab of `kbench run writepath`: the
// strategies that write Kafka Produce requests built from many buffers (as
// a client's request builder lays them out) and measure what the way they
// are written costs: kbench's own encoding written with gather,
// per-buffer or copy writes, kafka-go's Writer and Conn, and the Java
// strategies, whose JVM runs java/WritePath.java; and the sink, the
// stand-in broker that answers them. See runner/wire for the buffer
// layout: a request of R records is R+2 buffers.
//
// runner runs the workload (its window, reporter and result) and hands
// the lab a Shape and a Recorder for the answers. The lab imports
// runner's sub-packages wire and send, the run contract (strategy names),
// kafka-go, franz-go's kmsg (the sink's protocol) and the JDK helpers
// (internal/jdk, profiles/jfr); never runner itself, which imports it,
// and no HTTP or database package.
package writepath

import (
	"errors"
	"time"

	"github.com/kbench/kbench/runner/send"
	"github.com/kbench/kbench/runner/wire"
)

const (
	// maxIovecs is the most buffers one writev takes on Linux (IOV_MAX);
	// a request with more is gathered in several calls.
	maxIovecs = 1024
	// Timeout is how long requests may stay unanswered.
	Timeout = 30 * time.Second
)

// Recorder takes the outcome of every request: runner's statistics.
type Recorder interface {
	// Record counts one answered request, lat after its write started.
	Record(lat time.Duration, measured bool)
	// Fail notes why the strategy stopped; the first failure is kept.
	Fail(err error)
	// Err is the first failure, nil without one.
	Err() error
}

// Client sends the requests of one strategy: its Send sends a phase's
// requests at the phase's rate and returns once every one of them is
// answered or the first failed.
type Client interface {
	send.Sender
	// Describe says how requests are written, for the result's notes.
	Describe() string
	Close()
}

// Shape is what every strategy sends per request.
type Shape struct {
	Topic     string
	ClientID  string
	Acks      int16
	Records   int
	Payload   []byte
	InFlight  int
	Base      time.Time // the time base of latencies
	Stats     Recorder
	Timestamp int64 // the records' timestamp, ms since the epoch
}

// Since is the time since the shape's base.
func (w *Shape) Since() time.Duration { return time.Since(w.Base) }

// EncodeRequest is kbench's own encoding of the shape's request to
// partition 0, with correlation id 0 (each strategy sets its own).
func EncodeRequest(shape *Shape) (*wire.Request, error) {
	return wire.Encode(wire.Produce{
		ClientID:  shape.ClientID,
		Topic:     shape.Topic,
		Partition: 0,
		Acks:      shape.Acks,
		TimeoutMs: int32(Timeout / time.Millisecond),
		Timestamp: shape.Timestamp,
		Values:    repeatPayload(shape.Payload, shape.Records),
	})
}

func repeatPayload(p []byte, n int) [][]byte {
	vs := make([][]byte, n)
	for i := range vs {
		vs[i] = p
	}
	return vs
}

// EncodedRequest is the request a strategy sends of kbench's own
// encoding; nil for kafka-go's.
func EncodedRequest(c Client) *wire.Request {
	switch c := c.(type) {
	case *rawClient:
		return c.req
	case *JavaClient:
		return c.req
	}
	return nil
}

// errNoResponse is a request that stayed unanswered too long.
var errNoResponse = errors.New("no response")
