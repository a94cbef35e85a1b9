// Package omb reads and writes the OpenMessaging Benchmark's (OMB's)
// result JSON, the document OMB's benchmark writes per workload and
// driver and its bin/create_charts.py plots: Parse reads one strictly
// (its errors name the field), Parsed.Run maps it to a kbench run (an
// imported e2e run: metrics, series, and what kbench's documents cannot
// otherwise hold: OMB's quantile maps as curves and its 10 s windows),
// and Export writes any kbench run as one, so that OMB's own chart
// scripts plot kbench runs beside OMB's.
//
// OMB fills a result every 10 s window with the window's rates and the
// percentiles of its interval histograms: publish latency in
// milliseconds (measured in µs), publish delay (how late a send left
// against its schedule) in whole microseconds, end-to-end latency in
// milliseconds of a clock read to the millisecond. At the end it adds
// the aggregated figures and quantile maps of the whole test's
// histograms. The maps carry no counts.
//
// It imports only the standard library, the run contract
// (internal/rundoc) and the histograms (internal/hdr): no database, no
// Kafka client, no HTTP.
package omb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
)

// WindowSeconds is the length of OMB's windows: it sleeps 10 s between
// collecting its workers' period stats.
const WindowSeconds = 10

// Result is OMB's result document, its fields in OMB's order and under
// its names (TestResult). Per-window lists hold one value per 10 s
// window. Latencies are in ms, except the publish delay's, which are
// whole µs (its averages fractional µs).
type Result struct {
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

	AggregatedPublishLatencyQuantiles      Quantiles `json:"aggregatedPublishLatencyQuantiles"`
	AggregatedPublishDelayLatencyQuantiles Quantiles `json:"aggregatedPublishDelayLatencyQuantiles"`

	EndToEndLatencyAvg     []float64 `json:"endToEndLatencyAvg"`
	EndToEndLatency50pct   []float64 `json:"endToEndLatency50pct"`
	EndToEndLatency75pct   []float64 `json:"endToEndLatency75pct"`
	EndToEndLatency95pct   []float64 `json:"endToEndLatency95pct"`
	EndToEndLatency99pct   []float64 `json:"endToEndLatency99pct"`
	EndToEndLatency999pct  []float64 `json:"endToEndLatency999pct"`
	EndToEndLatency9999pct []float64 `json:"endToEndLatency9999pct"`
	EndToEndLatencyMax     []float64 `json:"endToEndLatencyMax"`

	AggregatedEndToEndLatencyQuantiles Quantiles `json:"aggregatedEndToEndLatencyQuantiles"`

	AggregatedEndToEndLatencyAvg     float64 `json:"aggregatedEndToEndLatencyAvg"`
	AggregatedEndToEndLatency50pct   float64 `json:"aggregatedEndToEndLatency50pct"`
	AggregatedEndToEndLatency75pct   float64 `json:"aggregatedEndToEndLatency75pct"`
	AggregatedEndToEndLatency95pct   float64 `json:"aggregatedEndToEndLatency95pct"`
	AggregatedEndToEndLatency99pct   float64 `json:"aggregatedEndToEndLatency99pct"`
	AggregatedEndToEndLatency999pct  float64 `json:"aggregatedEndToEndLatency999pct"`
	AggregatedEndToEndLatency9999pct float64 `json:"aggregatedEndToEndLatency9999pct"`
	AggregatedEndToEndLatencyMax     float64 `json:"aggregatedEndToEndLatencyMax"`
}

// Quantile is one entry of a quantile map: the value at Percentile
// (0..100).
type Quantile struct {
	Percentile float64
	Value      float64
}

// Quantiles is one of OMB's quantile maps (a Java TreeMap from
// percentile to value), in increasing percentile. It encodes as OMB's
// JSON object, keys in that order and written as Java writes a double
// ("50.0"), so that a file reads as OMB's do.
type Quantiles []Quantile

// MarshalJSON writes the map as a JSON object in percentile order (an
// empty one for none, as OMB writes a map it never filled).
func (qs Quantiles) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, q := range qs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(javaDouble(q.Percentile)))
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

// UnmarshalJSON reads a quantile map as Parse does (strictly); Parse
// itself names the field in its errors.
func (qs *Quantiles) UnmarshalJSON(data []byte) error {
	got, err := parseQuantiles(data)
	if err != nil {
		return err
	}
	*qs = got
	return nil
}

// javaDouble writes f as Java's Double.toString does for the numbers a
// percentile can be (10⁻³ ≤ f < 10⁷, or 0): the shortest digits that
// read back, with ".0" when whole.
func javaDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !bytes.ContainsAny([]byte(s), ".eE") {
		s += ".0"
	}
	return s
}

// sortQuantiles orders qs by percentile.
func sortQuantiles(qs Quantiles) {
	slices.SortFunc(qs, func(a, b Quantile) int {
		switch {
		case a.Percentile < b.Percentile:
			return -1
		case a.Percentile > b.Percentile:
			return 1
		}
		return 0
	})
}

// fillEmpty gives every list and map that has nothing an empty value,
// as OMB writes one it never filled ([] and {}, never null).
func (r *Result) fillEmpty() {
	for _, f := range r.fields() {
		switch v := f.ptr.(type) {
		case *[]float64:
			if *v == nil {
				*v = []float64{}
			}
		case *[]int64:
			if *v == nil {
				*v = []int64{}
			}
		case *Quantiles:
			if *v == nil {
				*v = Quantiles{}
			}
		}
	}
}
