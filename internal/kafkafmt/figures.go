package kafkafmt

import (
	"fmt"
	"math"

	"github.com/kbench/kbench/internal/rundoc"
)

// Command is the name users know a tool by: kafka-producer-perf-test for
// ToolProducer, kafka-consumer-perf-test for ToolConsumer,
// kafka-share-consumer-perf-test for ToolShareConsumer, kafka-e2e-latency
// for ToolE2E.
func Command(tool string) string {
	switch tool {
	case ToolConsumer:
		return "kafka-consumer-perf-test"
	case ToolE2E:
		return "kafka-e2e-latency"
	case ToolShareConsumer:
		return "kafka-share-consumer-perf-test"
	}
	return "kafka-producer-perf-test"
}

// Workload is the kbench workload whose runs measure what tool's do
// (rundoc.Workload's values): the tool's own name, but consumer for the
// share consumer tool.
func Workload(tool string) string {
	if tool == ToolShareConsumer {
		return ToolConsumer
	}
	return tool
}

// Figures are an import's figures as kbench stores a run's: the one
// conversion both the import API and `kbench exec` use, so a tool's output
// stores the same whichever way it arrived.
type Figures struct {
	// Metrics are imp's finite metrics; NaN and infinities are left out
	// (JSON, SQLite and PostgreSQL's documents hold none) with a note.
	Metrics []rundoc.Metric
	// Series are the intervals, each point at the end of its window.
	Series []rundoc.SeriesPoint
	// MeasuredRecords and WindowSeconds are what the summary measured:
	// records sent or consumed, and records ÷ rate (0 without a rate;
	// both 0 for ToolE2E, whose output holds neither).
	MeasuredRecords int64
	WindowSeconds   float64
	// Notes say what was left out.
	Notes []string
}

// Figures converts imp's metrics and intervals to kbench's documents.
func (imp *Imported) Figures() Figures {
	var f Figures
	values := map[string]float64{}
	for _, m := range imp.Metrics {
		if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) {
			f.Notes = append(f.Notes, fmt.Sprintf("%s was %v in the output: left out", m.Name, m.Value))
			continue
		}
		values[m.Name] = m.Value
		f.Metrics = append(f.Metrics, rundoc.Metric{Name: m.Name, Value: m.Value, Unit: m.Unit, Better: rundoc.Better(m.Better)})
	}
	for _, iv := range imp.Intervals {
		f.Series = append(f.Series, rundoc.SeriesPoint{T: iv.T, Records: iv.Records, RecordsPerSec: iv.RecordsPerSec,
			MBPerSec: iv.MBPerSec, LatencyAvgMs: iv.LatencyAvgMs, LatencyMaxMs: iv.LatencyMaxMs})
	}
	var records, rate float64
	switch imp.Tool {
	case ToolProducer:
		records, rate = values["records-sent"], values["record-send-rate"]
	case ToolConsumer, ToolShareConsumer:
		records, rate = values["records-consumed-total"], values["records-consumed-rate"]
	}
	f.MeasuredRecords = int64(records)
	if rate > 0 {
		f.WindowSeconds = records / rate
	}
	return f
}
