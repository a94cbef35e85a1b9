package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/runhist"

	"github.com/kbench/kbench/internal/embeddedbroker"
	"github.com/kbench/kbench/internal/sysstat"
)

func findMetric(ms []rundoc.Metric, name string) (rundoc.Metric, bool) {
	for _, m := range ms {
		if m.Name == name {
			return m, true
		}
	}
	return rundoc.Metric{}, false
}

// TestProcessMetricsCPUPerGiB: CPU per data moved uses Kafka's convention
// (MB = 2^20 bytes, so GiB = 2^30) under a name of its own; the 10^9-byte
// cpu-seconds-per-gb is gone.
func TestProcessMetricsCPUPerGiB(t *testing.T) {
	now := time.Now()
	w := &window{start: now.Add(-2 * time.Second), end: now, cpuStart: time.Second, cpuEnd: 4 * time.Second,
		ioErr: errors.New("no /proc here")}
	ms := w.processMetrics(3 << 29) // 1.5 GiB in 3 CPU seconds
	m, ok := findMetric(ms, "cpu-seconds-per-gib")
	if !ok {
		t.Fatalf("no cpu-seconds-per-gib among %v", ms)
	}
	if m.Value != 2 || m.Unit != "s/GiB" || m.Better != rundoc.LowerIsBetter {
		t.Errorf("cpu-seconds-per-gib = %v %s (%s), want 2 s/GiB, lower is better", m.Value, m.Unit, m.Better)
	}
	if !strings.Contains(m.Help, "1,073,741,824") {
		t.Errorf("help %q does not say what a GiB is", m.Help)
	}
	if _, ok := findMetric(ms, "cpu-seconds-per-gb"); ok {
		t.Errorf("cpu-seconds-per-gb (10^9 bytes) still reported")
	}
	// Nothing moved: no ratio.
	if _, ok := findMetric(w.processMetrics(0), "cpu-seconds-per-gib"); ok {
		t.Errorf("cpu-seconds-per-gib reported for 0 bytes")
	}
}

// TestProcessMetricsCPUPerMillionRecords: the CPU per record is the
// window's CPU over the run's measured records, read when the metrics are
// made; without records there is no such figure.
func TestProcessMetricsCPUPerMillionRecords(t *testing.T) {
	now := time.Now()
	var records int64
	w := &window{start: now.Add(-2 * time.Second), end: now, cpuStart: time.Second, cpuEnd: 4 * time.Second,
		ioErr: errors.New("no /proc here"), records: &records}
	if _, ok := findMetric(w.processMetrics(1), "cpu-seconds-per-million-records"); ok {
		t.Errorf("cpu-seconds-per-million-records reported without records")
	}
	records = 1_500_000 // set after the window opened, as the workloads do
	m, ok := findMetric(w.processMetrics(1), "cpu-seconds-per-million-records")
	if !ok {
		t.Fatal("no cpu-seconds-per-million-records")
	}
	cpu := (w.cpuEnd - w.cpuStart).Seconds()
	if want := cpu / float64(records) * 1e6; m.Value != want || m.Unit != "s" || m.Better != rundoc.LowerIsBetter {
		t.Errorf("cpu-seconds-per-million-records = %v %s (%s), want %v s, lower is better", m.Value, m.Unit, m.Better, want)
	}
	if !strings.Contains(m.Help, "1500000 records") {
		t.Errorf("help %q does not name the records it divides by", m.Help)
	}
	w.records = nil
	if _, ok := findMetric(w.processMetrics(1), "cpu-seconds-per-million-records"); ok {
		t.Errorf("cpu-seconds-per-million-records reported with no record count")
	}
}

// TestHeapPeakHelp: heap-peak says what the sampler reads (objects live or
// not yet swept), never "live heap".
func TestHeapPeakHelp(t *testing.T) {
	w := &window{start: time.Now(), ioErr: errors.New("no /proc here")}
	w.cpu.HeapPeak.AllocBytes = 3 << 20
	m, ok := findMetric(w.processMetrics(1), "heap-peak")
	if !ok {
		t.Fatal("no heap-peak")
	}
	if m.Value != 3 || m.Unit != "MiB" {
		t.Errorf("heap-peak = %v %s, want 3 MiB", m.Value, m.Unit)
	}
	for _, want := range []string{sysstat.HeapPeakMetric, "not yet swept", "100ms"} {
		if !strings.Contains(m.Help, want) {
			t.Errorf("heap-peak help %q lacks %q", m.Help, want)
		}
	}
	if strings.Contains(m.Help, "largest live heap") {
		t.Errorf("heap-peak help %q calls it the live heap", m.Help)
	}
}

