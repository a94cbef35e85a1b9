package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/kafkasec"
)

// Options are how a run is carried out, as opposed to what it measures.
type Options struct {
	// OutDir receives result.json and the profiles; "" writes nothing and
	// captures no profiles.
	OutDir string
	Stdout io.Writer
	Stderr io.Writer
	// JSONProgress makes stdout a stream of Events (for `kbench serve`).
	JSONProgress bool
	// BrokerCommand starts the embedded broker as a child process; the
	// runner appends --listen and --control. Default: this executable with
	// the "broker" subcommand.
	BrokerCommand []string
	// SinkCommand starts the write-path sink (`kbench run writepath
	// --sink`) as a child process; the runner appends --listen and
	// --control. Default: this executable with "broker --sink".
	SinkCommand []string
	// Meta is the run's metadata (--meta), written into the result with
	// version defaulting to the kafka-go version this binary was built
	// with (resultMeta).
	Meta map[string]string
	// JavaHome is the JDK the write-path lab's Java strategies use
	// (`kbench run --java-home`); "" looks for java, javac and jfr on PATH.
	JavaHome string
	// Stdin is where a fleet's shard (Spec.Shard) reads its start
	// (rundoc.ShardStartLine) once it has said it is ready; `kbench run`
	// passes its standard input.
	Stdin io.Reader
	// keepTopics leaves the topics of --topics in place after the run, so
	// that a test can count what the broker holds in them.
	keepTopics bool
}

// ErrIncomplete marks a run that stopped before measuring everything it
// was asked to; its partial figures are still in the result.
var ErrIncomplete = errors.New("run incomplete")

// run is the state one benchmark shares between its phases.
type run struct {
	spec    rundoc.Spec
	st      settings
	opts    Options
	brokers []string
	child   *childBroker
	rep     *reporter
	res     *rundoc.Result
	win     *window
	// ext is the process the window measures instead of kbench (the JVM
	// of a Java write-path strategy); nil for kbench itself.
	ext *extProcess
	// createdTopics are the topics of --topics this run created, which it
	// deletes when it ends (dropTopics).
	createdTopics []string
	// intervals are the interval histograms logIntervals kept, written
	// next to result.json as its histogram log; guarded by rep.mu.
	intervals []rundoc.Histogram
	// apiFrom and apiVersions are the preflight's ApiVersions answer.
	apiFrom     string
	apiVersions []kafka.ApiVersion
}

// Run executes spec and returns its result. The result is returned (and,
// with OutDir, written) even when the run fails part way: it then has
// Complete false and Error set, and the error is also returned.
func Run(ctx context.Context, spec rundoc.Spec, opts Options) (*rundoc.Result, error) {
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	env := CurrentEnvironment()
	r := &run{
		spec: spec,
		opts: opts,
		rep:  &reporter{stdout: opts.Stdout, stderr: opts.Stderr, json: opts.JSONProgress},
		res: &rundoc.Result{
			Workload:    spec.Workload,
			Spec:        spec.Redacted(),
			Meta:        resultMeta(opts.Meta, env),
			Environment: env,
			StartedAt:   time.Now().UTC(),
			Metrics:     []rundoc.Metric{},
			Series:      []rundoc.SeriesPoint{},
			Profiles:    []rundoc.ProfileFile{},
		},
	}
	err := r.execute(ctx)
	if cause := context.Cause(ctx); err != nil && cause != ctx.Err() && errors.Is(err, ctx.Err()) {
		// Say why the context ended (a signal, a deadline) rather than
		// "context canceled"; errors.Is still matches the original.
		err = fmt.Errorf("%w (%w)", cause, err)
	}
	r.win.close()
	if r.child != nil {
		r.child.stop() // its topics go with it
	} else if !opts.keepTopics {
		r.dropTopics()
	}
	r.finish(err)
	if opts.OutDir != "" {
		if werr := r.writeHistogramLog(opts.OutDir); werr != nil && err == nil {
			err = werr
		}
		if werr := rundoc.WriteResult(opts.OutDir, r.res); werr != nil && err == nil {
			err = werr
		}
	}
	return r.res, err
}

