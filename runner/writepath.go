package runner

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/jdk"
	"github.com/kbench/kbench/internal/kafkafmt"
	"github.com/kbench/kbench/runner/send"
	"github.com/kbench/kbench/runner/wire"
	"github.com/kbench/kbench/runner/writepath"
)

// The write-path workload (`kbench run writepath`) sends Kafka Produce
// requests built from many buffers, as a client's request builder lays them
// out, and measures what the way they are written costs. The strategies
// and the sink are the lab's (runner/writepath); this file runs them as a
// workload: the phases, the window, the lines and the result.

// CPUSampleInterval is how often a run's window samples the client's CPU
// (measurement.cpu_sample_interval_ms): what process-cpu-p99 and
// process-cpu-max rest on, so the write-path preset's default duration is
// checked against it.
const CPUSampleInterval = cpuSampleInterval

func writepathAcks(s *rundoc.Spec) (int16, error) {
	switch strings.ToLower(s.Acks) {
	case "all", "-1":
		return -1, nil
	case "1":
		return 1, nil
	case "0":
		return 0, rundoc.NewFieldError("acks", "0 is not measurable: a broker answers no request sent with acks=0; use all or 1")
	}
	return 0, rundoc.NewFieldError("acks", "must be all, -1 or 1, got %q", s.Acks)
}

// requestTarget is the number of measured requests; 0 with --duration.
func requestTarget(s *rundoc.Spec) int64 {
	switch {
	case s.Requests > 0:
		return s.Requests
	case s.Duration > 0:
		return 0
	}
	return rundoc.DefaultWritepathRequests
}

// wpStats aggregates the responses of every request.
type wpStats struct {
	mu        sync.Mutex
	hist      *latencyHist
	responded int64 // all phases, for progress
	measured  int64 // responses to measured requests
	firstErr  error
	// The current interval of the text lines and of the series, in
	// requests.
	line, point ivCounters
}

// Record counts one answered request (writepath.Recorder).
func (s *wpStats) Record(lat time.Duration, measured bool) {
	s.mu.Lock()
	s.responded++
	if measured {
		s.measured++
		s.hist.record(lat)
		s.line.add(1, 0, lat)
		s.point.add(1, 0, lat)
	}
	s.mu.Unlock()
}

// Fail keeps the first failure (writepath.Recorder).
func (s *wpStats) Fail(err error) {
	s.mu.Lock()
	if s.firstErr == nil {
		s.firstErr = err
	}
	s.mu.Unlock()
}

// Err is the first failure (writepath.Recorder).
func (s *wpStats) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.firstErr
}

func (s *wpStats) respondedCount() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.responded
}

