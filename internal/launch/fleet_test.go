package launch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
	"github.com/kbench/kbench/internal/testutil/pgtest"
)

// fleetRequest asks for a producer fleet of n workers on queue lab.
func fleetRequest(n int) Request {
	return Request{Workload: "producer", Label: "fleet", Queue: "lab", Workers: n, Params: map[string]json.RawMessage{
		"bootstrap-server": json.RawMessage(`"127.0.0.1:9092"`), "topic": json.RawMessage(`"f"`),
		"partitions": json.RawMessage(`4`), "threads": json.RawMessage(`4`),
		"num-records": json.RawMessage(`10000`), "throughput": json.RawMessage(`1000`), "profile": json.RawMessage(`"none"`)}}
}

// fieldSays reports whether err holds a field error on field whose
// message contains says.
func fieldSays(err error, field, says string) bool {
	var fe rundoc.FieldErrors
	if !errors.As(err, &fe) {
		return false
	}
	for _, e := range fe {
		if e.Field == field && strings.Contains(e.Msg, says) {
			return true
		}
	}
	return false
}

// TestFleetOnSQLite: a server on SQLite, whose own worker is the only
// one, refuses a fleet, naming PostgreSQL and kbench worker; workers 1
// is a run of one process.
func TestFleetOnSQLite(t *testing.T) {
	st, err := store.Open(filepath.Join(t.TempDir(), "kbench.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	l := newTestLauncher(t, func(o *Options) { o.Store = st })
	req := fleetRequest(2)
	req.Queue = ""
	if _, err := l.Prepare(&req); !fieldSays(err, "workers", "postgres://") || !fieldSays(err, "workers", "kbench worker") {
		t.Errorf("a fleet on SQLite: %v, want a workers error naming PostgreSQL and kbench worker", err)
	}
	one := fleetRequest(1)
	one.Queue = ""
	spec, err := l.Prepare(&one)
	if err != nil || spec.Workers != 0 {
		t.Errorf("workers 1: %v, workers %d; want a run of one process", err, spec.Workers)
	}
}

// TestFleetRequest: on PostgreSQL a fleet needs as many live workers of
// its queue as shards, of one version, and no per-run password; a valid
// one is stored as a parent and its shards, each shard queued, the
// parent never.
func TestFleetRequest(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	l := newTestLauncher(t, func(o *Options) { o.Store = st })
	l.runs.st = st
	register := func(version string) {
		t.Helper()
		if err := st.RegisterWorker(ctx, &store.Worker{Host: "h", Queue: "lab", PID: 1, Version: version}); err != nil {
			t.Fatal(err)
		}
	}
	register("v1")
	req := fleetRequest(2)
	if _, err := l.Prepare(&req); !fieldSays(err, "workers", "queue lab has 1 live worker(s), fewer than the 2") {
		t.Errorf("one worker for two shards: %v", err)
	}
	register("v2")
	req = fleetRequest(2)
	if _, err := l.Prepare(&req); !fieldSays(err, "workers", "different kbench versions (v1, v2)") {
		t.Errorf("mixed versions: %v", err)
	}
	for range 5 {
		if err := st.RegisterWorker(ctx, &store.Worker{Host: "h", Queue: "lab2", PID: 1, Version: "v1"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name        string
		mod         func(*Request)
		field, says string
	}{
		{"too many", func(r *Request) { r.Workers = 11 }, "workers", "between 1 and 10"},
		{"more shards than partitions", func(r *Request) { r.Workers = 5 }, "partitions", "each of the 5 shards needs partitions of its own"},
		{"a parameter", func(r *Request) { r.Params["workers"] = json.RawMessage(`2`) }, "workers", "not a parameter"},
		{"a shard given", func(r *Request) { r.Params["shard"] = json.RawMessage(`{}`) }, "shard", "not a parameter"},
		{"barrier", func(r *Request) { r.BarrierTimeoutS = 0.5 }, "barrier_timeout_s", "between 1 and"},
		{"password", func(r *Request) {
			r.Queue = ""
			r.Target = &Target{BootstrapServer: "127.0.0.1:9092", SecurityProtocol: "SASL_PLAINTEXT", SASLMechanism: "PLAIN", SASLUsername: "u", SASLPassword: "p"}
			delete(r.Params, "bootstrap-server")
		}, "workers", "per-run password"},
	} {
		req := fleetRequest(2)
		req.Queue = "lab2"
		tt.mod(&req)
		if _, err := l.Prepare(&req); !fieldSays(err, tt.field, tt.says) {
			t.Errorf("%s: %v, want %s saying %q", tt.name, err, tt.field, tt.says)
		}
	}

	req = fleetRequest(3)
	req.Queue = "lab2"
	req.Repetitions = 2
	spec, err := l.Prepare(&req)
	if err != nil {
		t.Fatal(err)
	}
	parents, err := l.CreateRuns(ctx, req, spec)
	if err != nil {
		t.Fatal(err)
	}
	if len(parents) != 2 || parents[0].GroupID == "" || parents[0].GroupID != parents[1].GroupID {
		t.Fatalf("parents %+v: want 2 repetitions in one group", parents)
	}
	queued := l.runs.queued()
	if len(queued) != 6 {
		t.Errorf("%d runs queued, want the 6 shards", len(queued))
	}
	for i, p := range parents {
		f, shards, err := st.FleetOfParent(ctx, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if f.Shards != 3 || f.BarrierTimeoutS != DefaultBarrierTimeoutS || f.Phase != store.FleetWaiting || len(shards) != 3 {
			t.Errorf("fleet %d: %+v with %d shards", i, f, len(shards))
		}
		for _, id := range queued {
			if id == p.ID {
				t.Errorf("parent %d was queued for a worker", p.ID)
			}
		}
		var parentSpec rundoc.SpecFile
		if err := json.Unmarshal([]byte(p.Spec), &parentSpec); err != nil || string(parentSpec.Params["workers"]) != "3" {
			t.Errorf("parent spec %s: want workers 3 (%v)", p.Spec, err)
		}
		for j, sh := range shards {
			r, err := st.GetRun(ctx, sh.RunID)
			if err != nil {
				t.Fatal(err)
			}
			file, err := rundoc.ParseSpecFile([]byte(r.Spec))
			if err != nil {
				t.Fatal(err)
			}
			s, err := rundoc.SpecFromParams(file.Workload, file.Params)
			if err != nil || s.Shard == nil || s.Shard.Index != j || s.Workers != 0 {
				t.Errorf("shard %d spec %s: %v", j, r.Spec, err)
				continue
			}
			if want := fmt.Sprintf("fleet (shard %d/3)", j+1); r.Label != want {
				t.Errorf("shard %d label %q, want %q", j, r.Label, want)
			}
		}
	}
	if parents[0].Fingerprint == "" || parents[0].Fingerprint == mustFingerprint(t, fleetRequest(0), l) {
		t.Errorf("a fleet's fingerprint %q is a single run's", parents[0].Fingerprint)
	}
}

func mustFingerprint(t *testing.T, req Request, l *testLauncher) string {
	t.Helper()
	req.Queue = "lab2"
	spec, err := l.Prepare(&req)
	if err != nil {
		t.Fatal(err)
	}
	_, fp, err := EncodeSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}
