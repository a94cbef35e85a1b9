// Package embeddedbroker runs kbench's default broker: an in-process Kafka-protocol
// server (franz-go's kfake) with one node, listening on a loopback address.
//
// kbench starts it as its own process (`kbench broker`) so that the broker's
// CPU never shows up in the client's profile; tests start it in-process.
package embeddedbroker

import (
	"crypto/tls"
	"fmt"
	"net"

	"github.com/twmb/franz-go/pkg/kfake"
)

// SegmentBytes is the log segment size the embedded broker uses. kfake keeps
// segments in memory and grows them by doubling; 1 MiB segments roughly
// double produce throughput compared to its default, so the broker is less
// likely to be the bottleneck of a client benchmark.
const SegmentBytes = "1048576"

// User is a SASL user the broker accepts.
type User struct {
	Mechanism string // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
	Name      string
	Password  string
}

// Options configure an embedded broker.
type Options struct {
	// Listen is the host:port to listen on; port 0 picks a free port.
	Listen string
	// Users enables SASL with these users when non-empty.
	Users []User
	// TLS, when set, makes the listener speak TLS.
	TLS *tls.Config
	// Partitions is the partition count of auto-created topics (default 1).
	Partitions int
	// ProduceRate, when positive, caps how many records a second the
	// broker stores: each Produce request waits its turn behind the
	// records before it (see produceThrottle).
	ProduceRate float64
}

// Broker is a running embedded broker.
type Broker struct {
	cluster *kfake.Cluster
	addr    string
}

// Start starts a one-node broker. Topics are created on first use, as most
// benchmark users expect of a scratch broker.
func Start(opts Options) (*Broker, error) {
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return nil, fmt.Errorf("embedded broker: listen address %q: %w", listen, err)
	}
	partitions := opts.Partitions
	if partitions <= 0 {
		partitions = 1
	}
	var bound string
	kopts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(partitions),
		kfake.BrokerConfigs(map[string]string{"log.segment.bytes": SegmentBytes}),
		// kfake always asks for 127.0.0.1:<port>; listen where the user asked
		// instead, so `--listen` can pick the interface and port.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			ln, err := net.Listen(network, listen)
			if err == nil {
				bound = ln.Addr().String()
			}
			return ln, err
		}),
	}
	if opts.TLS != nil {
		kopts = append(kopts, kfake.TLS(opts.TLS))
	}
	if len(opts.Users) > 0 {
		kopts = append(kopts, kfake.EnableSASL())
		for _, u := range opts.Users {
			kopts = append(kopts, kfake.Superuser(u.Mechanism, u.Name, u.Password))
		}
	}
	c, err := kfake.NewCluster(kopts...)
	if err != nil {
		return nil, fmt.Errorf("embedded broker: start on %s: %w", listen, err)
	}
	if bound == "" {
		bound = c.ListenAddrs()[0]
	}
	if opts.ProduceRate > 0 {
		(&produceThrottle{rate: opts.ProduceRate}).install(c)
	}
	return &Broker{cluster: c, addr: bound}, nil
}

// Addr is the host:port clients bootstrap from.
func (b *Broker) Addr() string { return b.addr }

// Close stops the broker and drops everything it stored.
func (b *Broker) Close() { b.cluster.Close() }
