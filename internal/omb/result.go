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
// (internal/rundoc), the histograms (internal/hdr) and the API's wire
// types (client/wire, whose OMBResult is its Result): no database, no
// Kafka client, no HTTP.
package omb

import (
	"github.com/kbench/kbench/client/wire"
)

// WindowSeconds is the length of OMB's windows: it sleeps 10 s between
// collecting its workers' period stats.
const WindowSeconds = 10

// Result is OMB's result document, its fields in OMB's order and under
// its names (TestResult): the API's type (client/wire), which the
// server answers GET /api/runs/{id}/omb.json with. Per-window lists hold
// one value per 10 s window. Latencies are in ms, except the publish
// delay's, which are whole µs (its averages fractional µs).
type Result = wire.OMBResult

// Quantile and Quantiles are OMB's quantile maps, in percentile order,
// as the API declares them (client/wire), which encode as OMB's JSON
// objects.
type (
	Quantile  = wire.OMBQuantile
	Quantiles = wire.OMBQuantiles
)

// javaDouble writes a percentile as Java writes a double.
func javaDouble(f float64) string { return wire.JavaDouble(f) }

// sortQuantiles orders qs by percentile.
func sortQuantiles(qs Quantiles) { wire.SortOMBQuantiles(qs) }

// fillEmpty gives every list and map that has nothing an empty value,
// as OMB writes one it never filled ([] and {}, never null).
func fillEmpty(r *Result) {
	for _, f := range fieldsOf(r) {
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