func (r *run) writepath(ctx context.Context) error {
	acks, err := writepathAcks(&r.spec)
	if err != nil {
		return err
	}
	payloads, err := r.payloads()
	if err != nil {
		return err
	}
	stats := &wpStats{hist: newLatencyHist(), point: pointCounters()}
	shape := &writepath.Shape{
		Topic:     r.spec.Topic,
		ClientID:  r.clientID("writepath"),
		Acks:      acks,
		Records:   r.spec.RecordsPerRequest,
		Payload:   payloads[0],
		InFlight:  r.spec.InFlight,
		Base:      time.Now(),
		Stats:     stats,
		Timestamp: time.Now().UnixMilli(),
	}
	rate := 0.0 // requests/s; 0 for no limit
	if r.spec.Throughput > 0 {
		rate = r.spec.Throughput
	}
	if !r.spec.Sink {
		if _, err := r.ensureTopic(ctx); err != nil {
			return err
		}
	}
	client, err := r.writepathClient(ctx, shape)
	if err != nil {
		return err
	}
	closed := false
	closeClient := func() {
		if !closed {
			closed = true
			client.Close()
		}
	}
	defer closeClient()

	notes := &r.res.Measurement.Notes
	*notes = append(*notes, client.Describe())
	if r.spec.Duration > 0 {
		*notes = append(*notes, fmt.Sprintf("the measured phase ran for %v s, not a fixed number of requests: CPU profiles of runs that did different amounts of work compare only per request", r.spec.Duration))
	}
	jc, _ := client.(*writepath.JavaClient)
	if jc == nil {
		*notes = append(*notes, "write-syscalls-per-request is the process's write-type syscalls in the window (/proc/self/io syscw) over the requests answered; it includes the process's few other writes (output lines, the Go runtime's wake-ups)")
	} else {
		*notes = append(*notes, fmt.Sprintf("write-syscalls-per-request is the write-type syscalls of the JVM's sending thread in the window (/proc/%d/task/%d/io syscw, the thread the Java program named through /proc/thread-self) over the requests answered: that thread makes no other write, while the JVM's other threads (the Flight Recorder's, the program's events to kbench) are not counted; CPU figures are the whole JVM's", jc.Pid(), jc.Tid()))
		if other := goProfileKinds(r.spec.Profiles); len(other) > 0 {
			*notes = append(*notes, fmt.Sprintf("--profile %s: profiles of the Go runtime, which would show kbench relaying the JVM's events, not the JVM: not captured (--profile cpu records the JVM with Java Flight Recorder)", strings.Join(other, ",")))
		}
	}
	if rate > 0 {
		*notes = append(*notes, fmt.Sprintf("throttled to %v requests/s", rate))
	}
	target := requestTarget(&r.spec)
	r.rep.note("kbench: writepath %s: %s × %d records of %d B, %d in flight, to %s",
		r.spec.Strategy, requestsText(target, r.spec.Duration), shape.Records, len(shape.Payload), shape.InFlight, r.res.Environment.Broker)

	runPhase := func(name string, n int64, deadline time.Time, measured bool) error {
		r.rep.phase(name, n)
		before := stats.respondedCount()
		stop := r.tickProgress(name, n, func() int64 { return stats.respondedCount() - before })
		defer stop()
		var err error
		withRole(ctx, roleSend, func(ctx context.Context) {
			err = client.Send(ctx, send.Phase{N: n, Deadline: deadline, Rate: rate, Measured: measured})
		})
		if serr := stats.Err(); serr != nil {
			err = serr
		}
		if err != nil {
			return r.explain(err)
		}
		return ctx.Err()
	}
	recordJFR := jc != nil && r.opts.OutDir != "" && slices.Contains(r.spec.Profiles, string(rundoc.KindCPU))
	if recordJFR {
		// Flight Recorder starts before the warm-up: starting it
		// retransforms JDK classes for its I/O events (SocketChannelImpl
		// among them), and HotSpot then deoptimizes all compiled code
		// (-Xlog:redefine+class+nmethod=debug says "Marked all nmethods
		// for deopt"); the warm-up compiles it again, so the window does
		// not run interpreted.
		if err := jc.InitJFR(ctx); err != nil {
			return fmt.Errorf("java flight recorder: %w", err)
		}
	}
	if w := r.spec.WarmupRequests; w > 0 {
		r.rep.note("kbench: warming up with %d requests", w)
		if err := runPhase("warmup", w, time.Time{}, false); err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		r.res.Measurement.WarmupRecords = w * int64(shape.Records)
	}
	if jc != nil {
		if recordJFR {
			// The recording starts just before the window's counters and
			// stops just after them.
			if err := jc.StartJFR(ctx); err != nil {
				return fmt.Errorf("java flight recorder: %w", err)
			}
		}
		r.ext = &extProcess{pid: jc.Pid(), tid: jc.Tid(), name: "the JVM"}
	}
	if err := r.openWindow(); err != nil {
		return err
	}
	stopIntervals := r.writepathIntervals(shape, stats)
	stopLog := r.logIntervals(loggedHist{rundoc.HistRequestLatency, &stats.mu, stats.hist})
	stopSeries := r.recordSeries(func(secs float64) rundoc.SeriesPoint {
		stats.mu.Lock()
		c := stats.point.take()
		stats.mu.Unlock()
		records := c.records * int64(shape.Records)
		return c.point(secs, records, records*int64(len(shape.Payload)), c.records)
	})
	var deadline time.Time
	if r.spec.Duration > 0 {
		deadline = time.Now().Add(time.Duration(r.spec.Duration * float64(time.Second)))
	}
	phaseErr := runPhase("measure", target, deadline, true)
	r.win.stop()
	stopIntervals()
	stopSeries()
	stopLog()
	r.win.snapshot()
	r.rep.phase("finishing", 0)
	if recordJFR && phaseErr == nil {
		r.windowJFR(ctx, jc)
	}
	closeClient()

	r.writepathResults(shape, stats, client)
	if phaseErr != nil {
		return phaseErr
	}
	if target > 0 && stats.measured < target {
		return fmt.Errorf("%w: %d of %d requests answered", ErrIncomplete, stats.measured, target)
	}
	return nil
}

func requestsText(n int64, duration float64) string {
	if n > 0 {
		return fmt.Sprintf("%d requests", n)
	}
	return fmt.Sprintf("%v s of requests", duration)
}

