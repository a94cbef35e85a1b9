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
	"time"

	"github.com/kbench/kbench/internal/rundoc"

	"github.com/kbench/kbench/internal/embeddedbroker"
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
func checkSeries(t *testing.T, res *rundoc.Result, measured int64, textLines int, reportingMs int64) {
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
func checkFineStep(t *testing.T, res *rundoc.Result, textLines int, minSecs float64) {
	t.Helper()
	if w := res.Measurement.WindowSeconds; w < minSecs {
		t.Fatalf("window %.3f s, want at least %.1f s (the run is throttled)", w, minSecs)
	}
	// A window of minSecs holds minSecs/0.25 steps; allow for a tick lost
	// to a busy machine and the tail merged into the last point.
	if want := int(minSecs/rundoc.SeriesStep.Seconds()) - 2; len(res.Series) < want {
		t.Errorf("%d points in a %.3f s window, want at least %d at a %v step", len(res.Series), res.Measurement.WindowSeconds, want, rundoc.SeriesStep)
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
	if testing.Short() {
		t.Skip("integration: starts a kbench broker child")
	}
	b := startBroker(t, embeddedbroker.Options{})
	const reporting = 1000
	for _, mode := range []string{rundoc.ModeWriter, rundoc.ModeClient, rundoc.ModeRaw} {
		t.Run("producer-"+mode, func(t *testing.T) {
			opts, out := testOptions(t)
			// 1500 records at 1000/s: a window of at least 1.5 s.
			spec := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "series-"+mode, "--mode", mode,
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
		spec := mustParse(t, rundoc.Writepath, "--sink", "--duration", "1.5", "--request-rate", "1000", "--profile", "none",
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
		feed := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--topic", "series-live",
			"--num-records", "120000", "--throughput", "1000", "--profile", "none")
		wg.Add(1)
		go func() { defer wg.Done(); Run(ctx, feed, popts) }()

		opts, out := testOptions(t)
		spec := mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", "series-live", "--mode", "group",
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
		spec := mustParse(t, rundoc.Consumer, "--bootstrap-server", b.Addr(), "--topic", "series-assign", "--mode", "assign",
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
	b := startBroker(t, embeddedbroker.Options{})
	opts, out := testOptions(t)
	opts.JSONProgress = true
	spec := mustParse(t, rundoc.Producer, "--bootstrap-server", b.Addr(), "--num-records", "1500", "--throughput", "1000", "--profile", "none")
	res, err := Run(context.Background(), spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	var live []rundoc.SeriesPoint
	for _, e := range readEvents(t, out.String()) {
		if e.Type == "interval" && e.Point != nil {
			live = append(live, *e.Point)
		}
	}
	// The default reporting interval (5 s) is longer than the run.
	if len(live) < int(1.4/rundoc.SeriesStep.Seconds())-2 {
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
func readEvents(t *testing.T, out string) []rundoc.Event {
	t.Helper()
	var evs []rundoc.Event
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e rundoc.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("stdout line is not an event: %q", line)
		}
		evs = append(evs, e)
	}
	return evs
}

// TestSeriesTickAtTheEnd: a tick that samples after the window's end,
// because it came while the end was being published, does not leave the
// last point past the window's end; its rate is over the interval it then
// covers. The race is made certain by publishing the end only after a
// tick has passed it.
func TestSeriesTickAtTheEnd(t *testing.T) {
	r := &run{rep: &reporter{}, res: &rundoc.Result{}, win: &window{start: time.Now()}}
	sample := func(secs float64) rundoc.SeriesPoint {
		return rundoc.SeriesPoint{Records: 100, RecordsPerSec: 100 / secs}
	}
	stop := r.recordSeries(sample)
	time.Sleep(rundoc.SeriesStep / 2)
	// window.stop has read the clock but not yet published the end.
	r.win.end = time.Now()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.rep.mu.Lock()
		n := len(r.res.Series)
		r.rep.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no tick in 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	end := r.win.end
	r.win.endAt.Store(&end)
	stop()
	want := r.win.since(end)
	if len(r.res.Series) != 1 {
		t.Fatalf("points %+v, want the one", r.res.Series)
	}
	p := r.res.Series[0]
	if p.T != want || math.Abs(p.RecordsPerSec-100/want) > 1e-9 {
		t.Errorf("point %+v, want it to end at the window's end %v at %v records/s", p, want, 100/want)
	}
}
