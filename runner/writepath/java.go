package writepath

import (
	"bufio"
	"context"
	"crypto/sha256"
	_ "embed" // the Java program's source
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kbench/kbench/internal/childproc"
	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/tailbuf"
	"github.com/kbench/kbench/profiles/jfr"
	"github.com/kbench/kbench/runner/send"
	"github.com/kbench/kbench/runner/wire"
)

// The Java strategies of the write-path lab run a small Java program
// (java/WritePath.java, kept as source and compiled with javac on first
// use) that sends the very request kbench's Go encoder built: kbench writes
// the request's buffers to a file, the program reads them into heap
// ByteBuffers, as Kafka's Java producer holds a request, and only changes
// the correlation id, so the bytes on the wire are those of the Go
// strategies. kbench drives it over its stdin (commands) and stdout
// (events, latencies among them) and reads its counters from /proc.

//go:embed java/WritePath.java
var javaSource []byte

// javaClass is the program's main class.
const javaClass = "WritePath"

// javaCacheDir is where compiled programs are kept, one directory per
// source hash; tests point it elsewhere.
var javaCacheDir = func() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "kbench", "java"), nil
}

// compileJava returns the directory holding the compiled program, compiling
// it first if no earlier run did. The directory's name is the source's
// SHA-256, so a changed source is compiled anew; concurrent first uses
// each compile into a directory of their own and rename it into place, and
// the first rename wins.
func compileJava(ctx context.Context, javac string) (string, error) {
	base, err := javaCacheDir()
	if err != nil {
		return "", fmt.Errorf("runner: cache directory for the Java program: %w", err)
	}
	sum := sha256.Sum256(javaSource)
	dir := filepath.Join(base, "writepath-"+hex.EncodeToString(sum[:12]))
	if _, err := os.Stat(filepath.Join(dir, javaClass+".class")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return "", fmt.Errorf("runner: cache directory for the Java program: %w", err)
	}
	tmp, err := os.MkdirTemp(base, "tmp-")
	if err != nil {
		return "", fmt.Errorf("runner: compile the Java program: %w", err)
	}
	defer os.RemoveAll(tmp) // after a successful rename, nothing is left to remove
	src := filepath.Join(tmp, javaClass+".java")
	if err := os.WriteFile(src, javaSource, 0o644); err != nil {
		return "", fmt.Errorf("runner: compile the Java program: %w", err)
	}
	// --release 11: the classes run on any JVM with Flight Recorder's API.
	cmd := exec.CommandContext(ctx, javac, "--release", "11", "-d", tmp, src)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("runner: javac %s: %w: %s", javaClass+".java", err, tail(out, 2000))
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another run compiled the same source meanwhile: use its classes.
		if _, serr := os.Stat(filepath.Join(dir, javaClass+".class")); serr == nil {
			return dir, nil
		}
		return "", fmt.Errorf("runner: compile the Java program: %w", err)
	}
	return dir, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// writeRequestFile writes the request for the Java program: the
// correlation id's offset in the first buffer, the number of buffers, then
// each buffer as its length and bytes, all integers 32-bit big-endian.
func writeRequestFile(path string, req *wire.Request) error {
	var b []byte
	b = binary.BigEndian.AppendUint32(b, wire.CorrelationIDOffset)
	b = binary.BigEndian.AppendUint32(b, uint32(req.NumBuffers()))
	for _, buf := range req.Buffers() {
		b = binary.BigEndian.AppendUint32(b, uint32(len(buf)))
		b = append(b, buf...)
	}
	return os.WriteFile(path, b, 0o600)
}

// javaEvent is one event of the program's stdout other than latencies.
type javaEvent struct {
	typ  byte
	nums []int64
	text string
}

// JavaClient runs one Java strategy: the JVM is a child process whose
// sending thread is tid.
type JavaClient struct {
	shape    *Shape
	req      *wire.Request
	strategy string
	addr     string
	tools    jdk.JDK

	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *tailbuf.Buffer
	tmp     string
	events  chan javaEvent // closed when stdout ends
	exited  chan struct{}
	waitErr error

	measured atomic.Bool // the current phase's
	pid, tid int
	iovMax   int

	// The measured phase's SocketChannel.write calls, and the requests that
	// needed more than one.
	calls, split, sent int64

	once sync.Once
}

