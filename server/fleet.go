// A fleet run's parent on the API: its barrier and its shards
// (GET /api/runs/:id's "fleet" and "shards").

package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/fleetmerge"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/store"
)

// shardRecordMetrics are the metrics that count a shard's records, by
// workload: acknowledged for a producer, received for e2e.
var shardRecordMetrics = map[rundoc.Workload][2]string{
	rundoc.Producer: {"records-sent", "record-send-rate"},
	rundoc.E2E:      {"records-received", "consume-rate"},
}

// fleetOf is the fleet whose parent is run, with its shards; nil for a
// run that is no fleet's parent.
func (s *Server) fleetOf(ctx context.Context, run *rundoc.Run) (*wire.Fleet, []wire.FleetShard, error) {
	f, links, err := s.store.FleetOfParent(ctx, run.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	ids := make([]uint, len(links))
	for i, l := range links {
		ids[i] = l.RunID
	}
	runs, err := s.store.GetRunsParts(ctx, ids, store.RunParts{})
	if err != nil {
		return nil, nil, err
	}
	fleet := &wire.Fleet{Workers: f.Shards, Phase: f.Phase, BarrierTimeoutS: f.BarrierTimeoutS,
		FirstCheckInAt: f.FirstCheckInAt, StartAt: f.StartAt, Error: f.Error}
	starts := make([]*rundoc.ShardStart, len(runs))
	offsets := make([]float64, len(runs))
	for i, r := range runs {
		if r.Measurement != nil {
			starts[i] = r.Measurement.ShardStart
		}
		if o := links[i].ClockOffsetMs; o != nil {
			offsets[i] = *o
		}
	}
	if ms, ok := fleetmerge.StartSpread(starts, offsets); ok {
		fleet.StartSkewMs = &ms
	}
	names := shardRecordMetrics[run.Workload]
	shards := make([]wire.FleetShard, len(links))
	for i, l := range links {
		r := &runs[i]
		sh := wire.FleetShard{Index: l.ShardIndex, RunID: r.ID, URL: fmt.Sprintf("/runs/%d", r.ID), Worker: l.WorkerID, Host: r.Worker,
			Status: r.Status, Error: r.Error, P99Ms: r.P99Ms, ClockOffsetMs: l.ClockOffsetMs, RoundTripMs: l.RoundTripMs}
		if m, ok := r.Metric(names[0]); ok {
			sh.Records = &m.Value
		}
		if m, ok := r.Metric(names[1]); ok {
			sh.RecordsPerSec = &m.Value
		}
		if m, ok := r.Metric("process-cpu-avg"); ok {
			sh.CPUAvg = &m.Value
		}
		if file, err := rundoc.ParseSpecFile([]byte(r.Spec)); err == nil {
			if spec, err := rundoc.SpecFromParams(file.Workload, file.Params); err == nil {
				sh.Part = spec.Shard
			}
		}
		shards[i] = sh
	}
	return fleet, shards, nil
}
