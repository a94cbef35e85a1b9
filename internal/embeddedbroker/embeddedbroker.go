// Package embeddedbroker runs kbench's default broker: an in-process Kafka-protocol
// server (franz-go's kfake), one node by default or several (Options.Brokers),
// listening on a loopback address.
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
	// Brokers is how many brokers the cluster has (default 1, at most
	// MaxBrokers): a topic may have as many replicas, so that a workload
	// asking for a replication factor of 3 (OpenMessaging Benchmark's
	// stock driver files) is accepted. kfake keeps one copy of the data
	// whatever the factor: the replicas are in its metadata, not copied.
	// The first broker listens on Listen, the others on free ports of the
	// same host.
	Brokers int
	// ProduceRate, when positive, caps how many records a second the
	// broker stores: each Produce request waits its turn behind the
	// records before it (see produceThrottle). Not with TLS.
	ProduceRate float64
}

// MaxBrokers bounds Options.Brokers: every broker is a listener and a
// few goroutines of one process, and no replication factor kbench is
// given needs more.
const MaxBrokers = 16

// Broker is a running embedded broker.
type Broker struct {
	cluster *kfake.Cluster
	addr    string
}

// Start starts the broker (opts.Brokers nodes, one by default). Topics are
// created on first use, as most benchmark users expect of a scratch broker.
func Start(opts Options) (*Broker, error) {
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("embedded broker: listen address %q: %w", listen, err)
	}
	partitions := opts.Partitions
	if partitions <= 0 {
		partitions = 1
	}
	brokers := opts.Brokers
	if brokers <= 0 {
		brokers = 1
	}
	if brokers > MaxBrokers {
		return nil, fmt.Errorf("embedded broker: %d brokers asked for, at most %d", brokers, MaxBrokers)
	}
	if opts.ProduceRate > 0 && opts.TLS != nil {
		// The throttle reads requests under kfake's TLS: it would see
		// ciphertext.
		return nil, fmt.Errorf("embedded broker: a produce rate cap works without TLS only")
	}
	var throttle *produceThrottle
	if opts.ProduceRate > 0 {
		throttle = &produceThrottle{rate: opts.ProduceRate}
	}
	var bound string
	kopts := []kfake.Opt{
		kfake.NumBrokers(brokers),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(partitions),
		kfake.BrokerConfigs(map[string]string{"log.segment.bytes": SegmentBytes}),
		// kfake always asks for 127.0.0.1:<port>; listen where the user asked
		// instead, so `--listen` can pick the interface and port. Only the
		// first broker can have the asked port: the others take free ones
		// on the same host, which the metadata tells clients.
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			addr := listen
			if bound != "" {
				addr = net.JoinHostPort(host, "0")
			}
			ln, err := net.Listen(network, addr)
			if err != nil {
				return nil, err
			}
			if bound == "" {
				bound = ln.Addr().String()
			}
			if throttle != nil {
				return &throttledListener{Listener: ln, t: throttle}, nil
			}
			return ln, nil
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
	return &Broker{cluster: c, addr: bound}, nil
}

// Addrs are the host:port of every broker, the bootstrap one (Addr) first.
func (b *Broker) Addrs() []string {
	addrs := []string{b.addr}
	for _, a := range b.cluster.ListenAddrs() {
		if a != b.addr {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// Addr is the host:port clients bootstrap from.
func (b *Broker) Addr() string { return b.addr }

// Close stops the broker and drops everything it stored.
func (b *Broker) Close() { b.cluster.Close() }