func (r *run) execute(ctx context.Context) error {
	if err := r.spec.Validate(); err != nil {
		return err
	}
	if embeddedTarget(&r.spec) && r.spec.Topics > rundoc.MaxEmbeddedTopics {
		return rundoc.NewFieldError("topics", "at most %d on the embedded broker, which keeps every record in memory; give --bootstrap-server for more", rundoc.MaxEmbeddedTopics)
	}
	st, err := clientSettings(&r.spec)
	if err != nil {
		return err
	}
	// The TLS files are read here, in the run's own process, once: the
	// validation that accepted the spec (a server's too) opened none.
	if st.sec, err = st.sec.Load(); err != nil {
		return rundoc.NewFieldError(rundoc.PropsFlag(r.spec.Workload), "%v", err)
	}
	r.st = st
	r.res.Environment.Config = r.resolvedConfig()
	// The spec's own notes (--notes) come first: what its maker says of it.
	r.res.Measurement.Notes = append(r.res.Measurement.Notes, r.spec.Notes...)
	if r.opts.OutDir != "" {
		if err := os.MkdirAll(r.opts.OutDir, 0o755); err != nil {
			return fmt.Errorf("runner: output directory: %w", err)
		}
	}
	r.rep.phase("starting", 0)
	if r.spec.Workload == rundoc.Writepath && r.spec.Sink {
		if err := r.startSink(ctx); err != nil {
			return err
		}
	} else if embeddedTarget(&r.spec) {
		cmd := r.opts.BrokerCommand
		if len(cmd) == 0 {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("runner: find kbench binary for the embedded broker: %w", err)
			}
			cmd = []string{exe, "broker"}
		}
		if r.st.sec.Protocol != "" && r.st.sec.Protocol != "PLAINTEXT" {
			return rundoc.NewFieldError(rundoc.PropsFlag(r.spec.Workload), "security.protocol %s needs --bootstrap-server: the embedded broker speaks PLAINTEXT", r.st.sec.Protocol)
		}
		nodes := r.spec.EmbeddedBrokers()
		if nodes > 1 {
			// As many brokers as the topics' replicas, so that a
			// --replication-factor (OMB's stock 3) is accepted.
			cmd = append(append([]string(nil), cmd...), "--brokers", strconv.Itoa(nodes))
		}
		child, err := startChildBroker(ctx, cmd)
		if err != nil {
			return err
		}
		r.child = child
		r.brokers = []string{child.addr}
		r.res.Environment.Broker = "embedded kfake (own process, log.segment.bytes=1048576) at " + child.addr
		if nodes > 1 {
			r.res.Environment.Broker = fmt.Sprintf("embedded kfake (own process, %d brokers for --replication-factor %d, one copy of the data whatever the factor, log.segment.bytes=1048576) at %s",
				nodes, r.spec.ReplicationFactor, child.addr)
		}
		r.rep.note("kbench: embedded broker at %s (pid %d)", child.addr, child.cmd.Process.Pid)
	} else {
		r.brokers = brokers(&r.spec)
		r.res.Environment.Broker = strings.Join(r.brokers, ",")
	}
	if err := r.preflight(ctx); err != nil {
		return err
	}
	r.res.Environment.Target = newTarget(targetKind(&r.spec), r.apiFrom, r.apiVersions)
	r.res.Environment.Target.Cluster = r.spec.Cluster
	switch r.spec.Workload {
	case rundoc.Producer:
		return r.produce(ctx)
	case rundoc.Consumer:
		return r.consume(ctx)
	case rundoc.Writepath:
		return r.writepath(ctx)
	case rundoc.E2E:
		return r.e2e(ctx)
	}
	return rundoc.NewFieldError("workload", "unknown workload %q", r.spec.Workload)
}

