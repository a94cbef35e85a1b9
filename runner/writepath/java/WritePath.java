// WritePath is the JVM side of kbench's write-path lab: the Java
// strategies (java-gather, java-per-buffer, java-copy) of
// `kbench run writepath`. kbench compiles this file with javac on first use
// and drives it over stdin/stdout; it is not meant to be run by hand.
//
// It sends the Produce request kbench's Go encoder built (read from a file,
// one buffer per record plus two, exactly as the Go strategies hold it),
// changing only the correlation id, 0, 1, 2, … over the whole run, so the
// bytes on the wire are those of the Go strategies.
//
//	java -cp DIR WritePath HOST PORT STRATEGY IN_FLIGHT REQUEST_FILE TIMEOUT_MS
//
// Commands, one a line on stdin:
//
//	send N DEADLINE_MS RATE   send N requests (0: until DEADLINE_MS from now),
//	                          RATE requests/s at most (0: no limit); answer
//	                          with a done event once every one is answered
//	jfr-init                  start Flight Recorder itself (slow, once;
//	                          kbench sends it before the warm-up)
//	jfr-start                 start a recording of jdk.ExecutionSample
//	                          (every 10 ms) and jdk.NativeMethodSample
//	                          (every 20 ms), the periods of the JDK's
//	                          "profile" settings, and no other event
//	jfr-stop FILE             stop it and write it to FILE
//	quit                      close the connection and exit
//
// Events on stdout, each a type byte then its fields, big-endian (written
// by a thread of their own, so that the sending thread makes no write
// system call but its socket writes: kbench counts that thread's writes):
//
//	'R' int tid, int iovMax     ready: the sending thread's id in /proc, the JDK's IOV_MAX (-1 unknown)
//	'L' int n, n × long ns      latencies of answered requests, write start to response
//	'D' long requests, long writeCalls, long splitRequests
//	                            a send is done: requests answered, SocketChannel.write calls,
//	                            requests that took more calls than the strategy's fewest
//	                            (1 for java-gather and java-copy, one per buffer for java-per-buffer)
//	'J' UTF text                a jfr-* command is done
//	'E' UTF text                failure; the program exits
import java.io.BufferedReader;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import java.time.Duration;

import jdk.jfr.FlightRecorder;
import jdk.jfr.Recording;

public final class WritePath {
    private final SocketChannel channel;
    private final String strategy;
    private final int inFlight;
    private final long timeoutNanos;
    private final ByteBuffer[] bufs;
    private final int corrOffset;
    private final ByteBuffer flat;

    private final Semaphore window;
    private final AtomicInteger outstanding = new AtomicInteger();
    private final long[] starts; // write start by correlation id modulo in-flight
    private final AtomicLong activity = new AtomicLong(System.nanoTime());
    private final AtomicReference<String> failure = new AtomicReference<>();
    private int next; // the next correlation id; sending thread only

    private final BlockingQueue<byte[]> events = new ArrayBlockingQueue<>(4096);
    private Recording recording;

