package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// seedHistory stores a series of n finished runs as kbench's own runs
// record them: 30 metrics each, a full environment (the client's
// configuration, the target's API versions), 30 interval points and an
// output, a step of -8.7% half-way. It returns the first run's id.
func seedHistory(b *testing.B, ts *testServer, n int) uint {
	rng := rand.New(rand.NewPCG(1, 1000))
	env := benchEnvironment()
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var runs []*store.Run
	for i := range n {
		base := 115000.0
		if i >= n/2 {
			base = 105000
		}
		rate := base * (1 + 0.02*(2*rng.Float64()-1))
		o := store.Outcome{Status: rundoc.StatusSucceeded, Complete: true, Environment: env, Output: "1000000 records sent.\n",
			Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: rundoc.HigherIsBetter}}}
		for j := range 29 {
			o.Metrics = append(o.Metrics, rundoc.Metric{Name: fmt.Sprintf("metric-%02d", j), Value: float64(j), Unit: "ms", Better: rundoc.LowerIsBetter})
		}
		for k := range 30 {
			o.Series = append(o.Series, rundoc.SeriesPoint{T: float64(k), RecordsPerSec: rate})
		}
		r := &store.Run{Label: "trunk", Workload: rundoc.Producer, Fingerprint: "fp", RunAt: t0.Add(time.Duration(i) * time.Hour),
			Meta: store.Meta{"commit": fmt.Sprintf("%040x", i), "branch": "trunk"}}
		if err := r.Record(o); err != nil {
			b.Fatal(err)
		}
		runs = append(runs, r)
	}
	if err := ts.st.CreateRuns(context.Background(), runs); err != nil {
		b.Fatal(err)
	}
	settleDatabase(b, ts)
	return runs[0].ID
}

// BenchmarkHistoryPage: the history page of a 1,000-run series, served
// warm (from the page cache, as every visit after the first until the
// next store write) and built from the store (the first visit after a
// write: the query, detection and rendering).
func BenchmarkHistoryPage(b *testing.B) {
	ts := newTestServer(b, nil)
	id := seedHistory(b, ts, 1000)
	target := fmt.Sprintf("/history?run=%d", id)
	b.Run("warm", func(b *testing.B) { benchGet(b, ts, target, false) })
	b.Run("uncached", func(b *testing.B) { benchGet(b, ts, target, true) })
}

// BenchmarkHistoryAPI: /api/history of the same series (not cached).
func BenchmarkHistoryAPI(b *testing.B) {
	ts := newTestServer(b, nil)
	id := seedHistory(b, ts, 1000)
	b.Run("1000", func(b *testing.B) { benchGet(b, ts, fmt.Sprintf("/api/history?run=%d", id), false) })
}

// benchEnvironment is the environment the benchmarks' seeded runs record,
// as large as a real run's: the client's configuration (40 settings) and
// the target's API versions (60).
func benchEnvironment() *rundoc.Environment {
	env := &rundoc.Environment{KbenchVersion: "v1.0.0", KbenchBuild: "0123456789ab", GoVersion: "go1.25.1", KafkaGoVersion: "v0.4.47",
		OS: "linux", Arch: "amd64", Kernel: "6.1.0", CPUModel: "AMD EPYC 7B13", Cores: 8, GOMAXPROCS: 8, Host: "bench1", Broker: "embedded (kfake)",
		Target: &rundoc.Target{Kind: rundoc.TargetEmbedded}, Config: &rundoc.Config{Mode: "raw"}}
	for k := range 60 {
		env.Target.APIVersions = append(env.Target.APIVersions, rundoc.APIVersion{Key: int16(k), Name: fmt.Sprintf("Api%d", k), Max: 9})
	}
	for k := range 40 {
		env.Config.Settings = append(env.Config.Settings, rundoc.Setting{Name: fmt.Sprintf("setting.%d", k), Value: fmt.Sprint(k * 100)})
	}
	return env
}