// finish fills in what every result carries, whatever happened.
func (r *run) finish(err error) {
	r.res.FinishedAt = time.Now().UTC()
	r.res.Complete = err == nil
	if err != nil {
		r.res.Error = err.Error()
	}
	if r.win != nil {
		r.res.Profiles = append(r.res.Profiles, r.win.profiles...)
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, r.win.notes...)
		r.res.Measurement.WindowSeconds = r.win.seconds()
		r.res.Measurement.CPUSamples = r.win.cpu.Samples
		r.res.Measurement.CPUSampleMs = cpuSampleInterval.Milliseconds()
	}
	r.res.Output = r.rep.text()
	r.rep.emit(rundoc.Event{Type: rundoc.EventDone, Complete: r.res.Complete, Error: r.res.Error})
}

// awaitStart is a fleet's shard's side of the common start: set up,
// it says it is ready (an EventReady, and a note for a reader of its
// text) and waits for its worker's start line on stdin. The start is a
// time of this machine's clock, and may already have passed.
func (r *run) awaitStart(ctx context.Context) (time.Time, error) {
	if r.opts.Stdin == nil {
		return time.Time{}, errors.New("a fleet's shard reads its start on stdin, and this run has none")
	}
	r.rep.emit(rundoc.Event{Type: rundoc.EventReady})
	r.rep.note("kbench: shard %d/%d ready: waiting for its start on stdin", r.spec.Shard.Index+1, r.spec.Shard.Count)
	line := make(chan string, 1)
	failed := make(chan error, 1)
	// A read cannot be interrupted: a canceled run leaves this goroutine
	// blocked until stdin ends, which its worker's exit does.
	go func() {
		l, err := bufio.NewReader(r.opts.Stdin).ReadString('\n')
		if err != nil && l == "" {
			failed <- fmt.Errorf("waiting for the fleet's start: stdin: %w", err)
			return
		}
		line <- l
	}()
	select {
	case <-ctx.Done():
		return time.Time{}, ctx.Err()
	case err := <-failed:
		return time.Time{}, err
	case l := <-line:
		return rundoc.ParseShardStart(l, time.Now())
	}
}

// startedAt records when a shard's window opened against its start t0.
func (r *run) startedAt(t0 time.Time) {
	now := time.Now()
	lag := float64(now.Sub(t0)) / float64(time.Millisecond)
	r.res.Measurement.ShardStart = &rundoc.ShardStart{T0: t0.UTC(), Window: now.UTC(), LagMs: lag}
	r.res.Measurement.Notes = append(r.res.Measurement.Notes, fmt.Sprintf(
		"fleet start: the measured window opened %.1f ms after the start the shard was given (%s by its clock), once its warm-up's records were acknowledged",
		lag, t0.UTC().Format(time.RFC3339Nano)))
}

// openWindow starts the measured window of this run.
func (r *run) openWindow() error {
	w, err := openWindow(r.opts.OutDir, r.spec.Profiles, r.child, r.ext, r.spec.WantsProfileWindows())
	if err != nil {
		return err
	}
	w.records = &r.res.Measurement.MeasuredRecords
	r.win = w
	if r.opts.OutDir == "" && len(r.spec.Profiles) > 0 {
		r.rep.note("kbench: no --out directory, so no profiles are written")
	}
	return nil
}

// transport is a fresh kafka-go Transport: the shared default one caches
// metadata across runs, which would let one run's topic state leak into
// the next.
func (r *run) transport(role string) (*kafka.Transport, error) {
	return r.st.sec.Transport(r.clientID(role), r.st.setupTimeout)
}

func (r *run) clientID(role string) string {
	if r.st.clientID != "" {
		return r.st.clientID
	}
	return "kbench-" + role
}

// explain turns kafka-go's terse network and auth failures into messages
// that say what to check.
func (r *run) explain(err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	err = kafkasec.Explain(err, r.st.sec)
	if errors.Is(err, kafkasec.ErrNoAnswer) {
		return err // it names the broker and says what happened
	}
	var opErr interface{ Timeout() bool }
	msg := err.Error()
	switch {
	case strings.Contains(msg, "connection refused"), strings.Contains(msg, "no such host"),
		errors.As(err, &opErr) && opErr.Timeout() && strings.Contains(msg, "dial"):
		return fmt.Errorf("cannot reach broker %s: %w", strings.Join(r.brokers, ","), err)
	}
	return err
}

