package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/childproc"
	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/tailbuf"
)

// BrokerOptions configure `kbench broker`.
type BrokerOptions struct {
	Listen string
	// Brokers is how many brokers the embedded cluster has (0 or 1: one);
	// the first listens on Listen.
	Brokers int
	// CPUProfile, when set, profiles the broker from start to exit.
	CPUProfile string
	// Control makes the broker read commands from stdin (see ServeBroker)
	// and exit when stdin closes, so a broker started by `kbench run` never
	// outlives its parent.
	Control bool
	// ProduceRate caps the records a second the broker stores (0: no
	// cap): a broker of known capacity.
	ProduceRate float64
}

// listeningPrefix starts the line a broker prints once it accepts
// connections; the parent reads the address from it.
const listeningPrefix = "kbench broker listening on "

// ServeBroker runs the embedded broker until ctx is done (or, with Control,
// until stdin closes). It prints "kbench broker listening on HOST:PORT".
//
// With Control, stdin takes one command per line and each is answered with
// "ok" or "error: …" on stdout:
//
//	cpu-start FILE   start writing a CPU profile of this process to FILE
//	cpu-stop         stop it and close FILE
//
// That lets `kbench run` profile the broker over exactly the measured window.
func ServeBroker(ctx context.Context, opts BrokerOptions, stdin io.Reader, stdout io.Writer) error {
	b, err := embeddedbroker.Start(embeddedbroker.Options{Listen: opts.Listen, Brokers: opts.Brokers, ProduceRate: opts.ProduceRate})
	if err != nil {
		return err
	}
	defer b.Close()

	return serveControlled(ctx, b.Addr(), opts.CPUProfile, opts.Control, stdin, stdout)
}

// serveControlled is the life of a child server (the embedded broker, the
// write-path sink) once it listens: announce the address, optionally
// profile the whole process, and with control read cpu-start/cpu-stop
// commands from stdin until it closes or ctx ends.
func serveControlled(ctx context.Context, addr, cpuProfile string, control bool, stdin io.Reader, stdout io.Writer) error {
	prof := &cpuProfiler{}
	if cpuProfile != "" {
		if err := prof.start(cpuProfile); err != nil {
			return err
		}
	}
	defer prof.stop()

	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		defer out.Unlock()
		fmt.Fprintf(stdout, format+"\n", args...)
	}
	say("%s%s", listeningPrefix, addr)

	if !control {
		<-ctx.Done()
		return prof.stop()
	}
	cmds := make(chan string)
	go func() {
		defer close(cmds)
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			cmds <- sc.Text()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return prof.stop()
		case line, ok := <-cmds:
			if !ok {
				return prof.stop() // parent gone
			}
			verb, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
			var err error
			switch verb {
			case "cpu-start":
				err = prof.start(arg)
			case "cpu-stop":
				err = prof.stop()
			default:
				err = fmt.Errorf("unknown command %q", verb)
			}
			if err != nil {
				say("error: %v", err)
			} else {
				say("ok")
			}
		}
	}
}

type cpuProfiler struct {
	f *os.File
}

func (p *cpuProfiler) start(path string) error {
	if p.f != nil {
		return errors.New("cpu profile already running")
	}
	if path == "" {
		return errors.New("cpu-start needs a file name")
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("start cpu profile: %w", err)
	}
	p.f = f
	return nil
}

func (p *cpuProfiler) stop() error {
	if p.f == nil {
		return nil
	}
	pprof.StopCPUProfile()
	err := p.f.Close()
	p.f = nil
	return err
}

// childBroker is a `kbench broker --control` process started by a run.
type childBroker struct {
	cmd    *exec.Cmd
	addr   string
	stdin  io.WriteCloser
	lines  chan string
	stderr *tailbuf.Buffer
	exited chan struct{}
}

// startChildBroker starts command (normally this binary with "broker") on
// a free loopback port and waits for its address.
func startChildBroker(ctx context.Context, command []string) (*childBroker, error) {
	args := append(append([]string(nil), command[1:]...), "--listen", "127.0.0.1:0", "--control")
	cmd := exec.Command(command[0], args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	b := &childBroker{cmd: cmd, stdin: stdin, lines: make(chan string, 16), stderr: tailbuf.New(4096), exited: make(chan struct{})}
	cmd.Stderr = b.stderr
	// Through childproc, so the broker dies with this run even when the run
	// is killed with SIGKILL (its closed stdin alone would leave it to a
	// clean exit it might not reach).
	if err := childproc.Start(cmd); err != nil {
		return nil, fmt.Errorf("start embedded broker: %w", err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			b.lines <- sc.Text()
		}
		close(b.lines)
	}()
	go func() { cmd.Wait(); close(b.exited) }()

	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case line, ok := <-b.lines:
		if ok && strings.HasPrefix(line, listeningPrefix) {
			b.addr = strings.TrimPrefix(line, listeningPrefix)
			return b, nil
		}
		b.kill()
		return nil, fmt.Errorf("embedded broker did not start: %s", b.failure(line))
	case <-timer.C:
		b.kill()
		return nil, errors.New("embedded broker did not report its address within 30s")
	case <-ctx.Done():
		b.kill()
		return nil, ctx.Err()
	}
}

func (b *childBroker) failure(line string) string {
	if msg := strings.TrimSpace(b.stderr.String()); msg != "" {
		return msg
	}
	if line != "" {
		return line
	}
	return "it exited without a word"
}

// command sends one control command and waits for its answer.
func (b *childBroker) command(cmd string) error {
	if _, err := fmt.Fprintln(b.stdin, cmd); err != nil {
		return fmt.Errorf("embedded broker: %s: %w (%s)", cmd, err, b.failure(""))
	}
	select {
	case line, ok := <-b.lines:
		if !ok {
			return fmt.Errorf("embedded broker exited: %s", b.failure(""))
		}
		if line != "ok" {
			return fmt.Errorf("embedded broker: %s: %s", cmd, line)
		}
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("embedded broker: %s: no answer within 10s", cmd)
	}
}

func (b *childBroker) startCPUProfile(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	return b.command("cpu-start " + abs)
}

func (b *childBroker) stopCPUProfile() error { return b.command("cpu-stop") }

// stop ends the broker: closing stdin asks it to exit, SIGTERM and then
// SIGKILL follow if it does not.
func (b *childBroker) stop() {
	b.stdin.Close()
	select {
	case <-b.exited:
		return
	case <-time.After(5 * time.Second):
	}
	b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(5 * time.Second):
		b.kill()
	}
}

func (b *childBroker) kill() {
	b.cmd.Process.Kill()
	<-b.exited
}
