package rundoc

import "fmt"

// The write-path workload (`kbench run writepath`) sends Kafka Produce
// requests built from many buffers, as a client's request builder lays
// them out, and measures what the way they are written costs (see
// runner's writepath.go). These are its flags.

// Write strategies (--strategy).
const (
	// StrategyGather writes all buffers of a request with one
	// net.Buffers.WriteTo on the *net.TCPConn: one writev(2) per request
	// (per 1024 buffers).
	StrategyGather = "gather"
	// StrategyPerBuffer calls Write once per buffer: one write(2) each.
	StrategyPerBuffer = "per-buffer"
	// StrategyCopy copies the buffers into one reused buffer and writes
	// it with one Write.
	StrategyCopy = "copy"
	// StrategyKafkaGo sends the same records with kafka-go's Writer
	// (its Transport encodes and writes the request).
	StrategyKafkaGo = "kafka-go"
	// StrategyKafkaGoConn sends them with kafka-go's low-level Conn
	// (WriteMessages).
	StrategyKafkaGoConn = "kafka-go-conn"
	// StrategyJavaGather sends the same request bytes from a JVM with one
	// SocketChannel.write(ByteBuffer[]) per request: the JDK's
	// GatheringByteChannel path, one writev(2) of up to IOV_MAX buffers.
	StrategyJavaGather = "java-gather"
	// StrategyJavaPerBuffer calls SocketChannel.write(ByteBuffer) once
	// per buffer: one write(2) each.
	StrategyJavaPerBuffer = "java-per-buffer"
	// StrategyJavaCopy copies the buffers into one heap ByteBuffer and
	// writes that.
	StrategyJavaCopy = "java-copy"
)

// WritepathStrategies lists the strategies in the order --help shows them.
func WritepathStrategies() []string {
	return append(GoWritepathStrategies(), JavaWritepathStrategies()...)
}

// GoWritepathStrategies are the strategies kbench's Go process runs.
func GoWritepathStrategies() []string {
	return []string{StrategyGather, StrategyPerBuffer, StrategyCopy, StrategyKafkaGo, StrategyKafkaGoConn}
}

// JavaWritepathStrategies are the strategies a JVM runs; they need a JDK
// (java, javac and jfr) where the run executes.
func JavaWritepathStrategies() []string {
	return []string{StrategyJavaGather, StrategyJavaPerBuffer, StrategyJavaCopy}
}

// IsJavaStrategy reports whether strategy runs in a JVM.
func IsJavaStrategy(strategy string) bool {
	return strategy == StrategyJavaGather || strategy == StrategyJavaPerBuffer || strategy == StrategyJavaCopy
}

// Bounds of the write path's flags, and --duration's.
const (
	// DefaultWritepathRequests is the measured requests without
	// --requests or --duration.
	DefaultWritepathRequests = 20000
	// MaxRequestPayload bounds records-per-request × record-size, well
	// under Kafka's socket.request.max.bytes (100 MiB) with framing.
	MaxRequestPayload = 64 << 20
	// MinDuration and MaxDuration bound --duration (seconds): shorter
	// measures nothing, and far longer would overflow time.Duration.
	MinDuration = 0.001
	MaxDuration = 7 * 24 * 3600
)

func writepathDefaults(s *Spec) {
	s.NumRecords = 0
	s.RecordSize = 256
	s.Strategy = StrategyGather
	s.RecordsPerRequest = 16
	s.InFlight = 5
	s.Acks = "all"
}

var writepathOnly = []Workload{Writepath}