// preflight connects to the bootstrap servers once, with the run's TLS and
// SASL settings, before anything else, and asks the broker for its API
// versions, which the result keeps (Environment.Target). kafka-go's
// Client reports a refused connection, a failed login or a broker that
// never answers as "Broker Not Available" or a bare EOF;
// a direct dial and one request report what really happened. The answer
// must come within socket.connection.setup.timeout.ms of the dial.
func (r *run) preflight(ctx context.Context) error {
	if len(r.brokers) == 0 {
		return rundoc.NewFieldError("bootstrap-server", "no bootstrap server given")
	}
	dialer, err := r.st.sec.Dialer(r.clientID("preflight"), r.st.setupTimeout)
	if err != nil {
		return err
	}
	var errs []error
	for _, addr := range r.brokers {
		if err := r.probe(ctx, dialer, addr); err != nil {
			errs = append(errs, err)
			continue
		}
		return nil
	}
	return r.explain(errors.Join(errs...))
}

// probe dials addr and waits for its answer to an ApiVersions request,
// which every Kafka broker answers, before or without authentication.
func (r *run) probe(ctx context.Context, dialer *kafka.Dialer, addr string) error {
	deadline := time.Now().Add(r.st.setupTimeout)
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The request is not bound to ctx: a canceled run closes the
	// connection, which ends the wait.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := conn.SetDeadline(deadline); err != nil {
		return err
	}
	vs, err := conn.ApiVersions()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("broker %s: %w", addr, err)
	}
	r.apiFrom, r.apiVersions = addr, vs
	return nil
}

// adminClient is a kafka-go client for the run's admin requests
// (metadata, offsets, topic creation), on a transport of its own that
// done closes.
func (r *run) adminClient() (client *kafka.Client, done func(), err error) {
	tr, err := r.transport("admin")
	if err != nil {
		return nil, nil, err
	}
	return &kafka.Client{Addr: kafka.TCP(r.brokers...), Transport: tr, Timeout: 30 * time.Second}, tr.CloseIdleConnections, nil
}