    private WritePath(SocketChannel channel, String strategy, int inFlight, long timeoutNanos, ByteBuffer[] bufs, int corrOffset) {
        this.channel = channel;
        this.strategy = strategy;
        this.inFlight = inFlight;
        this.timeoutNanos = timeoutNanos;
        this.bufs = bufs;
        this.corrOffset = corrOffset;
        this.window = new Semaphore(inFlight);
        this.starts = new long[inFlight];
        int total = 0;
        for (ByteBuffer b : bufs) {
            total += b.capacity();
        }
        this.flat = strategy.equals("java-copy") ? ByteBuffer.allocate(total) : null;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 6) {
            System.err.println("usage: WritePath HOST PORT STRATEGY IN_FLIGHT REQUEST_FILE TIMEOUT_MS");
            System.exit(2);
        }
        String strategy = args[2];
        if (!strategy.equals("java-gather") && !strategy.equals("java-per-buffer") && !strategy.equals("java-copy")) {
            System.err.println("unknown strategy " + strategy);
            System.exit(2);
        }
        int corrOffset;
        ByteBuffer[] bufs;
        try (DataInputStream in = new DataInputStream(Files.newInputStream(Paths.get(args[4])))) {
            corrOffset = in.readInt();
            bufs = new ByteBuffer[in.readInt()];
            for (int i = 0; i < bufs.length; i++) {
                byte[] b = new byte[in.readInt()];
                in.readFully(b);
                bufs[i] = ByteBuffer.wrap(b); // heap buffers, as Kafka's producer builds them
            }
        }
        SocketChannel ch = SocketChannel.open();
        ch.setOption(StandardSocketOptions.TCP_NODELAY, true);
        ch.connect(new InetSocketAddress(args[0], Integer.parseInt(args[1])));
        WritePath w = new WritePath(ch, strategy, Integer.parseInt(args[3]), Long.parseLong(args[5]) * 1_000_000L, bufs, corrOffset);
        w.run();
    }

    private void run() throws Exception {
        Thread out = new Thread(this::writeEvents, "kbench-events");
        out.setDaemon(true);
        out.start();
        Thread reader = new Thread(this::readResponses, "kbench-reader");
        reader.setDaemon(true);
        reader.start();
        Thread watch = new Thread(this::watch, "kbench-watch");
        watch.setDaemon(true);
        watch.start();

        event(new Event('R').i32(threadId()).i32(iovMax()));
        BufferedReader cmds = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = cmds.readLine()) != null; ) {
            String[] f = line.trim().split(" ");
            try {
                switch (f[0]) {
                    case "send":
                        send(Long.parseLong(f[1]), Long.parseLong(f[2]), Double.parseDouble(f[3]));
                        break;
                    case "jfr-init":
                        FlightRecorder.getFlightRecorder();
                        event(new Event('J').utf("initialized"));
                        break;
                    case "jfr-start":
                        recording = samplingRecording();
                        recording.start();
                        event(new Event('J').utf("started"));
                        break;
                    case "jfr-stop":
                        recording.stop();
                        recording.dump(Paths.get(line.trim().substring("jfr-stop ".length())));
                        recording.close();
                        recording = null;
                        event(new Event('J').utf("stopped"));
                        break;
                    case "quit":
                        channel.close();
                        return;
                    default:
                        fail("unknown command " + f[0]);
                }
            } catch (IOException | RuntimeException e) {
                fail(f[0] + ": " + e);
            }
            if (failure.get() != null) {
                break;
            }
        }
        channel.close();
        // Give the events thread the time to write the failure.
        Thread.sleep(1000);
        System.exit(1);
    }

    // samplingRecording is a recording of the two events kbench converts
    // and nothing else. A Recording made without settings has every event
    // off; the JDK's "profile" settings would also turn on dozens of others
    // (thread park and monitor events timing each lock hand-off, allocation
    // samples, periodic statistics, …) that cost the measured JVM and that
    // kbench never reads. The chunk still holds its metadata and constant
    // pools (jdk.Metadata, jdk.CheckPoint), where the samples' stack traces
    // and thread names are. The periods are those of "profile". It goes to
    // the disk repository, as every recording does by default: JFR's
    // recorder thread writes the buffers as they fill, and stop() leaves the
    // chunk there for dump() to copy.
    private static Recording samplingRecording() {
        Recording r = new Recording();
        r.setName("kbench-window");
        r.enable("jdk.ExecutionSample").withPeriod(Duration.ofMillis(10));
        r.enable("jdk.NativeMethodSample").withPeriod(Duration.ofMillis(20));
        r.setToDisk(true);
        return r;
    }

    // send writes n requests (n == 0: until the deadline), paced to rate
    // requests/s, then waits for every answer.
    private void send(long n, long deadlineMs, double rate) throws IOException, InterruptedException {
        long start = System.nanoTime();
        long deadline = deadlineMs > 0 ? start + deadlineMs * 1_000_000L : 0;
        long sent = 0, calls = 0, split = 0;
        int fewest = strategy.equals("java-per-buffer") ? bufs.length : 1;
        for (long i = 0; n == 0 || i < n; i++) {
            long now = System.nanoTime();
            if (deadline != 0 && now - deadline >= 0) {
                break;
            }
            if (rate > 0) {
                long due = start + (long) (i * 1e9 / rate);
                while (due - System.nanoTime() > 0 && failure.get() == null) {
                    LockSupport.parkNanos(due - System.nanoTime());
                }
            }
            while (!window.tryAcquire(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                if (failure.get() != null) {
                    return;
                }
            }
            if (failure.get() != null) {
                return;
            }
            int id = next++;
            ByteBuffer head = bufs[0];
            head.putInt(corrOffset, id);
            for (ByteBuffer b : bufs) {
                b.clear();
            }
            outstanding.incrementAndGet();
            now = System.nanoTime();
            starts[Integer.remainderUnsigned(id, inFlight)] = now;
            activity.set(now);
            int c = write();
            calls += c;
            if (c > fewest) {
                split++;
            }
            sent++;
        }
        // Every answer is in once every permit is back.
        for (int i = 0; i < inFlight; i++) {
            while (!window.tryAcquire(100, java.util.concurrent.TimeUnit.MILLISECONDS)) {
                if (failure.get() != null) {
                    return;
                }
            }
        }
        window.release(inFlight);
        event(new Event('D').i64(sent).i64(calls).i64(split));
    }

    // write sends the request with the strategy and returns the number of
    // SocketChannel.write calls it took.
    private int write() throws IOException {
        int calls = 0;
        switch (strategy) {
            case "java-gather": {
                // One write(ByteBuffer[]) per request: the JDK gathers the
                // buffers into one writev(2), of at most IOV_MAX of them; a
                // partial write is continued from the first buffer with
                // bytes left.
                int off = 0;
                while (off < bufs.length) {
                    channel.write(bufs, off, bufs.length - off);
                    calls++;
                    while (off < bufs.length && !bufs[off].hasRemaining()) {
                        off++;
                    }
                }
                break;
            }
            case "java-per-buffer":
                for (ByteBuffer b : bufs) {
                    while (b.hasRemaining()) {
                        channel.write(b);
                        calls++;
                    }
                }
                break;
            default: // java-copy
                flat.clear();
                for (ByteBuffer b : bufs) {
                    flat.put(b);
                }
                flat.flip();
                while (flat.hasRemaining()) {
                    channel.write(flat);
                    calls++;
                }
        }
        return calls;
    }

    // readResponses matches responses to requests: a broker answers the
    // requests of a connection in order.
    private void readResponses() {
        ByteBuffer size = ByteBuffer.allocate(4);
        ByteBuffer body = ByteBuffer.allocate(64 << 10);
        long[] batch = new long[1024];
        int pending = 0;
        long lastFlush = System.nanoTime();
        int expect = 0;
        try {
            while (true) {
                size.clear();
                readFully(size);
                int n = size.getInt(0);
                if (n < 4 || n > 100 << 20) {
                    throw new IOException("response size " + n);
                }
                if (body.capacity() < n) {
                    body = ByteBuffer.allocate(n);
                }
                body.clear().limit(n);
                readFully(body);
                body.flip();
                long now = System.nanoTime();
                String bad = checkResponse(body, expect);
                if (bad != null) {
                    fail(bad);
                    return;
                }
                batch[pending++] = now - starts[Integer.remainderUnsigned(expect, inFlight)];
                expect++;
                activity.set(now);
                // Latencies go out in batches, and always before the
                // permit of the last request in flight comes back, so the
                // done event of a send follows every latency of it.
                if (pending == batch.length || now - lastFlush > 20_000_000L || outstanding.get() == 1) {
                    Event e = new Event('L').i32(pending);
                    for (int i = 0; i < pending; i++) {
                        e.i64(batch[i]);
                    }
                    event(e);
                    pending = 0;
                    lastFlush = now;
                }
                outstanding.decrementAndGet();
                window.release();
            }
        } catch (IOException e) {
            fail("connection: " + e.getMessage());
        }
    }

    private void readFully(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                throw new IOException("closed by the peer");
            }
        }
    }

    // checkResponse reads a Produce response (v3 to v8) far enough to
    // know it answers request expect, one partition, without an error.
    private static String checkResponse(ByteBuffer b, int expect) {
        try {
            int corr = b.getInt();
            if (corr != expect) {
                return "response with correlation id " + corr + ", expected " + expect;
            }
            int topics = b.getInt();
            if (topics != 1) {
                return "the Produce response answers " + topics + " topics, want 1";
            }
            short nameLen = b.getShort();
            b.position(b.position() + Math.max(nameLen, 0));
            int parts = b.getInt();
            if (parts != 1) {
                return "the Produce response answers " + parts + " partitions, want 1";
            }
            int partition = b.getInt();
            short code = b.getShort();
            if (code != 0) {
                return "broker refused the request to partition " + partition + ": Kafka error code " + code;
            }
            return null;
        } catch (RuntimeException e) {
            return "unreadable Produce response: " + e;
        }
    }

    // watch closes the connection when requests stay unanswered too long.
    private void watch() {
        while (failure.get() == null) {
            LockSupport.parkNanos(1_000_000_000L);
            if (outstanding.get() > 0 && System.nanoTime() - activity.get() > timeoutNanos) {
                fail("no response to a request within " + timeoutNanos / 1_000_000_000L + "s");
            }
        }
    }

    private void fail(String why) {
        if (failure.compareAndSet(null, why)) {
            event(new Event('E').utf(why));
            try {
                channel.close();
            } catch (IOException ignored) {
                // closing is all that is left to do
            }
        }
    }

    private void event(Event e) {
        try {
            events.put(e.bytes());
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
        }
    }

    private void writeEvents() {
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 64 << 10));
        try {
            while (true) {
                byte[] b = events.take();
                out.write(b);
                if (events.isEmpty()) {
                    out.flush();
                }
            }
        } catch (IOException | InterruptedException e) {
            System.exit(1);
        }
    }

    // threadId is the calling thread's id in /proc (/proc/thread-self
    // links to PID/task/TID).
    private static int threadId() throws IOException {
        Path p = Files.readSymbolicLink(Paths.get("/proc/thread-self"));
        return Integer.parseInt(p.getFileName().toString());
    }

    // iovMax is the most buffers the JDK passes to one writev
    // (sun.nio.ch.IOUtil.IOV_MAX), -1 when it cannot be read (the
    // package is not opened to this program).
    private static int iovMax() {
        try {
            Field f = Class.forName("sun.nio.ch.IOUtil").getDeclaredField("IOV_MAX");
            f.setAccessible(true);
            return f.getInt(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return -1;
        }
    }

    // Event builds one event's bytes.
    private static final class Event {
        private final java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
        private final DataOutputStream out = new DataOutputStream(buf);

        Event(char type) {
            buf.write(type);
        }

        Event i32(int v) {
            try {
                out.writeInt(v);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return this;
        }

        Event i64(long v) {
            try {
                out.writeLong(v);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return this;
        }

        Event utf(String s) {
            try {
                out.writeUTF(s.length() > 10000 ? s.substring(0, 10000) : s);
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
            return this;
        }

        byte[] bytes() {
            return buf.toByteArray();
        }
    }
}