// writepathOptions are the flags only the write-path workload takes.
func writepathOptions() []option {
	return []option{
		{name: "strategy", kind: kindString, workloads: writepathOnly,
			help: "how requests are written",
			set:  func(s *Spec, v []string) error { s.Strategy = v[0]; return nil },
			get:  func(s *Spec) string { return s.Strategy },
			choices: []Choice{
				{Value: StrategyGather, Help: "one writev of all buffers"},
				{Value: StrategyPerBuffer, Help: "one write per buffer"},
				{Value: StrategyCopy, Help: "copy into one buffer, one write"},
				{Value: StrategyKafkaGo, Help: "kafka-go's Writer"},
				{Value: StrategyKafkaGoConn, Help: "kafka-go's Conn"},
				{Value: StrategyJavaGather, Help: "a JVM, one SocketChannel.write(ByteBuffer[]); needs a JDK"},
				{Value: StrategyJavaPerBuffer, Help: "a JVM, one SocketChannel.write per buffer; needs a JDK"},
				{Value: StrategyJavaCopy, Help: "a JVM, copy into one heap ByteBuffer, one write; needs a JDK"},
			}},
		{name: "requests", kind: kindInt, workloads: writepathOnly,
			help: fmt.Sprintf("Produce requests in the measured window, after the warm-up (default %d unless --duration is given)", DefaultWritepathRequests),
			set:  intSetter(func(s *Spec, n int64) { s.Requests = n })},
		{name: "records-per-request", kind: kindInt, workloads: writepathOnly,
			help: "records per Produce request; a request is this many buffers plus 2 (request header, record-batch header)",
			set:  intSetter(func(s *Spec, n int64) { s.RecordsPerRequest = int(n) })},
		{name: "in-flight", kind: kindInt, workloads: writepathOnly,
			help: "requests sent before waiting for a response (kafka-go's Writer itself keeps only one in flight per partition)",
			set:  intSetter(func(s *Spec, n int64) { s.InFlight = int(n) })},
		{name: "warmup-requests", kind: kindInt, workloads: writepathOnly,
			help: "requests sent before the measured window, in no figure",
			set:  intSetter(func(s *Spec, n int64) { s.WarmupRequests = n })},
		{name: "request-rate", aliases: []string{"throughput"}, key: "throughput", kind: kindFloat, workloads: writepathOnly,
			help: "maximum requests/s, a throttle; -1 for no limit",
			set:  floatSetter(func(s *Spec, f float64) { s.Throughput = f })},
		{name: "acks", kind: kindString, workloads: writepathOnly,
			help: "acks of the requests (0 is refused: brokers answer no such request)",
			set:  func(s *Spec, v []string) error { s.Acks = v[0]; return nil },
			get:  func(s *Spec) string { return s.Acks },
			choices: []Choice{
				{Value: "all", Aliases: []string{"-1"}, Help: "every in-sync replica has the records"},
				{Value: "1", Help: "the leader has them"},
			}},
		{name: "sink", kind: kindBool, workloads: writepathOnly,
			help: "send to kbench's sink (its own process; answers Produce requests at once, stores nothing) instead of a broker",
			set:  boolSetter(func(s *Spec, b bool) { s.Sink = b })},
	}
}

// validateWritepath adds the errors of a write-path spec's own flags (the
// shared ones are checked by validate, as for the other workloads).
func (s *Spec) validateWritepath(errs *FieldErrors) {
	check := func(bad bool, field, format string, args ...any) {
		if bad {
			errs.Add(field, format, args...)
		}
	}
	check(s.Requests < 0, "requests", "must be at least 1, got %d", s.Requests)
	check(s.Duration > 0 && s.Requests > 0 && !errs.Has("requests"), "duration", "give --requests or --duration, not both")
	check(s.RecordsPerRequest < 1 || s.RecordsPerRequest > 1000000, "records-per-request",
		"must be between 1 and 1000000, got %d", s.RecordsPerRequest)
	check(s.RecordSize < 1, "record-size", "must be at least 1 byte, got %d", s.RecordSize)
	check(!errs.Has("records-per-request") && !errs.Has("record-size") &&
		int64(s.RecordSize)*int64(s.RecordsPerRequest) > MaxRequestPayload, "records-per-request",
		"%d records of %d B make a request over %d MiB", s.RecordsPerRequest, s.RecordSize, MaxRequestPayload>>20)
	check(s.InFlight < 1 || s.InFlight > 1024, "in-flight", "must be between 1 and 1024, got %d", s.InFlight)
	check(s.WarmupRequests < 0, "warmup-requests", "must not be negative, got %d", s.WarmupRequests)
	check(s.Throughput == 0 || (s.Throughput < 0 && s.Throughput != -1), "request-rate",
		"must be positive requests/s, or -1 for no limit, got %v", s.Throughput)
	check(s.Throughput > 0 && s.Throughput < MinRate, "request-rate",
		"must be at least %v requests/s, or -1 for no limit, got %v", MinRate, s.Throughput)
	check(s.Sink && len(s.Targets()) > 0, "sink", "sends to kbench's own sink; give no --bootstrap-server with it")
	// Any other value is refused with the choices (see validate).
	check(s.Acks == "0", "acks", "0 is not measurable: a broker answers no request sent with acks=0; use all or 1")
}
