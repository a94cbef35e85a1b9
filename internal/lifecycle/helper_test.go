package lifecycle

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/pgtest"
	"github.com/kbench/kbench/internal/testutil/storetest"

	"github.com/kbench/kbench/internal/store"
)

// helperArg, as the test binary's first argument, makes it stand in for
// `kbench run` (see helperRun): the lifecycle starts it as a real child
// process, in its own process group, reads its progress lines and ingests
// the directory it leaves, exactly as it does with kbench.
const helperArg = "lifecycle-helper-run"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperArg {
		os.Exit(helperRun(os.Args[2], os.Args[3:]))
	}
	// The tests' databases are copies of one with kbench's and River's
	// tables.
	os.Exit(pgtest.Main(m, storetest.MigratePostgres))
}

// Files the helper leaves in its output directory besides kbench's own.
const (
	startedMarker  = "helper-started"  // the process started
	receivedSecret = "helper-password" // the sasl.password it was given
)

// helperRun is `kbench run --spec S --out D --progress json` in mode:
//
//   - "succeed": reports a phase, an interval and Kafka output, writes a
//     complete result with a metric, the point and a heap profile, exits 0;
//   - "wait": reports the same, then waits for SIGINT and writes a partial
//     result (Complete false), as kbench does when stopped;
//   - "ignore": reports the same, then ignores SIGINT (only SIGKILL ends it);
//   - "slow": as "succeed", two seconds later;
//   - "fail": writes to stderr and exits 2 without a result;
//   - "shard": as "succeed", once the start it reads on stdin has come
//     (rundoc.ShardStartLine), with the result's Measurement.ShardStart.
func helperRun(mode string, args []string) int {
	var out, specPath string
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--out":
			out = args[i+1]
		case "--spec":
			specPath = args[i+1]
		}
	}
	ints := make(chan os.Signal, 1)
	signal.Notify(ints, os.Interrupt)
	if err := os.WriteFile(filepath.Join(out, startedMarker), nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	spec, err := rundoc.ReadSpecFile(specPath, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if pw, ok := spec.Props["sasl.password"]; ok {
		os.WriteFile(filepath.Join(out, receivedSecret), []byte(pw), 0o600)
	}
	enc := json.NewEncoder(os.Stdout)
	point := rundoc.SeriesPoint{T: 1, Records: 100, Bytes: 51200, RecordsPerSec: 100, MBPerSec: 0.05}
	const text = "100 records sent, 100.0 records/sec (0.05 MB/sec), 1.0 ms avg latency, 2.0 ms max latency.\n"
	for _, e := range []rundoc.Event{
		{Type: "phase", Phase: "measure", Total: 100},
		{Type: "interval", Point: &point},
		{Type: "output", Text: text},
	} {
		enc.Encode(e)
	}
	res := &rundoc.Result{Workload: spec.Workload, Complete: true, Spec: spec, Environment: rundoc.Environment{GoVersion: "helper"},
		Measurement: rundoc.Measurement{MeasuredRecords: 100},
		Metrics:     []rundoc.Metric{{Name: "record-send-rate", Value: 100, Unit: "records/s", Better: rundoc.HigherIsBetter}},
		Series:      []rundoc.SeriesPoint{point}, Output: text}
	switch mode {
	case "shard":
		// As kbench run does for a shard spec: ready, then the start on
		// stdin, then the window from it.
		enc.Encode(rundoc.Event{Type: rundoc.EventReady})
		lines := make(chan string, 1)
		go func() {
			line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
			lines <- line
		}()
		var line string
		select {
		case <-ints: // stopped at the barrier: a partial result, as kbench writes
			res.Complete, res.Error = false, "interrupted"
		case line = <-lines:
		}
		if !res.Complete {
			break
		}
		t0, err := rundoc.ParseShardStart(line, time.Now())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		time.Sleep(time.Until(t0))
		now := time.Now()
		res.Measurement.ShardStart = &rundoc.ShardStart{T0: t0, Window: now, LagMs: float64(now.Sub(t0)) / 1e6}
	case "fail":
		fmt.Fprintln(os.Stderr, "panic: something broke")
		return 2
	case "ignore":
		for range ints {
		}
	case "slow":
		time.Sleep(2 * time.Second)
	case "wait":
		<-ints
		res.Complete, res.Error = false, "interrupted"
	}
	heap := "client-heap.pprof"
	f, err := os.Create(filepath.Join(out, heap))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	f.Close()
	res.Profiles = []rundoc.ProfileFile{{Role: "client", Kind: "heap", File: heap}}
	if err := rundoc.WriteResult(out, res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// env is a lifecycle on a real SQLite store in a temporary directory,
// executing the helper in one mode.
type env struct {
	*Manager
	st  *store.Store
	dir string
}

func newEnv(t *testing.T, mode string, mod func(*Options)) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := store.Open(pgtest.DSN(t, filepath.Join(dir, "kbench.db")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{st: st, dir: dir}
	e.Manager = e.open(t, mode, mod)
	return e
}

// sqliteOnly skips t when the tests run on PostgreSQL
// (KBENCH_TEST_BACKEND=postgres): it reads the store's SQLite file or
// asserts what happens on SQLite.
func sqliteOnly(t *testing.T) {
	t.Helper()
	if pgtest.OnPostgres() {
		t.Skip("SQLite only: KBENCH_TEST_BACKEND=postgres")
	}
}

// open starts a lifecycle on e's store and data directory, as a server
// process does; it is closed when the test ends.
func (e *env) open(t *testing.T, mode string, mod func(*Options)) *Manager {
	t.Helper()
	opts := Options{Command: []string{os.Args[0], helperArg, mode}, DataDir: e.dir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if mod != nil {
		mod(&opts)
	}
	l := NewManager(e.st, opts)
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// plainSpec is a stored spec without secrets.
const plainSpec = `{"workload":"producer","params":{"num-records":100,"profile":"none"}}`

// secretSpec is the stored spec of a run given a SASL password, and the
// secrets held for it in memory.
func secretSpec(t *testing.T, password string) (string, map[string]string) {
	t.Helper()
	spec, err := rundoc.SpecFromParams("producer", map[string]json.RawMessage{"num-records": json.RawMessage(`100`),
		"producer-props": json.RawMessage(fmt.Sprintf(`{"security.protocol":"SASL_PLAINTEXT","sasl.mechanism":"PLAIN","sasl.username":"u","sasl.password":%q}`, password))})
	if err != nil {
		t.Fatal(err)
	}
	_, secrets := rundoc.SplitSecrets(spec)
	params, err := spec.Redacted().Params()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(rundoc.SpecFile{Workload: spec.Workload, Params: params})
	if err != nil {
		t.Fatal(err)
	}
	return string(data), secrets
}

// create stores a queued run with spec and returns its id.
func (e *env) create(t *testing.T, spec string) uint {
	t.Helper()
	r := &store.Run{Workload: "producer", Spec: spec}
	if err := e.st.CreateRuns(context.Background(), []*store.Run{r}); err != nil {
		t.Fatal(err)
	}
	return r.ID
}

// watch subscribes to a run's events; it must be called before the run
// is submitted, so that no event is missed.
type watch struct {
	id     uint
	events <-chan Event
}

func (e *env) watch(t *testing.T, l *Manager, id uint) *watch {
	t.Helper()
	ch, _, cancel := l.Subscribe(id)
	t.Cleanup(cancel)
	return &watch{id: id, events: ch}
}

// until reads the run's events until one called name arrives and returns
// it. The deadline only keeps a broken lifecycle from hanging the test.
func (w *watch) until(t *testing.T, name string) Event {
	t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case ev := <-w.events:
			if ev.Name == name {
				return ev
			}
			if ev.Name == "done" {
				t.Fatalf("run %d: done (%v) before any %q event", w.id, ev.Data, name)
			}
		case <-deadline:
			t.Fatalf("run %d: no %q event within a minute", w.id, name)
		}
	}
}

// submit submits a run, failing the test on an error.
func (e *env) submit(t *testing.T, l *Manager, id uint, secrets map[string]string) {
	t.Helper()
	if err := l.Submit(context.Background(), id, secrets); err != nil {
		t.Fatal(err)
	}
}

// get loads a run from the store.
func (e *env) get(t *testing.T, id uint) *rundoc.Run {
	t.Helper()
	r, err := e.st.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// started reports whether the run's process ever started.
func (e *env) started(id uint) bool {
	_, err := os.Stat(filepath.Join(e.dir, "runs", strconv.FormatUint(uint64(id), 10), startedMarker))
	return !errors.Is(err, os.ErrNotExist)
}

// waitRun polls run id until ok, failing the test after a minute.
func waitRun(t *testing.T, st *store.Store, id uint, what string, ok func(*rundoc.Run) bool) *rundoc.Run {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := st.GetRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d: %s %q, still not %s", id, r.Status, r.Error, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func isFinal(r *rundoc.Run) bool { return r.Final() }