// ensureTopics makes the run's topics and returns them with their
// partition count: the one --topic as ensureTopic does; with --topics N,
// N topics created fresh, none of which may exist before (such a run
// measures an empty start, and deleting someone's topic is not kbench's
// to do), deleted when the run ends. A fleet's shard (Spec.Shard) makes
// those of its topics that do not exist yet: the fleet's shards share
// them, so whichever comes first creates each, none refuses one that
// exists, and none deletes them after (the others may still be reading);
// each must have the partitions the fleet was divided by.
func (r *run) ensureTopics(ctx context.Context) ([]string, int, error) {
	shard := r.spec.Shard
	if r.spec.Topics == 0 && shard == nil {
		p, err := r.ensureTopic(ctx)
		return []string{r.spec.Topic}, p, err
	}
	names := r.spec.TopicNames()
	if shard != nil {
		names = r.spec.ShardTopics()
	}
	client, done, err := r.adminClient()
	if err != nil {
		return nil, 0, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	req := &kafka.CreateTopicsRequest{}
	// --replication-factor and --topic-config (OMB's driver
	// replicationFactor and topicConfig), else the broker's defaults.
	replicas := -1
	if r.spec.ReplicationFactor > 0 {
		replicas = r.spec.ReplicationFactor
	}
	configs := topicConfigEntries(r.spec.TopicConfig)
	for _, n := range names {
		req.Topics = append(req.Topics, kafka.TopicConfig{Topic: n, NumPartitions: r.spec.Partitions, ReplicationFactor: replicas, ConfigEntries: configs})
	}
	resp, err := client.CreateTopics(ctx, req)
	if err != nil {
		return nil, 0, fmt.Errorf("create topics %s to %s: %w", names[0], names[len(names)-1], r.explain(err))
	}
	var exists []string
	var failed error
	for _, n := range names {
		switch terr := resp.Errors[n]; {
		case terr == nil && shard == nil:
			r.createdTopics = append(r.createdTopics, n)
		case terr == nil:
		case errors.Is(terr, kafka.TopicAlreadyExists):
			exists = append(exists, n)
		case failed == nil:
			failed = fmt.Errorf("create topic %s: %w", n, terr)
		}
	}
	if len(exists) > 0 && shard == nil {
		shown := strings.Join(exists[:min(len(exists), 3)], ", ")
		if len(exists) > 3 {
			shown += ", …"
		}
		return nil, 0, rundoc.NewFieldError("topics", "%d of the %d topics exist already (%s): a run of --topics creates its topics fresh and deletes them after; "+
			"delete them or choose another --topic", len(exists), len(names), shown)
	}
	if failed != nil {
		return nil, 0, failed
	}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: names})
	if err != nil {
		return nil, 0, fmt.Errorf("topics' metadata: %w", r.explain(err))
	}
	found := map[string]int{}
	for _, t := range md.Topics {
		if t.Error != nil {
			return nil, 0, fmt.Errorf("topic %s metadata: %w", t.Name, t.Error)
		}
		found[t.Name] = len(t.Partitions)
	}
	for _, n := range names {
		switch {
		case found[n] == r.spec.Partitions:
		case shard != nil:
			return nil, 0, fmt.Errorf("topic %s has %d partitions, but the fleet was divided by %d: delete it or choose another --topic", n, found[n], r.spec.Partitions)
		default:
			return nil, 0, fmt.Errorf("topic %s has %d partitions after its creation, want %d", n, found[n], r.spec.Partitions)
		}
	}
	r.res.Environment.Config.Set("partitions", strconv.Itoa(r.spec.Partitions))
	if shard == nil {
		r.res.Environment.Config.Set("topics", strconv.Itoa(len(names)))
	}
	if replicas > 0 {
		r.res.Environment.Config.Set("replication.factor", strconv.Itoa(replicas))
	}
	for _, c := range configs {
		r.res.Environment.Config.Set("topic."+c.ConfigName, c.ConfigValue)
	}
	if shard != nil {
		r.res.Environment.Config.Set("shard", fmt.Sprintf("%d/%d", shard.Index+1, shard.Count))
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, shard.String()+
			": it sends to (and e2e reads) only its own partitions; the fleet's topics are shared by its shards and kept after the run")
	}
	return names, r.spec.Partitions, nil
}

// topicConfigEntries are --topic-config's pairs as CreateTopics takes
// them, in name order so that requests and results read alike.
func topicConfigEntries(m map[string]string) []kafka.ConfigEntry {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]kafka.ConfigEntry, 0, len(keys))
	for _, k := range keys {
		out = append(out, kafka.ConfigEntry{ConfigName: k, ConfigValue: m[k]})
	}
	return out
}

// dropTopics deletes the topics the run created (ensureTopics), whatever
// became of the run; one it cannot delete is said on stderr and in the
// result's notes, as a leftover that blocks the next run of the same
// topics.
func (r *run) dropTopics() {
	if len(r.createdTopics) == 0 {
		return
	}
	err := func() error {
		client, done, err := r.adminClient()
		if err != nil {
			return err
		}
		defer done()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		resp, err := client.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: r.createdTopics})
		if err != nil {
			return err
		}
		var errs []error
		for _, n := range r.createdTopics {
			if terr := resp.Errors[n]; terr != nil {
				errs = append(errs, fmt.Errorf("%s: %w", n, terr))
			}
		}
		return errors.Join(errs...)
	}()
	if err != nil {
		msg := fmt.Sprintf("the run's topics could not all be deleted (%v): delete them before the next run of these topics", err)
		r.rep.note("kbench: %s", msg)
		r.res.Measurement.Notes = append(r.res.Measurement.Notes, msg)
	}
	r.createdTopics = nil
}

