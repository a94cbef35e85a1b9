package store

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// benchRuns is the size of the history BenchmarkListRuns lists.
const benchRuns = 10_000

// seedBench stores benchRuns finished runs shaped like real ones: a spec
// of a few hundred bytes and a few kilobytes of environment, measurement
// and output, which lists must not read. Labels cycle over 5 values,
// workloads over 3, and every 7th run failed.
func seedBench(b *testing.B, s *Store) {
	b.Helper()
	spec := `{"workload":"producer","params":{"bootstrap-servers":"127.0.0.1:9092","topic":"bench","num-records":1000000,"record-size":256,"acks":"all","batch-size":1000,"batch-timeout":"10ms","compression":"none","partitions":8,"profile":"cpu"}}`
	env := `{"go":"go1.26.8","kafka-go":"v0.4.51","cpu":"AMD EPYC 7B13","cores":2,"host":"bench-1","git":"0123456789abcdef"}` + strings.Repeat(" ", 200)
	output := strings.Repeat("1000000 records sent, 1012345.6 records/sec (247.15 MB/sec), 3.2 ms avg latency, 41.0 ms max latency.\n", 30)
	labels := []string{"trunk", "branch", "pr-101", "pr-102", "nightly"}
	workloads := []rundoc.Workload{rundoc.Producer, rundoc.Consumer, rundoc.Writepath}
	const batch = 1000
	for start := 0; start < benchRuns; start += batch {
		runs := make([]*Run, 0, batch)
		for i := start; i < start+batch; i++ {
			status := rundoc.StatusSucceeded
			if i%7 == 3 {
				status = rundoc.StatusFailed
			}
			rps, mb, p99 := 1e6+float64(i), 240.0, 3.5
			runs = append(runs, &Run{
				Label: labels[i%len(labels)], Workload: workloads[i%len(workloads)],
				Status: status, Spec: spec, Fingerprint: fmt.Sprintf("%064x", i%40),
				GroupID: fmt.Sprintf("g%d", i/6), GroupIndex: i%6 + 1,
				Environment: env, Measurement: `{"records":1000000,"bytes":256000000,"seconds":0.98}`, Output: output,
				Complete: true, RecordsPerSec: &rps, MBPerSec: &mb, P99Ms: &p99,
			})
		}
		if err := s.CreateRuns(context.Background(), runs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListRuns lists pages of 50 out of 10,000 runs: the first page
// and the last ("deep") one, unfiltered and filtered.
func BenchmarkListRuns(b *testing.B) {
	for _, backend := range backends {
		b.Run(backend, benchmarkListRuns)
	}
}

func benchmarkListRuns(b *testing.B) {
	s := newStore(b)
	seedBench(b, s)
	if s.pg {
		// Statistics for the planner, as autovacuum would gather soon
		// after such a load.
		if err := s.db.Exec("ANALYZE").Error; err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		f    RunFilter
	}{
		{"all", RunFilter{}},
		{"status", RunFilter{Status: string(rundoc.StatusFailed)}},                       // 1,429 runs
		{"label", RunFilter{Label: "trunk"}},                                             // 2,000 runs
		{"workload", RunFilter{Workload: "consumer"}},                                    // 3,333 runs
		{"label+status", RunFilter{Label: "trunk", Status: string(rundoc.StatusFailed)}}, // 286 runs
		{"group", RunFilter{GroupID: "g1000"}},                                           // 6 runs
	} {
		_, total, err := s.ListRuns(ctx, bc.f)
		if err != nil {
			b.Fatal(err)
		}
		for _, page := range []struct {
			name   string
			offset int
		}{{"page1", 0}, {"deep", max(int(total)-DefaultLimit, 0)}} {
			f := bc.f
			f.Offset = page.offset
			b.Run(bc.name+"/"+page.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					runs, _, err := s.ListRuns(ctx, f)
					if err != nil {
						b.Fatal(err)
					}
					if len(runs) == 0 {
						b.Fatal("no runs listed")
					}
				}
			})
		}
	}
}