// NewJavaClient compiles the program if needed and starts the JVM of a
// Java strategy connected to addr; it returns once the program is connected and ready.
func NewJavaClient(ctx context.Context, tools jdk.JDK, addr string, req *wire.Request, strategy string, shape *Shape, setup time.Duration) (*JavaClient, error) {
	classes, err := compileJava(ctx, tools.Javac)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "kbench-java-")
	if err != nil {
		return nil, fmt.Errorf("runner: Java program: %w", err)
	}
	c := &JavaClient{shape: shape, req: req, strategy: strategy, addr: addr, tools: tools, tmp: tmp,
		stderr: tailbuf.New(4096), events: make(chan javaEvent, 16), exited: make(chan struct{})}
	if err := c.start(ctx, classes, setup); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *JavaClient) start(ctx context.Context, classes string, setup time.Duration) error {
	reqFile := filepath.Join(c.tmp, "request.bin")
	if err := writeRequestFile(reqFile, c.req); err != nil {
		return fmt.Errorf("runner: Java program: %w", err)
	}
	host, port, err := net.SplitHostPort(c.addr)
	if err != nil {
		return err
	}
	// --add-opens lets the program read the JDK's IOV_MAX
	// (sun.nio.ch.IOUtil), the most buffers one of its writev calls takes.
	c.cmd = exec.Command(c.tools.Java, "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "-cp", classes, javaClass,
		host, port, c.strategy, strconv.Itoa(c.shape.InFlight), reqFile, strconv.FormatInt(Timeout.Milliseconds(), 10))
	c.cmd.Stderr = c.stderr
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	// Through childproc, so the JVM dies with this run even when the run
	// is killed, as the broker and the sink do.
	if err := childproc.Start(c.cmd); err != nil {
		return fmt.Errorf("runner: start %s: %w", c.tools.Java, err)
	}
	c.pid = c.cmd.Process.Pid
	go c.readEvents(stdout)
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	}()
	timer := time.NewTimer(setup)
	defer timer.Stop()
	select {
	case ev, ok := <-c.events:
		switch {
		case !ok:
			return c.failure()
		case ev.typ == 'E':
			return fmt.Errorf("the java program: %s", ev.text)
		case ev.typ != 'R':
			return fmt.Errorf("the java program: event %q before it was ready", ev.typ)
		}
		c.tid, c.iovMax = int(ev.nums[0]), int(ev.nums[1])
		return nil
	case <-timer.C:
		return fmt.Errorf("the Java program was not ready within %v (stderr: %s)", setup, c.stderr)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// readEvents reads the program's stdout: latencies go to the run's
// statistics at once (as the Go strategies record them), other events to
// c.events.
func (c *JavaClient) readEvents(stdout io.Reader) {
	defer close(c.events)
	rd := bufio.NewReaderSize(stdout, 64<<10)
	var b [8]byte
	i32 := func() (int64, error) {
		_, err := io.ReadFull(rd, b[:4])
		return int64(int32(binary.BigEndian.Uint32(b[:4]))), err
	}
	i64 := func() (int64, error) {
		_, err := io.ReadFull(rd, b[:8])
		return int64(binary.BigEndian.Uint64(b[:8])), err
	}
	utf := func() (string, error) {
		if _, err := io.ReadFull(rd, b[:2]); err != nil {
			return "", err
		}
		s := make([]byte, binary.BigEndian.Uint16(b[:2]))
		_, err := io.ReadFull(rd, s)
		return string(s), err
	}
	for {
		typ, err := rd.ReadByte()
		if err != nil {
			return
		}
		ev := javaEvent{typ: typ}
		switch typ {
		case 'L':
			n, err := i32()
			if err != nil || n < 0 {
				return
			}
			measured := c.measured.Load()
			for range n {
				ns, err := i64()
				if err != nil {
					return
				}
				c.shape.Stats.Record(time.Duration(ns), measured)
			}
			continue
		case 'R':
			a, _ := i32()
			x, err := i32()
			if err != nil {
				return
			}
			ev.nums = []int64{a, x}
		case 'D':
			for range 3 {
				x, err := i64()
				if err != nil {
					return
				}
				ev.nums = append(ev.nums, x)
			}
		case 'J', 'E':
			if ev.text, err = utf(); err != nil {
				return
			}
		default:
			c.stderr.Write([]byte(fmt.Sprintf("\nkbench: unknown event %q from the Java program", typ)))
			return
		}
		c.events <- ev
	}
}

// failure says why the program stopped talking.
func (c *JavaClient) failure() error {
	select {
	case <-c.exited:
	case <-time.After(5 * time.Second):
	}
	msg := "the Java program ended"
	if c.waitErr != nil {
		msg += " (" + c.waitErr.Error() + ")"
	}
	if s := c.stderr.String(); s != "" {
		msg += ": " + s
	}
	return errors.New(msg)
}

// command sends one command line and waits for the event of type want.
func (c *JavaClient) command(ctx context.Context, line string, want byte) (javaEvent, error) {
	if _, err := io.WriteString(c.stdin, line+"\n"); err != nil {
		return javaEvent{}, c.failure()
	}
	select {
	case ev, ok := <-c.events:
		switch {
		case !ok:
			return ev, c.failure()
		case ev.typ == 'E':
			if ev.text == "no response to a request within "+strconv.Itoa(int(Timeout/time.Second))+"s" {
				return ev, fmt.Errorf("%w to a request within %v", errNoResponse, Timeout)
			}
			return ev, fmt.Errorf("the java program: %s", ev.text)
		case ev.typ != want:
			return ev, fmt.Errorf("the java program: event %q, expected %q", ev.typ, want)
		}
		return ev, nil
	case <-ctx.Done():
		c.kill()
		return javaEvent{}, ctx.Err()
	}
}

// Send has the Java program send the phase's requests: it paces them
// itself, at the phase's rate.
func (c *JavaClient) Send(ctx context.Context, ph send.Phase) error {
	c.measured.Store(ph.Measured)
	ms := int64(0)
	if !ph.Deadline.IsZero() {
		ms = max(1, time.Until(ph.Deadline).Milliseconds())
	}
	ev, err := c.command(ctx, fmt.Sprintf("send %d %d %s", ph.N, ms, strconv.FormatFloat(ph.Rate, 'g', -1, 64)), 'D')
	if err != nil {
		return err
	}
	if ph.Measured {
		c.sent += ev.nums[0]
		c.calls += ev.nums[1]
		c.split += ev.nums[2]
	}
	return nil
}

// InitJFR starts the Flight Recorder itself, which takes a while the first
// time, so that starting the recording at the window's edge is quick.
func (c *JavaClient) InitJFR(ctx context.Context) error {
	_, err := c.command(ctx, "jfr-init", 'J')
	return err
}

// StartJFR starts the recording of the window.
func (c *JavaClient) StartJFR(ctx context.Context) error {
	_, err := c.command(ctx, "jfr-start", 'J')
	return err
}

// StopJFR stops the recording and converts it into a wall profile at
// path; window, when set, names each sample's window from its event's
// time (jfr.Options.Window).
func (c *JavaClient) StopJFR(ctx context.Context, path string, window func(time.Time) string) (jfr.Summary, error) {
	rec := filepath.Join(c.tmp, "window.jfr")
	if _, err := c.command(ctx, "jfr-stop "+rec, 'J'); err != nil {
		return jfr.Summary{}, err
	}
	p, sum, err := jfr.FromRecordingWith(ctx, c.tools.JFR, rec, jfr.Options{Window: window})
	if err != nil {
		return sum, err
	}
	f, err := os.Create(path)
	if err != nil {
		return sum, err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return sum, err
	}
	return sum, f.Close()
}

func (c *JavaClient) kill() {
	if c.cmd != nil && c.cmd.Process != nil {
		c.cmd.Process.Kill()
	}
}

// Close ends the JVM and removes its files.
func (c *JavaClient) Close() {
	c.once.Do(func() {
		if c.cmd != nil && c.cmd.Process != nil {
			io.WriteString(c.stdin, "quit\n")
			c.stdin.Close()
			select {
			case <-c.exited:
			case <-time.After(5 * time.Second):
				c.kill()
				<-c.exited
			}
		}
		os.RemoveAll(c.tmp)
	})
}

// Splits says whether and why the JVM split requests over more
// SocketChannel.write calls than the strategy needs, from what the program
// counted: the JDK passes at most IOV_MAX buffers to one writev, so a
// java-gather request of more buffers takes ceil(buffers / IOV_MAX) calls,
// and any call may write less than it was given (a full socket buffer).
func (c *JavaClient) Splits() string {
	if c.sent == 0 {
		return ""
	}
	n := c.req.NumBuffers()
	per := strconv.FormatFloat(float64(c.calls)/float64(c.sent), 'f', 2, 64)
	iov := "could not be read"
	if c.iovMax > 0 {
		iov = strconv.Itoa(c.iovMax)
	}
	how := fmt.Sprintf("counted by the Java program: %s SocketChannel.write calls per request, each a system call; the JDK's IOV_MAX (sun.nio.ch.IOUtil.IOV_MAX, read at start) %s, %d buffers per request", per, iov, n)
	switch {
	case c.strategy == rundoc.StrategyJavaGather && c.iovMax > 0 && n > c.iovMax:
		return fmt.Sprintf("the JVM split every request's gathering write at IOV_MAX: %d of %d requests took more than one writev (at least %d each); %s", c.split, c.sent, (n+c.iovMax-1)/c.iovMax, how)
	case c.split > 0:
		return fmt.Sprintf("the JVM split %d of %d requests over more SocketChannel.write calls than the strategy needs, by partial writes (the socket's send buffer full); %s", c.split, c.sent, how)
	case c.strategy == rundoc.StrategyJavaGather:
		return "the JVM split no request's gathering write: " + how
	}
	return ""
}

// Pid is the JVM's process id and Tid its sending thread's, whose
// counters the window reads.
func (c *JavaClient) Pid() int { return c.pid }

// Tid is the JVM's sending thread (see Pid).
func (c *JavaClient) Tid() int { return c.tid }

// Sent and Calls are the measured phase's requests and
// SocketChannel.write calls, as the Java program counted them.
func (c *JavaClient) Sent() int64 { return c.sent }

// Calls: see Sent.
func (c *JavaClient) Calls() int64 { return c.calls }

func (c *JavaClient) Describe() string {
	how := map[string]string{
		rundoc.StrategyJavaGather:    "all buffers of a request in one SocketChannel.write(ByteBuffer[]) (the JDK's GatheringByteChannel path: IOUtil.write into writev0, one writev(2) of up to IOV_MAX buffers), called again while bytes are left",
		rundoc.StrategyJavaPerBuffer: "one SocketChannel.write(ByteBuffer), so one write(2) (IOUtil.write into write0), per buffer",
		rundoc.StrategyJavaCopy:      "the buffers copied into one reused heap ByteBuffer, then one SocketChannel.write(ByteBuffer)",
	}[c.strategy]
	bufs := c.req.Buffers()
	return fmt.Sprintf("strategy %s: a JVM (%s, pid %d, kbench's Java program runner/writepath/java/WritePath.java) sends kbench's own encoding of the request, %d buffers held as heap ByteBuffers as Kafka's producer holds them "+
		"(the JDK copies each into a cached direct buffer before the system call), on a blocking SocketChannel with TCP_NODELAY: %s; %d B per request, "+
		"Produce v%d encoded once by kbench (runner/wire), only the correlation id changing between requests; up to %d requests in flight on one connection to %s, "+
		"answers read by a thread of their own; write syscalls, CPU and profiles are the JVM's",
		c.strategy, c.tools.Java, c.pid, len(bufs), how, c.req.Len(), wire.ProduceVersion, c.shape.InFlight, c.addr)
}