// ensureTopic creates the topic when it does not exist and returns its
// partition count.
func (r *run) ensureTopic(ctx context.Context) (int, error) {
	client, done, err := r.adminClient()
	if err != nil {
		return 0, err
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	resp, err := client.CreateTopics(ctx, &kafka.CreateTopicsRequest{Topics: []kafka.TopicConfig{{
		Topic:             r.spec.Topic,
		NumPartitions:     r.spec.Partitions,
		ReplicationFactor: -1,
	}}})
	if err != nil {
		return 0, fmt.Errorf("create topic %s: %w", r.spec.Topic, r.explain(err))
	}
	if terr := resp.Errors[r.spec.Topic]; terr != nil && !errors.Is(terr, kafka.TopicAlreadyExists) {
		return 0, fmt.Errorf("create topic %s: %w", r.spec.Topic, terr)
	}
	md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{r.spec.Topic}})
	if err != nil {
		return 0, fmt.Errorf("topic %s metadata: %w", r.spec.Topic, r.explain(err))
	}
	for _, t := range md.Topics {
		if t.Name == r.spec.Topic {
			if t.Error != nil {
				return 0, fmt.Errorf("topic %s metadata: %w", r.spec.Topic, t.Error)
			}
			if len(t.Partitions) == 0 {
				return 0, fmt.Errorf("topic %s has no partitions", r.spec.Topic)
			}
			r.res.Environment.Config.Set("partitions", strconv.Itoa(len(t.Partitions)))
			if len(t.Partitions) != r.spec.Partitions {
				r.rep.note("kbench: topic %s already exists with %d partitions (--partitions %d applies only when kbench creates it)",
					r.spec.Topic, len(t.Partitions), r.spec.Partitions)
			}
			return len(t.Partitions), nil
		}
	}
	return 0, fmt.Errorf("topic %s missing from metadata", r.spec.Topic)
}

// payloads returns the record values to send. Like Kafka's tool, generated
// payloads are random uppercase letters; a payload file is split by its
// delimiter and records pick one of its payloads at random.
func (r *run) payloads() ([][]byte, error) {
	if len(r.spec.Payload) > 0 {
		return [][]byte{r.spec.Payload}, nil
	}
	if r.spec.PayloadFile == "" {
		p := make([]byte, r.spec.RecordSize)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range p {
			p[i] = byte('A' + rng.IntN(26))
		}
		return [][]byte{p}, nil
	}
	data, err := os.ReadFile(r.spec.PayloadFile)
	if err != nil {
		return nil, rundoc.NewFieldError("payload-file", "%v", err)
	}
	delim := r.spec.PayloadDelimiter
	if delim == "" {
		delim = "\n"
	}
	var out [][]byte
	for _, p := range strings.Split(string(data), delim) {
		if p != "" {
			out = append(out, []byte(p))
		}
	}
	if len(out) == 0 {
		return nil, rundoc.NewFieldError("payload-file", "%s holds no payloads", r.spec.PayloadFile)
	}
	return out, nil
}

// share splits n records across k workers, the remainder to the first ones.
func share(n int64, k, i int) int64 {
	s := n / int64(k)
	if int64(i) < n%int64(k) {
		s++
	}
	return s
}

// resultMeta is the metadata a run records: the caller's tags, and
// version, when not given, the kafka-go version the binary was built with
// (the code kbench measures; a build against a kafka-go branch through a
// replace directive records the replacement). The Go version is in the
// environment already. A version rundoc would refuse (too long for a tag)
// is left out rather than failing the run.
func resultMeta(meta map[string]string, env rundoc.Environment) map[string]string {
	defaults := map[string]string{}
	if v := env.KafkaGoVersion; v != "" && rundoc.ValidateMeta(map[string]string{rundoc.MetaVersion: v}) == nil {
		defaults[rundoc.MetaVersion] = v
	}
	return rundoc.WithDefaultMeta(meta, defaults)
}
