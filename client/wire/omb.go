package wire

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// OMBResult is a run as the OpenMessaging Benchmark's result JSON (GET
// /api/runs/{id}/omb.json), the document OMB writes per workload and
// driver and its bin/create_charts.py plots: per-window lists (one value
// per 10 s window; latencies in ms, the publish delay's in whole µs),
// the whole run's aggregated figures, and its quantile maps (percentile,
// as Java writes a double, to value). Driver is the run's label. A figure
// the run lacks is left as OMB leaves one it never filled: an empty
// list or map, or 0.
//
// internal/omb reads (strictly) and writes it; this is its one
// declaration.
type OMBResult struct {
	Workload          string `json:"workload"`
	Driver            string `json:"driver"`
	MessageSize       int64  `json:"messageSize"`
	Topics            int    `json:"topics"`
	Partitions        int    `json:"partitions"`
	ProducersPerTopic int    `json:"producersPerTopic"`
	ConsumersPerTopic int    `json:"consumersPerTopic"`

	PublishRate      []float64 `json:"publishRate"`
	PublishErrorRate []float64 `json:"publishErrorRate"`
	ConsumeRate      []float64 `json:"consumeRate"`
	Backlog          []int64   `json:"backlog"`

	PublishLatencyAvg     []float64 `json:"publishLatencyAvg"`
	PublishLatency50pct   []float64 `json:"publishLatency50pct"`
	PublishLatency75pct   []float64 `json:"publishLatency75pct"`
	PublishLatency95pct   []float64 `json:"publishLatency95pct"`
	PublishLatency99pct   []float64 `json:"publishLatency99pct"`
	PublishLatency999pct  []float64 `json:"publishLatency999pct"`
	PublishLatency9999pct []float64 `json:"publishLatency9999pct"`
	PublishLatencyMax     []float64 `json:"publishLatencyMax"`

	PublishDelayLatencyAvg     []float64 `json:"publishDelayLatencyAvg"`
	PublishDelayLatency50pct   []int64   `json:"publishDelayLatency50pct"`
	PublishDelayLatency75pct   []int64   `json:"publishDelayLatency75pct"`
	PublishDelayLatency95pct   []int64   `json:"publishDelayLatency95pct"`
	PublishDelayLatency99pct   []int64   `json:"publishDelayLatency99pct"`
	PublishDelayLatency999pct  []int64   `json:"publishDelayLatency999pct"`
	PublishDelayLatency9999pct []int64   `json:"publishDelayLatency9999pct"`
	PublishDelayLatencyMax     []int64   `json:"publishDelayLatencyMax"`

	AggregatedPublishLatencyAvg     float64 `json:"aggregatedPublishLatencyAvg"`
	AggregatedPublishLatency50pct   float64 `json:"aggregatedPublishLatency50pct"`
	AggregatedPublishLatency75pct   float64 `json:"aggregatedPublishLatency75pct"`
	AggregatedPublishLatency95pct   float64 `json:"aggregatedPublishLatency95pct"`
	AggregatedPublishLatency99pct   float64 `json:"aggregatedPublishLatency99pct"`
	AggregatedPublishLatency999pct  float64 `json:"aggregatedPublishLatency999pct"`
	AggregatedPublishLatency9999pct float64 `json:"aggregatedPublishLatency9999pct"`
	AggregatedPublishLatencyMax     float64 `json:"aggregatedPublishLatencyMax"`

	AggregatedPublishDelayLatencyAvg     float64 `json:"aggregatedPublishDelayLatencyAvg"`
	AggregatedPublishDelayLatency50pct   int64   `json:"aggregatedPublishDelayLatency50pct"`
	AggregatedPublishDelayLatency75pct   int64   `json:"aggregatedPublishDelayLatency75pct"`
	AggregatedPublishDelayLatency95pct   int64   `json:"aggregatedPublishDelayLatency95pct"`
	AggregatedPublishDelayLatency99pct   int64   `json:"aggregatedPublishDelayLatency99pct"`
	AggregatedPublishDelayLatency999pct  int64   `json:"aggregatedPublishDelayLatency999pct"`
	AggregatedPublishDelayLatency9999pct int64   `json:"aggregatedPublishDelayLatency9999pct"`
	AggregatedPublishDelayLatencyMax     int64   `json:"aggregatedPublishDelayLatencyMax"`

	AggregatedPublishLatencyQuantiles      OMBQuantiles `json:"aggregatedPublishLatencyQuantiles"`
	AggregatedPublishDelayLatencyQuantiles OMBQuantiles `json:"aggregatedPublishDelayLatencyQuantiles"`

	EndToEndLatencyAvg     []float64 `json:"endToEndLatencyAvg"`
	EndToEndLatency50pct   []float64 `json:"endToEndLatency50pct"`
	EndToEndLatency75pct   []float64 `json:"endToEndLatency75pct"`
	EndToEndLatency95pct   []float64 `json:"endToEndLatency95pct"`
	EndToEndLatency99pct   []float64 `json:"endToEndLatency99pct"`
	EndToEndLatency999pct  []float64 `json:"endToEndLatency999pct"`
	EndToEndLatency9999pct []float64 `json:"endToEndLatency9999pct"`
	EndToEndLatencyMax     []float64 `json:"endToEndLatencyMax"`

	AggregatedEndToEndLatencyQuantiles OMBQuantiles `json:"aggregatedEndToEndLatencyQuantiles"`

	AggregatedEndToEndLatencyAvg     float64 `json:"aggregatedEndToEndLatencyAvg"`
	AggregatedEndToEndLatency50pct   float64 `json:"aggregatedEndToEndLatency50pct"`
	AggregatedEndToEndLatency75pct   float64 `json:"aggregatedEndToEndLatency75pct"`
	AggregatedEndToEndLatency95pct   float64 `json:"aggregatedEndToEndLatency95pct"`
	AggregatedEndToEndLatency99pct   float64 `json:"aggregatedEndToEndLatency99pct"`
	AggregatedEndToEndLatency999pct  float64 `json:"aggregatedEndToEndLatency999pct"`
	AggregatedEndToEndLatency9999pct float64 `json:"aggregatedEndToEndLatency9999pct"`
	AggregatedEndToEndLatencyMax     float64 `json:"aggregatedEndToEndLatencyMax"`
}

