package launch

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/slo"
	"github.com/kbench/kbench/internal/store"
)

// kneeSystem answers a producer run at a rate: its p99 latency from the
// intended send time is 2 ms up to the knee and grows by 1 ms per 1 % of
// the knee past it (so 10 ms at 1.08 × knee); it cannot go faster than
// capacity.
type kneeSystem struct{ knee, capacity float64 }

func (k kneeSystem) latencyMs(rate float64) float64 {
	if rate <= k.knee {
		return 2
	}
	return 2 + 100*(rate-k.knee)/k.knee
}

// finishProbe finishes stored run id as the system measures it at the
// rate of its spec's throughput (-1: unthrottled): the achieved rate and,
// when throttled, a histogram of records latencies of the spec's count.
func (k kneeSystem) finishProbe(t *testing.T, st *store.Store, id uint) (rate float64, records int64) {
	t.Helper()
	r, err := st.GetRun(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	file, err := rundoc.ParseSpecFile(json.RawMessage(r.Spec))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(file.Params["throughput"], &rate)
	json.Unmarshal(file.Params["num-records"], &records)
	if err := st.StartRun(t.Context(), id, r.CreatedAt); err != nil {
		t.Fatal(err)
	}
	achieved := k.capacity
	out := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true}
	if rate > 0 {
		achieved = math.Min(rate, k.capacity)
		h := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
		for i := range records {
			// One slow record in 200: the p99 is the base latency.
			v := k.latencyMs(rate)
			if i%200 == 0 {
				v *= 1.5
			}
			if err := h.RecordValue(int64(v * 1000)); err != nil {
				t.Fatal(err)
			}
		}
		out.Histograms = []rundoc.Histogram{{Kind: rundoc.HistRecordLatencyIntended, Scope: rundoc.HistogramWindow,
			StartS: 0, EndS: float64(records) / rate, Count: h.TotalCount(), Data: h.Encode()}}
	}
	out.Metrics = []rundoc.Metric{{Name: "record-send-rate", Value: achieved, Unit: "records/s", Better: rundoc.HigherIsBetter},
		{Name: "harness-limited", Value: 0, Unit: "flag"}}
	if err := st.FinishRun(t.Context(), id, out); err != nil {
		t.Fatal(err)
	}
	return rate, records
}

