package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/segmentio/kafka-go"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/runner/writepath"
)

// resultDoc is result.json decoded without kbench's own types, so these
// tests read the file as any other program would.
type resultDoc struct {
	Environment struct {
		KbenchVersion string `json:"kbench_version"`
		KbenchBuild   string `json:"kbench_build"`
		GoVersion     string `json:"go_version"`
		LoadAverage   *struct {
			Load1  *float64 `json:"load1"`
			Load5  *float64 `json:"load5"`
			Load15 *float64 `json:"load15"`
		} `json:"load_average"`
		Target *struct {
			Kind            string `json:"kind"`
			APIVersionsFrom string `json:"api_versions_from"`
			APIVersions     []struct {
				Key  *int16 `json:"key"`
				Name string `json:"name"`
				Min  *int16 `json:"min"`
				Max  *int16 `json:"max"`
			} `json:"api_versions"`
			ReleaseGuess string `json:"release_guess"`
		} `json:"target"`
		Config *struct {
			Mode     string `json:"mode"`
			Settings []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"settings"`
		} `json:"config"`
	} `json:"environment"`
}

func readResultDoc(t *testing.T, dir string) resultDoc {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc resultDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("result.json: %v", err)
	}
	return doc
}

// settings returns the recorded settings by name; a name listed twice is
// an error.
func (d resultDoc) settings(t *testing.T) map[string]string {
	t.Helper()
	c := d.Environment.Config
	if c == nil {
		t.Fatal("result.json has no environment.config")
	}
	out := map[string]string{}
	for _, s := range c.Settings {
		if _, dup := out[s.Name]; dup {
			t.Errorf("setting %s recorded twice", s.Name)
		}
		out[s.Name] = s.Value
	}
	return out
}

// apiRanges returns the recorded ApiVersions ranges by key.
func (d resultDoc) apiRanges(t *testing.T) map[int16][2]int16 {
	t.Helper()
	tg := d.Environment.Target
	if tg == nil {
		t.Fatal("result.json has no environment.target")
	}
	out := map[int16][2]int16{}
	for _, a := range tg.APIVersions {
		if a.Key == nil || a.Min == nil || a.Max == nil || a.Name == "" {
			t.Fatalf("api_versions entry lacks key, name, min or max: %+v", a)
		}
		out[*a.Key] = [2]int16{*a.Min, *a.Max}
	}
	return out
}

// brokerRanges asks a broker for its ApiVersions directly.
func brokerRanges(t *testing.T, addr string) map[int16][2]int16 {
	t.Helper()
	conn, err := kafka.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	vs, err := conn.ApiVersions()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int16][2]int16{}
	for _, v := range vs {
		out[v.ApiKey] = [2]int16{v.MinVersion, v.MaxVersion}
	}
	return out
}

func checkSettings(t *testing.T, got map[string]string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		g, ok := got[k]
		switch {
		case !ok:
			t.Errorf("setting %s not recorded; recorded: %v", k, got)
		case g != v:
			t.Errorf("setting %s = %q, want %q", k, g, v)
		}
	}
}

// TestResultRecordsEnvironment: every run records the machine's load
// average at start and the kbench, Go and kafka-go versions.
func TestResultRecordsEnvironment(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	opts, _ := testOptions(t)
	if _, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "env",
		"--num-records", "500", "--profile", "none"), opts); err != nil {
		t.Fatal(err)
	}
	env := readResultDoc(t, opts.OutDir).Environment
	// A test binary's build info lists no modules, so kafka-go's version
	// is checked on the real binary (TestBinary) and in TestBuildVersions.
	if env.KbenchVersion == "" || env.GoVersion != runtime.Version() || len(env.KbenchBuild) != 12 {
		t.Errorf("versions: kbench %q (build %q), Go %q; want non-empty, 12 hex digits, %s", env.KbenchVersion, env.KbenchBuild, env.GoVersion, runtime.Version())
	}
	if runtime.GOOS == "linux" {
		la := env.LoadAverage
		if la == nil || la.Load1 == nil || la.Load5 == nil || la.Load15 == nil {
			t.Fatalf("load_average = %+v, want load1, load5 and load15 from /proc/loadavg", la)
		}
		if *la.Load1 < 0 || *la.Load5 < 0 || *la.Load15 < 0 {
			t.Errorf("load averages %v %v %v: negative", *la.Load1, *la.Load5, *la.Load15)
		}
	}
}

// TestResultRecordsResolvedConfig: result.json holds the client
// configuration each run applied, defaults included, the kbench mode, the
// target kind and the broker's ApiVersions ranges, for every workload and
// mode.
func TestResultRecordsResolvedConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	b := startBroker(t, embeddedbroker.Options{})
	direct := brokerRanges(t, b.Addr())

	t.Run("producer-raw-embedded-defaults", func(t *testing.T) {
		opts, _ := testOptions(t)
		if _, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--num-records", "2000", "--record-size", "100",
			"--profile", "none"), opts); err != nil {
			t.Fatal(err)
		}
		doc := readResultDoc(t, opts.OutDir)
		if doc.Environment.Config == nil || doc.Environment.Config.Mode != rundoc.ModeRaw {
			t.Errorf("config = %+v, want mode raw", doc.Environment.Config)
		}
		checkSettings(t, doc.settings(t), map[string]string{
			"acks": "all", "enable.idempotence": "false", "compression.type": "none", "linger.ms": "5",
			"batch.size": "16384", "max.in.flight.requests.per.connection": "5", "buffer.memory": "33554432",
			"partitioner": "sticky: one partition until its batch fills, then the next (kbench)", "retries": "9", "request.timeout.ms": "30000",
			"security.protocol": "PLAINTEXT", "record-size": "100", "threads": "1", "throughput": "-1", "partitions": "1",
		})
		tg := doc.Environment.Target
		if tg == nil || tg.Kind != "embedded" || tg.ReleaseGuess != "" || tg.APIVersionsFrom == "" {
			t.Fatalf("target = %+v, want kind embedded, where the versions came from, and no release guess", tg)
		}
		// The embedded broker child runs the same kfake as the broker of
		// this test: it must have answered the same ranges.
		got := doc.apiRanges(t)
		if len(got) != len(direct) {
			t.Errorf("recorded %d API keys, the embedded broker answers %d", len(got), len(direct))
		}
		for k, r := range direct {
			if got[k] != r {
				t.Errorf("API key %d: recorded %v, broker answers %v", k, got[k], r)
			}
		}
		if _, ok := got[0]; !ok {
			t.Error("Produce (key 0) missing from the recorded ranges")
		}
	})

	t.Run("producer-writer-cluster-props", func(t *testing.T) {
		opts, _ := testOptions(t)
		if _, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "cfg-writer",
			"--partitions", "3", "--mode", "writer", "--num-records", "2000", "--throughput", "100000", "--profile", "none",
			"--producer-props", "compression.type=snappy", "acks=-1", "linger.ms=0", "batch.size=32768", "enable.idempotence=false"), opts); err != nil {
			t.Fatal(err)
		}
		doc := readResultDoc(t, opts.OutDir)
		checkSettings(t, doc.settings(t), map[string]string{
			"acks": "all", "enable.idempotence": "false", "compression.type": "snappy", "linger.ms": "0", "batch.size": "32768",
			"max.in.flight.requests.per.connection": "1 per partition (kafka-go Writer)",
			"partitioner":                           "round-robin by batch-sized chunk (kafka-go RoundRobin)",
			"partitions":                            "3", "throughput": "100000",
		})
		tg := doc.Environment.Target
		if tg == nil || tg.Kind != "cluster" || tg.APIVersionsFrom != b.Addr() {
			t.Fatalf("target = %+v, want kind cluster, versions from %s", tg, b.Addr())
		}
		if !strings.HasPrefix(tg.ReleaseGuess, "guess: ≥ ") || !strings.HasSuffix(tg.ReleaseGuess, " (from API ranges)") {
			t.Errorf("release guess = %q, want \"guess: ≥ X (from API ranges)\"", tg.ReleaseGuess)
		}
		got := doc.apiRanges(t)
		for k, r := range direct {
			if got[k] != r {
				t.Errorf("API key %d: recorded %v, broker answers %v", k, got[k], r)
			}
		}
	})

	t.Run("producer-existing-topic-partitions", func(t *testing.T) {
		// The topic exists with 3 partitions: --partitions 1 does not
		// apply, and the config says what the run really used.
		opts, _ := testOptions(t)
		if _, err := Run(context.Background(), mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "cfg-writer",
			"--partitions", "1", "--num-records", "500", "--profile", "none"), opts); err != nil {
			t.Fatal(err)
		}
		checkSettings(t, readResultDoc(t, opts.OutDir).settings(t), map[string]string{"partitions": "3"})
	})

	t.Run("consumer-group", func(t *testing.T) {
		opts, _ := testOptions(t)
		if _, err := Run(context.Background(), mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", "cfg-writer",
			"--messages", "1000", "--mode", "group", "--timeout", "20000", "--profile", "none",
			"--consumer-props", "fetch.min.bytes=1024", "fetch.max.wait.ms=200", "isolation.level=read_committed",
			"partition.assignment.strategy=roundrobin", "enable.auto.commit=false"), opts); err != nil {
			t.Fatal(err)
		}
		doc := readResultDoc(t, opts.OutDir)
		if doc.Environment.Config == nil || doc.Environment.Config.Mode != rundoc.ModeGroup {
			t.Errorf("config = %+v, want mode group", doc.Environment.Config)
		}
		checkSettings(t, doc.settings(t), map[string]string{
			"fetch.min.bytes": "1024", "fetch.max.wait.ms": "200", "max.partition.fetch.bytes": "1048576",
			"isolation.level": "read_committed", "partition.assignment.strategy": "roundrobin",
			"enable.auto.commit": "false", "auto.offset.reset": "earliest", "partitions": "3",
		})
	})

	t.Run("consumer-assign", func(t *testing.T) {
		// The assign mode fetches with MinBytes 1 and no isolation level
		// whatever the properties say: the record says what it used.
		opts, _ := testOptions(t)
		if _, err := Run(context.Background(), mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", "cfg-writer",
			"--messages", "1000", "--mode", "assign", "--timeout", "20000", "--profile", "none", "--fetch-size", "65536"), opts); err != nil {
			t.Fatal(err)
		}
		doc := readResultDoc(t, opts.OutDir)
		checkSettings(t, doc.settings(t), map[string]string{
			"fetch.min.bytes": "1", "fetch.max.wait.ms": "500", "max.partition.fetch.bytes": "65536",
			"isolation.level": "read_uncommitted", "partition.assignment.strategy": "none (kbench assigns every partition)",
			"enable.auto.commit": "false (no group)",
		})
		if doc.Environment.Config.Mode != rundoc.ModeAssign {
			t.Errorf("mode = %q, want assign", doc.Environment.Config.Mode)
		}
	})

	t.Run("writepath-sink", func(t *testing.T) {
		opts, _ := sinkOptions(t)
		if _, err := Run(context.Background(), mustParse(t, rundoc.Writepath, "--sink", "--strategy", "copy", "--requests", "200",
			"--records-per-request", "8", "--record-size", "64", "--in-flight", "3", "--profile", "none"), opts); err != nil {
			t.Fatal(err)
		}
		doc := readResultDoc(t, opts.OutDir)
		if doc.Environment.Config == nil || doc.Environment.Config.Mode != rundoc.StrategyCopy {
			t.Errorf("config = %+v, want mode copy (the strategy)", doc.Environment.Config)
		}
		checkSettings(t, doc.settings(t), map[string]string{
			"strategy": "copy", "in-flight": "3", "records-per-request": "8", "record-size": "64", "acks": "all",
			"compression.type": "none",
		})
		tg := doc.Environment.Target
		if tg == nil || tg.Kind != "sink" || tg.ReleaseGuess != "" {
			t.Fatalf("target = %+v, want kind sink without a release guess", tg)
		}
		got := doc.apiRanges(t)
		if len(got) != len(writepath.SinkAPIs) {
			t.Errorf("recorded %d API keys, the sink answers %d", len(got), len(writepath.SinkAPIs))
		}
		for _, a := range writepath.SinkAPIs {
			if got[a.Key] != [2]int16{a.Min, a.Max} {
				t.Errorf("API key %d: recorded %v, the sink answers %d–%d", a.Key, got[a.Key], a.Min, a.Max)
			}
		}
	})
}