// TestConsumerMetricHelp: fetch-size-* say they count record payload, in
// each mode, and not the fetch response.
func TestConsumerMetricHelp(t *testing.T) {
	for mode, want := range map[string]string{rundoc.ModeGroup: "key + value bytes", rundoc.ModeAssign: "value bytes"} {
		r := &run{spec: rundoc.Spec{Mode: mode, ShowDetailedStats: true}, res: &rundoc.Result{},
			rep: &reporter{stdout: io.Discard, stderr: io.Discard}, win: &window{start: time.Now(), ioErr: errors.New("none")}}
		stats := &consumeStats{fetches: 4, fetchSize: 4000, fetchBMax: 1500, fetchRecs: 40}
		now := time.Now()
		r.consumerResults(stats, 40, 4000, now.Add(-time.Second), now, 0)
		for _, name := range []string{"fetch-size-avg", "fetch-size-max"} {
			m, ok := r.res.Metric(name)
			if !ok {
				t.Fatalf("%s: no %s", mode, name)
			}
			if !strings.Contains(m.Help, want) || !strings.Contains(m.Help, "payload") || !strings.Contains(m.Help, "not the size of the response") {
				t.Errorf("%s: %s help %q does not say it counts record payload (%s)", mode, name, m.Help, want)
			}
		}
	}
}

var producerLineRe = regexp.MustCompile(`(?m)^\d+ records sent, .* ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$`)

// TestProducerMetricsByMode: a throttled producer reports the intended-time
// latency with the same percentiles as the service latency, p95 included;
// request-rate says what it counts in its mode; and when Kafka's line cuts
// a percentile, the output notes give the precise value the metrics hold.
func TestProducerMetricsByMode(t *testing.T) {
	b := startBroker(t, embeddedbroker.Options{})
	for _, tt := range []struct{ mode, says, never string }{
		{rundoc.ModeRaw, "Client.RawProduce", "Writer"},
		{rundoc.ModeClient, "Client.Produce", "Writer"},
		{rundoc.ModeWriter, "Writer", "RawProduce"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			opts, out := testOptions(t)
			spec := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "help-"+tt.mode, "--mode", tt.mode,
				"--num-records", "3000", "--record-size", "100", "--throughput", "20000", "--profile", "none")
			res, err := Run(context.Background(), spec, opts)
			if err != nil {
				t.Fatalf("producer: %v", err)
			}
			for _, p := range []string{"avg", "p50", "p95", "p99", "p999", "max"} {
				metric(t, res, "record-latency-intended-"+p)
				metric(t, res, "publish-delay-"+p)
			}
			checkHistograms(t, res, 3000, rundoc.HistRecordLatency, rundoc.HistRecordLatencyIntended, rundoc.HistPublishDelay)
			checkIntervalLog(t, opts.OutDir, res)
			if p50, p95, p99 := metric(t, res, "record-latency-intended-p50"), metric(t, res, "record-latency-intended-p95"),
				metric(t, res, "record-latency-intended-p99"); p95 < p50 || p95 > p99 {
				t.Errorf("intended p50 %v, p95 %v, p99 %v: not in order", p50, p95, p99)
			}
			m, _ := res.Metric("request-rate")
			if !strings.Contains(m.Help, tt.says) || strings.Contains(m.Help, tt.never) {
				t.Errorf("request-rate help %q: want %q and not %q", m.Help, tt.says, tt.never)
			}

			line := producerLineRe.FindStringSubmatch(out.String())
			if line == nil {
				t.Fatalf("no producer summary line in:\n%s", out.String())
			}
			var want []string
			for i, p := range []struct{ label, name string }{{"50th", "p50"}, {"95th", "p95"}, {"99th", "p99"}, {"99.9th", "p999"}} {
				precise := metric(t, res, "record-latency-"+p.name)
				if cut, _ := strconv.ParseInt(line[i+1], 10, 64); float64(cut) != math.Trunc(precise) {
					t.Errorf("line's %s = %d ms, metric %v ms", p.label, cut, precise)
				}
				if precise != math.Trunc(precise) {
					want = append(want, fmt.Sprintf("%s %s ms is %.3f ms (record-latency-%s)", p.label, line[i+1], precise, p.name))
				}
			}
			notes := strings.Join(res.Measurement.OutputNotes, "\n")
			if len(want) == 0 && notes != "" {
				t.Errorf("no percentile was cut, yet output notes %q", notes)
			}
			for _, w := range want {
				if !strings.Contains(notes, w) {
					t.Errorf("output notes %q lack %q", notes, w)
				}
			}
		})
	}
}