// writepathClient connects the strategy's client to the partition leader
// (for the raw strategies) or the bootstrap servers (kafka-go).
func (r *run) writepathClient(ctx context.Context, shape *writepath.Shape) (writepath.Client, error) {
	switch r.spec.Strategy {
	case rundoc.StrategyKafkaGo:
		tr, err := r.transport("writepath")
		if err != nil {
			return nil, err
		}
		return writepath.NewKafkaGoWriter(shape, r.brokers, tr, &metadataCache{next: tr, topic: shape.Topic}), nil
	case rundoc.StrategyKafkaGoConn:
		dialer, err := r.st.sec.Dialer(shape.ClientID, r.st.setupTimeout)
		if err != nil {
			return nil, err
		}
		conn, err := dialer.DialLeader(ctx, "tcp", r.brokers[0], shape.Topic, 0)
		if err != nil {
			return nil, fmt.Errorf("kafka-go DialLeader: %w", r.explain(err))
		}
		return writepath.NewKafkaGoConn(conn, shape)
	}
	leader := r.brokers[0]
	if !r.spec.Sink {
		var err error
		if leader, err = r.partitionLeader(ctx); err != nil {
			return nil, err
		}
	}
	req, err := writepath.EncodeRequest(shape)
	if err != nil {
		return nil, err
	}
	if rundoc.IsJavaStrategy(r.spec.Strategy) {
		return r.startJavaClient(ctx, leader, req, shape)
	}
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, r.st.setupTimeout)
	defer cancel()
	c, err := d.DialContext(dctx, "tcp", leader)
	if err != nil {
		return nil, r.explain(fmt.Errorf("dial partition leader %s: %w", leader, err))
	}
	return writepath.NewRawClient(c.(*net.TCPConn), req, r.spec.Strategy, shape), nil
}

// startJavaClient starts the run's Java strategy, refusing it with what to
// install when the JDK is missing.
func (r *run) startJavaClient(ctx context.Context, addr string, req *wire.Request, shape *writepath.Shape) (*writepath.JavaClient, error) {
	tools, err := jdk.Find(r.opts.JavaHome)
	if err != nil {
		return nil, rundoc.NewFieldError("strategy", "%s needs a JDK: %v", r.spec.Strategy, err)
	}
	return writepath.NewJavaClient(ctx, tools, addr, req, r.spec.Strategy, shape, r.st.setupTimeout)
}

// partitionLeader finds the leader of partition 0 of the run's topic.
func (r *run) partitionLeader(ctx context.Context) (string, error) {
	client, done, err := r.adminClient()
	if err != nil {
		return "", err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{r.spec.Topic}})
	if err != nil {
		return "", fmt.Errorf("topic %s metadata: %w", r.spec.Topic, r.explain(err))
	}
	for _, t := range md.Topics {
		if t.Name != r.spec.Topic {
			continue
		}
		for _, p := range t.Partitions {
			if p.ID == 0 {
				if p.Leader.Host == "" {
					return "", fmt.Errorf("topic %s partition 0 has no leader", r.spec.Topic)
				}
				return net.JoinHostPort(p.Leader.Host, strconv.Itoa(p.Leader.Port)), nil
			}
		}
	}
	return "", fmt.Errorf("topic %s partition 0 missing from metadata", r.spec.Topic)
}

// writepathIntervals prints an interval line every reporting interval (the
// series has its own step: recordSeries).
func (r *run) writepathIntervals(shape *writepath.Shape, st *wpStats) (stop func()) {
	last := time.Now()
	// The open window knows whose I/O the run measures (the JVM's sending
	// thread, or this process).
	readIO := r.win.readIO
	io0, ioErr := readIO()
	return every(time.Duration(r.spec.ReportingInterval)*time.Millisecond, func(now time.Time) {
		st.mu.Lock()
		c := st.line.take()
		st.mu.Unlock()
		n := c.records
		syscalls := -1.0
		if ioErr == nil {
			if io1, err := readIO(); err == nil {
				if n > 0 {
					syscalls = float64(io1.Sub(io0).Syscw) / float64(n)
				}
				io0 = io1
			}
		}
		secs := now.Sub(last).Seconds()
		last = now
		records := n * int64(shape.Records)
		pt := c.point(secs, records, records*int64(len(shape.Payload)), n)
		r.rep.kafka(writepathInterval(n, float64(n)/secs, pt.RecordsPerSec, pt.MBPerSec, pt.LatencyAvgMs, pt.LatencyMaxMs, syscalls))
	})
}

