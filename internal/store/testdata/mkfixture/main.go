// Command mkfixture writes the store fixture kbench-v0.db and what the store
// showed of it, kbench-v0.json. It was run at commit 2d325ee, before kbench
// recorded schema versions, so the database is one "from before versions":
// the store test checks that today's Open upgrades it and shows every run,
// report and profile exactly as that dump says. Running it now would make a
// current database instead; the fixture is kept as it was made.
//
//	go run ./store/testdata/mkfixture DIR
package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/pprof/profile"
	_ "github.com/mattn/go-sqlite3"

	"github.com/kbench/kbench/internal/store"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: mkfixture DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "mkfixture:", err)
		os.Exit(1)
	}
}

func cpuProfile(fn string, samples int64) ([]byte, error) {
	f := &profile.Function{ID: 1, Name: fn, SystemName: fn, Filename: "main.go"}
	loc := &profile.Location{ID: 1, Line: []profile.Line{{Function: f, Line: 10}}}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10000000,
		Sample:     []*profile.Sample{{Location: []*profile.Location{loc}, Value: []int64{samples, samples * 10000000}}},
		Location:   []*profile.Location{loc},
		Function:   []*profile.Function{f},
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func ptr(v float64) *float64 { return &v }

func run(dir string) error {
	ctx := context.Background()
	path := filepath.Join(dir, "kbench-v0.db")
	s, err := store.Open(path)
	if err != nil {
		return err
	}
	t0 := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	cpu, err := cpuProfile("main.produce", 7)
	if err != nil {
		return err
	}
	heap, err := cpuProfile("main.consume", 3)
	if err != nil {
		return err
	}
	spec := `{"workload":"producer","params":{"num-records":20000,"record-size":256,"throughput":-1}}`
	launched := &store.Run{Label: "trunk", Workload: "producer", Spec: spec, Fingerprint: "f1"}
	failed := &store.Run{Label: "branch ✓", Workload: "producer", Spec: spec, Fingerprint: "f1"}
	canceled := &store.Run{Label: "branch ✓", Workload: "consumer", Spec: `{"workload":"consumer","params":{"messages":1000}}`, Fingerprint: "f2"}
	imported := &store.Run{Label: "imported", Workload: "imported", Status: store.StatusSucceeded, Source: store.SourceImported,
		Complete: true, Output: "1000 records sent, 500.0 records/sec\n", FinishedAt: ptrTime(t0.Add(time.Hour)),
		Metrics:  []store.Metric{{Name: "records-per-sec", Value: 500, Unit: "records/s", Better: "higher"}},
		Series:   []store.SeriesPoint{{Seq: 0, T: 5, Records: 2500, RecordsPerSec: 500, MBPerSec: 0.5}},
		Profiles: []store.Profile{{Role: "client", Kind: "cpu", Data: heap, Samples: 1, Uploaded: true}}}
	if err := s.CreateRuns(ctx, []*store.Run{launched, failed, canceled, imported}); err != nil {
		return err
	}
	if err := s.StartRun(ctx, launched.ID, t0); err != nil {
		return err
	}
	if err := s.FinishRun(ctx, launched.ID, store.Outcome{Status: store.StatusSucceeded, Complete: true,
		Environment: `{"go":"go1.26","cpus":2}`, Measurement: `{"window_seconds":2.5}`,
		Output: "20000 records sent, 8000.0 records/sec (1.95 MB/sec), 3.1 ms avg latency, 9.0 ms max latency.\n",
		Metrics: []store.Metric{{Name: "record-send-rate", Value: 8000, Unit: "records/s", Better: "higher"},
			{Name: "mb-per-sec", Value: 1.95, Unit: "MB/s", Better: "higher"},
			{Name: "record-latency-p99", Value: 8.5, Unit: "ms", Better: "lower", Help: "99th percentile"}},
		Series: []store.SeriesPoint{{Seq: 0, T: 1, Records: 8000, Bytes: 2048000, RecordsPerSec: 8000, MBPerSec: 1.95, LatencyAvgMs: 3, LatencyMaxMs: 9, CPUPercent: 80},
			{Seq: 1, T: 2, Records: 8000, Bytes: 2048000, RecordsPerSec: 8000, MBPerSec: 1.95, LatencyAvgMs: 3.2, LatencyMaxMs: 8, CPUPercent: 75}},
		Profiles:   []store.Profile{{Role: "client", Kind: "cpu", Data: cpu, Samples: 1}},
		FinishedAt: t0.Add(3 * time.Second)}); err != nil {
		return err
	}
	if err := s.StartRun(ctx, failed.ID, t0.Add(time.Minute)); err != nil {
		return err
	}
	if err := s.FinishRun(ctx, failed.ID, store.Outcome{Status: store.StatusFailed, Error: "cannot reach broker 127.0.0.1:1",
		FinishedAt: t0.Add(time.Minute + time.Second)}); err != nil {
		return err
	}
	if err := s.CancelQueued(ctx, canceled.ID, "canceled before it started"); err != nil {
		return err
	}
	rep := &store.Report{Title: "trunk vs imported", Notes: "**noisy**", RunIDs: []uint{launched.ID, imported.ID}, By: "run"}
	if err := s.CreateReport(ctx, rep); err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	if err := vacuum(path); err != nil {
		return err
	}
	s, err = store.Open(path)
	if err != nil {
		return err
	}
	dump, err := Dump(ctx, s, rep.Slug)
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "kbench-v0.json"), dump, 0o644)
}

// vacuum rewrites the file compactly, so the fixture stays small.
func vacuum(path string) error {
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		return err
	}
	if _, err := db.Exec("VACUUM"); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

func ptrTime(t time.Time) *time.Time { return &t }

// Dump is what the store shows of the fixture: the run list, every run
// with its children, every profile with its data, and the report.
func Dump(ctx context.Context, s *store.Store, slug string) ([]byte, error) {
	list, total, err := s.ListRuns(ctx, store.RunFilter{})
	if err != nil {
		return nil, err
	}
	d := map[string]any{"list": list, "total": total}
	var runs []*store.Run
	var profiles []*store.Profile
	for _, r := range list {
		full, err := s.GetRun(ctx, r.ID)
		if err != nil {
			return nil, err
		}
		runs = append(runs, full)
		for _, p := range full.Profiles {
			pd, err := s.GetProfile(ctx, p.ID)
			if err != nil {
				return nil, err
			}
			profiles = append(profiles, pd)
		}
	}
	d["runs"], d["profiles"] = runs, profiles
	rep, err := s.GetReport(ctx, slug)
	if err != nil {
		return nil, err
	}
	d["report"] = rep
	labels, err := s.Labels(ctx)
	if err != nil {
		return nil, err
	}
	d["labels"] = labels
	return json.MarshalIndent(d, "", "  ")
}
