package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/kbench/kbench/runner/embedded"
)

var (
	writepathIntervalRe = regexp.MustCompile(`(?m)^\d+ requests sent, \d+\.\d requests/sec, \d+\.\d records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{3} ms avg latency, \d+\.\d{3} ms max latency(, \d+\.\d{2} write syscalls/request)?\.$`)
	consumerDetailedRe  = regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}, \d+, `)
)

// checkSeries checks what every run's interval series must be, whatever
// the machine's speed: at least one point, each the end of an interval
// after the previous one, the last at the window's end, and together
// every measured record. It also checks that the Kafka text lines still
// come at --reporting-interval: no more of them than the window holds.
func checkSeries(t *testing.T, res *Result, measured int64, textLines int, reportingMs int64) {
	t.Helper()
	s := res.Series
	if len(s) == 0 {
		t.Fatalf("no interval points for a %.3f s window", res.Measurement.WindowSeconds)
	}
	var sum int64
	prev := 0.0
	for i, p := range s {
		if !(p.T > prev) {
			t.Errorf("point %d at t=%v does not follow t=%v", i, p.T, prev)
		}
		if p.Records < 0 || p.RecordsPerSec < 0 || math.IsNaN(p.RecordsPerSec) || math.IsInf(p.RecordsPerSec, 0) {
			t.Errorf("point %d: %+v", i, p)
		}
		prev = p.T
		sum += p.Records
	}
	if w := res.Measurement.WindowSeconds; math.Abs(prev-w) > 1e-6 {
		t.Errorf("last point at t=%v, want the window's end %v", prev, w)
	}
	if sum != measured {
		t.Errorf("the points hold %d records, want every measured record (%d)", sum, measured)
	}
	maxLines := int(res.Measurement.WindowSeconds*1000/float64(reportingMs)) + 1
	if textLines > maxLines {
		t.Errorf("%d interval lines in a %.3f s window at --reporting-interval %d, want at most %d",
			textLines, res.Measurement.WindowSeconds, reportingMs, maxLines)
	}
	t.Logf("%d points over %.3f s; %d text interval lines", len(s), res.Measurement.WindowSeconds, textLines)
}

// checkFineStep checks that a run whose window lasts at least minSecs
// (throttled, so on any machine) has points at the fine step: several of
// them, more than its text lines, which keep the reporting interval.
func checkFineStep(t *testing.T, res *Result, textLines int, minSecs float64) {
	t.Helper()
	if w := res.Measurement.WindowSeconds; w < minSecs {
		t.Fatalf("window %.3f s, want at least %.1f s (the run is throttled)", w, minSecs)
	}
	// A window of minSecs holds minSecs/0.25 steps; allow for a tick lost
	// to a busy machine and the tail merged into the last point.
	if want := int(minSecs/SeriesStep.Seconds()) - 2; len(res.Series) < want {
		t.Errorf("%d points in a %.3f s window, want at least %d at a %v step", len(res.Series), res.Measurement.WindowSeconds, want, SeriesStep)
	}
	if len(res.Series) <= textLines {
		t.Errorf("%d points and %d text interval lines: the series should be finer than --reporting-interval", len(res.Series), textLines)
	}
}

// TestIntervalSeriesFineStep: runs record their interval series every
// SeriesStep whatever --reporting-interval is (1 s here), which keeps
// governing Kafka's interval lines, for every workload against a real
// broker (or the write-path sink).
func TestIntervalSeriesFineStep(t *testing.T) {
	b := startBroker(t, embedded.Options{})
	const reporting = 1000
	for _, mode := range []string{ModeWriter, ModeClient, ModeRaw} {
		t.Run("producer-"+mode, func(t *testing.T) {
			opts, out := testOptions(t)
			// 1500 records at 1000/s: a window of at least 1.5 s.
			spec := mustParse(t, Producer, "--bootstrap-server", b.Addr(), "--topic", "series-"+mode, "--mode", mode,
				"--num-records", "1500", "--throughput", "1000", "--reporting-interval", fmt.Sprint(reporting), "--profile", "none")
			res, err := Run(context.Background(), spec, opts)
			if err != nil {
				t.Fatal(err)
			}
			lines := len(producerIntervalRe.FindAllString(out.String(), -1))
			checkSeries(t, res, int64(metric(t, res, "records-sent")), lines, reporting)
			checkFineStep(t, res, lines, 1.4)
		})
	}
	t.Run("writepath", func(t *testing.T) {
		opts, out := sinkOptions(t)
		spec := mustParse(t, Writepath, "--sink", "--duration", "1.5", "--request-rate", "1000", "--profile", "none",
			"--reporting-interval", fmt.Sprint(reporting))
		res, err := Run(context.Background(), spec, opts)
		if err != nil {
			t.Fatal(err)
		}
		lines := len(writepathIntervalRe.FindAllString(out.String(), -1))
		checkSeries(t, res, res.Measurement.MeasuredRecords, lines, reporting)
		checkFineStep(t, res, lines, 1.4)
	})
	t.Run("consumer-group", func(t *testing.T) {
		// A group consumer from the latest offset reads what a throttled
		// producer writes meanwhile: 2000 records at 1000/s take 2 s.
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		defer func() { cancel(); wg.Wait() }()
		popts, _ := testOptions(t)
		feed := mustParse(t, Producer, "--bootstrap-server", b.Addr(), "--topic", "series-live",
			"--num-records", "120000", "--throughput", "1000", "--profile", "none")
		wg.Add(1)
		go func() { defer wg.Done(); Run(ctx, feed, popts) }()

		opts, out := testOptions(t)
		spec := mustParse(t, Consumer, "--bootstrap-server", b.Addr(), "--topic", "series-live", "--mode", "group",
			"--from-latest", "--messages", "2000", "--timeout", "60000", "--profile", "none",
			"--show-detailed-stats", "--reporting-interval", fmt.Sprint(reporting))
		res, err := Run(ctx, spec, opts)
		if err != nil {
			t.Fatal(err)
		}
		lines := len(consumerDetailedRe.FindAllString(out.String(), -1))
		checkSeries(t, res, int64(metric(t, res, "records-consumed-total")), lines, reporting)
		checkFineStep(t, res, lines, 1.9)
	})
	t.Run("consumer-assign", func(t *testing.T) {
		// Prefilled, so as fast as the machine reads: however short the
		// window, the run has its points.
		opts, out := testOptions(t)
		spec := mustParse(t, Consumer, "--bootstrap-server", b.Addr(), "--topic", "series-assign", "--mode", "assign",
			"--messages", "20000", "--record-size", "100", "--profile", "none",
			"--show-detailed-stats", "--reporting-interval", fmt.Sprint(reporting))
		res, err := Run(context.Background(), spec, opts)
		if err != nil {
			t.Fatal(err)
		}
		lines := len(consumerDetailedRe.FindAllString(out.String(), -1))
		checkSeries(t, res, int64(metric(t, res, "records-consumed-total")), lines, reporting)
	})
}

// TestSeriesEveryStepLive: with --progress json each point goes out as an
// interval event as it is recorded, so a live page draws the run as it
// goes; the events carry what the result stores.
func TestSeriesEveryStepLive(t *testing.T) {
	b := startBroker(t, embedded.Options{})
	opts, out := testOptions(t)
	opts.JSONProgress = true
	spec := mustParse(t, Producer, "--bootstrap-server", b.Addr(), "--num-records", "1500", "--throughput", "1000", "--profile", "none")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	var live []SeriesPoint
	for _, e := range readEvents(t, out.String()) {
		if e.Type == "interval" && e.Point != nil {
			live = append(live, *e.Point)
		}
	}
	// The default reporting interval (5 s) is longer than the run.
	if len(live) < int(1.4/SeriesStep.Seconds())-2 {
		t.Errorf("%d interval events for a %.3f s window", len(live), res.Measurement.WindowSeconds)
	}
	// Each event is a stored point, except that a short tail may have
	// been merged into the last stored point once the run ended.
	if len(live) > len(res.Series) || len(res.Series)-len(live) > 1 {
		t.Fatalf("%d events, %d stored points", len(live), len(res.Series))
	}
	for i := 0; i < len(live)-1; i++ {
		if live[i] != res.Series[i] {
			t.Errorf("event %d %+v, stored %+v", i, live[i], res.Series[i])
		}
	}
}

// readEvents decodes the JSON lines of --progress json.
func readEvents(t *testing.T, out string) []Event {
	t.Helper()
	var evs []Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line is not an event: %q", line)
		}
		evs = append(evs, e)
	}
	return evs
}

// TestMergeSeries: merged points cover their groups' intervals: counts add
// up, rates are what the longer interval measured, latency averages weigh
// each point by its records and maxima keep the largest.
func TestMergeSeries(t *testing.T) {
	pts := []SeriesPoint{
		// 0 → 0.25 s: 250 records.
		{T: 0.25, Records: 250, Bytes: 25000, RecordsPerSec: 1000, MBPerSec: 25000 / 0.25 / (1 << 20), LatencyAvgMs: 2, LatencyMaxMs: 5},
		// 0.25 → 0.75 s: 1500 records.
		{T: 0.75, Records: 1500, Bytes: 150000, RecordsPerSec: 3000, MBPerSec: 150000 / 0.5 / (1 << 20), LatencyAvgMs: 4, LatencyMaxMs: 9},
		// 0.75 → 1 s: none.
		{T: 1, RecordsPerSec: 0, LatencyMaxMs: 0},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, tc := range []struct {
		name string
		k    int
		want []SeriesPoint
	}{
		{"k=1 copies", 1, pts},
		{"pairs, the odd last alone", 2, []SeriesPoint{
			{T: 0.75, Records: 1750, Bytes: 175000, RecordsPerSec: 1750 / 0.75, MBPerSec: 175000 / 0.75 / (1 << 20),
				LatencyAvgMs: (250*2 + 1500*4) / 1750.0, LatencyMaxMs: 9},
			pts[2],
		}},
		{"all in one", 5, []SeriesPoint{
			{T: 1, Records: 1750, Bytes: 175000, RecordsPerSec: 1750, MBPerSec: 175000.0 / (1 << 20),
				LatencyAvgMs: (250*2 + 1500*4) / 1750.0, LatencyMaxMs: 9},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MergeSeries(pts, tc.k)
			if len(got) != len(tc.want) {
				t.Fatalf("%d points, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, g := range got {
				w := tc.want[i]
				if g.T != w.T || g.Records != w.Records || g.Bytes != w.Bytes || !near(g.RecordsPerSec, w.RecordsPerSec) ||
					!near(g.MBPerSec, w.MBPerSec) || !near(g.LatencyAvgMs, w.LatencyAvgMs) || g.LatencyMaxMs != w.LatencyMaxMs {
					t.Errorf("point %d = %+v, want %+v", i, g, w)
				}
			}
		})
	}
	if got := CoarsenSeries(nil); len(got) != 0 {
		t.Errorf("CoarsenSeries(nil) = %v", got)
	}
	// A series coarsened again and again keeps its records and its end.
	var long []SeriesPoint
	for i := 1; i <= MaxSeriesPoints+1; i++ {
		long = append(long, SeriesPoint{T: float64(i) * SeriesStep.Seconds(), Records: int64(i % 7), RecordsPerSec: float64(i%7) / SeriesStep.Seconds()})
	}
	short := CoarsenSeries(CoarsenSeries(long))
	var a, b int64
	for _, p := range long {
		a += p.Records
	}
	for _, p := range short {
		b += p.Records
	}
	if len(short) != (MaxSeriesPoints+4)/4 || a != b || short[len(short)-1].T != long[len(long)-1].T {
		t.Errorf("coarsened twice: %d points (want %d), %d records (want %d), ends at %v (want %v)",
			len(short), (MaxSeriesPoints+4)/4, b, a, short[len(short)-1].T, long[len(long)-1].T)
	}
}
