package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/runner"
)

// Broker is `kbench broker`.
var Broker = &Command{
	Name:      "broker",
	UsageLine: "broker [flags]",
	Short:     "the embedded broker (franz-go's kfake)",
	Run:       cmdBroker,
}

const brokerUsage = `usage: kbench broker [--listen ADDR] [--brokers N] [--cpuprofile FILE] [--control] [--produce-rate N] [--sink]

Runs the embedded Kafka-protocol broker (franz-go's kfake) until
interrupted, or with --sink the write-path sink. kbench run starts one
itself when given no --bootstrap-server. With --brokers N it is a
cluster of N brokers, the first on --listen and the others on free
ports of the same host, so that topics may have up to N replicas (as
OpenMessaging Benchmark's stock driver files ask: replicationFactor 3);
kfake keeps one copy of the data whatever the factor.

flags:
`

func cmdBroker(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("kbench broker", brokerUsage, stderr)
	var opts runner.BrokerOptions
	fs.StringVar(&opts.Listen, "listen", "127.0.0.1:9092", "host:port to listen on (port 0 picks a free one)")
	fs.IntVar(&opts.Brokers, "brokers", 1, fmt.Sprintf("brokers in the cluster, 1 to %d: topics may have as many replicas", embeddedbroker.MaxBrokers))
	fs.StringVar(&opts.CPUProfile, "cpuprofile", "", "write the broker's CPU profile to this file on exit")
	fs.BoolVar(&opts.Control, "control", false, "read profiling commands from stdin and exit when it closes (used by kbench run)")
	fs.Float64Var(&opts.ProduceRate, "produce-rate", 0, "store at most this many records a second, each Produce request waiting its turn: a broker of known capacity (0: no cap)")
	sink := fs.Bool("sink", false, "be the write-path sink instead: answer Produce requests at once, store nothing (used by kbench run writepath --sink)")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if opts.Brokers < 1 || opts.Brokers > embeddedbroker.MaxBrokers {
		fmt.Fprintf(stderr, "kbench broker: --brokers must be between 1 and %d, got %d\n", embeddedbroker.MaxBrokers, opts.Brokers)
		return 2
	}
	if *sink {
		err := runner.ServeSink(ctx, runner.SinkOptions{Listen: opts.Listen, CPUProfile: opts.CPUProfile, Control: opts.Control}, os.Stdin, stdout)
		if err != nil {
			fmt.Fprintf(stderr, "kbench broker --sink: %v\n", err)
			return 1
		}
		return 0
	}
	if err := runner.ServeBroker(ctx, opts, os.Stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "kbench broker: %v\n", err)
		return 1
	}
	return 0
}