// OMBQuantile is one entry of a quantile map: the value at Percentile
// (0..100).
type OMBQuantile struct {
	Percentile float64
	Value      float64
}

// OMBQuantiles is one of OMB's quantile maps (a Java TreeMap from
// percentile to value), in increasing percentile. It encodes as OMB's
// JSON object, keys in that order and written as Java writes a double
// ("50.0"), so that a file reads as OMB's do.
type OMBQuantiles []OMBQuantile

// MarshalJSON writes the map as a JSON object in percentile order (an
// empty one for none, as OMB writes a map it never filled).
func (qs OMBQuantiles) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, q := range qs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(JavaDouble(q.Percentile)))
		b.WriteByte(':')
		v, err := json.Marshal(q.Value)
		if err != nil {
			return nil, fmt.Errorf("omb: quantile %v: %w", q.Percentile, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a quantile map in percentile order. It is the
// client's reading of a document kbench wrote; outside input goes
// through internal/omb's strict parser, which names the field at fault.
func (qs *OMBQuantiles) UnmarshalJSON(data []byte) error {
	var m map[string]float64
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	out := make(OMBQuantiles, 0, len(m))
	for k, v := range m {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil {
			return fmt.Errorf("omb: quantile key %q is not a percentile", k)
		}
		out = append(out, OMBQuantile{Percentile: p, Value: v})
	}
	SortOMBQuantiles(out)
	*qs = out
	return nil
}

// SortOMBQuantiles orders qs by percentile.
func SortOMBQuantiles(qs OMBQuantiles) {
	slices.SortFunc(qs, func(a, b OMBQuantile) int { return cmp.Compare(a.Percentile, b.Percentile) })
}

// JavaDouble writes f as Java's Double.toString does for the numbers a
// percentile can be (10⁻³ ≤ f < 10⁷, or 0): the shortest digits that
// read back, with ".0" when whole.
func JavaDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
