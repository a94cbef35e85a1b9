package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/numfmt"
	"github.com/kbench/kbench/internal/rundoc"
)

// FleetView is a fleet run's parent section: its barrier and a row per
// shard, each linking the shard's run (its logs, figures and profiles).
type FleetView struct {
	Workers int
	Phase   string
	// Start is the common start (T0) on the database's clock; Timeout
	// the barrier timeout; Error why the fleet ended early.
	Start   string
	Timeout string
	// Skew is the spread of the shards' window openings, "" until all
	// have opened.
	Skew   string
	Error  string
	Shards []FleetShardRow
}

// FleetShardRow is one shard: figures over its own window, "—" where it
// has none yet.
type FleetShardRow struct {
	Index       int
	RunURL      string
	RunID       uint
	Worker      string
	Status      string
	StatusClass string
	Records     string
	Rate        string
	P99         string
	CPU         string
	ClockOffset string
	// Partitions and Share are its part of the division: its topics'
	// partitions, and its rate and producers per topic.
	Partitions string
	Share      string
}

// shardPartitions lists a shard's topics with their partitions:
// "t [0,1] u [2]".
func shardPartitions(sh rundoc.Shard) string {
	var parts []string
	for _, a := range sh.Assign {
		ps := make([]string, len(a.Partitions))
		for i, n := range a.Partitions {
			ps[i] = strconv.Itoa(n)
		}
		parts = append(parts, a.Topic+" ["+strings.Join(ps, ",")+"]")
	}
	return strings.Join(parts, " ")
}

// shardRate is a shard's rate: records/s, or unthrottled.
func shardRate(sh rundoc.Shard) string {
	if sh.Throughput > 0 {
		return numfmt.Number(sh.Throughput) + " records/s"
	}
	return "unthrottled"
}

// NewFleetView builds the section from the API's answer for the parent.
func NewFleetView(f *wire.Fleet, shards []wire.FleetShard) *FleetView {
	if f == nil {
		return nil
	}
	v := &FleetView{Workers: f.Workers, Phase: f.Phase, Timeout: numfmt.Number(f.BarrierTimeoutS) + " s", Error: f.Error, Start: "not set yet"}
	if f.StartSkewMs != nil {
		v.Skew = fmt.Sprintf("%.1f ms", *f.StartSkewMs)
	}
	if f.StartAt != nil {
		v.Start = f.StartAt.UTC().Format("2006-01-02 15:04:05.000") + " UTC"
	}
	dash := func(p *float64, unit string, digits int) string {
		if p == nil {
			return "—"
		}
		return strconv.FormatFloat(*p, 'f', digits, 64) + unit
	}
	for _, s := range shards {
		row := FleetShardRow{Index: s.Index + 1, RunURL: fmt.Sprintf("/runs/%d", s.RunID), RunID: s.RunID, Worker: "—",
			Status: string(s.Status), StatusClass: statusClass(rundoc.Status(s.Status)),
			P99: dash(s.P99Ms, " ms", 2), CPU: dash(s.CPUAvg, " %", 0), Records: "—", Rate: "—", ClockOffset: "—"}
		if s.Worker != nil {
			row.Worker = fmt.Sprintf("#%d on %s", *s.Worker, s.Host)
		}
		if s.Part != nil {
			row.Partitions = shardPartitions(*s.Part)
			row.Share = fmt.Sprintf("%s, %d producer(s) per topic", shardRate(*s.Part), s.Part.Threads)
		}
		if s.Records != nil {
			row.Records = numfmt.Number(*s.Records)
		}
		if s.RecordsPerSec != nil {
			row.Rate = numfmt.Number(*s.RecordsPerSec) + " records/s"
		}
		if s.ClockOffsetMs != nil {
			row.ClockOffset = fmt.Sprintf("%+.2f ms", *s.ClockOffsetMs)
			if s.RoundTripMs != nil {
				row.ClockOffset += fmt.Sprintf(" (±%.2f)", *s.RoundTripMs/2)
			}
		}
		v.Shards = append(v.Shards, row)
	}
	return v
}
