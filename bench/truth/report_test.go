package main

import (
	"strings"
	"testing"
	"time"
)

func TestRedactAddr(t *testing.T) {
	in := "producer --bootstrap-server 127.0.0.1:41235 --topic truth-raw-20261201T073256Z --group truth-consumer-group-20261201T073256Z --num-records 10"
	want := "producer --bootstrap-server ADDR --topic truth-raw --group truth-consumer-group --num-records 10"
	if got := redactAddr(in); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

func TestMarkdown(t *testing.T) {
	s := &suite{cfg: &config{command: "bash bench/truth/run.sh", kbenchDesc: "test build"},
		started: time.Date(2026, 12, 1, 7, 33, 0, 0, time.UTC), finished: time.Date(2026, 12, 1, 7, 35, 5, 0, time.UTC),
		loadStart: "1.00 2.00 3.00", loadEnd: "4.00 5.00 6.00"}
	s.checks = []check{
		compareFigures(areaCounts, "consumer-assign", "records-consumed-total vs --messages", 820004, "820,004 records", 800000, "800,000 asked", exact()),
		compareFigures(areaRates, "producer-raw", "record-send-rate vs poll", 100, "100 records/s", 101, "101 records/s", relative(0.05)),
		skipped(areaCPU, "consumer-assign", "process-cpu-p99", "too few samples | 17"),
	}
	s.checks[1].Note = "window 5 s"
	s.tables = []ffTable{{Batch: 1, Workload: "producer", N: 5, How: "alternate", Flags: tableFlags{Rows: 31, Tested: 24,
		Flagged: []flaggedRow{{Metric: "syscr", Verdict: "worse"}}, Recount: 24, RecountBelowAlpha: 1}}}
	s.runs = []runSummary{{Name: "producer-raw", Args: "producer --bootstrap-server 127.0.0.1:1 --num-records 10", Window: 1.5, CPUSamples: 15}}
	md := s.markdown()
	for _, want := range []string{
		"### Truth suite run 2026-12-01 07:33 UTC",
		"Command: `bash bench/truth/run.sh`",
		"load average (1, 5, 15 min) 1.00 2.00 3.00 at the start, 4.00 5.00 6.00 at the end",
		"- duration: 2m5s",
		"- verdicts: 1 ok, 1 DIFFERS, 1 skipped, 0 informational",
		"| counts | consumer-assign | records-consumed-total vs --messages | 820,004 records | 800,000 asked | +20004 | exact | **DIFFERS** |",
		"| cpu | consumer-assign | process-cpu-p99 | — | — | — | — | skipped: too few samples \\| 17 |",
		"| 1 | producer | 5 vs 5 | alternate | 31 | not marked | 24 | 1: syscr worse | 1 of 24 |",
		"- rates, producer-raw, record-send-rate vs poll: window 5 s",
		"- producer-raw: `kbench run producer --bootstrap-server ADDR --num-records 10`, window 1.500 s, 15 CPU samples",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
}
