package store

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestSeriesRuns: a series reads its succeeded runs in time order (the
// time given, not the order stored), each with the one metric asked for
// and its environment; other series, failed runs and other metrics stay
// out; a run names its series; an unknown series or run is ErrNotFound.
func TestSeriesRuns(t *testing.T) { eachBackend(t, testSeriesRuns) }

func testSeriesRuns(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2022, 6, 1, 10, 0, 0, 0, time.UTC)
	env := &rundoc.Environment{KbenchVersion: "v1.0.0", KbenchBuild: "0123456789ab", GoVersion: "go1.25.1", KafkaGoVersion: "v0.4.47",
		CPUModel: "AMD EPYC", Cores: 8, Kernel: "6.1.0", Host: "bench1", Broker: "kafka1:9092", OS: "linux",
		LoadAverage: &rundoc.LoadAverage{Load1: 0.5},
		Target:      &rundoc.Target{Kind: rundoc.TargetCluster, ReleaseGuess: "3.7", APIVersions: []rundoc.APIVersion{{Key: 0, Name: "Produce", Max: 11}}},
		Config:      &rundoc.Config{Mode: "raw", Settings: []rundoc.Setting{{Name: "acks", Value: "all"}}}}
	// What a history reads of it: what its marks compare.
	wantEnv := rundoc.Environment{KbenchVersion: "v1.0.0", KbenchBuild: "0123456789ab", GoVersion: "go1.25.1", KafkaGoVersion: "v0.4.47",
		CPUModel: "AMD EPYC", Cores: 8, Kernel: "6.1.0", Host: "bench1", Broker: "kafka1:9092",
		Target: &rundoc.Target{ReleaseGuess: "3.7"}, Config: env.Config}
	mk := func(series string, at time.Duration, status rundoc.Status, rate float64, commit string) *Run {
		r := &Run{Label: "perf", Workload: rundoc.Producer, Source: rundoc.SourceImported, SeriesKey: series, RunAt: t0.Add(at),
			Meta: Meta{"commit": commit}}
		o := Outcome{Status: status, Complete: true, Environment: env, Output: strings.Repeat("x", 100),
			Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: rundoc.HigherIsBetter},
				{Name: "record-latency-p99", Value: 3, Unit: "ms", Better: rundoc.LowerIsBetter}}}
		if err := r.Record(o); err != nil {
			t.Fatal(err)
		}
		return r
	}
	runs := []*Run{
		mk("trunk", 3*time.Hour, rundoc.StatusSucceeded, 103, "c3"), // stored first, ran last
		mk("trunk", 1*time.Hour, rundoc.StatusSucceeded, 101, "c1"),
		mk("other", 2*time.Hour, rundoc.StatusSucceeded, 999, "x"),
		mk("trunk", 2*time.Hour, rundoc.StatusFailed, 0, "c2"),
		mk("trunk", 2*time.Hour, rundoc.StatusSucceeded, 102, "c2b"),
		mk("failed-only", 0, rundoc.StatusFailed, 0, "f"),
	}
	if err := s.CreateRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	got, err := s.SeriesRuns(ctx, "trunk", "record-send-rate")
	if err != nil {
		t.Fatal(err)
	}
	var commits []string
	var rates []float64
	for _, r := range got {
		commits = append(commits, r.Meta["commit"])
		if len(r.Metrics) != 1 {
			t.Fatalf("run %d metrics %+v, want the one asked for", r.ID, r.Metrics)
		}
		rates = append(rates, r.Metrics[0].Value)
		if r.Environment == nil || !reflect.DeepEqual(*r.Environment, wantEnv) || r.DocumentErr != nil || r.Output != "" || !r.Time.Equal(t0.Add(time.Duration(r.Metrics[0].Value-100)*time.Hour)) {
			t.Errorf("run %d: environment %+v output %q time %v", r.ID, r.Environment, r.Output, r.Time)
		}
	}
	if !slices.Equal(commits, []string{"c1", "c2b", "c3"}) || !slices.Equal(rates, []float64{101, 102, 103}) {
		t.Errorf("commits %v rates %v, want c1 c2b c3 in time order", commits, rates)
	}
	if got, err := s.SeriesRuns(ctx, "trunk", "no-such-metric"); err != nil || len(got) != 3 || got[0].Metrics != nil {
		t.Errorf("unknown metric: %d runs, %v", len(got), err)
	}
	if got, err := s.SeriesRuns(ctx, "failed-only", "record-send-rate"); err != nil || len(got) != 0 {
		t.Errorf("failed-only series: %v, %v", got, err)
	}
	if _, err := s.SeriesRuns(ctx, "nope", "record-send-rate"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown series: %v, want ErrNotFound", err)
	}
	if key, err := s.RunSeries(ctx, runs[1].ID); err != nil || key != "trunk" {
		t.Errorf("RunSeries = %q, %v", key, err)
	}
	if _, err := s.RunSeries(ctx, 9999); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown run: %v, want ErrNotFound", err)
	}
	ms, err := s.SeriesMetrics(ctx, "trunk")
	if err != nil {
		t.Fatal(err)
	}
	want := []rundoc.Metric{{Name: "record-latency-p99", Unit: "ms", Better: rundoc.LowerIsBetter}, {Name: "record-send-rate", Unit: "records/s", Better: rundoc.HigherIsBetter}}
	if !slices.Equal(ms, want) {
		t.Errorf("metrics %+v, want %+v", ms, want)
	}
	if s.pg {
		return // the plan below is SQLite's
	}
	plan := queryPlan(t, s, "SELECT id FROM runs WHERE series = ? AND status = ? ORDER BY run_at, id", "trunk", "succeeded")
	if !strings.Contains(plan, "idx_runs_series_status") || strings.Contains(plan, "TEMP B-TREE") {
		t.Errorf("plan %q, want idx_runs_series_status without a sort", plan)
	}
}