// writepathInterval renders one interval line:
//
//	%d requests sent, %.1f requests/sec, %.1f records/sec (%.2f MB/sec), %.3f ms avg latency, %.3f ms max latency, %.2f write syscalls/request.
//
// The syscall clause is left out where /proc/self/io is unavailable.
func writepathInterval(requests int64, reqRate, recRate, mbRate, avgMs, maxMs, syscallsPerReq float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests sent, %s requests/sec, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency",
		requests, kafkafmt.JavaFixed(reqRate, 1), kafkafmt.JavaFixed(recRate, 1), kafkafmt.JavaFixed(mbRate, 2),
		kafkafmt.JavaFixed(avgMs, 3), kafkafmt.JavaFixed(maxMs, 3))
	if syscallsPerReq >= 0 {
		fmt.Fprintf(&b, ", %s write syscalls/request", kafkafmt.JavaFixed(syscallsPerReq, 2))
	}
	b.WriteString(".\n")
	return b.String()
}

// writepathTotals are the figures of the summary line.
type writepathTotals struct {
	Requests                    int64
	RequestsPerSec, RecordsPerS float64
	MBPerSec                    float64
	AvgMs, MaxMs                float64
	P50, P95, P99, P999         float64
	SyscallsPerRequest          float64 // < 0: unavailable
	BytesPerSyscall             float64
	Strategy                    string
	Shape                       string // "18 buffers/request" or "16 records/request"
}

// writepathSummary renders the summary line:
//
//	%d requests sent, %f requests/sec, %f records/sec (%.2f MB/sec), %.3f ms avg latency, %.3f ms max latency, %.3f ms 50th, %.3f ms 95th, %.3f ms 99th, %.3f ms 99.9th, %.2f write syscalls/request, %.1f bytes/write syscall (STRATEGY, SHAPE).
//
// Latencies have three decimals because a loopback request takes tens of
// microseconds; the syscall clauses are left out where /proc/self/io is
// unavailable.
func writepathSummary(t writepathTotals) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d requests sent, %s requests/sec, %s records/sec (%s MB/sec), %s ms avg latency, %s ms max latency, %s ms 50th, %s ms 95th, %s ms 99th, %s ms 99.9th",
		t.Requests, kafkafmt.JavaFixed(t.RequestsPerSec, 6), kafkafmt.JavaFixed(t.RecordsPerS, 6), kafkafmt.JavaFixed(t.MBPerSec, 2),
		kafkafmt.JavaFixed(t.AvgMs, 3), kafkafmt.JavaFixed(t.MaxMs, 3),
		kafkafmt.JavaFixed(t.P50, 3), kafkafmt.JavaFixed(t.P95, 3), kafkafmt.JavaFixed(t.P99, 3), kafkafmt.JavaFixed(t.P999, 3))
	if t.SyscallsPerRequest >= 0 {
		fmt.Fprintf(&b, ", %s write syscalls/request, %s bytes/write syscall",
			kafkafmt.JavaFixed(t.SyscallsPerRequest, 2), kafkafmt.JavaFixed(t.BytesPerSyscall, 1))
	}
	fmt.Fprintf(&b, " (%s, %s).\n", t.Strategy, t.Shape)
	return b.String()
}

