package runner

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/kbench/kbench/runner/writepath"
)

// SinkOptions configure `kbench broker --sink`, the write-path workload's
// stand-in for a broker.
type SinkOptions struct {
	Listen string
	// CPUProfile, when set, profiles the sink from start to exit.
	CPUProfile string
	// Control reads cpu-start/cpu-stop commands from stdin and exits when
	// stdin closes, exactly as the embedded broker does (see ServeBroker).
	Control bool
	// Record, when set, receives every request frame the sink reads, size
	// prefix included, in the order read; for tests.
	Record io.Writer
}

// ServeSink runs the write-path sink until ctx is done (or, with Control,
// until stdin closes). It prints the same "listening on" line as the
// embedded broker, so `kbench run` starts and controls both alike.
//
// The sink (writepath.Sink) answers every request at once and stores
// nothing; it runs in its own process so its CPU never appears in the
// client's profile.
func ServeSink(ctx context.Context, opts SinkOptions, stdin io.Reader, stdout io.Writer) error {
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("sink: %w", err)
	}
	s := writepath.NewSink(ln, opts.Record)
	go s.Serve()
	defer s.Close()

	return serveControlled(ctx, ln.Addr().String(), opts.CPUProfile, opts.Control, stdin, stdout)
}

// startSink starts the sink as a child process, as the embedded broker is
// started, and points the run at it.
func (r *run) startSink(ctx context.Context) error {
	cmd := r.opts.SinkCommand
	if len(cmd) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("runner: find kbench binary for the sink: %w", err)
		}
		cmd = []string{exe, "broker", "--sink"}
	}
	child, err := startChildBroker(ctx, cmd)
	if err != nil {
		return fmt.Errorf("write-path sink: %w", err)
	}
	r.child = child
	r.brokers = []string{child.addr}
	r.res.Environment.Broker = "kbench write-path sink (own process; answers Produce requests without storing them) at " + child.addr
	r.rep.note("kbench: write-path sink at %s (pid %d)", child.addr, child.cmd.Process.Pid)
	return nil
}