// checkHistograms fails t unless res holds exactly the window histograms
// of kinds, each decoding to as many values as records, to the ms
// percentiles its kind's metrics report, and to the window's length.
func checkHistograms(t *testing.T, res *rundoc.Result, records int64, kinds ...string) {
	t.Helper()
	var got []string
	for _, h := range res.Histograms {
		got = append(got, h.Kind)
		if h.Scope != rundoc.HistogramWindow || h.StartS != 0 || !(h.EndS > 0) || h.Count != records {
			t.Errorf("%s: %+v, want the window's, %d values", h.Kind, h, records)
			continue
		}
		back, err := hdr.Decode(h.Data)
		if err != nil {
			t.Errorf("%s: %v", h.Kind, err)
			continue
		}
		if back.TotalCount() != records || back.Lowest() != rundoc.HistogramLowest || back.Highest() != rundoc.HistogramHighest || back.Digits() != rundoc.HistogramDigits {
			t.Errorf("%s: decoded %d values in %d..%d/%d", h.Kind, back.TotalCount(), back.Lowest(), back.Highest(), back.Digits())
		}
		if p99 := float64(back.ValueAtQuantile(99)) / 1000; p99 != metric(t, res, h.Kind+"-p99") {
			t.Errorf("%s: the histogram's p99 is %v ms, its metric %v ms", h.Kind, p99, metric(t, res, h.Kind+"-p99"))
		}
	}
	if !slices.Equal(got, kinds) {
		t.Errorf("histograms %v, want %v", got, kinds)
	}
}

// checkIntervalLog fails t unless the run wrote its histogram log in
// dir: for each window histogram, intervals of its kind that tile the
// window from 0 on the 1 s grid (the last one shorter) and hold its
// values between them; and unless each series point with latencies has
// percentiles in order, within its maximum.
func checkIntervalLog(t *testing.T, dir string, res *rundoc.Result) {
	t.Helper()
	if res.HistogramLog != rundoc.HistogramLogFile {
		t.Fatalf("result names histogram log %q, want %q", res.HistogramLog, rundoc.HistogramLogFile)
	}
	f, err := os.Open(filepath.Join(dir, res.HistogramLog))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, intervals, err := runhist.ReadLog(f)
	if err != nil {
		t.Fatalf("the run's histogram log: %v", err)
	}
	for _, w := range res.Histograms {
		var sum int64
		end := 0.0
		for _, h := range intervals {
			if h.Kind != w.Kind {
				continue
			}
			if math.Abs(h.StartS-end) > 0.0015 || h.EndS-h.StartS > rundoc.HistogramLogStep.Seconds()+0.05 {
				t.Errorf("%s: interval %v–%v s after one ending at %v s: not the 1 s grid", w.Kind, h.StartS, h.EndS, end)
			}
			sum += h.Count
			end = h.EndS
		}
		if sum != w.Count || math.Abs(end-w.EndS) > 0.0015 {
			t.Errorf("%s: intervals hold %d values up to %v s, the window %d up to %v s", w.Kind, sum, end, w.Count, w.EndS)
		}
	}
	for i, p := range res.Series {
		if p.LatencyMaxMs == 0 {
			continue
		}
		if !(p.LatencyP50Ms > 0 && p.LatencyP50Ms <= p.LatencyP99Ms && p.LatencyP99Ms <= p.LatencyP999Ms && p.LatencyP999Ms <= p.LatencyMaxMs*1.001+0.001) {
			t.Errorf("series point %d: p50 %v, p99 %v, p99.9 %v, max %v ms: not in order", i, p.LatencyP50Ms, p.LatencyP99Ms, p.LatencyP999Ms, p.LatencyMaxMs)
		}
	}
}