func (r *run) writepathResults(shape *writepath.Shape, st *wpStats, client writepath.Client) {
	secs := r.win.seconds()
	st.mu.Lock()
	defer st.mu.Unlock()
	h := st.hist
	requests := st.measured
	records := requests * int64(shape.Records)
	bytes := records * int64(len(shape.Payload))
	m := &r.res.Measurement
	m.MeasuredRecords = records
	m.LatencySamples = h.count()
	if h.clamped > 0 {
		m.Notes = append(m.Notes, fmt.Sprintf("%d latencies above %v were recorded as %v", h.clamped, time.Hour, time.Hour))
	}
	add := func(name string, v float64, unit string, better rundoc.Better, help string) {
		r.res.Metrics = append(r.res.Metrics, rundoc.Metric{Name: name, Value: v, Unit: unit, Better: better, Help: help})
	}
	add("requests-sent", float64(requests), "requests", "", "Produce requests answered in the measured window")
	add("requests-per-sec", float64(requests)/secs, "requests/s", rundoc.HigherIsBetter, "answered requests / window seconds")
	add("records-per-sec", float64(records)/secs, "records/s", rundoc.HigherIsBetter, "records of the answered requests / window seconds")
	add("mb-per-sec", float64(bytes)/secs/(1<<20), "MB/s", rundoc.HigherIsBetter, "record payload MB/s; MB = 1,048,576 bytes, as Kafka's tools")
	if req := writepath.EncodedRequest(client); req != nil {
		add("buffers-per-request", float64(req.NumBuffers()), "buffers", "", "request header + record-batch header + one per record")
		add("bytes-per-request", float64(req.Len()), "bytes", "", "Produce request size on the wire, size prefix included")
	}
	jc, _ := client.(*writepath.JavaClient)
	if jc != nil && jc.Sent() > 0 {
		add("channel-writes-per-request", float64(jc.Calls())/float64(jc.Sent()), "calls", rundoc.LowerIsBetter,
			"SocketChannel.write calls of the Java program per request, counted by the program: more than 1 for java-gather when the JDK split the request (IOV_MAX buffers per call, or a partial write)")
		if s := jc.Splits(); s != "" {
			m.Notes = append(m.Notes, s)
		}
	}
	r.addLatency(h, rundoc.HistRequestLatency, fmt.Sprintf("write start → response, all %d requests, HdrHistogram µs, 3 significant digits", h.count()), latencyQuantiles)
	syscalls, perSyscall := -1.0, 0.0
	if r.win.ioErr == nil && requests > 0 {
		io := r.win.io1.Sub(r.win.io0)
		syscalls = float64(io.Syscw) / float64(requests)
		help := "write-type syscalls of the process in the window (/proc/self/io syscw) / requests: 1 for one writev or write per request"
		if jc != nil {
			help = fmt.Sprintf("write-type syscalls of the JVM's sending thread in the window (/proc/%d/task/%d/io syscw) / requests: 1 for one writev or write per request", jc.Pid(), jc.Tid())
		}
		add("write-syscalls-per-request", syscalls, "syscalls", rundoc.LowerIsBetter, help)
		if io.Syscw > 0 {
			perSyscall = float64(io.Wchar) / float64(io.Syscw)
		}
	}
	if bytes > 0 {
		cpu := (r.win.cpuEnd - r.win.cpuStart).Seconds()
		who := "client process"
		if jc != nil {
			who = "the JVM's"
		}
		add("cpu-seconds-per-mb", cpu/(float64(bytes)/(1<<20)), "s/MB", rundoc.LowerIsBetter,
			who+" CPU time per MB of record payload (MB = 1,048,576 bytes)")
	}
	r.res.Metrics = append(r.res.Metrics, r.win.processMetrics(bytes)...)
	r.harnessCheck("")

	if requests > 0 {
		shapeText := fmt.Sprintf("%d records/request", shape.Records)
		if req := writepath.EncodedRequest(client); req != nil {
			shapeText = fmt.Sprintf("%d buffers/request", req.NumBuffers())
		}
		r.rep.kafka(writepathSummary(writepathTotals{
			Requests: requests, RequestsPerSec: float64(requests) / secs, RecordsPerS: float64(records) / secs,
			MBPerSec: float64(bytes) / secs / (1 << 20), AvgMs: h.meanMs(), MaxMs: h.maxMs(),
			P50: h.quantileMs(50), P95: h.quantileMs(95), P99: h.quantileMs(99), P999: h.quantileMs(99.9),
			SyscallsPerRequest: syscalls, BytesPerSyscall: perSyscall, Strategy: r.spec.Strategy, Shape: shapeText,
		}))
	}
}

// goProfileKinds are the kinds of --profile other than cpu: Go runtime
// profiles a Java strategy does not capture.
func goProfileKinds(kinds []string) []string {
	var out []string
	for _, k := range kinds {
		if k != string(rundoc.KindCPU) {
			out = append(out, k)
		}
	}
	return out
}

// windowJFR stops the JVM's recording of the window and stores it as the
// client's wall profile.
func (r *run) windowJFR(ctx context.Context, jc *writepath.JavaClient) {
	const file = "client-wall.pb.gz"
	var window func(time.Time) string
	if pw := r.win.windows; pw != nil {
		// JFR prints its events' times on the wall clock (the recording
		// converts the JVM's ticks with its own clock), which this
		// process's window start is read on too: the same machine.
		window = pw.namer()
	}
	sum, err := jc.StopJFR(ctx, filepath.Join(r.opts.OutDir, file), window)
	if err != nil {
		r.win.notes = append(r.win.notes, "the JVM's Flight Recorder profile not captured: "+err.Error())
		return
	}
	r.win.profiles = append(r.win.profiles, rundoc.ProfileFile{Role: rundoc.RoleClient, Kind: rundoc.KindWall, File: file})
	r.win.notes = append(r.win.notes, "client wall profile: the JVM's Java Flight Recorder recording of the window, holding only the two events kbench converts (no socket or file I/O events, which would instrument the very writes measured): "+
		sum.SamplesNote(r.win.end.Sub(r.win.start)))
}