// TestReportSplit: a before/after report keeps the run its columns split
// at (migration 0004_report_split), and must hold that run; a report of a
// database from before the migration reads with none.
func TestReportSplit(t *testing.T) { eachBackend(t, testReportSplit) }

func testReportSplit(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a, b, c := &Run{Status: rundoc.StatusSucceeded}, &Run{Status: rundoc.StatusSucceeded}, &Run{Status: rundoc.StatusSucceeded}
	create(t, s, a, b, c)
	r := &rundoc.Report{Title: "before/after", RunIDs: []uint{a.ID, b.ID, c.ID}, By: "change", At: b.ID}
	if err := s.CreateReport(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.GetReport(ctx, r.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if got.By != "change" || got.At != b.ID || !slices.Equal(got.RunIDs, r.RunIDs) {
		t.Errorf("report %+v, want by change at %d", got, b.ID)
	}
	bad := &rundoc.Report{Title: "x", RunIDs: []uint{a.ID, b.ID}, By: "change", At: c.ID}
	if err := s.CreateReport(ctx, bad); err == nil {
		t.Error("a split at a run the report does not hold was stored")
	}

	old, err := Open(copyFixture(t, "kbench-v0.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	var reports []Report
	if err := old.db.Find(&reports).Error; err != nil {
		t.Fatal(err)
	}
	for _, rep := range reports {
		if rep.At != 0 {
			t.Errorf("report %s from before the migration splits at %d", rep.Slug, rep.At)
		}
	}
}

// TestListSeries: every series with a succeeded run, by key, with the
// workload of its last succeeded run stored and a signature (count, largest
// and summed ids) that changes when a run succeeds or is deleted; failed
// runs and series of failed runs only stay out. SeriesRunsMetrics reads
// several metrics of each run at once.
func TestListSeries(t *testing.T) { eachBackend(t, testListSeries) }

func testListSeries(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2022, 6, 1, 10, 0, 0, 0, time.UTC)
	mk := func(series string, w rundoc.Workload, at time.Duration, status rundoc.Status) *Run {
		r := &Run{Label: "perf", Workload: w, Source: rundoc.SourceImported, SeriesKey: series, RunAt: t0.Add(at)}
		o := Outcome{Status: status, Complete: true, Metrics: []rundoc.Metric{
			{Name: "record-send-rate", Value: 100, Unit: "records/s", Better: rundoc.HigherIsBetter},
			{Name: "record-latency-p99", Value: 3, Unit: "ms", Better: rundoc.LowerIsBetter},
			{Name: "records-consumed-rate", Value: 7, Unit: "records/s", Better: rundoc.HigherIsBetter}}}
		if err := r.Record(o); err != nil {
			t.Fatal(err)
		}
		return r
	}
	runs := []*Run{
		mk("b", rundoc.Producer, time.Hour, rundoc.StatusSucceeded),
		mk("a", rundoc.Consumer, 2*time.Hour, rundoc.StatusSucceeded),
		mk("b", rundoc.Consumer, 0, rundoc.StatusSucceeded), // stored last: the series' workload
		mk("b", rundoc.Consumer, 3*time.Hour, rundoc.StatusFailed),
		mk("f", rundoc.Producer, 0, rundoc.StatusFailed),
	}
	if err := s.CreateRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	got, err := s.ListSeries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []SeriesInfo{
		{Key: "a", Workload: "consumer", Runs: 1, MaxID: runs[1].ID, SumID: uint64(runs[1].ID)},
		{Key: "b", Workload: "consumer", Runs: 2, MaxID: runs[2].ID, SumID: uint64(runs[0].ID + runs[2].ID)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ListSeries = %+v, want %+v", got, want)
	}
	rs, err := s.SeriesRunsMetrics(ctx, "b", []string{"record-send-rate", "record-latency-p99"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d runs, want 2", len(rs))
	}
	for _, r := range rs {
		var names []string
		for _, m := range r.Metrics {
			names = append(names, m.Name)
		}
		slices.Sort(names)
		if !slices.Equal(names, []string{"record-latency-p99", "record-send-rate"}) {
			t.Errorf("run %d metrics %v", r.ID, names)
		}
	}
	if err := s.DeleteRun(ctx, runs[0].ID); err != nil {
		t.Fatal(err)
	}
	got, err = s.ListSeries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].Runs != 1 || got[1].SumID != uint64(runs[2].ID) || got[1].Workload != "consumer" {
		t.Fatalf("after a delete: %+v", got)
	}
}

// TestSeriesRunsMetricsUnits: each run gets its metrics' values and the
// unit and direction it recorded them with, whether the series recorded
// a metric with one unit throughout (read once) or changed it (read run
// by run); a metric a run lacks is left out; the runs carry no
// metadata, which RunsMeta reads for the runs asked for.
func TestSeriesRunsMetricsUnits(t *testing.T) { eachBackend(t, testSeriesRunsMetricsUnits) }

func testSeriesRunsMetricsUnits(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	t0 := time.Date(2022, 6, 1, 10, 0, 0, 0, time.UTC)
	mk := func(at time.Duration, commit string, ms ...rundoc.Metric) *Run {
		r := &Run{Label: "perf", Workload: rundoc.Producer, Source: rundoc.SourceImported, SeriesKey: "s", RunAt: t0.Add(at)}
		if commit != "" {
			r.Meta = Meta{"commit": commit}
		}
		if err := r.Record(Outcome{Status: rundoc.StatusSucceeded, Complete: true, Metrics: ms}); err != nil {
			t.Fatal(err)
		}
		return r
	}
	rate := func(v float64) rundoc.Metric {
		return rundoc.Metric{Name: "record-send-rate", Value: v, Unit: "records/s", Better: rundoc.HigherIsBetter, Help: "h"}
	}
	p99 := func(v float64, unit string, b rundoc.Better) rundoc.Metric {
		return rundoc.Metric{Name: "record-latency-p99", Value: v, Unit: unit, Better: b}
	}
	runs := []*Run{
		mk(time.Hour, "c1", rate(100), p99(3, "ms", rundoc.LowerIsBetter)),
		mk(2*time.Hour, "", rate(101)),
		mk(3*time.Hour, "c3", p99(0.004, "s", rundoc.LowerIsBetter), rate(102)),
		mk(4*time.Hour, "c4", rate(103), p99(5, "ms", rundoc.Neither)),
	}
	if err := s.CreateRuns(ctx, runs); err != nil {
		t.Fatal(err)
	}
	got, err := s.SeriesRunsMetrics(ctx, "s", []string{"record-send-rate", "record-latency-p99"})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]rundoc.Metric{
		{{Name: "record-send-rate", Value: 100, Unit: "records/s", Better: rundoc.HigherIsBetter}, p99(3, "ms", rundoc.LowerIsBetter)},
		{{Name: "record-send-rate", Value: 101, Unit: "records/s", Better: rundoc.HigherIsBetter}},
		{{Name: "record-send-rate", Value: 102, Unit: "records/s", Better: rundoc.HigherIsBetter}, p99(0.004, "s", rundoc.LowerIsBetter)},
		{{Name: "record-send-rate", Value: 103, Unit: "records/s", Better: rundoc.HigherIsBetter}, p99(5, "ms", rundoc.Neither)},
	}
	if len(got) != len(want) {
		t.Fatalf("%d runs, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.ID != runs[i].ID || r.Status != rundoc.StatusSucceeded || r.Meta != nil || !slices.Equal(r.Metrics, want[i]) {
			t.Errorf("run %d: id %d status %s meta %v metrics %+v, want %+v", i, r.ID, r.Status, r.Meta, r.Metrics, want[i])
		}
	}
	meta, err := s.RunsMeta(ctx, []uint{runs[0].ID, runs[1].ID, runs[3].ID, 9999})
	if err != nil {
		t.Fatal(err)
	}
	if len(meta) != 2 || meta[runs[0].ID]["commit"] != "c1" || meta[runs[3].ID]["commit"] != "c4" {
		t.Errorf("RunsMeta = %v, want c1 and c4 only", meta)
	}
	if got, err := s.SeriesRunsMetrics(ctx, "s", nil); err != nil || len(got) != 4 || got[0].Metrics != nil {
		t.Errorf("no metrics asked for: %d runs, %v", len(got), err)
	}
}
