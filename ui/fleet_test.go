package ui

import (
	"testing"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/rundoc"
)

func TestNewFleetView(t *testing.T) {
	if NewFleetView(nil, nil) != nil {
		t.Error("a run that is no fleet's parent has a fleet section")
	}
	f64 := func(v float64) *float64 { return &v }
	w := uint(7)
	start := time.Date(2026, 12, 5, 11, 0, 3, 250e6, time.UTC)
	v := NewFleetView(&wire.Fleet{Workers: 2, Phase: "merged", BarrierTimeoutS: 60, StartAt: &start}, []wire.FleetShard{
		{Index: 0, RunID: 11, Worker: &w, Host: "lab-1", Status: "succeeded", Records: f64(12000), RecordsPerSec: f64(4000),
			P99Ms: f64(3.456), CPUAvg: f64(61.4), ClockOffsetMs: f64(-0.25), RoundTripMs: f64(0.6),
			Part: &wire.ShardPart{Index: 0, Count: 2, Assign: []rundoc.TopicPartitions{{Topic: "f", Partitions: []int{0, 1}}}, Throughput: 2000, Threads: 2, Duration: 6}},
		{Index: 1, RunID: 12, Status: "queued"},
	})
	if v.Start != "2026-12-05 11:00:03.250 UTC" || v.Timeout != "60 s" || len(v.Shards) != 2 {
		t.Fatalf("%+v", v)
	}
	want := FleetShardRow{Index: 1, RunURL: "/runs/11", RunID: 11, Worker: "#7 on lab-1", Status: "succeeded", StatusClass: "badge badge-succeeded",
		Records: "12,000", Rate: "4,000 records/s", P99: "3.46 ms", CPU: "61 %", ClockOffset: "-0.25 ms (±0.30)",
		Partitions: "f [0,1]", Share: "2,000 records/s, 2 producer(s) per topic"}
	if v.Shards[0] != want {
		t.Errorf("row 1:\n got %+v\nwant %+v", v.Shards[0], want)
	}
	if r := v.Shards[1]; r.Worker != "—" || r.Records != "—" || r.P99 != "—" || r.ClockOffset != "—" {
		t.Errorf("a shard with nothing yet: %+v", r)
	}
}
