package launch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"
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

// pgLauncher is a test launcher on a fresh PostgreSQL database, whose
// queued runs are the store's: fleets need the shared backend.
func pgLauncher(t *testing.T) (*testLauncher, *store.Store) {
	t.Helper()
	st, err := store.Open(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	l := newTestLauncher(t, func(o *Options) { o.Store = st })
	l.runs.st = st
	return l, st
}

// TestFleetRequest: on PostgreSQL a fleet needs as many live workers of
// its queue as shards, of one version, and no per-run password; a valid
// one is stored as a parent and its shards, each shard queued, the
// parent never.
func TestFleetRequest(t *testing.T) {
	ctx := context.Background()
	l, st := pgLauncher(t)
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

// storedFleet stores a started fleet of n producer shards on st, as the
// launcher and the workers' barrier leave it, and returns it with its
// shards' run ids.
func storedFleet(t *testing.T, l *testLauncher, n int) (*store.Fleet, []uint) {
	t.Helper()
	ctx := context.Background()
	spec, err := rundoc.ParseArgs(rundoc.Producer, []string{"--bootstrap-server", "127.0.0.1:9092", "--topic", "f",
		"--partitions", fmt.Sprint(n), "--threads", fmt.Sprint(n), "--throughput", "1000", "--duration", "3", "--profile", "none"})
	if err != nil {
		t.Fatal(err)
	}
	spec.Workers = n
	divided, err := rundoc.DivideFleet(&spec, n)
	if err != nil {
		t.Fatal(err)
	}
	pj, pfp, err := EncodeSpec(spec)
	if err != nil {
		t.Fatal(err)
	}
	parent := &store.Run{Workload: rundoc.Producer, Spec: pj, Fingerprint: pfp, Queue: "lab"}
	shards := make([]*store.Run, n)
	for i, sh := range divided {
		sj, sfp, err := EncodeSpec(spec.ShardSpec(sh))
		if err != nil {
			t.Fatal(err)
		}
		shards[i] = &store.Run{Workload: rundoc.Producer, Spec: sj, Fingerprint: sfp, Queue: "lab"}
	}
	f := &store.Fleet{Queue: "lab", Shards: n, BarrierTimeoutS: 30, LeadS: 0}
	if err := l.st.CreateFleet(ctx, f, parent, shards); err != nil {
		t.Fatal(err)
	}
	ids := make([]uint, n)
	for i, r := range shards {
		ids[i] = r.ID
		w := &store.Worker{Host: fmt.Sprintf("host-%d", i), Queue: "lab", PID: 1}
		if err := l.st.RegisterWorker(ctx, w); err != nil {
			t.Fatal(err)
		}
		if _, err := l.st.TakeShard(ctx, r.ID, w.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := l.st.CheckInShard(ctx, r.ID, float64(i), 0.2); err != nil {
			t.Fatal(err)
		}
		if err := l.st.StartRunOn(ctx, r.ID, time.Time{}, w); err != nil {
			t.Fatal(err)
		}
	}
	got, _, err := l.st.GetFleet(ctx, f.ID)
	if err != nil || got.Phase != store.FleetStarted {
		t.Fatalf("fleet %+v, %v: want started", got, err)
	}
	return got, ids
}

// finishShard stores a shard's result as its worker would: seconds
// one-second points of rate records each, every record's latency
// latencyUs, in the series, the metrics and the histogram log.
func finishShard(t *testing.T, st *store.Store, id uint, seconds int, rate int64, latencyUs int64, t0 time.Time) {
	t.Helper()
	var series []rundoc.SeriesPoint
	var intervals []rundoc.Histogram
	whole := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
	for k := range seconds {
		series = append(series, rundoc.SeriesPoint{T: float64(k + 1), Records: rate, Bytes: rate * 64, RecordsPerSec: float64(rate), CPUPercent: 40})
		h := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
		for range rate {
			if err := h.RecordValue(latencyUs); err != nil {
				t.Fatal(err)
			}
		}
		if err := whole.Merge(h); err != nil {
			t.Fatal(err)
		}
		intervals = append(intervals, rundoc.Histogram{Kind: rundoc.HistRecordLatency, Scope: rundoc.HistogramInterval,
			StartS: float64(k), EndS: float64(k + 1), Count: h.TotalCount(), Data: h.Encode()})
	}
	var log bytes.Buffer
	if err := runhist.WriteLog(&log, t0, intervals); err != nil {
		t.Fatal(err)
	}
	ms := float64(latencyUs) / 1000
	total := float64(rate) * float64(seconds)
	out := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Series: series, HistogramLog: log.Bytes(),
		Metrics: []rundoc.Metric{{Name: "records-sent", Value: total, Unit: "records"},
			{Name: "record-send-rate", Value: float64(rate), Unit: "records/s", Better: rundoc.HigherIsBetter},
			{Name: "record-latency-avg", Value: ms, Unit: "ms"}, {Name: "record-latency-p50", Value: ms, Unit: "ms"},
			{Name: "record-latency-p99", Value: ms, Unit: "ms"}, {Name: "record-latency-max", Value: ms, Unit: "ms"}},
		Histograms: []rundoc.Histogram{{Kind: rundoc.HistRecordLatency, Scope: rundoc.HistogramWindow, EndS: float64(seconds),
			Count: whole.TotalCount(), Data: whole.Encode()}},
		Measurement: &rundoc.Measurement{MeasuredRecords: int64(total), ShardStart: &rundoc.ShardStart{T0: t0, Window: t0.Add(time.Millisecond)}}}
	if err := st.FinishRun(context.Background(), id, out); err != nil {
		t.Fatal(err)
	}
}

// TestAdvanceFleets: the parent runs once its shards do, and gets their
// merge once all have succeeded: records add up to the shards', the p99
// is the merged histogram's (the slow shard's latency), and the API's
// shard rows come from the shards.
func TestAdvanceFleets(t *testing.T) {
	ctx := context.Background()
	l := newTestLauncher(t, nil)
	f, ids := storedFleet(t, l, 3)
	if err := l.AdvanceFleets(ctx); err != nil {
		t.Fatal(err)
	}
	if p := getRun(t, l.st, f.ParentID); p.Status != rundoc.StatusRunning {
		t.Fatalf("parent %s once its shards run, want running", p.Status)
	}
	t0 := time.Now().UTC()
	finishShard(t, l.st, ids[0], 4, 100, 1000, t0)
	finishShard(t, l.st, ids[1], 4, 200, 1000, t0)
	if err := l.AdvanceFleets(ctx); err != nil {
		t.Fatal(err)
	}
	if p := getRun(t, l.st, f.ParentID); p.Status != rundoc.StatusRunning {
		t.Fatalf("parent %s with a shard still running, want running", p.Status)
	}
	finishShard(t, l.st, ids[2], 5, 100, 9000, t0) // one second longer: out of the common window
	if err := l.AdvanceFleets(ctx); err != nil {
		t.Fatal(err)
	}
	p := getRun(t, l.st, f.ParentID)
	if p.Status != rundoc.StatusSucceeded || !p.Complete {
		t.Fatalf("parent %s %q, want succeeded", p.Status, p.Error)
	}
	metric := func(name string) float64 {
		m, ok := p.Metric(name)
		if !ok {
			t.Fatalf("parent has no %s: %+v", name, p.Metrics)
		}
		return m.Value
	}
	if got := metric("records-sent"); got != 4*(100+200+100) {
		t.Errorf("records-sent %v, want 1600: the shards' four common seconds", got)
	}
	if got := metric("record-send-rate"); got != 400 {
		t.Errorf("record-send-rate %v, want 400", got)
	}
	// A quarter of the window's records took 9 ms: p99 is that, where
	// an average of the shards' p99s would say 3.7 ms.
	if got := metric("record-latency-p99"); got < 8.99 || got > 9.01 {
		t.Errorf("record-latency-p99 %v ms, want the merged histogram's 9 ms", got)
	}
	if log, err := l.st.RunHistogramLog(ctx, f.ParentID); err != nil || !bytes.Contains(log, []byte(rundoc.HistRecordLatency)) {
		t.Errorf("parent's histogram log: %v", err)
	}
	got, _, err := l.st.GetFleet(ctx, f.ID)
	if err != nil || got.Phase != store.FleetMerged {
		t.Errorf("fleet %+v, %v: want merged", got, err)
	}
	// Another pass (another server) changes nothing.
	if err := l.AdvanceFleets(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestFleetFaults: a failed shard fails the fleet and its parent, naming
// the shard, and cancels the shards still going; a cancel of the parent
// cancels its shards and ends it canceled.
func TestFleetFaults(t *testing.T) {
	ctx := context.Background()
	l := newTestLauncher(t, nil)
	f, ids := storedFleet(t, l, 2)
	if err := l.st.FinishRun(ctx, ids[1], store.Outcome{Status: rundoc.StatusFailed, Error: "broker unreachable"}); err != nil {
		t.Fatal(err)
	}
	if err := l.AdvanceFleets(ctx); err != nil {
		t.Fatal(err)
	}
	p := getRun(t, l.st, f.ParentID)
	want := fmt.Sprintf("shard 2 of 2 (run %d on host-1) failed: broker unreachable", ids[1])
	if p.Status != rundoc.StatusFailed || !strings.Contains(p.Error, want) {
		t.Errorf("parent %s %q, want failed saying %q", p.Status, p.Error, want)
	}
	if !slices.Contains(l.runs.canceled, ids[0]) {
		t.Errorf("canceled %v, want the running shard %d", l.runs.canceled, ids[0])
	}

	// A succeeded shard deleted before its siblings end: the fleet can
	// never merge, and says why.
	f3, ids3 := storedFleet(t, l, 2)
	finishShard(t, l.st, ids3[0], 3, 10, 1000, time.Now())
	if err := l.st.DeleteRun(ctx, ids3[0]); err != nil {
		t.Fatal(err)
	}
	if err := l.AdvanceFleets(ctx); err != nil {
		t.Fatal(err)
	}
	if p := getRun(t, l.st, f3.ParentID); p.Status != rundoc.StatusFailed || !strings.Contains(p.Error, "a shard's run was deleted") {
		t.Errorf("parent of a deleted shard: %s %q", p.Status, p.Error)
	}
	if !slices.Contains(l.runs.canceled, ids3[1]) {
		t.Errorf("the deleted shard's sibling %d was not canceled (%v)", ids3[1], l.runs.canceled)
	}

	f2, ids2 := storedFleet(t, l, 2)
	if ok, err := l.CancelFleet(ctx, f2.ParentID); !ok || err != nil {
		t.Fatalf("cancel: %v, %v", ok, err)
	}
	if p := getRun(t, l.st, f2.ParentID); p.Status != rundoc.StatusCanceled {
		t.Errorf("canceled parent %s %q", p.Status, p.Error)
	}
	for _, id := range ids2 {
		if !slices.Contains(l.runs.canceled, id) {
			t.Errorf("shard %d not canceled (%v)", id, l.runs.canceled)
		}
	}
	if ok, err := l.CancelFleet(ctx, f2.ParentID); !ok || !errors.Is(err, store.ErrConflict) {
		t.Errorf("a second cancel: %v, %v; want a conflict", ok, err)
	}
	if ok, _ := l.CancelFleet(ctx, ids2[0]); ok {
		t.Error("a shard was taken for a parent")
	}
}

func getRun(t *testing.T, st *store.Store, id uint) *rundoc.Run {
	t.Helper()
	r, err := st.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFleetAB: an A/B submission with workers makes each run of each
// configuration a fleet of its own, stored in the interleaved order (A
// B, B A) in one A/B batch, each configuration's parents numbered in its
// group; too few workers is one error on workers, and a configuration
// that cannot be divided names its own field.
func TestFleetAB(t *testing.T) {
	ctx := context.Background()
	l, st := pgLauncher(t)
	for range 2 {
		if err := st.RegisterWorker(ctx, &store.Worker{Host: "h", Queue: "lab", PID: 1, Version: "v1"}); err != nil {
			t.Fatal(err)
		}
	}
	ab := func(workers int, rateB string) *Request {
		a, b := fleetRequest(0).Params, fleetRequest(0).Params
		b["throughput"] = json.RawMessage(rateB)
		return &Request{Workload: "producer", Queue: "lab", Workers: workers, Repetitions: 2,
			Configs: []Config{{Label: "a", Params: a}, {Label: "b", Params: b}}}
	}
	if _, err := l.CreateAB(ctx, ab(3, "2000")); !fieldSays(err, "workers", "queue lab has 2 live worker(s), fewer than the 3") {
		t.Errorf("3 workers for 2: %v", err)
	} else if fe := err.(rundoc.FieldErrors); len(fe) != 1 {
		t.Errorf("3 workers for 2: %d errors %v, want the one on workers", len(fe), fe)
	}
	if _, err := l.CreateAB(ctx, ab(2, "1")); !fieldSays(err, "configs[1].params.throughput", "leaves a shard without a record") {
		t.Errorf("b's rate below its shards: %v", err)
	}
	res, err := l.CreateAB(ctx, ab(2, "2000"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Runs) != 4 {
		t.Fatalf("%d parents, want 2 configurations × 2 repetitions", len(res.Runs))
	}
	var order []string
	for _, p := range res.Runs {
		f, shards, err := st.FleetOfParent(ctx, p.ID)
		if err != nil {
			t.Fatalf("parent %d (%s) is no fleet's: %v", p.ID, p.Label, err)
		}
		if f.Shards != 2 || len(shards) != 2 || p.ABBatch != res.Batch {
			t.Errorf("parent %d: %d shards, batch %q; want 2 shards in batch %q", p.ID, len(shards), p.ABBatch, res.Batch)
		}
		var file rundoc.SpecFile
		if err := json.Unmarshal([]byte(p.Spec), &file); err != nil || string(file.Params["workers"]) != "2" {
			t.Errorf("parent %d spec %s: want workers 2", p.ID, p.Spec)
		}
		order = append(order, fmt.Sprintf("%s%d", p.Label, p.GroupIndex))
	}
	if got := strings.Join(order, " "); got != "a1 b1 b2 a2" {
		t.Errorf("fleets stored as %s, want a1 b1 b2 a2 (interleaved)", got)
	}
	if n := len(l.runs.queued()); n != 8 {
		t.Errorf("%d runs queued, want the 8 shards", n)
	}
}