// TestLaunchSLOSearch: a search on a system with a knee queues one run at
// a time, each with the records its percentile needs, first unthrottled,
// then at rates; two launchers on the same store (two servers) store
// each step once; it ends done with the knee inside [lo, hi].
func TestLaunchSLOSearch(t *testing.T) {
	a := newTestLauncher(t, nil)
	b := New(a.opts) // a second server on the same store
	sys := kneeSystem{knee: 4000, capacity: 10000}
	pct, prec := 99.0, 10.0
	req := &SLORequest{Config: SweepConfigRequest{Label: "p", Params: tinyParams(t)}, Percentile: &pct, LatencyMs: 10, PrecisionPct: &prec}
	id, err := a.CreateSLO(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint]bool{}
	for step := 0; ; step++ {
		if step > 40 {
			t.Fatal("the search did not end")
		}
		rec, links, err := a.st.GetSLO(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Phase != store.SLOSearching {
			break
		}
		if len(links) != step+1 {
			t.Fatalf("step %d: %d runs linked, want one per step", step, len(links))
		}
		last := links[len(links)-1]
		if seen[last.RunID] {
			t.Fatalf("step %d: no new run", step)
		}
		seen[last.RunID] = true
		rate, records := sys.finishProbe(t, a.st, last.RunID)
		if step == 0 && (!last.Max || rate != -1) {
			t.Fatalf("first probe %+v at %v, want the unthrottled one", last, rate)
		}
		if step > 0 && (last.Max || rate != last.Rate || records < 1000) {
			t.Fatalf("probe %+v ran at %v with %d records, want its rate and ≥ 1000 records", last, rate, records)
		}
		for _, l := range []*Launcher{a.Launcher, b, a.Launcher} {
			if err := l.AdvanceSweeps(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := a.LoadSLO(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	r := st.Record
	if r.Phase != store.SLODone || r.Outcome != slo.Found {
		t.Fatalf("ended %s/%s, want done/found: %+v", r.Phase, r.Outcome, r)
	}
	truth := 1.08 * sys.knee // where the p99 reaches 10 ms
	if r.Lo > truth || r.Hi < truth || r.Hi/r.Lo > 1+prec/100+1e-9 {
		t.Errorf("answer [%v, %v], want %v inside, within %v%%", r.Lo, r.Hi, truth, prec)
	}
	if len(st.Probes) < 3 || !st.Probes[0].Max || st.Probes[0].Runs[0].Achieved != sys.capacity {
		t.Errorf("probes %+v, want the maximum measured first", st.Probes)
	}
	for _, p := range st.Probes[1:] {
		if v := st.Settings.Config().JudgeProbe(p); v.Pass != (p.Rate < truth) {
			t.Errorf("probe at %v: %+v, want pass %v", p.Rate, v, p.Rate < truth)
		}
	}
}

// TestLaunchSLOBadInput: every bad field of a search is named, and the
// configuration's own fields under config.
func TestLaunchSLOBadInput(t *testing.T) {
	l := newTestLauncher(t, nil)
	neg, zero, many := -1.0, 0.0, 50
	for _, tc := range []struct {
		name   string
		req    SLORequest
		fields []string
	}{
		{"no target", SLORequest{Config: SweepConfigRequest{Label: "a", Params: tinyParams(t)}}, []string{"latency_ms"}},
		{"bad settings", SLORequest{Config: SweepConfigRequest{Label: "a", Params: tinyParams(t)}, LatencyMs: 10,
			Percentile: &neg, PrecisionPct: &zero, Repetitions: &many, MinRate: 5, MaxRate: 4},
			[]string{"percentile", "precision_pct", "repetitions", "min_rate"}},
		{"throttle given", SLORequest{Config: SweepConfigRequest{Label: "a", Params: map[string]json.RawMessage{"throughput": json.RawMessage("5")}}, LatencyMs: 10},
			[]string{"config.params.throughput"}},
		{"consumer", SLORequest{Config: SweepConfigRequest{Label: "a", Params: map[string]json.RawMessage{"workload": json.RawMessage(`"consumer"`)}}, LatencyMs: 10},
			[]string{"config.params.workload"}},
		{"no label", SLORequest{Config: SweepConfigRequest{Params: tinyParams(t)}, LatencyMs: 10}, []string{"config.label"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := l.CreateSLO(t.Context(), &tc.req)
			var fes rundoc.FieldErrors
			if !errors.As(err, &fes) {
				t.Fatalf("CreateSLO = %v, want field errors", err)
			}
			for _, f := range tc.fields {
				if !fes.Has(f) {
					t.Errorf("errors %v do not name %s", err, f)
				}
			}
		})
	}
	if n, _ := l.st.CountRuns(t.Context()); n != 0 {
		t.Errorf("%d runs stored by refused searches", n)
	}
}

// TestLaunchSLOCancel: a canceled search cancels its queued run, queues
// nothing after, and a second cancel is a conflict.
func TestLaunchSLOCancel(t *testing.T) {
	l := newTestLauncher(t, nil)
	id, err := l.CreateSLO(t.Context(), &SLORequest{Config: SweepConfigRequest{Label: "a", Params: tinyParams(t)}, LatencyMs: 10, MaxRate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	n, err := l.CancelSLO(t.Context(), id)
	if err != nil || n != 1 {
		t.Fatalf("cancel: %d runs, %v", n, err)
	}
	if err := l.AdvanceSweeps(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec, links, _ := l.st.GetSLO(t.Context(), id)
	if rec.Phase != store.SLOCanceled || len(links) != 1 || !strings.Contains(rec.Note, "canceled") {
		t.Errorf("after cancel: %+v with %d runs", rec, len(links))
	}
	if _, err := l.CancelSLO(t.Context(), id); !errors.Is(err, store.ErrConflict) {
		t.Errorf("second cancel: %v, want a conflict", err)
	}
	if _, err := l.CancelSLO(t.Context(), "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("cancel of a malformed id: %v, want not found", err)
	}
}

// TestLaunchSLOE2E: an e2e search runs rate mode, throttled at its
// probe's rate, with the records its percentile needs, and holds
// e2e-latency-intended to the target against consume-rate.
func TestLaunchSLOE2E(t *testing.T) {
	l := newTestLauncher(t, nil)
	pct := 99.9
	params := map[string]json.RawMessage{"workload": json.RawMessage(`"e2e"`), "num-records": json.RawMessage("500"),
		"record-size": json.RawMessage("100"), "profile": json.RawMessage(`["none"]`)}
	id, err := l.CreateSLO(t.Context(), &SLORequest{Config: SweepConfigRequest{Label: "e2e", Params: params}, Percentile: &pct, LatencyMs: 20, MaxRate: 5000})
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.LoadSLO(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Latency != rundoc.HistE2ELatencyIntended || st.RateMetric != "consume-rate" || st.Pending != 1 {
		t.Fatalf("state %+v", st)
	}
	r, err := l.st.GetRun(t.Context(), st.Runs[0].Link.RunID)
	if err != nil {
		t.Fatal(err)
	}
	file, err := rundoc.ParseSpecFile(json.RawMessage(r.Spec))
	if err != nil {
		t.Fatal(err)
	}
	var mode string
	var rate float64
	var records int64
	json.Unmarshal(file.Params["mode"], &mode)
	json.Unmarshal(file.Params["throughput"], &rate)
	json.Unmarshal(file.Params["num-records"], &records)
	if file.Workload != rundoc.E2E || mode != rundoc.ModeRate || rate != 5000 || records != 10000 {
		t.Errorf("first run: %s mode %q at %v records/s, %d records; want e2e rate mode at 5000, 10000 records (p99.9's 10,000 latencies)", file.Workload, mode, rate, records)
	}
}

// TestLaunchSLOProbeLimit: the request's run limit bounds a search's
// probes by its repetitions, and refuses repetitions that leave too few;
// a search at its limit gives up.
func TestLaunchSLOProbeLimit(t *testing.T) {
	l := newTestLauncher(t, func(o *Options) { o.MaxRunsPerRequest = 40 })
	reps := 3
	id, err := l.CreateSLO(t.Context(), &SLORequest{Config: SweepConfigRequest{Label: "a", Params: tinyParams(t)}, LatencyMs: 10, MaxRate: 1000, Repetitions: &reps})
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.LoadSLO(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if st.Settings.MaxProbes != 13 {
		t.Errorf("max probes %d, want 40/3 = 13", st.Settings.MaxProbes)
	}
	reps = 5
	_, err = l.CreateSLO(t.Context(), &SLORequest{Config: SweepConfigRequest{Label: "a", Params: tinyParams(t)}, LatencyMs: 10, Repetitions: &reps})
	if fieldOf(err) != "repetitions" || !strings.Contains(err.Error(), "room for 8 probes") {
		t.Errorf("5 repetitions under a limit of 40: %v, want a refusal naming repetitions", err)
	}
	cfg := slo.Config{Percentile: 99, LatencyMs: 10, PrecisionPct: 2, Repetitions: 1, MaxRate: 1000, Probes: 2}
	fail := slo.Run{Achieved: 1, LatencyMs: 100, Samples: 1000}
	if d := slo.Decide(cfg, []slo.Probe{{Rate: 1000, Runs: []slo.Run{fail}}, {Rate: 500, Runs: []slo.Run{fail}}}); !d.Done || d.Outcome != slo.GaveUp {
		t.Errorf("at its 2 probes: %+v, want gave-up", d)
	}
}

// TestLaunchSLOBrokenDoesNotBlock: a search whose stored settings no
// longer read is reported, and the searches after it still advance.
func TestLaunchSLOBrokenDoesNotBlock(t *testing.T) {
	l := newTestLauncher(t, nil)
	broken := &store.SLO{ID: "000000000000", Config: "not json", Search: "{}"}
	if err := l.st.CreateSLO(t.Context(), broken, []*store.Run{{Label: "x", Workload: "producer", Status: rundoc.StatusQueued}}, []store.SLORun{{Max: true}}); err != nil {
		t.Fatal(err)
	}
	id, err := l.CreateSLO(t.Context(), &SLORequest{Config: SweepConfigRequest{Label: "a", Params: tinyParams(t)}, LatencyMs: 10, MaxRate: 1000})
	if err != nil {
		t.Fatal(err)
	}
	_, links, _ := l.st.GetSLO(t.Context(), id)
	kneeSystem{knee: 4000, capacity: 10000}.finishProbe(t, l.st, links[0].RunID)
	err = l.AdvanceSweeps(t.Context())
	if err == nil || !strings.Contains(err.Error(), "slo 000000000000") {
		t.Errorf("AdvanceSweeps = %v, want the broken search named", err)
	}
	if rec, _, _ := l.st.GetSLO(t.Context(), id); rec.Phase != store.SLODone || rec.Outcome != slo.AtMaximum {
		t.Errorf("the good search: %+v, want it advanced to its answer (1000 passes: at-maximum)", rec)
	}
}
